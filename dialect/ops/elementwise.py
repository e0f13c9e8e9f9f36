"""Elementwise ops: unary math, cast, binary arithmetic/comparison/logic, select.

References get f32 for every float type (f16/bf16 are widened by the
interpreter) and the integer types as themselves.  Integer arithmetic wraps on
overflow, like MLIR ``arith``.  Binary ops and ``select`` broadcast like numpy
but never promote: operands must share the element type.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.run_checks import IntegerDivisionByZeroError, check_failed
from graphfuse.dialect.shape_utils import (
    broadcast_shapes,
    dims_equal,
    require_declared,
    require_dtype,
    same_dtype,
)
from graphfuse.dialect.types import (
    ALL_DTYPES,
    BOOL_DTYPE,
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    TensorSig,
    numpy_dtype,
)

_BOOL = frozenset({BOOL_DTYPE})
#: the bitwise ops' element types: the integers and the booleans (where they are the logical ops)
_BITS = (NUMERIC_DTYPES - FLOAT_DTYPES) | _BOOL
ArrayFn = Callable[..., np.ndarray]

# --------------------------------------------------------------------------
# Numeric kernels shared by several references.

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# Beyond |x| = 6, 1 - erf(|x|) < 3e-17: erf is +-1 in float64.
_ERF_SATURATION = 6.0


def _erf(x: np.ndarray) -> np.ndarray:
    """Vectorized erf, accurate to a few ulp of float64; returns x's dtype.

    Uses erf(a) = 2/sqrt(pi) * exp(-a^2) * sum_n 2^n a^(2n+1) / (2n+1)!!, whose
    terms are all positive (no cancellation), for |x| < 6 and +-1 beyond.
    """
    x64 = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(x64), _ERF_SATURATION)
    a2 = a * a
    term = a.copy()
    total = a.copy()
    for n in range(1, 400):  # |x| = 6 converges in about 100 terms
        term = term * (2.0 * a2 / (2 * n + 1))
        total += term
        if not np.any(term > 1e-17 * total):  # NaN compares false: it cannot stall the loop
            break
    magnitude = np.where(np.abs(x64) >= _ERF_SATURATION, 1.0, _TWO_OVER_SQRT_PI * np.exp(-a2) * total)
    return np.copysign(magnitude, x64).astype(x.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-|x|) never overflows; pick the form whose denominator is >= 1.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype)


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    x64 = x.astype(np.float64)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)
        out = 0.5 * x64 * (1.0 + np.tanh(inner))
    else:
        out = 0.5 * x64 * (1.0 + _erf(x64 / math.sqrt(2.0)))
    return out.astype(x.dtype)


def _require_nonzero(b: np.ndarray) -> None:
    """An integer division by zero raises, as eager PyTorch does (``b`` broadcast to the result: a zero nothing
    is divided by is no error)."""
    if np.any(b == 0):
        raise check_failed(IntegerDivisionByZeroError)


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C-style division: truncates toward zero, MIN / -1 wraps to MIN; x / 0 raises."""
    a, b = np.broadcast_arrays(a, b)
    _require_nonzero(b)
    safe = np.where((b == 0) | (b == -1), np.ones_like(b), b)
    q = a // safe
    # Floor division rounds down; step back toward zero when the signs differ and it was inexact.
    q = np.where((a % safe != 0) & ((a < 0) != (safe < 0)), q + 1, q)
    q = np.where(b == -1, np.negative(a), q)  # negation wraps MIN to MIN, as divsi does
    return np.where(b == 0, np.zeros_like(q), q).astype(a.dtype)


def _fmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's fmod: the remainder of the division truncated toward zero, the sign of ``a``; integers: x % 0 raises."""
    if not _is_int(a):
        return np.fmod(a, b)
    a, b = np.broadcast_arrays(a, b)
    _require_nonzero(b)
    special = (b == 0) | (b == -1)  # x % -1 is 0, and MIN % -1 must not trap
    return np.where(special, np.zeros_like(a), np.fmod(a, np.where(special, np.ones_like(b), b))).astype(a.dtype)


