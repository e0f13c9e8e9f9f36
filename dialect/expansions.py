"""Expansions of composite graph ops into basic ones, shared by every pass that decomposes ops.

graph-kernel-expand runs them so that clustering can fuse the pieces; the
CPU lowering's graph-decompose runs some of them for ops it has no direct
lowering for; the lowering's fast math reuses the polynomial coefficients of
tanh and erf.  They are IR helpers over the dialect alone.

Every expander is a function ``(op, rw) -> bool`` in :data:`EXPANDERS`.  It
emits only basic ops (elementwise, casts, reductions, reshape and
broadcast_to) and rank-0 constants, all at the composite's location, and the
expansion has exactly the composite's result type.  Each expander is first
run on type signatures alone (:class:`ExpansionBuilder` in plan mode): when a
basic op would not verify or the result type would differ (dynamic shapes,
mostly), the op is left alone before any IR is created, and the reason is
logged at debug level.

Numerics, checked against the composite's reference by the tests:

- *Bit-exact in every element type*: square, relu, add_n, tile,
  squared_difference, bias_add (the composite's reference is the same
  composition of basic ops), and in f32 also sigmoid, silu, fast_gelu,
  softmax, log_softmax, reduce_mean, layer_norm, rms_norm, batch_norm, group_norm (the
  expansion repeats the reference's f32 arithmetic step by step).
- *Approximations*, stated per expander: gelu (both forms), tanh and erf have
  no exact expansion into basic ops: tanh and erf are within 3 f32 ulp of
  their references, gelu within 3e-6 relative (+1e-11 absolute).
- *f16/bf16*: the references of the float composites above compute in f32 and
  round once, so their expansions do too: the inputs are cast to f32, the f32
  expansion runs, and the result is cast back (what MindSpore's expanders do
  for float16 on Ascend).  Computing in the narrow type instead would round
  every intermediate: reduce_mean's sum could overflow f16 where the mean does
  not, and softmax would lose several ulp.  The results are then bit-exact
  where the f32 expansion is, and within 1 ulp of the narrow type otherwise,
  so no narrow-type op needs to be left unexpanded.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.matching import attributes, create_constant, create_op, sig
from graphfuse.dialect.shape_utils import normalize_axes, normalize_axis
from graphfuse.dialect.types import TensorSig, numpy_dtype

# graphfuse's logger (its level and format are set where the tools configure logging).
_log = logging.getLogger("graphfuse")

LOW_PRECISION = frozenset({"f16", "bf16"})

# --------------------------------------------------------------------------
# Building expansions: the same code plans on signatures, then emits IR.

Value = Any  # a TensorSig while planning, an ir.Value while emitting


class ExpansionBuilder:
    """Builds basic ops; with ``rw`` None it only computes result signatures (plan mode).

    ``b.mul(x, y)``, ``b.reduce_sum(x, axes=[1], keep_dims=True)``,
    ``b.reshape(x, (4, 1))``: every graph op is a method.  Creating an
    op the catalog rejects raises VerifyError (in plan mode, before any IR
    exists).
    """

    def __init__(self, rw: Any = None, loc: ir.Location | None = None):
        self.rw = rw
        self.loc = loc
        self._constants: dict[tuple[str, bytes], Value] = {}  # one constant per value within an expansion

    def sig(self, value: Value) -> TensorSig:
        return value if isinstance(value, TensorSig) else sig(value)

    def op(self, name: str, *operands: Value, declared: TensorSig | None = None, **attrs: Any) -> Value:
        declared_list = None if declared is None else [declared]
        if self.rw is None:
            spec = lookup_op(f"graph.{name}")
            assert spec is not None, name
            inputs = [self.sig(v) for v in operands]
            return infer_results(spec, inputs, spec.with_defaults(attrs), declared_list)[0]
        return create_op(self.rw, name, list(operands), self.loc, declared_list, **attrs).results[0]

    def const(self, value: float | int, dtype: str) -> Value:
        """A rank-0 constant (binary ops broadcast it)."""
        array = np.asarray(value, dtype=numpy_dtype(dtype))
        if self.rw is None:
            return TensorSig((), dtype)
        key = (dtype, array.tobytes())
        if key not in self._constants:
            self._constants[key] = create_constant(self.rw, array, self.loc)
        return self._constants[key]

    def reshape(self, x: Value, shape: Sequence[int | None]) -> Value:
        s = self.sig(x)
        return x if tuple(shape) == s.shape else self.op("reshape", x, declared=s.with_shape(tuple(shape)))

    def broadcast_to(self, x: Value, shape: Sequence[int | None]) -> Value:
        s = self.sig(x)
        return x if tuple(shape) == s.shape else self.op("broadcast_to", x, declared=s.with_shape(tuple(shape)))

    def cast(self, x: Value, dtype: str) -> Value:
        s = self.sig(x)
        return x if s.dtype == dtype else self.op("cast", x, declared=s.with_dtype(dtype))

    def __getattr__(self, name: str) -> Callable[..., Value]:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *operands, **attrs: self.op(name, *operands, **attrs)


Build = Callable[..., Value]  # (builder, *operand values) -> result value


def skip(op: ir.Operation, reason: str) -> bool:
    where = source_loc(op.location)
    _log.debug(f"graph-kernel-expand: {op.name}{f' at {where}' if where else ''} is not expanded: {reason}")
    return False


def expand_with(op: ir.Operation, rw: Any, build: Build) -> bool:
    """Replace ``op`` by ``build(builder, *operands)``, after a dry run on signatures: its one result, or a list
    of values, one per result of ``op``."""
    want = [sig(r) for r in op.results]
    try:
        planned = build(ExpansionBuilder(), *[sig(v) for v in op.operands])
    except VerifyError as error:
        return skip(op, f"a basic op would not verify: {error.message}")
    several = isinstance(planned, list)
    planned = planned if several else [planned]
    if planned != want:
        shown = (planned[0], want[0]) if len(planned) == len(want) == 1 else (planned, want)
        return skip(op, f"the expansion would give {shown[0]}, not {shown[1]}")
    values = build(ExpansionBuilder(rw, op.location), *op.operands)
    rw.replace_op(op, values if several else [values])
    return True


def in_f32(build: Build) -> Build:
    """``build`` run on f32 copies of f16/bf16 operands, its result cast back: one rounding, as the reference."""

    def wrapped(b: ExpansionBuilder, *operands: Value) -> Value:
        dtype = b.sig(operands[0]).dtype
        if dtype not in LOW_PRECISION:
            return build(b, *operands)
        return b.cast(build(b, *[b.cast(v, "f32") for v in operands]), dtype)

    return wrapped


def scalar(b: ExpansionBuilder, value: float, like: Value) -> Value:
    return b.const(value, b.sig(like).dtype)


def horner(b: ExpansionBuilder, s: Value, coefficients: Sequence[float]) -> Value:
    """sum_i coefficients[i] * s^i, by Horner's rule."""
    p = scalar(b, coefficients[-1], s)
    for c in reversed(coefficients[:-1]):
        p = b.add(b.mul(p, s), scalar(b, c, s))
    return p


