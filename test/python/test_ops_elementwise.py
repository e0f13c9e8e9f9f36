"""Reference semantics and verification of the elementwise ops (unary, cast, binary, select)."""

from __future__ import annotations

import math
import operator
import warnings

import ml_dtypes
import numpy as np
import pytest

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.run_checks import IntegerDivisionByZeroError
from graphfuse.dialect.types import TensorSig

FLOAT_NP = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
INT_NP = {"i8": np.int8, "i32": np.int32, "i64": np.int64}
# Relative tolerance per float type: a few ulp of the result type.
RTOL = {"f32": 2e-6, "f16": 2e-3, "bf16": 1.6e-2}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _loop(fn, *arrays: np.ndarray) -> np.ndarray:
    """Apply a Python scalar function elementwise, with numpy broadcasting of the inputs."""
    bcast = np.broadcast_arrays(*[a.astype(np.float64) for a in arrays])
    out = np.empty(bcast[0].shape, dtype=np.float64)
    for index in np.ndindex(out.shape):
        out[index] = fn(*(float(b[index]) for b in bcast))
    return out


def _infer(name: str, sigs: list[TensorSig], attrs: dict | None = None, declared=None) -> list[TensorSig]:
    spec = lookup_op(f"graph.{name}")
    return infer_results(spec, sigs, spec.with_defaults(attrs or {}), declared)


# --------------------------------------------------------------------------
# Unary ops

# Independent scalar formulas (Python math), evaluated in float64.
FLOAT_UNARY = {
    "abs": abs,
    "neg": lambda x: -x,
    "exp": math.exp,
    "log": math.log,
    "sqrt": math.sqrt,
    "rsqrt": lambda x: 1.0 / math.sqrt(x),
    "reciprocal": lambda x: 1.0 / x,
    "tanh": math.tanh,
    "sigmoid": _sigmoid,
    "erf": math.erf,
    "relu": lambda x: max(x, 0.0),
    "gelu": lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
    "fast_gelu": lambda x: x * _sigmoid(1.702 * x),
    "silu": lambda x: x * _sigmoid(x),
    "square": lambda x: x * x,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": round,  # Python's round is half-to-even too
    "sign": lambda x: float((x > 0) - (x < 0)),
    "sin": math.sin,
    "cos": math.cos,
    "trunc": math.trunc,
    "expm1": math.expm1,
    "atan": math.atan,
    "asinh": math.asinh,
    "acos": math.acos,
    "asin": math.asin,
    "acosh": math.acosh,
}
POSITIVE_ONLY = {"log", "sqrt", "rsqrt", "reciprocal"}
#: Ops defined on part of the line: the values they are checked on.
DOMAINS = {"acos": [-1.0, -0.75, -0.5, 0.0, 0.25, 0.5, 1.0], "asin": [-1.0, -0.75, -0.5, 0.0, 0.25, 0.5, 1.0],
           "acosh": [1.0, 1.25, 1.5, 2.0, 3.75]}
INT_UNARY = {
    "abs": abs,
    "neg": lambda x: -x,
    "relu": lambda x: max(x, 0),
    "square": lambda x: x * x,
    "sign": lambda x: (x > 0) - (x < 0),
}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_unary_float_matches_math(name: str, dtype: str) -> None:
    values = [0.25, 0.5, 1.5, 2.0, 3.75] if name in POSITIVE_ONLY else [-2.5, -1.25, -0.5, 0.0, 0.5, 1.5, 2.5, 3.0]
    x = np.array(DOMAINS.get(name, values), dtype=FLOAT_NP[dtype])
    (out,) = evaluate_op(name, [x])
    assert out.dtype == x.dtype
    np.testing.assert_allclose(out.astype(np.float64), _loop(FLOAT_UNARY[name], x), rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64"])
@pytest.mark.parametrize("name", sorted(INT_UNARY))
def test_unary_int_matches_python(name: str, dtype: str) -> None:
    values = [-11, -3, -1, 0, 1, 2, 11]
    x = np.array(values, dtype=INT_NP[dtype])
    (out,) = evaluate_op(name, [x])
    assert out.dtype == x.dtype
    assert out.tolist() == [INT_UNARY[name](v) for v in values]


def test_neg_and_abs_of_int_min_wrap() -> None:
    x = np.array([-128, 127], dtype=np.int8)
    assert evaluate_op("neg", [x])[0].tolist() == [-128, -127]
    assert evaluate_op("abs", [x])[0].tolist() == [-128, 127]


def test_logical_not_on_i1() -> None:
    (out,) = evaluate_op("logical_not", [np.array([True, False])])
    assert out.dtype == np.bool_ and out.tolist() == [False, True]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_isfinite_returns_i1(dtype: str) -> None:
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], dtype=FLOAT_NP[dtype])
    (out,) = evaluate_op("isfinite", [x])
    assert out.dtype == np.bool_
    assert out.tolist() == [True, False, False, False, True]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_isinf_and_isnan_return_i1(dtype: str) -> None:
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], dtype=FLOAT_NP[dtype])
    assert evaluate_op("isinf", [x])[0].tolist() == [False, True, True, False, False]
    assert evaluate_op("isnan", [x])[0].tolist() == [False, False, False, True, False]


