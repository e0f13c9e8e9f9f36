"""Elementwise ops at the edges, as PyTorch defines them: NaN, +-Inf, +-0, denormals and integer extremes.

Graphs that come from PyTorch must compute what eager PyTorch computes, and the reference interpreter is the
oracle ``--check`` compares against: both are checked here against ``torch`` on a corpus of special values,
every pair of them for the binary ops.  Finite results may differ by the compiled code's fast-math error; NaN,
infinities, the sign of a zero result and exact (integer, rounding, comparison) results may not.

Where eager raises (an integer division by zero, an index out of range) the interpreter, the JIT, a library of
graphfuse-compile and the torch.compile backend raise too, an error of eager's type (the last section).
"""

from __future__ import annotations

import ctypes
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.run_checks import CHECK_STATUS, IndexOutOfRangeError, IntegerDivisionByZeroError

torch = pytest.importorskip("torch")
F = torch.nn.functional
gtb = pytest.importorskip("graphfuse.frontends.torch_backend")

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
#: the integer divisions: graph.div on integers is PyTorch's division rounded toward zero
INT_DIVISIONS: dict[str, Callable] = {
    "div": lambda a, b: torch.div(a, b, rounding_mode="trunc"), "mod": torch.fmod, "floor_mod": torch.remainder,
    "floor_div": torch.floor_divide,
}
#: integer ops; the divisions take nonzero divisors here (a zero raises: the last section)
BINARY_INT: dict[str, Callable] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "maximum": torch.maximum, "minimum": torch.minimum,
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
    **INT_DIVISIONS,
}
UNARY_INT: dict[str, Callable] = {
    "abs": torch.abs, "neg": torch.neg, "sign": torch.sign, "relu": torch.relu, "square": torch.square,
    "bitwise_not": torch.bitwise_not,
}
BINARY_BOOL: dict[str, Callable] = {
    "logical_and": torch.logical_and, "logical_or": torch.logical_or, "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor, "equal": torch.eq, "not_equal": torch.ne,
}
DIVISIONS = set(INT_DIVISIONS)
#: ops whose finite results are exact in any correct implementation (no fast-math tolerance; float div is not)
EXACT = {"abs", "neg", "relu", "square", "floor", "ceil", "round", "sign", "trunc", "add", "sub", "mul",
         "maximum", "minimum", "floor_div", "mod", "floor_mod", "isfinite", "isinf", "isnan"}
NUMPY_TO_GRAPH = {"float32": "f32", "int32": "i32", "int64": "i64", "bool": "i1"}


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
    args = [builder.arg(a.shape, dtype=NUMPY_TO_GRAPH[a.dtype.name]) for a in arrays]
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
        if name == "div":  # eager's division rounded toward zero traps (SIGFPE) on MIN / -1: the test below
            keep &= ~((a == INTS.min()) & (b == -1))
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


# --------------------------------------------------------------------------
# Where eager raises: an integer division by zero, an index out of range.  The reference interpreter, the JIT
# (graphfuse.compile), a library of graphfuse-compile (load_library) and the torch.compile backend raise too, an
# error that is an instance of eager's (RuntimeError for ZeroDivisionError; IndexError, or RuntimeError for
# torch.gather), naming the op that failed.


def _eager_error(fn: Callable, *arrays: np.ndarray) -> type[BaseException] | None:
    try:
        fn(*(torch.from_numpy(a) for a in arrays))
    except (RuntimeError, IndexError) as error:
        return type(error)
    return None


def _interpreter(builder: graphfuse.GraphBuilder) -> Callable[..., list[np.ndarray]]:
    return lambda *arrays: graphfuse.run_function(builder.module, list(arrays), "f")


