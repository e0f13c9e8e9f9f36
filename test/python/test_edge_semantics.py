"""Elementwise ops at the edges, as PyTorch defines them: NaN, +-Inf, +-0, denormals and integer extremes.

Graphs that come from PyTorch must compute what eager PyTorch computes, and the reference interpreter is the
oracle ``--check`` compares against: both are checked here against ``torch`` on a corpus of special values,
every pair of them for the binary ops.  Finite results may differ by the compiled code's fast-math error; NaN,
infinities, the sign of a zero result and exact (integer, rounding, comparison) results may not.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import graphfuse

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: f32 values where ops' definitions differ: NaN, infinities, signed zeros, denormals, halves (rounding), the
#: limits of exp, and ordinary values of both signs.
FLOATS = np.array([
    np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754944e-38, 0.5, -0.5, 1.5, -1.5, 2.5,
    -2.5, 1.0, -1.0, 3.0, -7.0, 7.0, 0.75, -0.3, 88.72, 89.0, -103.9, -104.0, 1e30, -1e30, 3.4028235e38,
    -3.4028235e38, 3.1415927,
], np.float32)
#: int32 values: zero, small of both signs, the extremes (wrapping, the one quotient that overflows).
INTS = np.array([0, 1, -1, 2, -2, 7, -7, 3, -3, 100, 2**31 - 1, -(2**31)], np.int32)

#: graph op -> torch function, f32 operands
UNARY_FLOAT: dict[str, Callable] = {
    "abs": torch.abs, "neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "erf": torch.erf, "relu": torch.relu, "silu": F.silu, "square": torch.square, "floor": torch.floor,
    "ceil": torch.ceil, "round": torch.round, "sign": torch.sign, "sin": torch.sin, "cos": torch.cos,
    "trunc": torch.trunc, "expm1": torch.expm1, "acos": torch.acos, "asin": torch.asin, "atan": torch.atan,
    "acosh": torch.acosh, "asinh": torch.asinh, "gelu": F.gelu, "isfinite": torch.isfinite,
    "isinf": torch.isinf, "isnan": torch.isnan,
}
BINARY_FLOAT: dict[str, Callable] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum, "equal": torch.eq, "not_equal": torch.ne,
    "greater": torch.gt, "greater_equal": torch.ge, "less": torch.lt, "less_equal": torch.le,
    "atan2": torch.atan2, "mod": torch.fmod, "floor_mod": torch.remainder, "floor_div": torch.floor_divide,
}
#: integer ops; the divisions take nonzero divisors (eager raises on an integer division by zero)
BINARY_INT: dict[str, Callable] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "maximum": torch.maximum, "minimum": torch.minimum,
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
    "mod": torch.fmod, "floor_mod": torch.remainder, "floor_div": torch.floor_divide,
}
UNARY_INT: dict[str, Callable] = {
    "abs": torch.abs, "neg": torch.neg, "sign": torch.sign, "relu": torch.relu, "square": torch.square,
    "bitwise_not": torch.bitwise_not,
}
BINARY_BOOL: dict[str, Callable] = {
    "logical_and": torch.logical_and, "logical_or": torch.logical_or, "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor, "equal": torch.eq, "not_equal": torch.ne,
}
DIVISIONS = {"mod", "floor_mod", "floor_div"}
#: ops whose finite results are exact in any correct implementation (no fast-math tolerance)
EXACT = {"abs", "neg", "relu", "square", "floor", "ceil", "round", "sign", "trunc", "add", "sub", "mul",
         "maximum", "minimum", "floor_div", "mod", "floor_mod", "isfinite", "isinf", "isnan"}


#: Inputs where eager PyTorch is not one function, left out of the comparison (docs/dialect.md says what graphfuse
#: computes there): its vectorized CPU kernels divide first, so where the quotient overflows (or the divisor is a
#: denormal) the vector lanes give NaN and the scalar tail the exact remainder (fmod(0.5, 1e-45) is NaN or 0 by
#: the element's position); its f32 gelu returns NaN for both infinities (in f64: +inf and NaN) and overflows to
#: inf at the largest floats.
UNLIKE_EAGER: dict[str, Callable[..., np.ndarray]] = {
    "mod": lambda a, b: _quotient_overflows(a, b),
    "floor_mod": lambda a, b: _quotient_overflows(a, b),
    "floor_div": lambda a, b: _quotient_overflows(a, b),
    "gelu": lambda a: np.isinf(a) | (np.abs(a) > 1e38),
}
#: absolute tolerance for finite results: eager's f32 gelu flushes its tail (gelu(-7) = -8.96e-12) to -0
ABSOLUTE = {"gelu": 1e-10}


def _quotient_overflows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where b is a denormal, or a / b overflows f32 with a finite."""
    denormal = (b != 0) & (np.abs(b) < np.finfo(np.float32).tiny)
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = np.abs(a.astype(np.float64) / b.astype(np.float64))
    return denormal | (np.isfinite(a) & (b != 0) & (quotient > np.finfo(np.float32).max))