def test_inverse_trigonometry_outside_its_domain_is_nan() -> None:
    assert all(np.isnan(evaluate_op(name, [np.array([-1.5, 1.5], np.float32)])[0]).tolist() == [True, True]
               for name in ("acos", "asin"))
    assert np.isnan(evaluate_op("acosh", [np.array([0.5], np.float32)])[0]).all()


def test_round_is_half_to_even() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.6], dtype=np.float32)
    assert evaluate_op("round", [x])[0].tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 3.0]


def test_erf_accurate_to_float32_rounding() -> None:
    x = np.concatenate([np.linspace(-7, 7, 561), [1e-30, -1e-20, 1e-6, 5.9, 6.0, 6.1]]).astype(np.float32)
    (out,) = evaluate_op("erf", [x])
    expected = np.array([math.erf(float(v)) for v in x])
    np.testing.assert_allclose(out, expected, rtol=1.2e-7, atol=0)


def test_erf_special_values() -> None:
    x = np.array([np.inf, -np.inf, np.nan, -0.0], dtype=np.float32)
    (out,) = evaluate_op("erf", [x])
    assert out[:2].tolist() == [1.0, -1.0] and np.isnan(out[2]) and np.signbit(out[3])


def test_gelu_tanh_approximation() -> None:
    x = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0], dtype=np.float32)
    (out,) = evaluate_op("gelu", [x], {"approximate": "tanh"})
    c = math.sqrt(2.0 / math.pi)
    expected = [0.5 * v * (1.0 + math.tanh(c * (v + 0.044715 * v**3))) for v in x.tolist()]
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)


def test_gelu_default_is_erf_form() -> None:
    x = np.array([-1.0, 1.0], dtype=np.float32)
    (exact,) = evaluate_op("gelu", [x])
    (approx,) = evaluate_op("gelu", [x], {"approximate": "tanh"})
    np.testing.assert_allclose(exact, [-0.15865525, 0.8413447], rtol=1e-6)
    assert not np.array_equal(exact, approx)


def test_gelu_rejects_unknown_approximation() -> None:
    with pytest.raises(VerifyError, match="approximate"):
        evaluate_op("gelu", [np.zeros(2, np.float32)], {"approximate": "fast"})


@pytest.mark.parametrize("name", ["sigmoid", "silu", "fast_gelu", "gelu", "exp", "log", "reciprocal"])
def test_extreme_inputs_raise_no_warnings(name: str) -> None:
    x = np.array([-1e30, -100.0, 0.0, 100.0, 1e30], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (out,) = evaluate_op(name, [x])
    if name == "sigmoid":
        assert out.tolist() == [0.0, np.float32(math.exp(-100.0)), 0.5, 1.0, 1.0]


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("exp", "i32"), ("erf", "i8"), ("isfinite", "i64"), ("abs", "i1"), ("relu", "i1"), ("logical_not", "f32")],
)
def test_unary_rejects_wrong_dtype(name: str, dtype: str) -> None:
    with pytest.raises(VerifyError, match="must have"):
        _infer(name, [TensorSig((4,), dtype)])