#: where a divisor's zero is: (dividend shape, divisor shape, the zero's flat position in the divisor).  4099 is
#: 16 * 256 + 3: its last element is past every full vector, in the loop's tail.
ZERO_PLACES = {
    "scalar": ((64, 33), (), 0),
    "broadcast row": ((64, 33), (33,), 17),
    "middle of a large tensor": ((257, 129), (257, 129), 257 * 129 // 2),
    "tail element": ((4099,), (4099,), 4098),
}


@pytest.mark.parametrize("place", sorted(ZERO_PLACES))
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name", sorted(INT_DIVISIONS))
def test_integer_division_by_zero_raises_as_eager(name: str, dtype: str, place: str) -> None:
    lhs_shape, divisor_shape, zero_at = ZERO_PLACES[place]
    rng = np.random.default_rng(0)
    a = rng.integers(-1000, 1000, lhs_shape).astype(dtype)
    b = np.array(rng.integers(1, 50, divisor_shape) * rng.choice([-1, 1], divisor_shape), dtype=dtype)
    fn = INT_DIVISIONS[name]
    builder = _graph(name, (a, b), a)
    compiled = graphfuse.compile(builder.module)
    for run in (compiled, _interpreter(builder)):
        np.testing.assert_array_equal(run(a, b)[0], _torch_result(fn, a, b))
    b.reshape(-1)[zero_at] = 0
    assert _eager_error(fn, a, b) is RuntimeError
    for run in (compiled, _interpreter(builder)):
        with pytest.raises(IntegerDivisionByZeroError, match=f"integer division by zero in graph.{name}") as raised:
            run(a, b)
        assert isinstance(raised.value, RuntimeError) and isinstance(raised.value, ZeroDivisionError)
    b.reshape(-1)[zero_at] = -3  # the next call starts from a clear status word
    np.testing.assert_array_equal(compiled(a, b)[0], _torch_result(fn, a, b))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_the_one_quotient_that_overflows_wraps(dtype: str) -> None:
    """MIN / -1 is MIN, as eager's floor_divide gives it (its division rounded toward zero traps there, SIGFPE,
    so that one is not asked); both remainders are 0, as eager's."""
    a = np.array([np.iinfo(dtype).min, np.iinfo(dtype).min, 7], dtype)
    b = np.array([-1, 1, -1], dtype)
    for name in ("div", "floor_div", "mod", "floor_mod"):
        builder = _graph(name, (a, b), a)
        want = _torch_result(torch.floor_divide if name == "div" else INT_DIVISIONS[name], a, b)
        for run in (graphfuse.compile(builder.module), _interpreter(builder)):
            np.testing.assert_array_equal(run(a, b)[0], want, err_msg=name)


def test_a_division_by_zero_is_located_in_the_graph_file(tmp_path: Path) -> None:
    path = tmp_path / "divide.mlir"
    path.write_text("""func.func @f(%a: tensor<8xi64>, %b: tensor<8xi64>) -> tensor<8xi64> {
  %0 = "graph.floor_div"(%a, %b) : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
  return %0 : tensor<8xi64>
}
""")
    a, b = np.arange(8, dtype=np.int64), np.array([1, 2, 3, 4, 0, 6, 7, 8], np.int64)
    with pytest.raises(IntegerDivisionByZeroError) as raised:
        graphfuse.compile(path)(a, b)
    assert str(raised.value) == f"{path}:2:8: error: integer division by zero in graph.floor_div"


#: PyTorch's indexing ops -> (the graph op they import as, its attributes, eager on (data, indices)); data is
#: 3x4 floats, the indices index axis 0 (axis 1 for torch.gather's)
INDEXING: dict[str, tuple[str, dict, Callable]] = {
    "index_select": ("gather", {"negative_indices": False}, lambda x, i: torch.index_select(x, 0, i)),
    "embedding": ("gather", {"negative_indices": False}, lambda x, i: F.embedding(i, x)),
    "x[i]": ("gather", {}, lambda x, i: x[i]),
    "torch.gather": ("gather_elements", {"axis": 1, "negative_indices": False},
                     lambda x, i: torch.gather(x, 1, i.reshape(1, -1).expand(3, -1))),
    "index_copy": ("scatter_update", {"negative_indices": False},
                   lambda x, i: x.index_copy(0, i, torch.ones(len(i), 4))),
    "index_put": ("scatter_update", {}, lambda x, i: x.index_put((i,), torch.ones(len(i), 4))),
}
#: the index tried among valid ones, by name; the size of the axis indexed is 3 (4 for torch.gather's)
BAD_INDICES = {"-1": -1, "-size": -3, "size": 3, "size + 1": 4, "huge": 2**40, "-huge": -(2**40)}


def _indexing_graph(op: str, attrs: dict, count: int) -> graphfuse.GraphBuilder:
    builder = graphfuse.GraphBuilder("f")
    x, i = builder.arg((3, 4)), builder.arg((count,), "i64")
    if op == "gather_elements":
        i = builder.broadcast_to(builder.reshape(i, (1, count)), (3, count))
    operands = [x, i, builder.const(np.ones((count, 4), np.float32))] if op == "scatter_update" else [x, i]
    builder.ret(builder.op(op, *operands, **attrs))
    return builder


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indices_out_of_range_raise_as_eager(name: str) -> None:
    """Each bad index alone, and hidden among many valid ones (in the middle, in the tail of the loop)."""
    op, attrs, fn = INDEXING[name]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    runs = {}
    for count in (2, 1027):
        builder = _indexing_graph(op, attrs, count)
        runs[count] = (graphfuse.compile(builder.module), _interpreter(builder))
    for label, index in BAD_INDICES.items():
        for count, at in ((2, 1), (1027, 513), (1027, 1026)):
            indices = np.zeros(count, np.int64)
            indices[at] = index
            want = _eager_error(fn, x, indices)
            for run in runs[count]:
                if want is None:  # eager takes it (a negative index from the end, torch.gather's 3 < 4)
                    np.testing.assert_array_equal(run(x, indices)[0], fn(torch.from_numpy(x), torch.from_numpy(
                        indices)).numpy(), err_msg=f"{name}, index {label}")
                    continue
                with pytest.raises(want) as raised:
                    run(x, indices)
                assert isinstance(raised.value, IndexOutOfRangeError), (name, label)
                assert f"index out of range in graph.{op}" in str(raised.value)
    np.testing.assert_array_equal(runs[2][0](x, np.array([2, 0]))[0], fn(torch.from_numpy(x), torch.tensor([2, 0])))


def test_a_library_raises_as_the_jit(tmp_path: Path) -> None:
    """graphfuse-compile's entry point returns the failed check's status code (the header names it); the loader
    raises the JIT's error, located at the op."""
    builder = graphfuse.GraphBuilder("f")
    a, b, ids = builder.arg((4099,), "i32"), builder.arg((4099,), "i32"), builder.arg((5,), "i64")
    table = builder.arg((8, 4))
    builder.ret(builder.floor_mod(a, b), builder.gather(table, ids, negative_indices=False))
    library_path = tmp_path / "libchecked.so"
    graphfuse.compile_library(builder.module, library_path, header=tmp_path / "checked.h")
    header = (tmp_path / "checked.h").read_text()
    for status, code in CHECK_STATUS.items():
        assert f"GRAPHFUSE_{status} = {code}," in header
    library, jit = graphfuse.load_library(library_path), graphfuse.compile(builder.module)
    rng = np.random.default_rng(1)
    x = rng.integers(-100, 100, 4099).astype(np.int32)
    y = rng.integers(1, 9, 4099).astype(np.int32)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    good = np.array([0, 7, 3, 3, 1])
    for got, want in zip(library(x, y, good, w), jit(x, y, good, w), strict=True):
        np.testing.assert_array_equal(got, want)
    y[-1] = 0  # the tail
    bad = np.array([0, 7, 3, 8, 1])
    for arguments, error in (((x, y, good, w), IntegerDivisionByZeroError),
                             ((x, np.where(y == 0, 1, y), bad, w), IndexOutOfRangeError)):
        messages = []
        for run in (library, jit):
            with pytest.raises(error) as raised:
                run(*arguments)
            messages.append(str(raised.value).split("error: ", 1)[1])
        assert messages[0] == messages[1], messages
    # From C: the status code, with a workspace of the call's own (NULL).
    entry = getattr(library._library, library.metadata["symbol"])
    entry.restype = ctypes.c_int
    outputs = [np.empty(4099, np.int32), np.empty((5, 4), np.float32)]
    pointers = [ctypes.c_void_p(array.ctypes.data) for array in (x, y, good, w, *outputs)]
    assert entry(*pointers, ctypes.c_void_p(None)) == CHECK_STATUS["INTEGER_DIVISION_BY_ZERO"]
    y[-1] = 5
    assert entry(*pointers, ctypes.c_void_p(None)) == 0


#: what the torch.compile backend compiles: PyTorch functions of (x, indices) and of (a, b)
BACKEND_INDEXING = {name: fn for name, (_, _, fn) in INDEXING.items()}
BACKEND_INDEXING["x[i, j]"] = lambda x, i: x[i, torch.zeros_like(i)]  # two index tensors, flattened into one


@pytest.mark.parametrize("name", sorted(BACKEND_INDEXING) + sorted(INT_DIVISIONS))
def test_the_torch_backend_raises_as_eager(name: str) -> None:
    """With fallback="error" nothing runs in eager PyTorch: the compiled graph itself raises eager's error."""
    torch._dynamo.reset()
    gtb.clear_reports()
    fn = BACKEND_INDEXING.get(name) or INT_DIVISIONS[name]
    compiled = torch.compile(fn, backend=gtb.get_backend(compiler_config=gtb.CompilerConfig(fallback="error")))
    if name in INT_DIVISIONS:
        a = torch.arange(-8, 8, dtype=torch.int64)
        cases = [(a, torch.full((16,), 3)), (a, torch.tensor([3] * 15 + [0])), (a, torch.full((16,), -1))]
    else:
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        cases = [(x, torch.tensor([0, index])) for index in (2, *BAD_INDICES.values())]
    with torch.no_grad():
        for args in cases:
            try:
                want = fn(*args)
            except (RuntimeError, IndexError) as error:
                with pytest.raises(type(error)) as raised:
                    compiled(*args)
                assert isinstance(raised.value, (IndexOutOfRangeError, IntegerDivisionByZeroError)), raised.value
                continue
            assert torch.equal(compiled(*args), want), (name, args)
    reports = gtb.last_report()
    assert reports and all(report.eager_calls == 0 and report.compiled for report in reports)
    torch._dynamo.reset()