def static_count(x: TensorSig, axes: Sequence[int]) -> int | None:
    dims = [x.shape[a] for a in axes]
    return None if None in dims else math.prod(dims)


# --------------------------------------------------------------------------
# Shared formulas (f32 in, f32 out).


def sigmoid_f32(b: ExpansionBuilder, x: Value) -> Value:
    """sigmoid(x) = (x >= 0 ? 1 : e) / (1 + e) with e = exp(-|x|): the reference's own steps.

    exp(-|x|) never overflows and the division is by 1 + e >= 1, so the
    result is accurate for every x (1 - sigmoid(x) never cancels).  Choosing
    the numerator before dividing rounds as the reference's two branches do,
    with one division instead of two.
    """
    e = b.exp(b.neg(b.abs(x)))
    d = b.add(e, scalar(b, 1.0, x))
    return b.div(b.select(b.greater_equal(x, scalar(b, 0.0, x)), scalar(b, 1.0, x), e), d)


# tanh(x) = x + x^3 P(x^2) for |x| < 0.625: a least-squares fit of (tanh(x) - x) / x^3 on Chebyshev nodes in x^2
# (0.8 ulp in f32 with Horner's rule); beyond, (1 - e) / (1 + e) with e = exp(-2|x|) >= 0.29 does not cancel.
TANH_SMALL = 0.625
TANH_P = (-0.33333334327, 0.13333302736, -0.053959127516, 0.021767975762, -0.0083411866799, 0.0022899219766)