def test_unary_keeps_dynamic_dims() -> None:
    assert _infer("tanh", [TensorSig((None, 3), "f16")]) == [TensorSig((None, 3), "f16")]
    assert _infer("isfinite", [TensorSig((None,), "f32")]) == [TensorSig((None,), "i1")]


# --------------------------------------------------------------------------
# cast


def _cast(x: np.ndarray, dtype: str) -> np.ndarray:
    return evaluate_op("cast", [x], declared=[TensorSig(x.shape, dtype)])[0]


def test_cast_float_to_int_truncates_and_saturates() -> None:
    x = np.array([1.9, -1.9, -0.5, 127.9, 128.0, -129.0, 1e30, -np.inf, np.nan], dtype=np.float32)
    assert _cast(x, "i8").tolist() == [1, -1, 0, 127, 127, -128, 127, -128, 0]


def test_cast_float_to_i64_saturates_at_the_exact_limits() -> None:
    x = np.array([1e30, -1e30, 2.0**62, np.nan], dtype=np.float32)
    assert _cast(x, "i64").tolist() == [2**63 - 1, -(2**63), 2**62, 0]


def test_cast_to_i1_is_nonzero() -> None:
    assert _cast(np.array([0.0, -0.0, 0.25, np.nan], np.float32), "i1").tolist() == [False, False, True, True]
    assert _cast(np.array([0, 2, -1], np.int32), "i1").tolist() == [False, True, True]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i8", "i32", "i64"])
def test_cast_from_i1_is_zero_or_one(dtype: str) -> None:
    out = _cast(np.array([True, False]), dtype)
    assert out.dtype == np.dtype({**FLOAT_NP, **INT_NP}[dtype]) and out.tolist() == [1, 0]


def test_cast_float_narrowing_rounds_half_to_even() -> None:
    # 1 + 2^-11 is halfway between two f16 values; 1 + 3 * 2^-11 too. Ties go to the even mantissa.
    x = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11, 70000.0], dtype=np.float32)
    assert _cast(x, "f16").tolist() == [1.0, 1 + 2.0**-9, np.inf]
    y = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8], dtype=np.float32)
    out = _cast(y, "bf16")
    assert out.dtype == ml_dtypes.bfloat16 and out.astype(np.float32).tolist() == [1.0, 1 + 2.0**-6]


def test_cast_int_narrowing_wraps() -> None:
    assert _cast(np.array([300, -129, 5], np.int32), "i8").tolist() == [44, 127, 5]


def test_cast_bf16_to_f32_is_exact() -> None:
    x = np.array([1.5, -3.25], dtype=ml_dtypes.bfloat16)
    out = _cast(x, "f32")
    assert out.dtype == np.float32 and out.tolist() == [1.5, -3.25]


def test_cast_requires_declared_result() -> None:
    with pytest.raises(VerifyError, match="result type"):
        _infer("cast", [TensorSig((4,), "f32")])


def test_cast_rejects_shape_change() -> None:
    with pytest.raises(VerifyError, match="must have the shape of operand"):
        _infer("cast", [TensorSig((4,), "f32")], declared=[TensorSig((2, 2), "i32")])


def test_cast_accepts_dynamic_declared_dim() -> None:
    # The operand's static size fills the declared dynamic dim.
    declared = [TensorSig((None, 3), "i32")]
    assert _infer("cast", [TensorSig((4, 3), "f32")], declared=declared) == [TensorSig((4, 3), "i32")]
    assert _infer("cast", [TensorSig((None, 3), "f32")], declared=declared) == declared


# --------------------------------------------------------------------------
# Binary ops


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# name -> (Python scalar op, int version of the op)
ARITH = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "pow": operator.pow,
    "maximum": max,
    "minimum": min,
}
INT_ARITH = {**ARITH, "div": _trunc_div}
COMPARE = {
    "equal": operator.eq,
    "not_equal": operator.ne,
    "greater": operator.gt,
    "greater_equal": operator.ge,
    "less": operator.lt,
    "less_equal": operator.le,
}

