"""graph-to-linalg: every lowered elementwise op verifies and (when the runtime exists) matches the interpreter."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import graph_op_names, nested_ops
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.lowering import graph_to_linalg  # noqa: F401  (registers the pass)
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import Pipeline, PipelineFailure

PIPELINE = "builtin.module(graph-to-linalg)"
HAVE_RUNTIME = importlib.util.find_spec("graphfuse.lowering.runtime") is not None

FLOATS = ("f32", "f16", "bf16")
INTS = ("i8", "i32", "i64")
SHAPE = (3, 5)

# Ops whose lowering is exact (bit for bit up to NaN payloads) against the interpreter.
EXACT_UNARY = {"abs", "neg", "relu", "square", "floor", "ceil", "round", "sign", "logical_not", "isfinite", "sqrt"}
UNARY_FLOAT = (
    "abs neg exp log sqrt rsqrt reciprocal tanh sigmoid erf relu fast_gelu silu square floor ceil round sign sin cos"
).split()
UNARY_INT = "abs neg relu square sign".split()
BINARY_NUMERIC = "add sub mul div maximum minimum".split()
COMPARISONS = "equal not_equal greater greater_equal less less_equal".split()


# --------------------------------------------------------------------------
# Helpers.


def _special_values(dtype: str) -> np.ndarray:
    if dtype in FLOATS:
        return np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 2.5, -2.5, 0.5, -1.5, 1.0], dtype=NUMPY_DTYPES[dtype])
    if dtype == "i1":
        return np.array([True, False])
    info = np.iinfo(NUMPY_DTYPES[dtype])
    return np.array([info.min, info.max, 0, -1, 1], dtype=NUMPY_DTYPES[dtype])


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random values of ``dtype`` with NaN, +-0, +-inf and integer extremes mixed in."""
    target = NUMPY_DTYPES[dtype]
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        values = rng.normal(0.0, 4.0, shape).astype(np.float32).astype(target)
    else:
        info = np.iinfo(target)
        small = rng.integers(-20, 20, shape, endpoint=True).astype(target)
        big = rng.integers(info.min, info.max, shape, dtype=target, endpoint=True)
        values = np.where(rng.random(shape) < 0.5, small, big).astype(target)
    flat = values.reshape(-1)
    picks = rng.random(flat.shape) < 0.3
    flat[picks] = rng.choice(_special_values(dtype), int(picks.sum()))
    return values


def lower(module: ir.Module, pipeline: str = PIPELINE) -> dict[str, int]:
    runner = Pipeline(pipeline, module.context)
    runner.run(module)
    return runner.records[0].statistics


def _compare(want: np.ndarray, got: np.ndarray, exact: bool) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (want.dtype, got.dtype, want.shape, got.shape)
    if want.dtype.kind != "f" and want.dtype != ml_dtypes.bfloat16:
        np.testing.assert_array_equal(got, want)
        return
    w, g = want.astype(np.float64), got.astype(np.float64)
    if exact:
        np.testing.assert_array_equal(g, w)  # NaNs compare equal here
        return
    rtol = 1e-5 if want.dtype == np.float32 else 1e-2
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-1, equal_nan=True)


def check(
    build: Callable[..., None],
    inputs: list[tuple[tuple[int | None, ...], str]],
    exact: bool = True,
    lowered: bool = True,
    nonzero_divisor: bool = False,
) -> ir.Module:
    """Build, lower, verify; with the runtime, compare with the interpreter on random inputs (with
    ``nonzero_divisor``, the last input without zeros: an integer division by zero raises)."""
    b = GraphBuilder("f")
    args = [b.arg(shape, dtype) for shape, dtype in inputs]
    build(b, *args)
    module = b.module
    rng = np.random.default_rng(0)
    static = all(d is not None for shape, _ in inputs for d in shape)
    samples = [[random_array(rng, tuple(d or 4 for d in shape), dtype) for shape, dtype in inputs] for _ in range(2)]
    if nonzero_divisor:
        for sample in samples:
            sample[-1] = np.where(sample[-1] == 0, np.ones_like(sample[-1]), sample[-1])
    before = [run_function(module, sample) for sample in samples]
    lower(module)
    assert module.operation.verify()
    if not lowered:
        return module
    assert graph_op_names(module) == [], str(module)
    assert "linalg.generic" in str(module)
    if HAVE_RUNTIME and static:
        from graphfuse.lowering.runtime import compile_linalg

        compiled = compile_linalg(module, "f")
        for sample, want in zip(samples, before, strict=True):
            got = compiled(*sample)
            assert len(got) == len(want)
            for w, g in zip(want, got, strict=True):
                _compare(w, g, exact)
    return module


# --------------------------------------------------------------------------
# Unary ops.


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", [*UNARY_FLOAT, "isfinite"])
def test_unary_float(name: str, dtype: str) -> None:
    check(lambda b, x: b.ret(getattr(b, name)(x)), [(SHAPE, dtype)], exact=name in EXACT_UNARY)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", UNARY_INT)
def test_unary_int(name: str, dtype: str) -> None:
    check(lambda b, x: b.ret(getattr(b, name)(x)), [(SHAPE, dtype)])


def test_logical_not() -> None:
    check(lambda b, x: b.ret(b.logical_not(x)), [(SHAPE, "i1")])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str, dtype: str) -> None:
    check(lambda b, x: b.ret(b.gelu(x, approximate=approximate)), [(SHAPE, dtype)], exact=False)


# --------------------------------------------------------------------------
# Binary ops and select, with broadcasting.