# erf(x) = x P(x^2) for |x| < 1: a least-squares fit of erf(x) / x on Chebyshev nodes in x^2 (2.3 ulp in f32).
ERF_SMALL = 1.0
ERF_P = (1.1283791065, -0.37612318993, 0.11280130595, -0.026709949598, 0.0049160234630, -0.00056253961520)
# erfc(a) = t exp(-a^2 + Q(t)), t = 1 / (1 + a/2), a >= 0: Numerical Recipes' erfcc (Chebyshev fit,
# fractional error < 1.2e-7 for every a >= 0), so erfc keeps its relative accuracy in the far tail.
ERFC_Q = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)


def erfc_nonnegative(b: ExpansionBuilder, a: Value, a2: Value) -> Value:
    """erfc(a) for a = |x| >= 0 (a2 = a^2), relative error ~1e-7 (grows as a^2 ulp from rounding a^2)."""
    t = b.div(scalar(b, 1.0, a), b.add(scalar(b, 1.0, a), b.mul(a, scalar(b, 0.5, a))))
    return b.mul(t, b.exp(b.sub(horner(b, t, ERFC_Q), a2)))


def tanh_f32(b: ExpansionBuilder, x: Value) -> Value:
    a = b.abs(x)
    x2 = b.mul(x, x)
    small = b.add(x, b.mul(x, b.mul(x2, horner(b, x2, TANH_P))))
    e = b.exp(b.mul(a, scalar(b, -2.0, x)))
    t = b.div(b.sub(scalar(b, 1.0, x), e), b.add(scalar(b, 1.0, x), e))
    large = b.select(b.less(x, scalar(b, 0.0, x)), b.neg(t), t)
    return b.select(b.less(a, scalar(b, TANH_SMALL, x)), small, large)


def erf_f32(b: ExpansionBuilder, x: Value) -> Value:
    a = b.abs(x)
    x2 = b.mul(x, x)
    small = b.mul(x, horner(b, x2, ERF_P))
    one_minus = b.sub(scalar(b, 1.0, x), erfc_nonnegative(b, a, x2))
    large = b.select(b.less(x, scalar(b, 0.0, x)), b.neg(one_minus), one_minus)
    return b.select(b.less(a, scalar(b, ERF_SMALL, x)), small, large)


def one_pluserf_f32(b: ExpansionBuilder, z: Value) -> Value:
    """1 + erf(z), computed as erfc(|z|) for z <= -1 so the Gaussian tail keeps its relative accuracy."""
    a = b.abs(z)
    z2 = b.mul(z, z)
    small = b.add(scalar(b, 1.0, z), b.mul(z, horner(b, z2, ERF_P)))
    c = erfc_nonnegative(b, a, z2)
    large = b.select(b.less(z, scalar(b, 0.0, z)), c, b.sub(scalar(b, 2.0, z), c))
    return b.select(b.less(a, scalar(b, ERF_SMALL, z)), small, large)


# --------------------------------------------------------------------------
# Expanders: (op, rw) -> True after rewriting, False to leave the op alone.


def expand_square(op: ir.Operation, rw: Any) -> bool:
    """square(x) -> x * x.  Bit-exact for every element type (the reference is numpy's square, x * x)."""
    return expand_with(op, rw, lambda b, x: b.mul(x, x))


def expand_relu(op: ir.Operation, rw: Any) -> bool:
    """relu(x) -> select(x < 0, 0, x).  Bit-exact for every element type: the reference is that select (NaN and -0
    stay, as in PyTorch; maximum(x, 0) would make -0 into +0)."""
    return expand_with(op, rw, lambda b, x: b.select(b.less(x, scalar(b, 0, x)), scalar(b, 0, x), x))


def expand_add_n(op: ir.Operation, rw: Any) -> bool:
    """add_n(x0, x1, ..., xn) -> ((x0 + x1) + x2) + ... + xn.  Bit-exact: the reference sums in that order."""

    def build(b: ExpansionBuilder, *xs: Value) -> Value:
        total = xs[0]
        for x in xs[1:]:
            total = b.add(total, x)
        return total

    return expand_with(op, rw, build)


