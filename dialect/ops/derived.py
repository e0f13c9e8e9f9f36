"""Ops defined by their expansion into basic ops: MindSpore's Appendix 1 gradients, optimizer updates,
losses, activations and helpers.

Each op here is one build function over :class:`~graphfuse.dialect.expansions.ExpansionBuilder` (``b.mul``,
``b.exp``, ...).  That function is at once

- the op's reference: run on numpy arrays, each basic op by its own reference (:class:`NumpyBuilder`), so the
  interpreter gives exactly what the expansion computes;
- its expander for graph-kernel-expand (:data:`~graphfuse.dialect.expansions.EXPANDERS`) and, through
  graph-decompose, its CPU lowering;
- its type inference: the same function planned on type signatures.

f16/bf16 operands are computed in f32 and each f32 result rounded once at the end (:func:`_f32`), as the
other composites are.  An op may have several results (an optimizer's new variable and moments).  The tests
check each against an independent formula in float64 and, for the gradients and optimizers, against
PyTorch's autograd and torch.optim.  Operand orders are MindSpore's: the gradients by an op's output take
``(y, dy)`` (SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, SoftmaxGradExt, LogSoftmaxGrad), the others
``(dy, x)``; the random ops (Dropout, StandardNormal) are built on ``graph.random_uniform``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.expansions import EXPANDERS, LOW_PRECISION, ExpansionBuilder, Value, expand_with, scalar
from graphfuse.dialect.matching import attributes
from graphfuse.dialect.shape_utils import normalize_axes, normalize_axis, require_dtype
from graphfuse.dialect.types import ALL_DTYPES, FLOAT_DTYPES, NUMERIC_DTYPES, TensorSig, numpy_dtype, sig_of_array

__all__ = ["DERIVED_OPS", "NumpyBuilder"]

_GROUP = "derived (defined by their expansion)"


class NumpyBuilder(ExpansionBuilder):
    """An ExpansionBuilder whose values are numpy arrays, each op run by its reference."""

    def sig(self, value: Value) -> TensorSig:
        found = sig_of_array(np.asarray(value))
        assert found is not None, value
        return found

    def op(self, name: str, *operands: Value, declared: TensorSig | None = None, **attrs: Any) -> Value:
        from graphfuse.dialect.evaluate import evaluate_op

        return evaluate_op(name, list(operands), attrs, None if declared is None else [declared])[0]

    def const(self, value: float | int, dtype: str) -> Value:
        return np.asarray(value, dtype=numpy_dtype(dtype))


Build = Callable[..., Value]  # (builder, *operands, **attrs) -> value


@dataclass(frozen=True)
class _Derived:
    name: str
    mindspore: tuple[str, ...]  # the MindSpore names (Appendix 1) it stands for
    operands: tuple[str, ...]
    build: Build
    summary: str
    doc: str
    attrs: tuple[AttrSpec, ...] = ()
    dtypes: frozenset[str] = FLOAT_DTYPES
    results: tuple[str, ...] = ("result",)
    #: operand shapes of the generated round-trip example (default: each (4, 8))
    example: tuple[tuple[int, ...], ...] | None = None


def _f32(build: Build) -> Callable[[dict[str, Any]], Callable[..., list[Value]]]:
    """``build`` with its attributes bound, computed in f32 for f16/bf16 operands (each f32 result rounded back
    once), its result(s) as a list."""

    def bound(attrs: dict[str, Any]) -> Callable[..., list[Value]]:
        def run(b: ExpansionBuilder, *xs: Value) -> list[Value]:
            dtype = b.sig(xs[0]).dtype
            narrow = dtype in LOW_PRECISION
            out = build(b, *[b.cast(x, "f32") for x in xs] if narrow else xs, **attrs)
            out = list(out) if isinstance(out, tuple) else [out]
            return [b.cast(v, dtype) if narrow and b.sig(v).dtype == "f32" else v for v in out]

        return run

    return bound


def _one(b: ExpansionBuilder, like: Value) -> Value:
    return scalar(b, 1.0, like)


# -- gradients by the op's output (MindSpore: (y, dy)) -------------------------------------------------------


def _sigmoid_grad(b: ExpansionBuilder, y: Value, dy: Value) -> Value:
    return b.mul(dy, b.mul(y, b.sub(_one(b, y), y)))


def _tanh_grad(b: ExpansionBuilder, y: Value, dy: Value) -> Value:
    return b.mul(dy, b.sub(_one(b, y), b.mul(y, y)))


def _sqrt_grad(b: ExpansionBuilder, y: Value, dy: Value) -> Value:
    return b.div(b.mul(dy, scalar(b, 0.5, y)), y)


def _rsqrt_grad(b: ExpansionBuilder, y: Value, dy: Value) -> Value:
    return b.mul(b.mul(b.mul(y, y), y), b.mul(dy, scalar(b, -0.5, y)))


# -- gradients by the op's input (MindSpore: (dy, x)) --------------------------------------------------------


def _relu_grad(b: ExpansionBuilder, dy: Value, x: Value) -> Value:
    return b.select(b.greater(x, scalar(b, 0.0, x)), dy, scalar(b, 0.0, dy))


def _silu_grad(b: ExpansionBuilder, dy: Value, x: Value) -> Value:
    s = b.sigmoid(x)
    return b.mul(dy, b.mul(s, b.add(_one(b, x), b.mul(x, b.sub(_one(b, x), s)))))


def _fast_gelu_grad(b: ExpansionBuilder, dy: Value, x: Value) -> Value:
    # d/dx x sigmoid(1.702 x) = s + 1.702 x s (1 - s)
    s = b.sigmoid(b.mul(x, scalar(b, 1.702, x)))
    inner = b.mul(b.mul(x, scalar(b, 1.702, x)), b.mul(s, b.sub(_one(b, x), s)))
    return b.mul(dy, b.add(s, inner))


def _gelu_grad(b: ExpansionBuilder, dy: Value, x: Value, approximate: str) -> Value:
    if approximate == "tanh":
        # d/dx 0.5 x (1 + tanh(u)), u = k (x + 0.044715 x^3): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 0.044715 x^2)
        k = math.sqrt(2.0 / math.pi)
        x2 = b.mul(x, x)
        u = b.mul(scalar(b, k, x), b.add(x, b.mul(scalar(b, 0.044715, x), b.mul(x2, x))))
        t = b.tanh(u)
        du = b.mul(scalar(b, k, x), b.add(_one(b, x), b.mul(scalar(b, 3 * 0.044715, x), x2)))
        left = b.mul(scalar(b, 0.5, x), b.add(_one(b, x), t))
        right = b.mul(b.mul(scalar(b, 0.5, x), x), b.mul(b.sub(_one(b, x), b.mul(t, t)), du))
        return b.mul(dy, b.add(left, right))
    # d/dx x Phi(x) = Phi(x) + x phi(x)
    cdf = b.mul(scalar(b, 0.5, x), b.add(_one(b, x), b.erf(b.mul(x, scalar(b, 1.0 / math.sqrt(2.0), x)))))
    pdf = b.mul(scalar(b, 1.0 / math.sqrt(2.0 * math.pi), x), b.exp(b.mul(b.mul(x, x), scalar(b, -0.5, x))))
    return b.mul(dy, b.add(cdf, b.mul(x, pdf)))


def _softplus_grad(b: ExpansionBuilder, dy: Value, x: Value) -> Value:
    return b.mul(dy, b.sigmoid(x))


# -- activations -------------------------------------------------------------------------------------------


def _log1p_exp_minus_abs(b: ExpansionBuilder, x: Value) -> Value:
    """log(1 + exp(-|x|)): what stable softplus and logistic loss add to max(x, 0) (exp never overflows)."""
    return b.log(b.add(_one(b, x), b.exp(b.neg(b.abs(x)))))


def _log1p(b: ExpansionBuilder, e: Value) -> Value:
    """log(1 + e) accurate to a few ulp also for tiny e, where log(1 + e) keeps only an absolute accuracy:
    log(u) * e / (u - 1) with u = 1 + e rounded (the division undoes u's rounding), and e where u is 1."""
    one = _one(b, e)
    u = b.add(one, e)
    return b.select(b.equal(u, one), e, b.mul(b.log(u), b.div(e, b.sub(u, one))))


def _softplus(b: ExpansionBuilder, x: Value, beta: float, threshold: float) -> Value:
    # log(1 + exp(z)) / beta, z = beta x, as max(z, 0) + log1p(exp(-|z|)): no overflow, and the far negative
    # tail keeps its relative accuracy; x itself where z > threshold (PyTorch's switch to the identity)
    z = x if beta == 1.0 else b.mul(x, scalar(b, beta, x))
    soft = b.add(b.maximum(z, scalar(b, 0.0, x)), _log1p(b, b.exp(b.neg(b.abs(z)))))
    if beta != 1.0:
        soft = b.div(soft, scalar(b, beta, x))
    if threshold == math.inf:
        return soft
    return b.select(b.greater(z, scalar(b, threshold, x)), x, soft)


def _hsigmoid(b: ExpansionBuilder, x: Value) -> Value:
    ramp = b.add(b.mul(x, scalar(b, 1.0 / 6.0, x)), scalar(b, 0.5, x))
    return b.minimum(b.maximum(ramp, scalar(b, 0.0, x)), _one(b, x))


def _hswish(b: ExpansionBuilder, x: Value) -> Value:
    return b.mul(x, _hsigmoid(b, x))


def _hshrink(b: ExpansionBuilder, x: Value, lambd: float) -> Value:
    return b.select(b.greater(b.abs(x), scalar(b, lambd, x)), x, scalar(b, 0.0, x))


def _leaky_relu(b: ExpansionBuilder, x: Value, negative_slope: float) -> Value:
    return b.select(b.greater(x, scalar(b, 0.0, x)), x, b.mul(x, scalar(b, negative_slope, x)))


def _elu(b: ExpansionBuilder, x: Value, alpha: float) -> Value:
    return b.select(b.greater(x, scalar(b, 0.0, x)), x, b.mul(b.expm1(x), scalar(b, alpha, x)))


def _cosh(b: ExpansionBuilder, x: Value) -> Value:
    return b.mul(b.add(b.exp(x), b.exp(b.neg(x))), scalar(b, 0.5, x))


def _sinh(b: ExpansionBuilder, x: Value) -> Value:
    return b.mul(b.sub(b.exp(x), b.exp(b.neg(x))), scalar(b, 0.5, x))


def _erfc(b: ExpansionBuilder, x: Value) -> Value:
    return b.sub(_one(b, x), b.erf(x))


# -- arithmetic ---------------------------------------------------------------------------------------------


def _addcmul(b: ExpansionBuilder, x: Value, t1: Value, t2: Value, value: float) -> Value:
    return b.add(x, b.mul(b.mul(t1, t2), scalar(b, value, x)))


def _fused_mul_add(b: ExpansionBuilder, x: Value, y: Value, z: Value) -> Value:
    return b.add(b.mul(x, y), z)


def _clamp_scalar(b: ExpansionBuilder, x: Value, low: float, high: float) -> Value:
    dtype = b.sig(x).dtype
    if dtype not in FLOAT_DTYPES:  # integer bounds: the float attributes clipped to the type's range
        info = np.iinfo(numpy_dtype(dtype))
        low, high = (int(np.clip(v, info.min, info.max)) for v in (low, high))
    return b.minimum(b.maximum(x, scalar(b, low, x)), scalar(b, high, x))


def _filled_like(value: float) -> Build:
    def build(b: ExpansionBuilder, x: Value) -> Value:
        return b.broadcast_to(b.const(value, b.sig(x).dtype), b.sig(x).shape)

    return build


def _fill_v2(b: ExpansionBuilder, value: Value, shape: list[int]) -> Value:
    if b.sig(value).rank != 0:
        raise VerifyError(f"value {b.sig(value)} must be a scalar (rank 0)")
    return b.broadcast_to(value, tuple(shape))


def _expand_dims(b: ExpansionBuilder, x: Value, axis: int) -> Value:
    shape = list(b.sig(x).shape)
    shape.insert(normalize_axis(axis, len(shape) + 1), 1)
    return b.op("reshape", x, declared=b.sig(x).with_shape(tuple(shape)))


def _squeeze(b: ExpansionBuilder, x: Value, axis: list[int]) -> Value:
    shape = b.sig(x).shape
    axes = set(normalize_axes(axis, len(shape))) if axis else {i for i, d in enumerate(shape) if d == 1}
    if any(shape[a] != 1 for a in axes):
        raise VerifyError(f"squeeze axes {sorted(axes)} of {b.sig(x)} must have size 1")
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return b.op("reshape", x, declared=b.sig(x).with_shape(kept))


def _identity(b: ExpansionBuilder, x: Value) -> Value:
    return x


def _bias_add_grad(b: ExpansionBuilder, dy: Value, axis: int) -> Value:
    rank = b.sig(dy).rank
    channel = normalize_axis(axis, rank)
    return b.reduce_sum(dy, axes=[i for i in range(rank) if i != channel], keep_dims=False)


def _sigmoid_cross_entropy(b: ExpansionBuilder, x: Value, z: Value) -> Value:
    # max(x, 0) - x z + log(1 + exp(-|x|)): the logistic loss without overflow
    zero = scalar(b, 0.0, x)
    return b.add(b.sub(b.maximum(x, zero), b.mul(x, z)), _log1p_exp_minus_abs(b, x))


def _sigmoid_cross_entropy_grad(b: ExpansionBuilder, x: Value, z: Value, dout: Value) -> Value:
    return b.mul(b.sub(b.sigmoid(x), z), dout)


def _div_mod(b: ExpansionBuilder, x: Value, y: Value, rounding_mode: str) -> Value:
    if rounding_mode == "floor":
        return b.floor_div(x, y)
    quotient = b.div(x, y)
    return b.trunc(quotient) if rounding_mode == "trunc" and b.sig(x).dtype in FLOAT_DTYPES else quotient


def _softmax_grad(b: ExpansionBuilder, y: Value, dy: Value, axis: int) -> Value:
    # dx = (dy - sum(dy y, axis)) y
    total = b.reduce_sum(b.mul(dy, y), axes=[axis], keep_dims=True)
    return b.mul(b.sub(dy, total), y)


def _log_softmax_grad(b: ExpansionBuilder, y: Value, dy: Value, axis: int) -> Value:
    # dx = dy - exp(y) sum(dy, axis)
    return b.sub(dy, b.mul(b.exp(y), b.reduce_sum(dy, axes=[axis], keep_dims=True)))


def _dropout_grad(b: ExpansionBuilder, dy: Value, mask: Value, keep_prob: float) -> Value:
    return b.mul(b.mul(dy, mask), scalar(b, 1.0 / keep_prob, dy))


def _assign_add(b: ExpansionBuilder, variable: Value, value: Value) -> Value:
    return b.add(variable, value)


def _same_shapes(b: ExpansionBuilder, *xs: Value) -> None:
    shapes = {b.sig(x).shape for x in xs}
    if len(shapes) != 1:
        raise VerifyError(f"operands {', '.join(str(b.sig(x)) for x in xs)} must have one shape")


def _extreme_grad(compare: str) -> Build:
    def build(b: ExpansionBuilder, x1: Value, x2: Value, dy: Value) -> tuple[Value, Value]:
        _same_shapes(b, x1, x2, dy)
        to_first = b.op(compare, x1, x2)  # ties go to the first operand
        zero = scalar(b, 0.0, dy)
        return b.select(to_first, dy, zero), b.select(to_first, zero, dy)

    return build


def _arg_with_value(arg: str, reduce: str) -> Build:
    def build(b: ExpansionBuilder, x: Value, axis: int, keep_dims: bool) -> tuple[Value, Value]:
        index = b.cast(b.op(arg, x, axis=axis, keep_dims=keep_dims), "i32")
        return index, b.op(reduce, x, axes=[axis], keep_dims=keep_dims)

    return build


def _all_axes(b: ExpansionBuilder, x: Value) -> list[int]:
    return list(range(b.sig(x).rank))


def _square_sum_all(b: ExpansionBuilder, x: Value, y: Value) -> tuple[Value, Value]:
    return tuple(b.reduce_sum(b.mul(v, v), axes=_all_axes(b, v), keep_dims=False) for v in (x, y))


def _equal_count(b: ExpansionBuilder, x: Value, y: Value) -> Value:
    matches = b.cast(b.equal(x, y), "i32")
    return b.reshape(b.reduce_sum(matches, axes=_all_axes(b, matches), keep_dims=False), (1,))


def _apply_momentum(b: ExpansionBuilder, var: Value, accum: Value, lr: Value, grad: Value, momentum: Value,
                    use_nesterov: bool) -> tuple[Value, Value]:
    accum = b.add(b.mul(accum, momentum), grad)
    step = b.add(b.mul(grad, lr), b.mul(b.mul(accum, momentum), lr)) if use_nesterov else b.mul(accum, lr)
    return b.sub(var, step), accum


def _adam(b: ExpansionBuilder, var: Value, m: Value, v: Value, beta1_power: Value, beta2_power: Value, lr: Value,
          beta1: Value, beta2: Value, epsilon: Value, grad: Value, use_nesterov: bool) -> tuple[Value, Value, Value]:
    one = _one(b, var)
    lr_t = b.div(b.mul(lr, b.sqrt(b.sub(one, beta2_power))), b.sub(one, beta1_power))
    m = b.add(m, b.mul(b.sub(grad, m), b.sub(one, beta1)))
    v = b.add(v, b.mul(b.sub(b.mul(grad, grad), v), b.sub(one, beta2)))
    moment = b.add(b.mul(m, beta1), b.mul(b.sub(one, beta1), grad)) if use_nesterov else m
    return b.sub(var, b.div(b.mul(lr_t, moment), b.add(b.sqrt(v), epsilon))), m, v


def _adam_weight_decay(b: ExpansionBuilder, var: Value, m: Value, v: Value, lr: Value, beta1: Value, beta2: Value,
                       epsilon: Value, decay: Value, grad: Value) -> tuple[Value, Value, Value]:
    one = _one(b, var)
    m = b.add(b.mul(beta1, m), b.mul(b.sub(one, beta1), grad))
    v = b.add(b.mul(beta2, v), b.mul(b.sub(one, beta2), b.mul(grad, grad)))
    update = b.add(b.div(m, b.add(b.sqrt(v), epsilon)), b.mul(decay, var))
    return b.sub(var, b.mul(lr, update)), m, v


def _reduced(b: ExpansionBuilder, loss: Value, reduction: str) -> Value:
    if reduction == "none":
        return loss
    reduce = b.reduce_mean if reduction == "mean" else b.reduce_sum
    return reduce(loss, axes=_all_axes(b, loss), keep_dims=False)


def _binary_cross_entropy(b: ExpansionBuilder, x: Value, y: Value, weight: Value, reduction: str) -> Value:
    one = _one(b, x)
    log_likelihood = b.add(b.mul(y, b.log(x)), b.mul(b.sub(one, y), b.log(b.sub(one, x))))
    return _reduced(b, b.neg(b.mul(weight, log_likelihood)), reduction)


def _bce_with_logits(b: ExpansionBuilder, x: Value, y: Value, weight: Value, pos_weight: Value,
                     reduction: str) -> Value:
    # (1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)): no overflow for any x
    one = _one(b, x)
    log_weight = b.add(one, b.mul(b.sub(pos_weight, one), y))
    softplus_neg = b.add(_log1p_exp_minus_abs(b, x), b.maximum(b.neg(x), scalar(b, 0.0, x)))
    loss = b.add(b.mul(b.sub(one, y), x), b.mul(log_weight, softplus_neg))
    return _reduced(b, b.mul(loss, weight), reduction)


def _softmax_cross_entropy(b: ExpansionBuilder, logits: Value, labels: Value) -> tuple[Value, Value]:
    _same_shapes(b, logits, labels)
    loss = b.neg(b.reduce_sum(b.mul(labels, b.log_softmax(logits, axis=-1)), axes=[-1], keep_dims=False))
    return loss, b.sub(b.softmax(logits, axis=-1), labels)


def _layer_norm_grad(b: ExpansionBuilder, x: Value, dy: Value, variance: Value, mean: Value, gamma: Value,
                     begin_norm_axis: int, begin_params_axis: int, epsilon: float) -> tuple[Value, Value, Value]:
    rank = b.sig(x).rank
    norm_axes = list(range(normalize_axis(begin_norm_axis, rank), rank))
    batch_axes = list(range(normalize_axis(begin_params_axis, rank)))
    rstd = b.rsqrt(b.add(variance, scalar(b, epsilon, x)))
    xhat = b.mul(b.sub(x, mean), rstd)
    dgamma = b.reduce_sum(b.mul(dy, xhat), axes=batch_axes, keep_dims=False)
    dbeta = b.reduce_sum(dy, axes=batch_axes, keep_dims=False)
    dxhat = b.mul(dy, gamma)
    centered = b.sub(b.sub(dxhat, b.reduce_mean(dxhat, axes=norm_axes, keep_dims=True)),
                     b.mul(xhat, b.reduce_mean(b.mul(dxhat, xhat), axes=norm_axes, keep_dims=True)))
    return b.mul(rstd, centered), dgamma, dbeta


def _repeat_interleave(b: ExpansionBuilder, x: Value, repeats: int, dim: int) -> Value:
    shape = list(b.sig(x).shape)
    axis = normalize_axis(dim, len(shape))
    if repeats < 0 or shape[axis] is None:
        raise VerifyError(f"repeats {repeats} must be >= 0 along a static dimension of {b.sig(x)}")
    inserted = [*shape[:axis + 1], 1, *shape[axis + 1:]]
    spread = b.broadcast_to(b.reshape(x, inserted), [*shape[:axis + 1], repeats, *shape[axis + 1:]])
    return b.reshape(spread, [*shape[:axis], shape[axis] * repeats, *shape[axis + 1:]])


def _adam_apply_one_with_decay(b: ExpansionBuilder, grad: Value, v: Value, m: Value, var: Value, lr: Value,
                               beta1: Value, one_minus_beta1: Value, beta2: Value, one_minus_beta2: Value,
                               decay: Value, epsilon: Value) -> tuple[Value, Value, Value]:
    m = b.add(b.mul(beta1, m), b.mul(one_minus_beta1, grad))
    v = b.add(b.mul(beta2, v), b.mul(one_minus_beta2, b.mul(grad, grad)))
    update = b.add(b.div(m, b.add(epsilon, b.sqrt(v))), b.mul(decay, var))
    return v, m, b.sub(var, b.mul(lr, update))


def _lamb_apply_optimizer(b: ExpansionBuilder, grad: Value, v: Value, m: Value, var: Value, beta1: Value,
                          one_minus_beta1: Value, beta2: Value, one_minus_beta2: Value, epsilon: Value,
                          steps: Value, do_use_weight: Value, weight_decay_rate: Value) -> tuple[Value, Value, Value]:
    one = _one(b, grad)
    m = b.add(b.mul(beta1, m), b.mul(one_minus_beta1, grad))
    v = b.add(b.mul(beta2, v), b.mul(one_minus_beta2, b.mul(grad, grad)))
    m_hat = b.div(m, b.sub(one, b.pow(beta1, steps)))
    v_hat = b.div(v, b.sub(one, b.pow(beta2, steps)))
    update = b.add(b.div(m_hat, b.add(b.sqrt(v_hat), epsilon)), b.mul(b.mul(do_use_weight, weight_decay_rate), var))
    return update, v, m


def _lamb_apply_weight(b: ExpansionBuilder, w_norm: Value, g_norm: Value, lr: Value, update: Value,
                       param: Value) -> Value:
    one, zero = _one(b, param), scalar(b, 0.0, param)
    trust = b.select(b.greater(w_norm, zero), b.select(b.greater(g_norm, zero), b.div(w_norm, g_norm), one), one)
    return b.sub(param, b.mul(b.mul(lr, trust), update))


def _clip_by_norm_no_div_sum(b: ExpansionBuilder, x: Value, threshold: Value, fill: Value, floor: Value) -> Value:
    above = b.greater(x, threshold)
    root = b.sqrt(b.select(above, x, fill))
    return b.maximum(b.select(above, root, x), floor)


def _dropout(b: ExpansionBuilder, x: Value, keep_prob: float, seed: int) -> tuple[Value, Value]:
    if not 0.0 < keep_prob <= 1.0:
        raise VerifyError(f"keep_prob must be in (0, 1], got {keep_prob}")
    kept = b.less(b.random_uniform(x, seed=seed), b.const(keep_prob, "f32"))
    mask = b.cast(kept, b.sig(x).dtype)
    return b.mul(b.mul(x, mask), scalar(b, 1.0 / keep_prob, x)), mask


def _standard_normal(b: ExpansionBuilder, like: Value, seed: int) -> Value:
    # Box-Muller: sqrt(-2 ln(1 - u1)) cos(2 pi u2), u1 and u2 two streams; 1 - u1 is in (0, 1], so ln is finite
    u1 = b.random_uniform(like, seed=seed)
    u2 = b.random_uniform(like, seed=seed ^ 0x5BD1E995)
    one = b.const(1.0, "f32")
    radius = b.sqrt(b.mul(b.log(b.sub(one, u1)), b.const(-2.0, "f32")))
    return b.mul(radius, b.cos(b.mul(u2, b.const(2.0 * math.pi, "f32"))))


_SEED = AttrSpec("seed", AttrKind.I64, default=0, doc="the random stream (graph.random_uniform's)")
_REDUCTION = AttrSpec("reduction", AttrKind.STRING, default="mean", choices=("none", "mean", "sum"),
                      doc="none (elementwise), mean or sum of the loss")
_NESTEROV = AttrSpec("use_nesterov", AttrKind.BOOL, default=False, doc="Nesterov's momentum")
_ALPHA = AttrSpec("alpha", AttrKind.F32, default=1.0, doc="the scale of exp(x) - 1 for x <= 0")
_AXIS_LAST = AttrSpec("axis", AttrKind.I64, default=-1, doc="the axis softmax ran along")
_DERIVED = (
    _Derived("sigmoid_grad", ("SigmoidGrad",), ("y", "dy"), _sigmoid_grad,
             "Gradient of sigmoid from its output: dy * y * (1 - y).", "`y` is sigmoid(x)."),
    _Derived("tanh_grad", ("TanhGrad",), ("y", "dy"), _tanh_grad,
             "Gradient of tanh from its output: dy * (1 - y^2).", "`y` is tanh(x)."),
    _Derived("sqrt_grad", ("SqrtGrad",), ("y", "dy"), _sqrt_grad,
             "Gradient of sqrt from its output: dy * 0.5 / y.", "`y` is sqrt(x); y = 0 gives +-inf or NaN."),
    _Derived("rsqrt_grad", ("RsqrtGrad",), ("y", "dy"), _rsqrt_grad,
             "Gradient of rsqrt from its output: -0.5 * dy * y^3.", "`y` is rsqrt(x)."),
    _Derived("relu_grad", ("ReluGrad",), ("dy", "x"), _relu_grad,
             "Gradient of relu: dy where x > 0, else 0.", "`x` may be relu's input or output: both are > 0 at "
             "the same places."),
    _Derived("silu_grad", ("SiLUGrad",), ("dy", "x"), _silu_grad,
             "Gradient of silu: dy * s * (1 + x (1 - s)), s = sigmoid(x).", ""),
    _Derived("fast_gelu_grad", ("FastGeluGrad", "FastGeLUGrad"), ("dy", "x"), _fast_gelu_grad,
             "Gradient of fast_gelu: dy * (s + 1.702 x s (1 - s)), s = sigmoid(1.702 x).", ""),
    _Derived("gelu_grad", ("GeLUGrad",), ("dy", "x"), _gelu_grad,
             "Gradient of gelu: dy * (Phi(x) + x phi(x)), or of its tanh form.",
             "approximate = \"none\": Phi(x) = 0.5 (1 + erf(x / sqrt 2)), phi the normal density; \"tanh\": "
             "the derivative of 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). MindSpore's GeLUGrad also "
             "takes gelu's output, which this form does not need.",
             (AttrSpec("approximate", AttrKind.STRING, default="none", choices=("none", "tanh"),
                       doc="as graph.gelu's"),)),
    _Derived("softplus_grad", ("SoftplusGrad", "SoftplusGradExt"), ("dy", "x"), _softplus_grad,
             "Gradient of softplus: dy * sigmoid(x).", ""),
    _Derived("softplus", ("Softplus", "SoftplusExt"), ("x",), _softplus,
             "log(1 + exp(beta x)) / beta, x where beta x > threshold (PyTorch's softplus).",
             "Computed as (max(z, 0) + log1p(exp(-|z|))) / beta, z = beta x, log1p(e) as log(u) e / (u - 1) with "
             "u = 1 + e: never overflows, and keeps its relative accuracy far below 0. The threshold compares z "
             "(a NaN never exceeds it); PyTorch's default is 20, this op's inf (no switch).",
             (AttrSpec("beta", AttrKind.F32, default=1.0, doc="the scale of x inside (and of the result outside)"),
              AttrSpec("threshold", AttrKind.F32, default=math.inf,
                       doc="above it (beta x > threshold) the result is x")),),
    _Derived("hsigmoid", ("HSigmoid",), ("x",), _hsigmoid, "Hard sigmoid: clamp(x / 6 + 0.5, 0, 1).", ""),
    _Derived("hswish", ("HSwish",), ("x",), _hswish, "Hard swish: x * hsigmoid(x).", ""),
    _Derived("hshrink", ("HShrink",), ("x",), _hshrink, "Hard shrink: x where |x| > lambd, else 0.", "",
             (AttrSpec("lambd", AttrKind.F32, default=0.5, doc="the threshold"),)),
    _Derived("leaky_relu", ("LeakyReLUExt",), ("x",), _leaky_relu,
             "x where x > 0, else negative_slope * x.", "",
             (AttrSpec("negative_slope", AttrKind.F32, default=0.01, doc="the slope below 0"),)),
    _Derived("elu", ("EluExt",), ("x",), _elu, "x where x > 0, else alpha * (exp(x) - 1).", "", (_ALPHA,)),
    _Derived("cosh", ("Cosh",), ("x",), _cosh, "Hyperbolic cosine, (exp(x) + exp(-x)) / 2.", ""),
    _Derived("sinh", ("Sinh",), ("x",), _sinh, "Hyperbolic sine, (exp(x) - exp(-x)) / 2.", ""),
    _Derived("erfc", ("Erfc",), ("x",), _erfc, "Complementary error function, 1 - erf(x).", ""),
    _Derived("addcmul", ("Addcmul",), ("x", "tensor1", "tensor2"), _addcmul,
             "x + value * tensor1 * tensor2.", "Operands broadcast like numpy.",
             (AttrSpec("value", AttrKind.F32, default=1.0, doc="the product's scale"),)),
    _Derived("fused_mul_add", ("FusedMulAdd",), ("x", "y", "z"), _fused_mul_add,
             "x * y + z, rounded after the product (no FMA).", "Operands broadcast like numpy."),
    _Derived("clamp_scalar", ("ClampScalar",), ("x",), _clamp_scalar, "min(max(x, low), high).",
             "NaN stays NaN.", (AttrSpec("low", AttrKind.F32, default=-math.inf, doc="the lower bound"),
                                AttrSpec("high", AttrKind.F32, default=math.inf, doc="the upper bound")),
             NUMERIC_DTYPES),
    _Derived("ones_like", ("OnesLike",), ("x",), _filled_like(1), "Ones of x's shape and type.", "",
             dtypes=NUMERIC_DTYPES),
    _Derived("zeros_like", ("ZerosLike",), ("x",), _filled_like(0), "Zeros of x's shape and type.", "",
             dtypes=NUMERIC_DTYPES),
    _Derived("fill_v2", ("FillV2",), ("value",), _fill_v2, "A tensor of `shape` holding the scalar value.", "",
             (AttrSpec("shape", AttrKind.I64_ARRAY, default=(), doc="the result's shape"),), NUMERIC_DTYPES,
             example=((),)),
    _Derived("expand_dims", ("ExpandDims",), ("x",), _expand_dims, "x with a dimension of size 1 inserted.", "",
             (AttrSpec("axis", AttrKind.I64, default=0, doc="its position in the result"),), ALL_DTYPES),
    _Derived("squeeze", ("Squeeze",), ("x",), _squeeze, "x without its dimensions of size 1 (or those of `axis`).",
             "", (AttrSpec("axis", AttrKind.I64_ARRAY, default=(), doc="the dimensions removed; empty: every "
                           "one of size 1"),), ALL_DTYPES),
    _Derived("identity", ("IdentityMath",), ("x",), _identity, "x itself.", "", dtypes=ALL_DTYPES),
    _Derived("bias_add_grad", ("BiasAddGrad",), ("dy",), _bias_add_grad,
             "Gradient of bias_add for its bias: dy summed over every axis but the channel one.", "",
             (AttrSpec("axis", AttrKind.I64, default=1, doc="the channel axis (1: NCHW and [N, C]; -1: NHWC)"),)),
    _Derived("sigmoid_cross_entropy_with_logits", ("SigmoidCrossEntropyWithLogits",), ("logits", "labels"),
             _sigmoid_cross_entropy, "Elementwise logistic loss: max(x, 0) - x z + log(1 + exp(-|x|)).", ""),
    _Derived("sigmoid_cross_entropy_with_logits_grad", ("SigmoidCrossEntropyWithLogitsGrad",),
             ("logits", "labels", "dout"), _sigmoid_cross_entropy_grad,
             "Gradient of the logistic loss for the logits: (sigmoid(x) - z) * dout.", ""),
    _Derived("div_mod", ("DivMod",), ("x", "y"), _div_mod, "x / y, rounded as rounding_mode says.",
             "\"none\": true division (integers truncate, as graph.div); \"floor\": graph.floor_div; \"trunc\": "
             "toward zero.", (AttrSpec("rounding_mode", AttrKind.STRING, default="none",
                                       choices=("none", "floor", "trunc"), doc="none, floor or trunc"),),
             NUMERIC_DTYPES),
    _Derived("softmax_grad", ("SoftmaxGradExt",), ("y", "dy"), _softmax_grad,
             "Gradient of softmax from its output: (dy - sum(dy * y, axis)) * y.", "", (_AXIS_LAST,)),
    _Derived("log_softmax_grad", ("LogSoftmaxGrad",), ("y", "dy"), _log_softmax_grad,
             "Gradient of log_softmax from its output: dy - exp(y) * sum(dy, axis).", "", (_AXIS_LAST,)),
    _Derived("dropout_grad", ("DropoutGrad",), ("dy", "mask"), _dropout_grad,
             "Gradient of dropout: dy * mask / keep_prob.", "`mask` is dropout's 0/1 mask, of dy's type.",
             (AttrSpec("keep_prob", AttrKind.F32, default=0.5, doc="the probability an element was kept"),)),
    _Derived("assign_add", ("AssignAdd",), ("variable", "value"), _assign_add,
             "The variable's new value variable + value (graphs are functional; see graph.assign).", "",
             dtypes=NUMERIC_DTYPES),
    _Derived("maximum_grad", ("MaximumGrad",), ("x1", "x2", "dy"), _extreme_grad("greater_equal"),
             "Gradients of maximum(x1, x2): dy to x1 where x1 >= x2, else to x2.", "One shape for all three.",
             results=("dx1", "dx2")),
    _Derived("minimum_grad", ("MinimumGrad",), ("x1", "x2", "dy"), _extreme_grad("less_equal"),
             "Gradients of minimum(x1, x2): dy to x1 where x1 <= x2, else to x2.", "One shape for all three.",
             results=("dx1", "dx2")),
    _Derived("argmax_with_value", ("ArgMaxWithValue",), ("x",), _arg_with_value("argmax", "reduce_max"),
             "The position (i32) and the value of the largest element along an axis.", "As graph.argmax and "
             "graph.reduce_max.", (AttrSpec("axis", AttrKind.I64, default=0, doc="the axis searched"),
                                   AttrSpec("keep_dims", AttrKind.BOOL, default=False, doc="keep it, of size 1")),
             NUMERIC_DTYPES, ("index", "value")),
    _Derived("argmin_with_value", ("ArgMinWithValue",), ("x",), _arg_with_value("argmin", "reduce_min"),
             "The position (i32) and the value of the smallest element along an axis.", "As graph.argmin and "
             "graph.reduce_min.", (AttrSpec("axis", AttrKind.I64, default=0, doc="the axis searched"),
                                   AttrSpec("keep_dims", AttrKind.BOOL, default=False, doc="keep it, of size 1")),
             NUMERIC_DTYPES, ("index", "value")),
    _Derived("square_sum_all", ("SquareSumAll",), ("x", "y"), _square_sum_all,
             "The sums of the squares of x and of y (two scalars).", "", results=("x_sum", "y_sum")),
    _Derived("equal_count", ("EqualCount",), ("x", "y"), _equal_count,
             "How many elements of x equal y's, as an i32 tensor of one element.", "", dtypes=NUMERIC_DTYPES),
    _Derived("apply_momentum", ("ApplyMomentum",), ("variable", "accumulation", "learning_rate", "gradient",
                                                    "momentum"), _apply_momentum,
             "Momentum SGD: accumulation * momentum + gradient, and the variable stepped by learning_rate times it.",
             "Results: the new variable and accumulation (graphs are functional: the caller stores them back). "
             "learning_rate and momentum are scalars.", (_NESTEROV,), results=("new_variable", "new_accumulation"),
             example=((4, 8), (4, 8), (), (4, 8), ())),
    _Derived("adam", ("Adam",), ("variable", "m", "v", "beta1_power", "beta2_power", "learning_rate", "beta1",
                                 "beta2", "epsilon", "gradient"), _adam,
             "Adam: m and v moved toward the gradient and its square, the variable stepped by "
             "lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon).",
             "MindSpore's Adam, its hyper-parameters scalar tensors; results the new variable, m and v.",
             (_NESTEROV,), results=("new_variable", "new_m", "new_v"),
             example=((4, 8), (4, 8), (4, 8), (), (), (), (), (), (), (4, 8))),
    _Derived("adam_weight_decay", ("AdamWeightDecay",), ("variable", "m", "v", "learning_rate", "beta1", "beta2",
                                                          "epsilon", "decay", "gradient"), _adam_weight_decay,
             "AdamW: the Adam step of m / (sqrt(v) + epsilon) plus decay * variable, scaled by the learning rate.",
             "No bias correction (MindSpore's AdamWeightDecay); results the new variable, m and v.",
             results=("new_variable", "new_m", "new_v"), example=((4, 8), (4, 8), (4, 8), (), (), (), (), (), (4, 8))),
    _Derived("binary_cross_entropy", ("BinaryCrossEntropy",), ("logits", "labels", "weight"),
             _binary_cross_entropy, "-weight * (y log(x) + (1 - y) log(1 - x)), reduced.",
             "`logits` are probabilities in (0, 1) (MindSpore's naming).", (_REDUCTION,)),
    _Derived("bce_with_logits_loss", ("BCEWithLogitsLoss",), ("logits", "labels", "weight", "pos_weight"),
             _bce_with_logits, "The logistic loss of logits, pos_weight on the positive term, weighted, reduced.",
             "(1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)), as PyTorch computes it.",
             (_REDUCTION,)),
    _Derived("layer_norm_grad", ("LayerNormGrad",), ("x", "dy", "variance", "mean", "gamma"), _layer_norm_grad,
             "Gradients of layer_norm for x, gamma and beta, from the forward pass's mean and variance.",
             "dx = rstd (dy gamma - mean(dy gamma) - xhat mean(dy gamma xhat)) over the normalized axes, "
             "xhat = (x - mean) rstd, rstd = (variance + epsilon)^-1/2; dgamma = sum(dy xhat) and dbeta = "
             "sum(dy) over the axes before begin_params_axis. mean and variance keep the normalized axes as "
             "size-1 dimensions.",
             (AttrSpec("begin_norm_axis", AttrKind.I64, default=-1, doc="first normalized axis"),
              AttrSpec("begin_params_axis", AttrKind.I64, default=-1, doc="first axis of gamma and beta"),
              AttrSpec("epsilon", AttrKind.F32, default=1e-7, doc="added to the variance (LayerNorm's)")),
             results=("dx", "dgamma", "dbeta"), example=((4, 8), (4, 8), (4, 1), (4, 1), (8,))),
    _Derived("repeat_interleave", ("RepeatInterleaveInt",), ("x",), _repeat_interleave,
             "Each element repeated `repeats` times along `dim`.", "",
             (AttrSpec("repeats", AttrKind.I64, default=1, doc="copies of each element"),
              AttrSpec("dim", AttrKind.I64, default=0, doc="the axis repeated along")), ALL_DTYPES),
    _Derived("adam_apply_one_with_decay", ("AdamApplyOneWithDecay", "AdamApplyOneWithDecayAssign"),
             ("grad", "v", "m", "variable", "learning_rate", "beta1", "one_minus_beta1", "beta2",
              "one_minus_beta2", "decay", "epsilon"), _adam_apply_one_with_decay,
             "BERT's fused AdamW step: new v, new m and the variable less lr * (m / (epsilon + sqrt(v)) + decay "
             "* variable).", "The hyper-parameters are scalar tensors, as MindSpore passes them; results in "
             "MindSpore's order (v, m, variable).", results=("new_v", "new_m", "new_variable"),
             example=((4, 8), (4, 8), (4, 8), (4, 8), (), (), (), (), (), (), ())),
    _Derived("lamb_apply_optimizer", ("LambApplyOptimizerAssign",),
             ("grad", "v", "m", "variable", "beta1", "one_minus_beta1", "beta2", "one_minus_beta2", "epsilon",
              "steps", "do_use_weight", "weight_decay_rate"), _lamb_apply_optimizer,
             "LAMB's update direction: bias-corrected m / (sqrt(v) + epsilon) plus the weight decay term, with "
             "the new v and m.", "Results (update, v, m); `steps` a float scalar.",
             results=("update", "new_v", "new_m"),
             example=((4, 8), (4, 8), (4, 8), (4, 8), (), (), (), (), (), (), (), ())),
    _Derived("lamb_apply_weight", ("LambApplyWeightAssign",), ("w_norm", "g_norm", "learning_rate", "update",
                                                                "param"), _lamb_apply_weight,
             "LAMB's step: param less lr * trust * update, trust = w_norm / g_norm when both are > 0, else 1.",
             "", example=((), (), (), (4, 8), (4, 8))),
    _Derived("clip_by_norm_no_div_sum", ("ClipByNormNoDivSum",), ("x", "threshold", "fill", "floor"),
             _clip_by_norm_no_div_sum, "max(select(x > threshold, sqrt(select(x > threshold, x, fill)), x), floor).",
             "The square root of a squared norm where it exceeds the threshold (ClipByNorm's helper)."),
    _Derived("dropout", ("Dropout",), ("x",), _dropout,
             "x * mask / keep_prob with mask 1 where a graph.random_uniform value is below keep_prob, and the mask.",
             "The same seed gives the same mask (pass a new seed per step).",
             (AttrSpec("keep_prob", AttrKind.F32, default=0.5, doc="the probability an element is kept"), _SEED),
             results=("output", "mask")),
    _Derived("standard_normal", ("StandardNormal",), ("like",), _standard_normal,
             "Pseudo-random N(0, 1) values of `like`'s shape (Box-Muller on two graph.random_uniform streams).",
             "Only `like`'s shape is read (MindSpore's shape argument); f32, or f16/bf16 when `like` is.",
             (_SEED,), ALL_DTYPES),
    _Derived("softmax_cross_entropy_with_logits", ("SoftmaxCrossEntropyWithLogits",), ("logits", "labels"),
             _softmax_cross_entropy, "Cross entropy of softmax(logits) against labels along the last axis, and "
             "its gradient softmax(logits) - labels.", "", results=("loss", "backprop")),
)

#: The derived ops by name, with the MindSpore names they stand for.
DERIVED_OPS: dict[str, tuple[str, ...]] = {d.name: d.mindspore for d in _DERIVED}


def _register(d: _Derived) -> None:
    bind = _f32(d.build)

    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        for operand, value in zip(d.operands, inputs, strict=True):
            require_dtype(value, d.dtypes, operand)
        if len({v.dtype for v in inputs}) != 1:
            raise VerifyError(f"operands {', '.join(map(str, inputs))} must have the same element type")
        return bind(attrs)(ExpansionBuilder(), *inputs)

    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(v) for v in bind(attrs)(NumpyBuilder(), *xs)]

    def expand(op: Any, rw: Any) -> bool:
        return expand_with(op, rw, bind(attributes(op)))

    expand.__doc__ = f"graph.{d.name} -> its build function's basic ops: {d.summary} Exact (its reference)."

    shapes = d.example or tuple((4, 8) for _ in d.operands)
    example_inputs = tuple(TensorSig(shape, "f32") for shape in shapes)
    register_op(OpSpec(
        name=d.name, group=_GROUP, summary=d.summary,
        operands=tuple(ValueSpec(n) for n in d.operands), results=tuple(ValueSpec(n) for n in d.results),
        infer=infer, reference=reference, attrs=d.attrs,
        doc=(f"{d.doc} " if d.doc else "") + f"MindSpore: {', '.join(d.mindspore)}. "
        + ("Float element types (f16/bf16 computed in f32, rounded once); " if d.dtypes == FLOAT_DTYPES
           else "Any element type; ")
        + "defined by its expansion into basic ops (graph-kernel-expand, graph-decompose), which the reference "
        "evaluates op by op.",
        example=(example_inputs, {}), widen_inputs=False,
    ))
    EXPANDERS[d.name] = expand


for _d in _DERIVED:
    _register(_d)