def _pairs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) of ``values``: two flat arrays."""
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


def _torch_result(fn: Callable, *arrays: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*(torch.from_numpy(a) for a in arrays)).numpy()


def _graph(name: str, arrays: tuple[np.ndarray, ...], result: np.ndarray) -> graphfuse.GraphBuilder:
    builder = graphfuse.GraphBuilder("f")
    args = [builder.arg(a.shape, dtype={"float32": "f32", "int32": "i32", "bool": "i1"}[a.dtype.name]) for a in arrays]
    builder.ret(builder.op(name, *args))
    return builder


def _mismatches(got: np.ndarray, want: np.ndarray, exact: bool, inputs: tuple[np.ndarray, ...],
                atol: float = 1e-37) -> list[str]:
    """Where ``got`` is not PyTorch's ``want``: NaN, infinities and zero signs must match; finite values within a
    few ulp (or exactly)."""
    if got.dtype != want.dtype:
        return [f"dtype {got.dtype}, PyTorch gives {want.dtype}"]
    if want.dtype.kind != "f":
        bad = np.nonzero(got != want)[0]
    else:
        same_nan = np.isnan(got) == np.isnan(want)
        both = ~np.isnan(got) & ~np.isnan(want)
        zero_sign = ~((want == 0) & both) | (np.signbit(got) == np.signbit(want))
        close = np.where(both, (got == want) if exact else np.isclose(got, want, rtol=4e-6, atol=atol), True)
        infinite = ~(np.isinf(want) | np.isinf(got)) | (got == want)
        bad = np.nonzero(~(same_nan & zero_sign & close & infinite))[0]
    return [f"{tuple(a[i] for a in inputs)} -> {got[i]!r}, PyTorch {want[i]!r}" for i in bad[:6]]


def _check(name: str, fn: Callable, *arrays: np.ndarray) -> None:
    if name in UNLIKE_EAGER:
        keep = ~UNLIKE_EAGER[name](*arrays)
        arrays = tuple(a[keep].copy() for a in arrays)
    want = _torch_result(fn, *arrays)
    builder = _graph(name, arrays, want)
    exact = name in EXACT
    reference = graphfuse.run_function(builder.module, list(arrays), "f")[0]
    compiled = graphfuse.compile(builder.module)(*arrays)[0]
    atol = ABSOLUTE.get(name, 1e-37)
    problems = [f"reference: {m}" for m in _mismatches(np.asarray(reference), want, exact, arrays, atol)]
    problems += [f"compiled: {m}" for m in _mismatches(compiled, want, exact, arrays, atol)]
    assert not problems, f"graph.{name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float_ops_at_the_edges(name: str) -> None:
    _check(name, UNARY_FLOAT[name], FLOATS.copy())


@pytest.mark.parametrize("name", sorted(BINARY_FLOAT))
def test_binary_float_ops_at_the_edges(name: str) -> None:
    _check(name, BINARY_FLOAT[name], *_pairs(FLOATS))


@pytest.mark.parametrize("name", sorted(UNARY_INT))
def test_unary_int_ops_at_the_edges(name: str) -> None:
    _check(name, UNARY_INT[name], INTS.copy())


@pytest.mark.parametrize("name", sorted(BINARY_BOOL))
def test_binary_bool_ops(name: str) -> None:
    _check(name, BINARY_BOOL[name], *_pairs(np.array([False, True])))


def test_select_and_logical_not() -> None:
    condition = np.array([True, False, True, False])
    _check("logical_not", torch.logical_not, condition)
    a, b = FLOATS[:4].copy(), FLOATS[4:8].copy()
    want = torch.where(torch.from_numpy(condition), torch.from_numpy(a), torch.from_numpy(b)).numpy()
    builder = _graph("select", (condition, a, b), want)
    assert not _mismatches(graphfuse.compile(builder.module)(condition, a, b)[0], want, True, (condition, a, b))


@pytest.mark.parametrize("name", sorted(BINARY_INT))
def test_binary_int_ops_at_the_edges(name: str) -> None:
    a, b = _pairs(INTS)
    if name in DIVISIONS:
        keep = b != 0
        a, b = a[keep].copy(), b[keep].copy()
    _check(name, BINARY_INT[name], a, b)


def test_eager_itself_differs_where_the_corpus_leaves_it() -> None:
    """The exemptions above are eager's own inconsistencies: the same fmod gives NaN in a vector lane and the exact
    remainder in the scalar tail (if eager ever agrees with itself, the exemption should go)."""
    a = np.full(33, 0.5, np.float32)
    b = np.full(33, 1e-45, np.float32)
    got = _torch_result(torch.fmod, a, b)
    assert np.isnan(got).any() and (got == 0).any()


BOOLEANS = """func.func @f(%m: tensor<64xi1>, %x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xi1>) {
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %0 = "graph.select"(%m, %x, %zero) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %1 = "graph.logical_not"(%m) : (tensor<64xi1>) -> tensor<64xi1>
  return %0, %1 : tensor<64xf32>, tensor<64xi1>
}
"""


def test_booleans_are_read_as_numpy_reads_them() -> None:
    """A bool array viewed from bytes may hold other values than 0 and 1: numpy (and PyTorch) take any non-zero
    byte as true; reading the low bit would take 2 as false."""
    raw = np.tile(np.array([0, 1, 2, 4, 128, 255, 3, 0], np.uint8), 8)
    mask = raw.view(np.bool_)
    x = np.arange(64, dtype=np.float32) + 1
    selected, negated = graphfuse.compile(BOOLEANS)(mask, x)
    np.testing.assert_array_equal(selected, np.where(raw != 0, x, 0))
    np.testing.assert_array_equal(negated.view(np.uint8), (raw == 0).astype(np.uint8))