def expand_squared_difference(op: ir.Operation, rw: Any) -> bool:
    """squared_difference(a, b) -> d * d with d = a - b.  Bit-exact: the reference rounds d the same way."""

    def build(b: ExpansionBuilder, x: Value, y: Value) -> Value:
        d = b.sub(x, y)
        return b.mul(d, d)

    return expand_with(op, rw, build)


def expand_tile(op: ir.Operation, rw: Any) -> bool:
    """tile(x, multiples) -> reshape(broadcast_to(reshape(x, S1), S2), result shape).  Bit-exact (data movement).

    Every dim ``d`` tiled ``m > 1`` times gets a new size-1 dim in front of it
    (S1), which broadcasts to ``m`` (S2); merging each ``(m, d)`` pair gives the
    row-major order of numpy.tile.  A dim of size 1 broadcasts in place.
    Static shapes only (reshape and broadcast_to cannot recover tiled dynamic
    dims); all multiples 1 is the operand itself.
    """
    multiples = [int(m) for m in attributes(op)["multiples"]]
    x_sig = sig(op.operands[0])
    if all(m == 1 for m in multiples):
        return expand_with(op, rw, lambda b, x: x)
    if not x_sig.is_static:
        return skip(op, f"the tiled operand {x_sig} has dynamic dimensions")
    split: list[int] = []
    tiled: list[int] = []
    for d, m in zip(x_sig.shape, multiples, strict=True):
        if m != 1 and d != 1:
            split += [1, d]
            tiled += [m, d]
        else:
            split.append(d)
            tiled.append(d * m)

    result_shape = sig(op.results[0]).shape
    return expand_with(op, rw, lambda b, x: b.reshape(b.broadcast_to(b.reshape(x, split), tiled), result_shape))


def expand_bias_add(op: ir.Operation, rw: Any) -> bool:
    """bias_add(x, bias, axis) -> x + reshape(bias, (C, 1, ..., 1)), one 1 per dim after ``axis``.

    Bit-exact in every element type: the reference is that broadcast add.
    """
    x_sig = sig(op.operands[0])
    axis = normalize_axis(attributes(op)["axis"], x_sig.rank)

    def build(b: ExpansionBuilder, x: Value, bias: Value) -> Value:
        channels = b.sig(bias).shape[0]
        return b.add(x, b.reshape(bias, (channels,) + (1,) * (x_sig.rank - 1 - axis)))

    return expand_with(op, rw, build)


def expand_reduce_mean(op: ir.Operation, rw: Any) -> bool:
    """reduce_mean(x, axes) -> reduce_sum(x, axes) / n, n the (static) number of reduced elements.

    Bit-exact: the reference is that sum divided by n.  f16/bf16 sum in f32
    between casts, as the reference does (an f16 sum could overflow where the
    mean does not).  Empty ``axes`` is the operand itself.
    """
    attrs = attributes(op)
    x_sig = sig(op.operands[0])
    axes = normalize_axes(attrs["axes"], x_sig.rank)
    count = static_count(x_sig, axes)
    if count is None:
        return skip(op, f"a reduced dimension of {x_sig} is dynamic")

    if not axes:
        return expand_with(op, rw, lambda b, x: x)

    def build(b: ExpansionBuilder, x: Value) -> Value:
        total = b.reduce_sum(x, axes=axes, keep_dims=attrs["keep_dims"])
        return b.div(total, scalar(b, count, x))

    return expand_with(op, rw, in_f32(build))


def expand_sigmoid(op: ir.Operation, rw: Any) -> bool:
    """sigmoid(x) -> select(x >= 0, 1, e) / (1 + e), e = exp(-|x|).

    The reference's stable form, op for op: bit-exact in f32, and (through f32
    between casts) in f16/bf16.
    """
    return expand_with(op, rw, in_f32(sigmoid_f32))


def expand_silu(op: ir.Operation, rw: Any) -> bool:
    """silu(x) -> x * sigmoid(x), sigmoid expanded as in :func:`expand_sigmoid`.  Bit-exact (f16/bf16 via f32)."""
    return expand_with(op, rw, in_f32(lambda b, x: b.mul(x, sigmoid_f32(b, x))))