BROADCASTS = [((3, 5), (5,)), ((3, 1), (1, 5)), ((), (3, 5)), ((3, 5), (3, 5))]


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("dtype", [*FLOATS, *INTS])
@pytest.mark.parametrize("name", BINARY_NUMERIC)
def test_binary_numeric(name: str, dtype: str, shapes) -> None:
    check(lambda b, x, y: b.ret(getattr(b, name)(x, y)), [(shapes[0], dtype), (shapes[1], dtype)],
          nonzero_divisor=name == "div" and dtype in INTS)


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_float(dtype: str) -> None:
    check(lambda b, x, y: b.ret(b.pow(x, y)), [((3, 5), dtype), ((5,), dtype)], exact=False)


@pytest.mark.parametrize("dtype", [*FLOATS, *INTS, "i1"])
@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison(name: str, dtype: str) -> None:
    if dtype == "i1" and name not in ("equal", "not_equal"):
        pytest.skip("ordering comparisons take numbers only")
    check(lambda b, x, y: b.ret(getattr(b, name)(x, y)), [((3, 1), dtype), ((5,), dtype)])


@pytest.mark.parametrize("name", ["logical_and", "logical_or"])
def test_logical_binary(name: str) -> None:
    check(lambda b, x, y: b.ret(getattr(b, name)(x, y)), [((3, 5), "i1"), ((3, 1), "i1")])


@pytest.mark.parametrize("dtype", ["f32", "bf16", "i64", "i1"])
def test_select(dtype: str) -> None:
    check(lambda b, c, x, y: b.ret(b.select(c, x, y)), [((3, 1), "i1"), ((3, 5), dtype), ((5,), dtype)])


def test_chain_of_ops() -> None:
    def build(b: FunctionBuilder, x, bias):
        y = b.add(b.mul(x, x), bias)
        b.ret(b.silu(b.maximum(y, b.neg(x))), b.greater(y, x))

    check(build, [((4, 6), "f32"), ((6,), "f32")], exact=False)


# --------------------------------------------------------------------------
# cast: every documented rule.

ALL = [*FLOATS, *INTS, "i1"]


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("source", ALL)
def test_cast(source: str, target: str) -> None:
    # int -> f16/bf16 may round twice in the reference (through float64/float32): allow one ulp there.
    exact = not (source in (*INTS, "i1") and target in ("f16", "bf16"))
    check(lambda b, x: b.ret(b.cast(x, target)), [(SHAPE, source)], exact=exact)


# --------------------------------------------------------------------------
# IR form, dynamic shapes, ops left alone, strict mode.


def test_broadcast_maps_and_location() -> None:
    b = GraphBuilder("f")
    x, y = b.arg((4, 8)), b.arg((4, 1))
    b.ret(b.add(x, y))
    module = b.module
    lower(module)
    text = str(module)
    assert "affine_map<(d0, d1) -> (d0, 0)>" in text
    assert 'iterator_types = ["parallel", "parallel"]' in text
    assert "tensor.empty() : tensor<4x8xf32>" in text
    generic = next(op for op in nested_ops(module) if op.name == "linalg.generic")
    assert "test_graph_to_linalg.py" in str(generic.location)


def test_dynamic_shape() -> None:
    def build(b, x, y):
        b.ret(b.exp(b.sub(x, y)))

    module = check(build, [((None, 8), "f32"), ((1, 8), "f32")], exact=False)
    text = str(module)
    assert "tensor.dim" in text and "tensor.empty(%" in text


def _unlowerable_module() -> ir.Module:
    """rms_norm over a dynamic axis: its decomposition needs the static element count, so it stays."""
    b = GraphBuilder("f")
    x = b.arg((4, None), "f32")
    gamma = b.arg((None,), "f32")
    b.ret(b.exp(b.rms_norm(b.neg(x), gamma)))
    return b.module


def test_unlowered_op_stays() -> None:
    module = _unlowerable_module()
    stats = lower(module)
    assert module.operation.verify()
    assert graph_op_names(module) == ["graph.rms_norm"]
    assert stats == {"num-checks": 0, "num-decomposed": 0, "num-lowered": 2, "num-unlowered": 1}


@pytest.mark.parametrize("dtype", INTS)
def test_integer_pow(dtype: str) -> None:
    """Wrapping powers, negative exponents (1, -1 or 0), and 0 ** 0 = 1, as numpy's integer power."""
    base = np.array([0, 1, -1, 2, -2, 3, 7, -5, 11, 0, 1, -1, 2, -3, 100, -100], dtype=NUMPY_DTYPES[dtype])
    exponent = np.array([0, -3, -3, -1, -2, 31, 9, 4, 3, 5, 0, 0, 62, 3, 2, 3], dtype=NUMPY_DTYPES[dtype])
    b = GraphBuilder("f")
    x, e = b.arg(base.shape, dtype), b.arg(base.shape, dtype)
    b.ret(b.pow(x, e))
    want = run_function(b.module, [base, exponent], "f")
    lower(b.module, "builtin.module(graph-to-linalg{strict})")
    got = compile_linalg(b.module, "f")(base, exponent)
    np.testing.assert_array_equal(got[0], want[0])


def test_strict_names_op_and_location() -> None:
    module = _unlowerable_module()
    with pytest.raises(PipelineFailure) as info:
        lower(module, "builtin.module(graph-to-linalg{strict})")
    message = str(info.value)
    assert "cannot lower 'graph.rms_norm'" in message
    assert "test_graph_to_linalg.py" in message
