"""Ops defined by their expansion into basic ops: MindSpore's Appendix 1 gradients and activations.

Each op here is one build function over :class:`~graphfuse.dialect.expansions.ExpansionBuilder` (``b.mul``,
``b.exp``, ...).  That function is at once

- the op's reference: run on numpy arrays, each basic op by its own reference (:class:`NumpyBuilder`), so the
  interpreter gives exactly what the expansion computes;
- its expander for graph-kernel-expand (:data:`~graphfuse.dialect.expansions.EXPANDERS`) and, through
  graph-decompose, its CPU lowering;
- its type inference: the same function planned on type signatures.

f16/bf16 operands are computed in f32 and rounded once at the end (``in_f32``), as the other composites are.
The tests check each against an independent formula in float64 and, for the gradients, against PyTorch's
autograd.  Operand orders are MindSpore's: the gradients by an op's output take ``(y, dy)`` (SigmoidGrad,
TanhGrad, SqrtGrad, RsqrtGrad), the others ``(dy, x)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.expansions import EXPANDERS, ExpansionBuilder, Value, expand_with, in_f32, scalar
from graphfuse.dialect.matching import attributes
from graphfuse.dialect.shape_utils import require_dtype
from graphfuse.dialect.types import FLOAT_DTYPES, TensorSig, numpy_dtype, sig_of_array

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


def _f32(build: Build) -> Callable[[dict[str, Any]], Build]:
    """``build`` with its attributes bound, computed in f32 for f16/bf16 operands."""
    return lambda attrs: in_f32(lambda b, *xs: build(b, *xs, **attrs))


def _one(b: ExpansionBuilder, like: Value) -> Value:
    return scalar(b, 1.0, like)


def _sigmoid(b: ExpansionBuilder, x: Value) -> Value:
    return b.sigmoid(x)


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
    s = _sigmoid(b, x)
    return b.mul(dy, b.mul(s, b.add(_one(b, x), b.mul(x, b.sub(_one(b, x), s)))))


def _fast_gelu_grad(b: ExpansionBuilder, dy: Value, x: Value) -> Value:
    # d/dx x sigmoid(1.702 x) = s + 1.702 x s (1 - s)
    s = _sigmoid(b, b.mul(x, scalar(b, 1.702, x)))
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
    return b.mul(dy, _sigmoid(b, x))


# -- activations -------------------------------------------------------------------------------------------


def _softplus(b: ExpansionBuilder, x: Value) -> Value:
    # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): no overflow, and no cancellation for large |x|
    zero = scalar(b, 0.0, x)
    return b.add(b.maximum(x, zero), b.log(b.add(_one(b, x), b.exp(b.neg(b.abs(x))))))


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


_ALPHA = AttrSpec("alpha", AttrKind.F32, default=1.0, doc="the scale of exp(x) - 1 for x <= 0")
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
             "log(1 + exp(x)), as max(x, 0) + log(1 + exp(-|x|)).", "Never overflows."),
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
)

#: The derived ops by name, with the MindSpore names they stand for.
DERIVED_OPS: dict[str, tuple[str, ...]] = {d.name: d.mindspore for d in _DERIVED}


def _register(d: _Derived) -> None:
    bind = _f32(d.build)

    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        for operand, value in zip(d.operands, inputs, strict=True):
            require_dtype(value, FLOAT_DTYPES, operand)
        if len({v.dtype for v in inputs}) != 1:
            raise VerifyError(f"operands {', '.join(map(str, inputs))} must have the same element type")
        return [bind(attrs)(ExpansionBuilder(), *inputs)]

    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(bind(attrs)(NumpyBuilder(), *xs))]

    def expand(op: Any, rw: Any) -> bool:
        return expand_with(op, rw, bind(attributes(op)))

    expand.__doc__ = f"graph.{d.name} -> its build function's basic ops: {d.summary} Exact (its reference)."

    example_inputs = tuple(TensorSig((4, 8), "f32") for _ in d.operands)
    register_op(OpSpec(
        name=d.name, group=_GROUP, summary=d.summary,
        operands=tuple(ValueSpec(n) for n in d.operands), results=(ValueSpec("result"),),
        infer=infer, reference=reference, attrs=d.attrs,
        doc=(f"{d.doc} " if d.doc else "") + f"MindSpore: {', '.join(d.mindspore)}. Float element types "
        "(f16/bf16 computed in f32, rounded once); defined by its expansion into basic ops "
        "(graph-kernel-expand, graph-decompose), which the reference evaluates op by op.",
        example=(example_inputs, {}), widen_inputs=False,
    ))
    EXPANDERS[d.name] = expand


for _d in _DERIVED:
    _register(_d)