def expand_fast_gelu(op: ir.Operation, rw: Any) -> bool:
    """fast_gelu(x) -> x * sigmoid(1.702 x), sigmoid expanded stably.  Bit-exact (f16/bf16 via f32)."""
    return expand_with(op, rw, in_f32(lambda b, x: b.mul(x, sigmoid_f32(b, b.mul(x, scalar(b, 1.702, x))))))


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def expand_gelu(op: ir.Operation, rw: Any) -> bool:
    """gelu(x), both forms, computed in f32 (f16/bf16 between casts).

    ``approximate = "tanh"``: 0.5 x (1 + tanh(z)) = x sigmoid(2z) with
    2z = x (c1 + c2 x^2), c1 = 2 sqrt(2/pi), c2 = 0.044715 c1, sigmoid
    expanded stably; the sigmoid form avoids the cancellation of 1 + tanh(z)
    for negative x.

    ``approximate = "none"``: 0.5 x (1 + erf(z)), z = x / sqrt(2), with
    1 + erf(z) = 1 + z P(z^2) for |z| < 1, erfc(|z|) for z <= -1 and
    2 - erfc(z) for z >= 1 (P and erfc as in :func:`expand_erf`).

    Tolerance against the reference (float64, rounded once): in f32
    |expanded - gelu| <= 3e-6 |gelu| + 1e-11 (about 25 ulp at worst: exp of a
    rounded argument of size up to ~20 in the negative tail; 1 ulp of 1e-11
    covers the far tail, where the reference's own 1 + tanh / 1 + erf cancels
    in float64 and the expansion is the more accurate one); in f16/bf16 within
    1 ulp of the narrow type (or 1e-11).
    """
    if attributes(op)["approximate"] == "tanh":
        c1 = 2.0 * _SQRT_2_OVER_PI
        c2 = 0.044715 * c1

        def build(b: ExpansionBuilder, x: Value) -> Value:
            w = b.mul(x, b.add(scalar(b, c1, x), b.mul(scalar(b, c2, x), b.mul(x, x))))
            return b.mul(x, sigmoid_f32(b, w))
    else:

        def build(b: ExpansionBuilder, x: Value) -> Value:
            z = b.mul(x, scalar(b, 1.0 / math.sqrt(2.0), x))
            return b.mul(b.mul(x, scalar(b, 0.5, x)), one_pluserf_f32(b, z))

    return expand_with(op, rw, in_f32(build))


def expand_tanh(op: ir.Operation, rw: Any) -> bool:
    """tanh(x) -> x + x^3 P(x^2) for |x| < 0.625, else sign(x) (1 - e) / (1 + e) with e = exp(-2|x|).

    P is a degree-5 least-squares fit (coefficients in ``TANH_P``).
    Tolerance: within 3 ulp of the reference in f32 (measured at most 2 ulp:
    0.8 below 0.625, 1.9 above); NaN stays NaN, +-inf gives +-1, -0.0 stays
    -0.0.  f16/bf16 go through f32: within 1 ulp of the narrow type.
    """
    return expand_with(op, rw, in_f32(tanh_f32))


def expand_erf(op: ir.Operation, rw: Any) -> bool:
    """erf(x) -> x P(x^2) for |x| < 1, else sign(x) (1 - erfc(|x|)).

    P is a degree-5 least-squares fit (``ERF_P``); erfc(a) = t exp(-a^2 + Q(t)),
    t = 1 / (1 + a/2), is Numerical Recipes' erfcc, whose fractional error is
    below 1.2e-7 for every a >= 0 (``ERFC_Q``).  Tolerance: within 3 ulp of
    the reference in f32 (measured at most 2 ulp, absolute error <= 1.2e-7;
    Eigen's rational approximation is 7 ulp, Abramowitz-Stegun 7.1.26 1.5e-7
    absolute but no relative accuracy near 0); NaN stays NaN, +-inf gives +-1.
    f16/bf16 go through f32: within 1 ulp of the narrow type.
    """
    return expand_with(op, rw, in_f32(erf_f32))