def _floors_away(r: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where a truncated division's remainder ``r`` is non-zero with the opposite sign of ``b``: there the
    floor division is one lower, and its remainder ``r + b``."""
    return (r != 0) & ((r < 0) != (b < 0))


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's remainder: the remainder of the floor division, the sign of ``b``: fmod, plus ``b`` when the
    signs of a non-zero remainder and ``b`` differ.  Floats: a zero remainder is fmod's (the sign of ``a``);
    x % 0 is NaN.  Integers: x % 0 raises."""
    r = _fmod(a, b)
    return np.asarray(np.where(_floors_away(r, b), r + b, r)).astype(a.dtype)


def _float_floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's float floor_divide: (a - fmod(a, b)) / b, one lower where the remainder's sign is not ``b``'s,
    rounded to the nearest integer below (a zero quotient takes the sign of a / b); a / b where b is 0.

    Not floor(a / b): -7 // inf is -1 (the remainder -7 is not inf's sign), inf // 2 is NaN (fmod(inf, 2) is).
    """
    a, b = np.broadcast_arrays(a, b)
    r = np.fmod(a, b)
    quotient = (a - r) / b
    quotient = np.where(_floors_away(r, b), quotient - 1, quotient)
    floored = np.floor(quotient)
    floored = np.where(quotient - floored > 0.5, floored + 1, floored)
    floored = np.where(quotient == 0, np.copysign(np.zeros_like(quotient), a / b), floored)
    return np.where(b == 0, a / b, floored).astype(a.dtype)


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The quotient rounded toward -inf.  Floats: :func:`_float_floor_div` (PyTorch's floor_divide).  Integers:
    the truncated quotient (:func:`_int_div`: x // 0 raises, MIN // -1 wraps to MIN) less one when a non-zero
    remainder and ``b`` have opposite signs."""
    if not _is_int(a):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return _float_floor_div(a, b)
    a, b = np.broadcast_arrays(a, b)
    q = _int_div(a, b)
    r = _fmod(a, b)
    return np.where(_floors_away(r, b), q - 1, q).astype(a.dtype)


def _int_pow(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """numpy's integer power (wrapping) for e >= 0; for e < 0 the truncated 1 / a^-e."""
    a, e = np.broadcast_arrays(a, e)
    out = np.power(a, np.where(e < 0, np.zeros_like(e), e))
    one = np.ones_like(a)
    negative_exp = np.where(a == 1, one, np.where(a == -1, np.where(e % 2 == 0, one, -one), np.zeros_like(a)))
    return np.where(e < 0, negative_exp, out).astype(a.dtype)


def _is_int(x: np.ndarray) -> bool:
    return np.issubdtype(x.dtype, np.integer)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _int_div(a, b) if _is_int(a) else np.divide(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _is_int(a):
        return _int_pow(a, b)
    # numpy's power has fast paths for a scalar or broadcast exponent (x*x for 2, sqrt for 0.5) that
    # round and treat -0 / -inf differently from powf: materialize the exponent so the value never
    # depends on the exponent's shape (every element goes through powf).
    a, b = np.broadcast_arrays(a, b)
    return np.power(a, np.array(b))  # np.array keeps rank 0 (np.ascontiguousarray would make it (1,))


# --------------------------------------------------------------------------
# Unary elementwise ops.

_UNARY_DOC = "Integer results wrap on overflow (abs and neg of the minimum value give the minimum value)."

# name -> (reference on one array, allowed operand dtypes, summary)
_UNARY: dict[str, tuple[ArrayFn, frozenset[str], str]] = {
    "abs": (np.abs, NUMERIC_DTYPES, "Elementwise absolute value."),
    "neg": (np.negative, NUMERIC_DTYPES, "Elementwise negation."),
    "exp": (np.exp, FLOAT_DTYPES, "Elementwise natural exponential."),
    "log": (np.log, FLOAT_DTYPES, "Elementwise natural logarithm (-inf at 0, NaN below)."),
    "sqrt": (np.sqrt, FLOAT_DTYPES, "Elementwise square root (NaN for negative inputs)."),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), FLOAT_DTYPES, "Elementwise reciprocal square root, 1 / sqrt(x)."),
    "reciprocal": (lambda x: 1.0 / x, FLOAT_DTYPES, "Elementwise reciprocal, 1 / x."),
    "tanh": (np.tanh, FLOAT_DTYPES, "Elementwise hyperbolic tangent."),
    "sigmoid": (_sigmoid, FLOAT_DTYPES, "Elementwise logistic function, 1 / (1 + exp(-x))."),
    "erf": (_erf, FLOAT_DTYPES, "Elementwise Gauss error function."),
    "relu": (lambda x: np.where(x < 0, np.zeros_like(x), x), NUMERIC_DTYPES,
             "Elementwise max(x, 0), as PyTorch's: x where it is not below 0 (NaN stays NaN, -0 stays -0)."),
    "fast_gelu": (
        lambda x: x * _sigmoid(1.702 * x),
        FLOAT_DTYPES,
        "Sigmoid approximation of GELU, x * sigmoid(1.702 x).",
    ),
    "silu": (lambda x: x * _sigmoid(x), FLOAT_DTYPES, "Elementwise SiLU (swish), x * sigmoid(x)."),
    "square": (np.square, NUMERIC_DTYPES, "Elementwise square, x * x."),
    "floor": (np.floor, FLOAT_DTYPES, "Elementwise round toward -inf."),
    "ceil": (np.ceil, FLOAT_DTYPES, "Elementwise round toward +inf."),
    "round": (np.round, FLOAT_DTYPES, "Elementwise round to nearest integer, halves to even (2.5 -> 2)."),
    "sign": (lambda x: np.sign(np.where(np.isnan(x), np.zeros_like(x), x)) if not _is_int(x) else np.sign(x),
             NUMERIC_DTYPES, "Elementwise sign: -1, 0 or 1 (+0 for +-0 and NaN, as PyTorch's)."),
    "sin": (np.sin, FLOAT_DTYPES, "Elementwise sine (radians)."),
    "cos": (np.cos, FLOAT_DTYPES, "Elementwise cosine (radians)."),
    "logical_not": (np.logical_not, _BOOL, "Elementwise boolean negation."),
    "bitwise_not": (np.invert, _BITS, "Elementwise bitwise complement, ~x (of a boolean: its negation)."),
    "isfinite": (
        np.isfinite,
        FLOAT_DTYPES,
        "Elementwise test for a value that is neither infinite nor NaN (i1 result).",
    ),
    "isinf": (np.isinf, FLOAT_DTYPES, "Elementwise test for +inf or -inf (i1 result)."),
    "isnan": (np.isnan, FLOAT_DTYPES, "Elementwise test for NaN (i1 result)."),
    "trunc": (np.trunc, FLOAT_DTYPES, "Elementwise round toward zero."),
    "expm1": (np.expm1, FLOAT_DTYPES, "Elementwise exp(x) - 1, accurate near 0."),
    "acos": (np.arccos, FLOAT_DTYPES, "Elementwise arc cosine in [0, pi] (NaN outside [-1, 1])."),
    "asin": (np.arcsin, FLOAT_DTYPES, "Elementwise arc sine in [-pi/2, pi/2] (NaN outside [-1, 1])."),
    "atan": (np.arctan, FLOAT_DTYPES, "Elementwise arc tangent in [-pi/2, pi/2]."),
    "acosh": (np.arccosh, FLOAT_DTYPES, "Elementwise inverse hyperbolic cosine (NaN below 1)."),
    "asinh": (np.arcsinh, FLOAT_DTYPES, "Elementwise inverse hyperbolic sine."),
}
_BOOL_RESULT_UNARY = frozenset({"isfinite", "isinf", "isnan"})


def _make_unary_infer(allowed: frozenset[str], bool_result: bool):
    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        require_dtype(inputs[0], allowed, "operand")
        return [inputs[0].with_dtype(BOOL_DTYPE) if bool_result else inputs[0]]

    return infer


def _make_unary_reference(fn: ArrayFn):
    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        with np.errstate(all="ignore"):  # inf/NaN/wrap-around are the intended answers
            return [np.asarray(fn(xs[0]))]

    return reference


def _example_dtype(allowed: frozenset[str]) -> str:
    return "f32" if "f32" in allowed else sorted(allowed)[0]


for _name, (_fn, _allowed, _summary) in _UNARY.items():
    register_op(
        OpSpec(
            name=_name,
            group="unary elementwise",
            summary=_summary,
            operands=(ValueSpec("operand"),),
            results=(ValueSpec("result"),),
            infer=_make_unary_infer(_allowed, _name in _BOOL_RESULT_UNARY),
            reference=_make_unary_reference(_fn),
            doc=_UNARY_DOC if _allowed == NUMERIC_DTYPES else "",
            example=((TensorSig((4, 8), _example_dtype(_allowed)),), {}),
        )
    )


# --------------------------------------------------------------------------
# coarse_exp: the exponential of PyTorch's x86 CPU attention kernel for f16/bf16.

#: f32 constants of the approximation, as bit patterns: log2(e), and the operand bounds below which the
#: result is 0 and above which it is +inf (about ln of the smallest normal and of the largest float).
COARSE_EXP_LOG2E = 0x3FB8AA3B
COARSE_EXP_LOW = 0xC2AEAC50
COARSE_EXP_HIGH = 0x42B17218
#: the cubic that corrects the fraction f of x log2(e): 2^f ~ 1 + f - (c0 + c1 f + c2 f^2 + c3 f^3)
COARSE_EXP_CUBIC = (0.00010703434948458272, 0.30354260500649682, -0.22433836478672356, -0.079204240219773236)


def _f32_bits(bits: int) -> np.float32:
    return np.array(bits, dtype=np.uint32).view(np.float32)[()]


def _fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """a * b + c rounded once to f32 (the product of two f32 is exact in f64; the sum rounds twice only when
    it lands on an f32 tie after rounding to f64, far below the tests' reach)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(np.float32)


def coarse_exp_reference(x: np.ndarray) -> np.ndarray:
    """:ref:`graph.coarse_exp` in numpy, step by step as the lowering computes it."""
    x = np.asarray(x, np.float32)
    c0, c1, c2, c3 = (np.float32(c) for c in COARSE_EXP_CUBIC)
    with np.errstate(all="ignore"):
        t = (x * _f32_bits(COARSE_EXP_LOG2E)).astype(np.float32)
        fraction = (t - np.floor(t)).astype(np.float32)
        correction = _fma32(fraction, _fma32(fraction, _fma32(fraction, c3, c2), c1), c0)
        t = (t - correction).astype(np.float32)
        # 2^t from the bits of 2^23 (t + 127): the integer part lands in the exponent field, the fraction in the
        # mantissa (the sum is rounded to f32 first, which keeps about 17 bits of the fraction)
        biased = _fma32(np.float32(2.0**23), t, np.float32(2.0**23 * 127))
        inside = (x >= _f32_bits(COARSE_EXP_LOW)) & (x <= _f32_bits(COARSE_EXP_HIGH))
        bits = np.trunc(np.where(inside, biased, 0)).astype(np.int32)
    result = bits.view(np.float32)
    result = np.where(x < _f32_bits(COARSE_EXP_LOW), np.float32(0), result)
    result = np.where(x > _f32_bits(COARSE_EXP_HIGH), np.float32(np.inf), result)
    return np.where(np.isnan(x), x, result).astype(np.float32)


def _infer_coarse_exp(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                      ) -> list[TensorSig]:
    require_dtype(inputs[0], frozenset({"f32"}), "operand")
    return [inputs[0]]


register_op(
    OpSpec(
        name="coarse_exp",
        group="unary elementwise",
        summary="exp to about 1.2e-4, as PyTorch's x86 CPU attention computes its f16/bf16 softmax.",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        infer=_infer_coarse_exp,
        reference=lambda xs, attrs, results: [coarse_exp_reference(xs[0])],
        doc=(
            "f32 only. With `t = x * log2(e)` and `f = t - floor(t)`, `t' = t - (c0 + f (c1 + f (c2 + f c3)))` "
            "(three fused multiply-adds, cubic coefficients 1.0703e-4, 0.30354, -0.22434, -0.079204), and the "
            "result is the float whose bits are the integer `2^23 t' + 2^23 127` (computed as one f32 fused "
            "multiply-add, then truncated). Relative error within 1.3e-4 of exp (bf16 rounds to 3.9e-3): "
            "the exponentials that PyTorch's CPU flash attention rounds to f16/bf16 for the product with "
            "V, reproduced bit for bit (the torch front end uses it there; `exp` elsewhere). `x` below "
            "-87.3365 gives 0, above 88.7228 +inf; NaN gives NaN (PyTorch's kernel gives -0 there)."
        ),
        example=((TensorSig((4, 8), "f32"),), {}),
    )
)


_GELU_APPROXIMATIONS = ("none", "tanh")


def _infer_gelu(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    # The IR parser checks choices, but evaluate_op passes Python values straight through.
    if attrs["approximate"] not in _GELU_APPROXIMATIONS:
        raise VerifyError(f'attribute \'approximate\' must be "none" or "tanh", got {attrs["approximate"]!r}')
    require_dtype(inputs[0], FLOAT_DTYPES, "operand")
    return [inputs[0]]


def _gelu_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [_gelu(xs[0], attrs["approximate"])]


register_op(
    OpSpec(
        name="gelu",
        group="unary elementwise",
        summary="Elementwise Gaussian error linear unit.",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        attrs=(
            AttrSpec(
                "approximate",
                AttrKind.STRING,
                default="none",
                choices=_GELU_APPROXIMATIONS,
                doc="'none': exact form with erf; 'tanh': the tanh approximation.",
            ),
        ),
        infer=_infer_gelu,
        reference=_gelu_reference,
        doc=(
            'With approximate = "none", gelu(x) = 0.5 x (1 + erf(x / sqrt(2))); with approximate = "tanh", '
            "gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."
        ),
        example=((TensorSig((4, 8), "f32"),), {"approximate": "tanh"}),
    )
)

# --------------------------------------------------------------------------
# cast


def _infer_cast(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (result,) = require_declared(declared)
    source = inputs[0]
    if result.rank != source.rank or not all(dims_equal(a, b) for a, b in zip(source.shape, result.shape, strict=True)):
        raise VerifyError(f"result type {result} must have the shape of operand {source}")
    # The operand's sizes fill the declared dynamic dims: at run time they give the result's shape.
    return [result.with_shape(tuple(r if s is None else s for s, r in zip(source.shape, result.shape, strict=True)))]


def _cast_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    target = results[0].dtype
    if target == BOOL_DTYPE:
        return [x != 0]
    target_np = numpy_dtype(target)
    if target in FLOAT_DTYPES or not np.issubdtype(x.dtype, np.floating):
        # int -> int wraps (keeps the low bits); everything -> float rounds to nearest even (inf on overflow).
        with np.errstate(over="ignore"):
            return [x.astype(target_np)]
    info = np.iinfo(target_np)
    # -2^(bits-1) and 2^(bits-1) are exact in float64, unlike the int64 maximum.
    low, high = float(info.min), -float(info.min)
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64))
        in_range = (t >= low) & (t < high)  # False for NaN
        out = np.where(in_range, t, 0.0).astype(target_np)
        out = np.where(t >= high, info.max, out)
        out = np.where(t < low, info.min, out)
    return [out.astype(target_np)]


register_op(
    OpSpec(
        name="cast",
        group="unary elementwise",
        summary="Elementwise conversion to the element type of the result.",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        infer=_infer_cast,
        reference=_cast_reference,
        result_param="dtype",
        doc=(
            "The result type gives the target element type; its shape must be the operand's. "
            "float -> int truncates toward zero and saturates to the integer range, NaN -> 0. "
            "int or float -> i1 is x != 0 (NaN -> true). i1 -> number is 0 or 1. "
            "float -> float and int -> float round to nearest, ties to even. "
            "int -> int sign-extends when widening and keeps the low bits (wraps) when narrowing."
        ),
        example=((TensorSig((4, 8), "f32"),), {}),
        example_result=TensorSig((4, 8), "f16"),
    )
)

# --------------------------------------------------------------------------
# Binary elementwise ops.

_ANY_BINARY_DOC = "Operands broadcast like numpy and must share the element type (no implicit promotion)."

# name -> (reference on two arrays, allowed operand dtypes, result is i1, summary, extra doc)
_BINARY: dict[str, tuple[ArrayFn, frozenset[str], bool, str, str]] = {
    "add": (np.add, NUMERIC_DTYPES, False, "Elementwise sum.", "Integers wrap on overflow."),
    "sub": (np.subtract, NUMERIC_DTYPES, False, "Elementwise difference.", "Integers wrap on overflow."),
    "mul": (np.multiply, NUMERIC_DTYPES, False, "Elementwise product.", "Integers wrap on overflow."),
    "div": (
        _div,
        NUMERIC_DTYPES,
        False,
        "Elementwise quotient.",
        "Floats follow IEEE 754 (x / 0 is +-inf or NaN). Integer division truncates toward zero like C and "
        "arith.divsi (-7 / 2 = -3); MIN / -1 wraps to MIN; x / 0 raises (IntegerDivisionByZeroError), as eager "
        "PyTorch does.",
    ),
    "pow": (
        _pow,
        NUMERIC_DTYPES,
        False,
        "Elementwise power, lhs raised to rhs.",
        "Floats follow numpy.power (negative base with fractional exponent gives NaN). Integers: numpy "
        "semantics for exponents >= 0 (wrapping on overflow); a negative exponent gives 0 unless the base is "
        "1 (result 1) or -1 (result -1 or 1 by the exponent's parity), the truncated value of 1 / base^-exp.",
    ),
    "maximum": (np.maximum, NUMERIC_DTYPES, False, "Elementwise maximum.", "NaN in either operand gives NaN."),
    "minimum": (np.minimum, NUMERIC_DTYPES, False, "Elementwise minimum.", "NaN in either operand gives NaN."),
    "equal": (np.equal, ALL_DTYPES, True, "Elementwise lhs == rhs (i1 result).", "NaN compares unequal."),
    "not_equal": (np.not_equal, ALL_DTYPES, True, "Elementwise lhs != rhs (i1 result).", "NaN != NaN is true."),
    "greater": (np.greater, NUMERIC_DTYPES, True, "Elementwise lhs > rhs (i1 result).", "False with NaN."),
    "greater_equal": (np.greater_equal, NUMERIC_DTYPES, True, "Elementwise lhs >= rhs (i1 result).", ""),
    "less": (np.less, NUMERIC_DTYPES, True, "Elementwise lhs < rhs (i1 result).", "False with NaN."),
    "less_equal": (np.less_equal, NUMERIC_DTYPES, True, "Elementwise lhs <= rhs (i1 result).", ""),
    "logical_and": (np.logical_and, _BOOL, False, "Elementwise boolean and.", ""),
    "logical_or": (np.logical_or, _BOOL, False, "Elementwise boolean or.", ""),
    "bitwise_and": (np.bitwise_and, _BITS, False, "Elementwise bitwise and.", "Booleans: logical and."),
    "bitwise_or": (np.bitwise_or, _BITS, False, "Elementwise bitwise or.", "Booleans: logical or."),
    "bitwise_xor": (np.bitwise_xor, _BITS, False, "Elementwise bitwise exclusive or.", "Booleans: not equal."),
    "atan2": (
        np.arctan2, FLOAT_DTYPES, False, "Elementwise arc tangent of lhs / rhs in [-pi, pi], by the signs of both.",
        "atan2(y, x) with y = lhs, x = rhs, as C's atan2.",
    ),
    "mod": (
        _fmod, NUMERIC_DTYPES, False, "Elementwise remainder of the division truncated toward zero (C's fmod).",
        "The result has the sign of lhs (-7 mod 2 = -1). Floats: x mod 0 is NaN. Integers: x mod 0 raises.",
    ),
    "floor_mod": (
        _floor_mod, NUMERIC_DTYPES, False, "Elementwise remainder of the floor division (Python's %).",
        "The result has the sign of rhs (-7 floor_mod 2 = 1); a float zero remainder is fmod's, the sign of lhs "
        "(PyTorch's remainder). Floats: x floor_mod 0 is NaN. Integers: x floor_mod 0 raises.",
    ),
    "floor_div": (
        _floor_div, NUMERIC_DTYPES, False, "Elementwise quotient rounded toward -inf.",
        "Floats: as PyTorch's floor_divide, (lhs - fmod(lhs, rhs)) / rhs rounded down (-7 floor_div inf = -1, "
        "inf floor_div 2 = NaN, x floor_div 0 = x / 0). Integers: -7 floor_div 2 = -4; x floor_div 0 raises "
        "and MIN floor_div -1 wraps to MIN.",
    ),
}


def _make_binary_infer(allowed: frozenset[str], bool_result: bool):
    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        dtype = same_dtype(inputs)
        require_dtype(inputs[0], allowed, "operands")
        return [TensorSig(broadcast_shapes(*inputs), BOOL_DTYPE if bool_result else dtype)]

    return infer


def _make_binary_reference(fn: ArrayFn):
    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(fn(xs[0], xs[1]))]

    return reference


for _name, (_fn, _allowed, _bool_result, _summary, _doc) in _BINARY.items():
    register_op(
        OpSpec(
            name=_name,
            group="binary elementwise",
            summary=_summary,
            operands=(ValueSpec("lhs"), ValueSpec("rhs")),
            results=(ValueSpec("result"),),
            infer=_make_binary_infer(_allowed, _bool_result),
            reference=_make_binary_reference(_fn),
            doc=f"{_ANY_BINARY_DOC} {_doc}".strip(),
            example=((TensorSig((4, 8), _example_dtype(_allowed)), TensorSig((8,), _example_dtype(_allowed))), {}),
        )
    )

# --------------------------------------------------------------------------
# select


def _infer_select(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    cond, lhs, rhs = inputs
    require_dtype(cond, _BOOL, "condition")
    dtype = same_dtype([lhs, rhs], "branches")
    return [TensorSig(broadcast_shapes(cond, lhs, rhs), dtype)]


register_op(
    OpSpec(
        name="select",
        group="binary elementwise",
        summary="Elementwise choice: on_true where the condition holds, else on_false.",
        operands=(ValueSpec("condition"), ValueSpec("on_true"), ValueSpec("on_false")),
        results=(ValueSpec("result"),),
        infer=_infer_select,
        reference=lambda xs, attrs, results: [np.where(xs[0], xs[1], xs[2])],
        doc="The condition is i1; the branches share an element type (any); all three broadcast like numpy.",
        example=((TensorSig((4, 1), "i1"), TensorSig((4, 8), "f32"), TensorSig((8,), "f32")), {}),
    )
)

# --------------------------------------------------------------------------
# Special values: what the elementwise ops give at the edges (docs/dialect.md renders this table).  Graphs from
# PyTorch must compute what eager PyTorch does; test/python/test_edge_semantics.py checks the reference
# interpreter and the compiled code against torch on NaN, +-inf, +-0, denormals and integer extremes.

#: op -> its results at the edges, where IEEE arithmetic alone does not say (or PyTorch says otherwise)
SPECIAL_VALUES: dict[str, str] = {
    "relu": "x unless x < 0: NaN stays NaN, -0 stays -0 (PyTorch's; max(x, 0) would give +0).",
    "sign": "NaN, +0 and -0 give +0 (PyTorch's; numpy gives NaN for NaN).",
    "maximum": "NaN in either operand gives NaN; maximum(-0, +0) is +0.",
    "minimum": "NaN in either operand gives NaN; minimum(-0, +0) is -0.",
    "div": "Floats: IEEE's x / 0 (+-inf, NaN for 0 / 0). Integers: truncated toward zero; x div 0 raises "
           "IntegerDivisionByZeroError, a RuntimeError like eager's `RuntimeError: ZeroDivisionError`, in the "
           "reference interpreter and in compiled code (docs/lowering.md, run-time checks); MIN div -1 wraps to MIN, "
           "as eager's floor_divide gives it (eager's division rounded toward zero dies of SIGFPE there).",
    "mod": "C's fmod: the sign of lhs; x mod 0, inf mod y and NaN give NaN; x mod inf is x. Integers: x mod 0 "
           "raises IntegerDivisionByZeroError, as eager does; MIN mod -1 is 0.",
    "floor_mod": "PyTorch's remainder: fmod, plus rhs where a non-zero remainder's sign differs from rhs's; a zero "
                 "remainder keeps lhs's sign (4.0 floor_mod -2.0 is +0; Python's % gives -0); -7 floor_mod inf is "
                 "inf. Integers: x floor_mod 0 raises IntegerDivisionByZeroError, as eager does; MIN floor_mod -1 "
                 "is 0.",
    "floor_div": "PyTorch's floor_divide: (lhs - fmod(lhs, rhs)) / rhs, one less where the remainder's sign differs "
                 "from rhs's, then rounded down: -7 floor_div inf is -1, inf floor_div 2 is NaN, x floor_div 0 is "
                 "x / 0 (+-inf, NaN for 0 / 0). Integers: x floor_div 0 raises IntegerDivisionByZeroError, as "
                 "eager does; MIN floor_div -1 wraps to MIN.",
    "pow": "C's pow: pow(x, 0) is 1 and pow(1, y) is 1 even for NaN; pow(-8, 1/3) is NaN.",
    "round": "Halves to even (2.5 -> 2, -0.5 -> -0).",
    "tanh": "Odd: -0 gives -0; +-inf give +-1.",
    "expm1": "-0 gives -0; -inf gives -1.",
    "gelu": "gelu(+inf) is +inf, gelu(-inf) is -0 and the largest floats give themselves; eager PyTorch's f32 "
            "kernel gives NaN at both infinities and overflows to inf near the largest float, and flushes results "
            "below about 1e-11 to -0.",
    "sqrt": "sqrt(-0) is -0; negative numbers give NaN.",
    "rsqrt": "rsqrt(+-0) is +-inf; rsqrt(inf) is 0; negative numbers give NaN.",
    "log": "log(+-0) is -inf; negative numbers give NaN.",
    "logical_not": "Boolean operands (here and everywhere) are bytes: any non-zero byte is true, as numpy and "
                   "PyTorch read a bool array.",
}