LHS = [[-3.0, -1.5, 0.5, 2.0], [1.0, 4.0, 2.5, -6.0]]
RHS = [1.5, -2.0, 2.0, 3.0]  # no zero: division by zero is tested separately
POW_LHS = [[0.5, 1.5, 2.0, 3.0], [1.0, 4.0, 2.5, 0.25]]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", sorted(ARITH))
def test_binary_float_arithmetic(name: str, dtype: str) -> None:
    a = np.array(POW_LHS if name == "pow" else LHS, dtype=FLOAT_NP[dtype])
    b = np.array(RHS, dtype=FLOAT_NP[dtype])
    (out,) = evaluate_op(name, [a, b])
    assert out.dtype == a.dtype and out.shape == (2, 4)
    np.testing.assert_allclose(out.astype(np.float64), _loop(ARITH[name], a, b), rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64"])
@pytest.mark.parametrize("name", sorted(ARITH))
def test_binary_int_arithmetic(name: str, dtype: str) -> None:
    a_vals = [[-7, -3, 0, 5], [3, 4, 2, -6]]
    b_vals = [2, 3, 1, 2] if name == "pow" else [2, -3, 4, 3]
    a, b = np.array(a_vals, INT_NP[dtype]), np.array(b_vals, INT_NP[dtype])
    (out,) = evaluate_op(name, [a, b])
    assert out.dtype == a.dtype
    assert out.tolist() == [[INT_ARITH[name](x, y) for x, y in zip(row, b_vals, strict=True)] for row in a_vals]


#: Remainders and floor division against Python: math.fmod is C's (the dividend's sign), % and // floor.
REMAINDERS = {"mod": math.fmod, "floor_mod": operator.mod, "floor_div": lambda a, b: math.floor(a / b)}
INT_REMAINDERS = {"mod": lambda a, b: int(math.fmod(a, b)), "floor_mod": operator.mod,
                  "floor_div": operator.floordiv}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", sorted(REMAINDERS))
def test_remainders_and_floor_division_float(name: str, dtype: str) -> None:
    a = np.array(LHS, dtype=FLOAT_NP[dtype])
    b = np.array(RHS, dtype=FLOAT_NP[dtype])
    (out,) = evaluate_op(name, [a, b])
    assert out.dtype == a.dtype and out.shape == (2, 4)
    np.testing.assert_allclose(out.astype(np.float64), _loop(REMAINDERS[name], a, b), rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64"])
@pytest.mark.parametrize("name", sorted(INT_REMAINDERS))
def test_remainders_and_floor_division_int(name: str, dtype: str) -> None:
    a_vals = [[-7, -3, 0, 5], [3, 4, 7, -6]]
    b_vals = [2, -3, 4, -4]
    a, b = np.array(a_vals, INT_NP[dtype]), np.array(b_vals, INT_NP[dtype])
    (out,) = evaluate_op(name, [a, b])
    assert out.dtype == a.dtype
    assert out.tolist() == [[INT_REMAINDERS[name](x, y) for x, y in zip(row, b_vals, strict=True)] for row in a_vals]


@pytest.mark.parametrize("name", ["div", "mod", "floor_mod", "floor_div"])
def test_integer_division_by_zero_raises(name: str) -> None:
    """As eager PyTorch raises RuntimeError("ZeroDivisionError"): the error is a RuntimeError and a
    ZeroDivisionError; a zero divisor broadcast to an empty result divides nothing."""
    a = np.array([7, -7, 3], np.int8)
    with pytest.raises(IntegerDivisionByZeroError, match="integer division by zero") as raised:
        evaluate_op(name, [a, np.array([1, 0, 2], np.int8)])
    assert isinstance(raised.value, RuntimeError) and isinstance(raised.value, ZeroDivisionError)
    assert evaluate_op(name, [np.zeros((0,), np.int32), np.array([0], np.int32)])[0].shape == (0,)


def test_remainders_of_the_minimum_and_floats_by_zero() -> None:
    """Integers: MIN floor_div -1 wraps to MIN and its remainders are 0 (no trap).  Floats: a remainder by 0 is
    NaN; a zero floor_mod is fmod's, the sign of the dividend (PyTorch's remainder; Python's % would give -0.0
    for 4.0 % -2.0)."""
    a = np.array([7, -7, -128], np.int8)
    b = np.array([1, -1, -1], np.int8)
    assert evaluate_op("mod", [a, b])[0].tolist() == [0, 0, 0]
    assert evaluate_op("floor_mod", [a, b])[0].tolist() == [0, 0, 0]
    assert evaluate_op("floor_div", [a, b])[0].tolist() == [7, 7, -128]
    assert np.isnan(evaluate_op("mod", [np.float32([1.0]), np.float32([0.0])])[0]).all()
    assert not np.signbit(evaluate_op("floor_mod", [np.float32([4.0]), np.float32([-2.0])])[0]).any()
    assert np.signbit(evaluate_op("floor_mod", [np.float32([-4.0]), np.float32([2.0])])[0]).all()


def test_atan2_uses_both_signs() -> None:
    y, x = np.float32([1.0, 1.0, -1.0, -1.0, 0.0]), np.float32([1.0, -1.0, 1.0, -1.0, -1.0])
    (out,) = evaluate_op("atan2", [y, x])
    np.testing.assert_allclose(out, [math.atan2(a, b) for a, b in zip(y, x, strict=True)], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i8", "i32", "i64"])
@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons_return_i1(name: str, dtype: str) -> None:
    np_dtype = {**FLOAT_NP, **INT_NP}[dtype]
    a_vals, b_vals = [1, 2, 3, -4], [2, 2, 1, -4]
    (out,) = evaluate_op(name, [np.array(a_vals, np_dtype), np.array(b_vals, np_dtype)])
    assert out.dtype == np.bool_
    assert out.tolist() == [COMPARE[name](x, y) for x, y in zip(a_vals, b_vals, strict=True)]


@pytest.mark.parametrize("name", ["equal", "not_equal"])
def test_equality_accepts_i1(name: str) -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert evaluate_op(name, [a, b])[0].tolist() == [COMPARE[name](x, y) for x, y in zip(a, b, strict=True)]


def test_comparisons_with_nan() -> None:
    a = np.array([np.nan, 1.0], np.float32)
    b = np.array([np.nan, np.nan], np.float32)
    assert evaluate_op("equal", [a, b])[0].tolist() == [False, False]
    assert evaluate_op("not_equal", [a, b])[0].tolist() == [True, True]
    assert evaluate_op("less_equal", [a, b])[0].tolist() == [False, False]


@pytest.mark.parametrize(("name", "fn"), [("logical_and", operator.and_), ("logical_or", operator.or_)])
def test_logical_binary_truth_table(name: str, fn) -> None:
    a, b = [True, True, False, False], [True, False, True, False]
    (out,) = evaluate_op(name, [np.array(a), np.array(b)])
    assert out.dtype == np.bool_ and out.tolist() == [fn(x, y) for x, y in zip(a, b, strict=True)]


def test_broadcast_with_rank_extension_and_size_one_dims() -> None:
    a = np.arange(12, dtype=np.float32).reshape(4, 1, 3)
    b = np.array([[10.0], [20.0]], dtype=np.float32)  # (2, 1) -> (1, 2, 1)
    (out,) = evaluate_op("add", [a, b])
    assert out.shape == (4, 2, 3)
    for i, j, k in np.ndindex(4, 2, 3):
        assert out[i, j, k] == a[i, 0, k] + b[j, 0]


def test_broadcast_scalar_operand() -> None:
    (out,) = evaluate_op("mul", [np.array([1, 2, 3], np.int32), np.array(2, np.int32)])
    assert out.tolist() == [2, 4, 6]


def test_broadcast_shape_inference_with_dynamic_dims() -> None:
    sigs = [TensorSig((None, 1, 8), "f32"), TensorSig((4, 1), "f32")]
    assert _infer("sub", sigs) == [TensorSig((None, 4, 8), "f32")]
    assert _infer("less", [TensorSig((None,), "i32"), TensorSig((5,), "i32")]) == [TensorSig((5,), "i1")]


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan(name: str) -> None:
    a = np.array([np.nan, 1.0, np.nan], np.float32)
    b = np.array([0.0, np.nan, np.nan], np.float32)
    assert np.isnan(evaluate_op(name, [a, b])[0]).all()


def test_int_div_truncates_toward_zero() -> None:
    a = np.array([7, -7, 7, -7, 5, 0, -128], np.int8)
    b = np.array([2, 2, -2, -2, 1, 3, -1], np.int8)
    assert evaluate_op("div", [a, b])[0].tolist() == [3, -3, -3, 3, 5, 0, -128]


def test_float_div_by_zero_is_ieee_without_warning() -> None:
    a = np.array([1.0, -1.0, 0.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (out,) = evaluate_op("div", [a, np.zeros(3, np.float32)])
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


def test_int_pow_with_negative_exponent() -> None:
    a = np.array([2, 1, -1, -1, 0, 3], np.int32)
    b = np.array([-1, -5, -3, -4, -2, 0], np.int32)
    assert evaluate_op("pow", [a, b])[0].tolist() == [0, 1, -1, 1, 0, 1]


def test_int_add_wraps() -> None:
    assert evaluate_op("add", [np.array([127], np.int8), np.array([1], np.int8)])[0].tolist() == [-128]


def test_binary_rejects_incompatible_shapes() -> None:
    with pytest.raises(VerifyError, match=r"tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible"):
        _infer("add", [TensorSig((4, 8), "f32"), TensorSig((3,), "f32")])


def test_binary_rejects_mixed_dtypes() -> None:
    with pytest.raises(VerifyError, match="must have the same element type"):
        evaluate_op("mul", [np.ones(2, np.float32), np.ones(2, np.float16)])


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("add", "i1"), ("pow", "i1"), ("greater", "i1"), ("logical_and", "f32"), ("logical_or", "i32")],
)
def test_binary_rejects_wrong_dtype(name: str, dtype: str) -> None:
    with pytest.raises(VerifyError, match="must have"):
        _infer(name, [TensorSig((2,), dtype), TensorSig((2,), dtype)])


# --------------------------------------------------------------------------
# select


def test_select_broadcasts_all_three() -> None:
    cond = np.array([[True], [False]])  # (2, 1)
    a = np.array([1, 2, 3], np.int32)  # (3,)
    b = np.array(-1, np.int32)  # scalar
    (out,) = evaluate_op("select", [cond, a, b])
    assert out.dtype == np.int32 and out.tolist() == [[1, 2, 3], [-1, -1, -1]]


def test_select_on_bf16_and_i1_branches() -> None:
    cond = np.array([True, False])
    a, b = np.array([1.5, 2.5], ml_dtypes.bfloat16), np.array([-1.0, -2.0], ml_dtypes.bfloat16)
    (out,) = evaluate_op("select", [cond, a, b])
    assert out.dtype == ml_dtypes.bfloat16 and out.astype(np.float32).tolist() == [1.5, -2.0]
    assert evaluate_op("select", [cond, cond, ~cond])[0].tolist() == [True, True]


def test_select_requires_i1_condition() -> None:
    with pytest.raises(VerifyError, match=r"condition .* must have element type i1"):
        _infer("select", [TensorSig((2,), "i32"), TensorSig((2,), "f32"), TensorSig((2,), "f32")])


def test_select_rejects_mixed_branch_dtypes() -> None:
    with pytest.raises(VerifyError, match=r"branches .* same element type"):
        _infer("select", [TensorSig((2,), "i1"), TensorSig((2,), "f32"), TensorSig((2,), "i32")])


def test_select_rejects_incompatible_shapes() -> None:
    with pytest.raises(VerifyError, match="not broadcast-compatible"):
        _infer("select", [TensorSig((3,), "i1"), TensorSig((2,), "f32"), TensorSig((2,), "f32")])


# --------------------------------------------------------------------------
# Low-precision floats agree with f32.


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("name", ["exp", "tanh", "gelu", "silu", "erf", "add", "div"])
def test_low_precision_close_to_f32(name: str, dtype: str) -> None:
    x = np.linspace(-2, 2, 9).astype(FLOAT_NP[dtype])
    y = np.linspace(0.5, 3, 9).astype(FLOAT_NP[dtype])
    inputs = [x, y] if name in ARITH else [x]
    (low,) = evaluate_op(name, inputs)
    (full,) = evaluate_op(name, [a.astype(np.float32) for a in inputs])
    assert low.dtype == x.dtype
    np.testing.assert_allclose(low.astype(np.float32), full, rtol=RTOL[dtype], atol=RTOL[dtype])