def expand_softmax(op: ir.Operation, rw: Any) -> bool:
    """softmax(x, axis) -> e / reduce_sum(e), e = exp(x - reduce_max(x)), reductions with keep_dims.

    The reference's steps: bit-exact in f32 (f16/bf16 via f32).  Not expanded
    when the axis has static size 0 (reduce_max needs an element).
    """
    axis = normalize_axis(attributes(op)["axis"], sig(op.operands[0]).rank)

    def build(b: ExpansionBuilder, x: Value) -> Value:
        e = b.exp(b.sub(x, b.reduce_max(x, axes=[axis], keep_dims=True)))
        return b.div(e, b.reduce_sum(e, axes=[axis], keep_dims=True))

    return expand_with(op, rw, in_f32(build))


def expand_safe_softmax(op: ir.Operation, rw: Any) -> bool:
    """safe_softmax(x, axis) -> select(m == -inf, 0, e / reduce_sum(e)), e = exp(x - m), m = reduce_max(x).

    softmax's expansion and one compare per slice: the maximum is -inf exactly when every element is (a NaN
    makes it NaN), so the slices PyTorch zeroes.  Bit-exact in f32 (f16/bf16 via f32).
    """
    axis = normalize_axis(attributes(op)["axis"], sig(op.operands[0]).rank)

    def build(b: ExpansionBuilder, x: Value) -> Value:
        m = b.reduce_max(x, axes=[axis], keep_dims=True)
        e = b.exp(b.sub(x, m))
        probs = b.div(e, b.reduce_sum(e, axes=[axis], keep_dims=True))
        return b.select(b.equal(m, scalar(b, -math.inf, x)), scalar(b, 0.0, x), probs)

    return expand_with(op, rw, in_f32(build))


def expand_log_softmax(op: ir.Operation, rw: Any) -> bool:
    """log_softmax(x, axis) -> s - log(reduce_sum(exp(s))), s = x - reduce_max(x), keep_dims reductions.

    The reference's steps: bit-exact in f32 (f16/bf16 via f32).
    """
    axis = normalize_axis(attributes(op)["axis"], sig(op.operands[0]).rank)

    def build(b: ExpansionBuilder, x: Value) -> Value:
        s = b.sub(x, b.reduce_max(x, axes=[axis], keep_dims=True))
        return b.sub(s, b.log(b.reduce_sum(b.exp(s), axes=[axis], keep_dims=True)))

    return expand_with(op, rw, in_f32(build))


def expand_layer_norm(op: ir.Operation, rw: Any) -> bool:
    """layer_norm(x, gamma, beta) -> (x - mean) / sqrt(var + eps) * gamma + beta over axes A = [begin, rank).

    mean = reduce_sum(x, A) / n, var = reduce_sum((x - mean)^2, A) / n (two
    passes, as the reference), reductions with keep_dims, n static.  Bit-exact
    in f32 (f16/bf16 via f32).
    """
    attrs = attributes(op)
    x_sig = sig(op.operands[0])
    axes = list(range(normalize_axis(attrs["begin_norm_axis"], x_sig.rank), x_sig.rank))
    count = static_count(x_sig, axes)
    if count is None:
        return skip(op, f"a normalized dimension of {x_sig} is dynamic")

    def build(b: ExpansionBuilder, x: Value, gamma: Value, beta: Value) -> Value:
        n = scalar(b, count, x)
        mean = b.div(b.reduce_sum(x, axes=axes, keep_dims=True), n)
        dev = b.sub(x, mean)
        var = b.div(b.reduce_sum(b.mul(dev, dev), axes=axes, keep_dims=True), n)
        normalized = b.div(dev, b.sqrt(b.add(var, scalar(b, attrs["epsilon"], x))))
        return b.add(b.mul(normalized, gamma), beta)

    return expand_with(op, rw, in_f32(build))


def expand_rms_norm(op: ir.Operation, rw: Any) -> bool:
    """rms_norm(x, gamma) -> x / sqrt(reduce_sum(x * x, -1) / n + eps) * gamma, n = x.shape[-1] static.

    The reference's steps: bit-exact in f32 (f16/bf16 via f32).
    """
    attrs = attributes(op)
    x_sig = sig(op.operands[0])
    last = x_sig.rank - 1
    count = static_count(x_sig, [last])
    if count is None:
        return skip(op, f"the normalized last dimension of {x_sig} is dynamic")

    def build(b: ExpansionBuilder, x: Value, gamma: Value) -> Value:
        ms = b.div(b.reduce_sum(b.mul(x, x), axes=[last], keep_dims=True), scalar(b, count, x))
        return b.mul(b.div(x, b.sqrt(b.add(ms, scalar(b, attrs["epsilon"], x)))), gamma)

    return expand_with(op, rw, in_f32(build))


def expand_batch_norm(op: ir.Operation, rw: Any) -> bool:
    """batch_norm(x, scale, offset, mean, var) -> (x - mean') / sqrt(var + eps)' * scale' + offset'.

    p' is the 1-D parameter p reshaped to (C, 1, ..., 1) so it broadcasts along
    channel axis 1; sqrt(var + eps) is computed on the C values first.  The
    reference's steps: bit-exact in f32 (f16/bf16 via f32).
    """
    eps = attributes(op)["epsilon"]

    def build(b: ExpansionBuilder, x: Value, scale: Value, offset: Value, mean: Value, var: Value) -> Value:
        rank = b.sig(x).rank

        def per_channel(p: Value) -> Value:
            return b.reshape(p, (b.sig(p).shape[0],) + (1,) * (rank - 2))

        denom = per_channel(b.sqrt(b.add(var, scalar(b, eps, var))))
        normalized = b.div(b.sub(x, per_channel(mean)), denom)
        return b.add(b.mul(normalized, per_channel(scale)), per_channel(offset))

    return expand_with(op, rw, in_f32(build))


def expand_group_norm(op: ir.Operation, rw: Any) -> bool:
    """group_norm(x, gamma, beta) -> layer_norm's steps over each sample's groups, then gamma and beta per channel.

    x (N x C x ...) is reshaped to (N, G, C / G * rest), mean = reduce_sum(., 2) / m and var = reduce_sum((x -
    mean)^2, 2) / m (two passes, as the reference), (x - mean) / sqrt(var + eps) is reshaped back and scaled
    by gamma and shifted by beta, both reshaped to (C, 1, ..., 1).  Bit-exact in f32 (f16/bf16 via f32).
    The dims after the batch must be static (at most the batch is dynamic).
    """
    attrs = attributes(op)
    x_sig = sig(op.operands[0])
    groups = int(attrs["num_groups"])
    if None in x_sig.shape[1:]:
        return skip(op, f"a normalized dimension of {x_sig} is dynamic")
    per_group = math.prod(x_sig.shape[1:]) // groups
    per_channel = (x_sig.shape[1],) + (1,) * (x_sig.rank - 2)

    def build(b: ExpansionBuilder, x: Value, gamma: Value, beta: Value) -> Value:
        grouped = b.reshape(x, (x_sig.shape[0], groups, per_group))
        count = scalar(b, per_group, x)
        mean = b.div(b.reduce_sum(grouped, axes=[2], keep_dims=True), count)
        dev = b.sub(grouped, mean)
        var = b.div(b.reduce_sum(b.mul(dev, dev), axes=[2], keep_dims=True), count)
        normalized = b.reshape(b.div(dev, b.sqrt(b.add(var, scalar(b, attrs["epsilon"], x)))), x_sig.shape)
        return b.add(b.mul(normalized, b.reshape(gamma, per_channel)), b.reshape(beta, per_channel))

    return expand_with(op, rw, in_f32(build))


#: dialect op name -> its expander.
EXPANDERS: dict[str, Callable[[ir.Operation, Any], bool]] = {
    "add_n": expand_add_n,
    "batch_norm": expand_batch_norm,
    "bias_add": expand_bias_add,
    "erf": expand_erf,
    "fast_gelu": expand_fast_gelu,
    "gelu": expand_gelu,
    "group_norm": expand_group_norm,
    "layer_norm": expand_layer_norm,
    "log_softmax": expand_log_softmax,
    "reduce_mean": expand_reduce_mean,
    "relu": expand_relu,
    "rms_norm": expand_rms_norm,
    "safe_softmax": expand_safe_softmax,
    "sigmoid": expand_sigmoid,
    "silu": expand_silu,
    "softmax": expand_softmax,
    "square": expand_square,
    "squared_difference": expand_squared_difference,
    "tanh": expand_tanh,
    "tile": expand_tile,
}
