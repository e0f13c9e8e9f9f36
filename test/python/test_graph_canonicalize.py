"""graph-canonicalize: every rewrite keeps the reference results bit for bit."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder
from graphfuse.dialect.catalog import lookup_op
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.run_checks import IntegerDivisionByZeroError
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.pipelines.passes.canonicalize import GraphCanonicalize
from graphfuse.pipelines.runner import Pipeline, PipelineError

PIPELINE = "builtin.module(graph-canonicalize)"

# --------------------------------------------------------------------------
# Helpers.


def _special_values(dtype: str) -> np.ndarray:
    if dtype in ("f32", "f16", "bf16"):
        return np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 2.5, -2.5, 0.5, -1.5], dtype=NUMPY_DTYPES[dtype])
    if dtype == "i1":
        return np.array([True, False])
    info = np.iinfo(NUMPY_DTYPES[dtype])
    return np.array([info.min, info.max, 0, -1, 1], dtype=NUMPY_DTYPES[dtype])


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random values of ``dtype`` with NaN, +-0, +-inf and integer extremes mixed in."""
    target = NUMPY_DTYPES[dtype]
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype in ("f32", "f16", "bf16"):
        values = rng.normal(0.0, 4.0, shape).astype(np.float32).astype(target)
    else:
        info = np.iinfo(target)
        values = rng.integers(info.min, info.max, shape, dtype=target, endpoint=True)
    flat = values.reshape(-1)
    special = _special_values(dtype)
    picks = rng.random(flat.shape) < 0.3
    flat[picks] = rng.choice(special, int(picks.sum()))
    return values


def assert_identical(before: list[np.ndarray], after: list[np.ndarray]) -> None:
    assert len(before) == len(after)
    for want, got in zip(before, after, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), (want, got)


graph_ops = graph_op_names

def canonicalize(module: ir.Module, pipeline: str = PIPELINE) -> dict[str, int]:
    runner = Pipeline(pipeline, module.context)
    runner.run(module)
    return runner.records[0].statistics


def check(
    build: Callable[[FunctionBuilder], None],
    inputs: list[tuple[tuple[int, ...], str]],
    seeds: int = 3,
) -> tuple[ir.Module, dict[str, int], list[str]]:
    """Build a function, canonicalize it, and compare the interpreter on random inputs before and after.

    Returns the module, the pass statistics and the graph ops left.
    """
    b = GraphBuilder("f")
    args = [b.arg(shape, dtype) for shape, dtype in inputs]
    build(b, *args)
    module = b.module
    before_text = str(module)
    rng = np.random.default_rng(0)
    samples = [[random_array(rng, shape, dtype) for shape, dtype in inputs] for _ in range(seeds)]
    before = [run_function(module, sample) for sample in samples]
    stats = canonicalize(module)
    assert module.operation.verify()
    for sample, want in zip(samples, before, strict=True):
        assert_identical(want, run_function(module, sample))
    assert str(module) != before_text or stats == {"num-folded": 0, "num-simplified": 0}
    return module, stats, graph_ops(module)


# --------------------------------------------------------------------------
# Shape identities.


def test_reshape_chain_becomes_one_reshape() -> None:
    def build(b, x):
        b.ret(b.reshape(b.reshape(b.reshape(x, (32,)), (8, 4)), (2, 16)))

    _, stats, ops = check(build, [((4, 8), "f32")])
    assert ops == ["graph.reshape"]
    assert stats == {"num-folded": 0, "num-simplified": 2}


def test_reshape_round_trip_and_same_type_vanish() -> None:
    def build(b, x):
        b.ret(b.reshape(b.reshape(x, (32,)), (4, 8)), b.reshape(x, (4, 8)))

    _, stats, ops = check(build, [((4, 8), "i32")])
    assert ops == []
    assert stats["num-simplified"] == 2


def test_reshape_dynamic_same_type() -> None:
    b = GraphBuilder("f")
    x = b.arg((None, 8))
    b.ret(b.reshape(x, (None, 8)))
    module = b.module
    sample = [np.arange(24, dtype=np.float32).reshape(3, 8)]
    want = run_function(module, sample)
    canonicalize(module)
    assert graph_ops(module) == []
    assert_identical(want, run_function(module, sample))


def test_shared_inner_reshape_stays() -> None:
    def build(b, x):
        flat = b.reshape(x, (32,))
        b.ret(b.reshape(flat, (8, 4)), b.exp(flat))

    _, stats, ops = check(build, [((4, 8), "f32")])
    assert sorted(ops) == ["graph.exp", "graph.reshape", "graph.reshape"]
    assert stats["num-simplified"] == 1


@pytest.mark.parametrize(
    ("p1", "p2"), list(itertools.product(itertools.permutations(range(3)), repeat=2))
)
def test_transpose_pairs_compose(p1: tuple[int, ...], p2: tuple[int, ...]) -> None:
    def build(b, x):
        b.ret(b.transpose(b.transpose(x, perm=list(p1)), perm=list(p2)))

    _, _, ops = check(build, [((2, 3, 4), "f32")], seeds=1)
    composed = [p1[p] for p in p2]
    assert len(ops) == (0 if composed == [0, 1, 2] else 1)


def test_transpose_identity_and_non_identity() -> None:
    def build(b, x):
        b.ret(b.transpose(x, perm=[0, 1]), b.transpose(x, perm=[1, 0]))

    _, stats, ops = check(build, [((4, 4), "f32")])
    assert ops == ["graph.transpose"]
    assert stats["num-simplified"] == 1


def test_broadcast_and_cast_identities() -> None:
    def build(b, x):
        same = b.cast(b.broadcast_to(x, (4, 8)), "f16")
        b.ret(same, b.broadcast_to(b.broadcast_to(x, (1, 4, 8)), (2, 4, 8)), b.cast(x, "f32"))

    _, stats, ops = check(build, [((4, 8), "f16")])
    assert ops == ["graph.broadcast_to", "graph.cast"]  # the chain became one op; f16 -> f32 is a real cast
    assert stats["num-simplified"] == 3


def test_slice_whole_operand() -> None:
    def build(b, x, y):
        b.ret(
            b.slice(x, start=[0, 0], limit=[4, 8]),
            b.slice(y, start=[0, 0], limit=[1, 8], strides=[3, 1]),
            b.slice(x, start=[0, 0], limit=[4, 8], strides=[2, 1]),
        )

    _, stats, ops = check(build, [((4, 8), "f32"), ((1, 8), "i8")])
    assert ops == ["graph.slice"]
    assert stats["num-simplified"] == 2


def test_reduce_without_axes() -> None:
    def build(b, x):
        b.ret(b.reduce_sum(x, axes=[]), b.reduce_mean(x, axes=[], keep_dims=True), b.reduce_min(x, axes=[1]))

    _, _, ops = check(build, [((4, 8), "f16")])
    assert ops == ["graph.reduce_min"]


# --------------------------------------------------------------------------
# Elementwise identities, on NaN, -0.0, infinities and integer extremes.


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i8", "i32", "i64"])
def test_double_negation(dtype: str) -> None:
    def build(b, x):
        b.ret(b.neg(b.neg(x)), b.neg(b.neg(b.neg(x))))

    _, _, ops = check(build, [((64,), dtype)])
    assert ops == ["graph.neg"]


def test_double_logical_not() -> None:
    def build(b, x):
        b.ret(b.logical_not(b.logical_not(x)))

    _, _, ops = check(build, [((64,), "i1")])
    assert ops == []


@pytest.mark.parametrize(
    ("name", "dtype"),
    [(name, dtype) for name in ("abs", "relu", "sign") for dtype in ("f32", "bf16", "i8", "i64")]
    + [(name, dtype) for name in ("floor", "ceil", "round") for dtype in ("f32", "f16", "bf16")],
)
def test_idempotent_unary(name: str, dtype: str) -> None:
    def build(b, x):
        b.ret(b.op(name, b.op(name, b.op(name, x))))

    _, stats, ops = check(build, [((64,), dtype)])
    assert ops == [f"graph.{name}"]
    assert stats["num-simplified"] == 2


@pytest.mark.parametrize(("name", "dtype"), [("maximum", "f32"), ("minimum", "f16"), ("maximum", "i8"),
                                             ("logical_and", "i1"), ("logical_or", "i1")])
def test_same_operands(name: str, dtype: str) -> None:
    def build(b, x, y):
        b.ret(b.op(name, x, x), b.op(name, x, y))

    _, _, ops = check(build, [((64,), dtype), ((64,), dtype)])
    assert ops == [f"graph.{name}"]


def test_select_identities() -> None:
    def build(b, c, x, y):
        always = b.const(np.ones((8,), dtype=bool))
        never = b.const(np.array(False))
        mixed = b.const(np.arange(8) % 2 == 0)
        b.ret(b.select(c, x, x), b.select(always, x, y), b.select(never, x, y), b.select(mixed, x, y))

    _, stats, ops = check(build, [((8,), "i1"), ((8,), "f32"), ((8,), "f32")])
    assert ops == ["graph.select"]
    assert stats["num-simplified"] == 3


def test_arithmetic_identities_are_left_alone() -> None:
    def build(b, x):
        b.ret(x + 0.0, x * 1.0, x - x, b.add(x, x))

    _, stats, ops = check(build, [((16,), "f32")])
    assert stats == {"num-folded": 0, "num-simplified": 0}
    assert ops == ["graph.add", "graph.mul", "graph.sub", "graph.add"]


# --------------------------------------------------------------------------
# Constant folding.


def _fold_case(name: str, dtype: str, arity: int, shape=(3, 5)) -> None:
    rng = np.random.default_rng(1)
    b = GraphBuilder("f")
    arrays = [random_array(rng, shape, dtype) for _ in range(arity)]
    if name == "div" and dtype.startswith("i"):  # an integer division by zero is not folded: the test below
        arrays[-1] = np.where(arrays[-1] == 0, np.ones_like(arrays[-1]), arrays[-1])
    consts = [b.const(array) for array in arrays]
    b.ret(b.op(name, *consts))
    module = b.module
    want = run_function(module, [])
    stats = canonicalize(module)
    assert graph_ops(module) == []
    assert stats == {"num-folded": 1, "num-simplified": 0}
    assert_identical(want, run_function(module, []))


_UNARY_FLOAT = ["abs", "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf", "relu",
                "fast_gelu", "silu", "square", "floor", "ceil", "round", "sign", "sin", "cos", "isfinite", "gelu"]


@pytest.mark.parametrize("name", _UNARY_FLOAT)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_fold_unary(name: str, dtype: str) -> None:
    _fold_case(name, dtype, 1)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "equal", "not_equal",
                                  "greater", "greater_equal", "less", "less_equal"])
@pytest.mark.parametrize("dtype", ["f32", "bf16", "i8", "i32", "i64"])
def test_fold_binary(name: str, dtype: str) -> None:
    _fold_case(name, dtype, 2)


@pytest.mark.parametrize("name", ["div", "mod", "floor_mod", "floor_div"])
def test_an_integer_division_by_zero_is_not_folded(name: str) -> None:
    """It raises when the graph runs (as eager does), not while it is canonicalized."""
    b = GraphBuilder("f")
    b.ret(b.op(name, b.const(np.array([7, 8], np.int32)), b.const(np.array([2, 0], np.int32))))
    module = b.module
    stats = canonicalize(module)
    assert graph_ops(module) == [f"graph.{name}"]
    assert stats == {"num-folded": 0, "num-simplified": 0}
    with pytest.raises(IntegerDivisionByZeroError):
        run_function(module, [])


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_not"])
def test_fold_bool(name: str) -> None:
    _fold_case(name, "i1", 1 if name == "logical_not" else 2)


def test_fold_cast_and_shape_ops() -> None:
    rng = np.random.default_rng(2)
    b = GraphBuilder("f")
    a = b.const(random_array(rng, (4, 6), "f32"))
    i = b.const(random_array(rng, (4, 6), "i32"))
    pieces = b.split(a, axis=1, sizes=[2, 4])
    b.ret(
        b.cast(a, "i8"), b.cast(a, "bf16"), b.cast(i, "i1"), b.cast(i, "f16"),
        b.reshape(a, (8, 3)), b.transpose(a, perm=[1, 0]), b.broadcast_to(b.reshape(i, (1, 4, 6)), (2, 4, 6)),
        b.concat(a, a, axis=0), *pieces, b.slice(a, start=[1, 0], limit=[4, 6], strides=[2, 3]),
    )
    module = b.module
    want = run_function(module, [])
    canonicalize(module)
    assert graph_ops(module) == []
    assert_identical(want, run_function(module, []))


def test_fold_nn_and_reductions_to_rank_0() -> None:
    rng = np.random.default_rng(3)
    b = GraphBuilder("f")
    x = b.const(rng.normal(size=(2, 3, 4)).astype(np.float32))
    w = b.const(rng.normal(size=(4, 5)).astype(np.float32))
    q, scale = b.dynamic_quant(x)
    b.ret(
        b.matmul(x, w), b.softmax(x, axis=1), b.reduce_sum(x, axes=[0, 1, 2]), b.reduce_max(x, axes=[1]),
        b.reduce_sum(b.const(np.array([7, -3], dtype=np.int32)), axes=[0]), q, scale,
        b.logical_not(b.const(np.array(True))), b.neg(b.const(np.array(1.5, dtype=ml_dtypes.bfloat16))),
    )
    module = b.module
    want = run_function(module, [])
    stats = canonicalize(module)
    assert graph_ops(module) == []
    assert stats["num-folded"] == 8  # dynamic_quant is one op with two results
    assert_identical(want, run_function(module, []))


def test_fold_partially_constant_graph() -> None:
    def build(b, x):
        c = b.exp(b.const(np.array([0.0, 1.0, -np.inf], dtype=np.float32)))
        b.ret(b.mul(c, x))

    _, stats, ops = check(build, [((3,), "f32")])
    assert ops == ["graph.mul"]
    assert stats == {"num-folded": 1, "num-simplified": 0}


def test_no_fold_with_dynamic_result() -> None:
    b = GraphBuilder("f")
    b.ret(b.reshape(b.const(np.arange(6, dtype=np.float32)), (None, 2)))
    canonicalize(b.module)
    assert graph_ops(b.module) == ["graph.reshape"]


@pytest.mark.parametrize(
    ("limit", "left"),
    [(None, []), (16, []), (15, ["graph.broadcast_to"]), (4, ["graph.broadcast_to"]),
     (3, ["graph.broadcast_to", "graph.add"])],
)
def test_fold_limit(limit: int | None, left: list[str]) -> None:
    """broadcast_to has 16 result elements, add 4: each folds when the limit allows it."""
    b = GraphBuilder("f")
    c = b.const(np.arange(4, dtype=np.float32))
    b.ret(b.broadcast_to(c, (4, 4)), b.add(c, c))
    module = b.module
    want = run_function(module, [])
    pipeline = PIPELINE if limit is None else f"builtin.module(graph-canonicalize{{fold-limit={limit}}})"
    stats = canonicalize(module, pipeline)
    assert graph_ops(module) == left
    assert stats["num-folded"] == 2 - len(left)
    assert_identical(want, run_function(module, []))


# --------------------------------------------------------------------------
# Pass plumbing.


def test_locations_are_kept() -> None:
    ctx = make_context()
    text = """
    func.func @f(%x: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<2xf32>) {
      %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32> loc("c.py":1:1)
      %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32> loc("inner.py":2:1)
      %1 = "graph.reshape"(%0) : (tensor<32xf32>) -> tensor<8x4xf32> loc("outer.py":3:1)
      %2 = "graph.neg"(%c) : (tensor<2xf32>) -> tensor<2xf32> loc("neg.py":4:1)
      return %1, %2 : tensor<8x4xf32>, tensor<2xf32>
    }
    """
    with ctx:
        module = ir.Module.parse(text)
    canonicalize(module)
    body = list(module.body.operations[0].regions[0].blocks[0].operations)
    by_name = {op.operation.name: op.operation for op in body}
    assert source_loc(by_name["graph.reshape"].location).file == "outer.py"
    assert source_loc(by_name["arith.constant"].location).file == "neg.py"


def test_long_chain_converges() -> None:
    b = GraphBuilder("f")
    x = b.arg((4,))
    y = x
    for _ in range(301):
        y = b.neg(y)
    b.ret(y)
    stats = canonicalize(b.module)
    assert graph_ops(b.module) == ["graph.neg"]
    assert stats["num-simplified"] == 150


def test_registered_with_options_and_statistics() -> None:
    assert Pipeline(PIPELINE, make_context()).steps[0].graph_pass == GraphCanonicalize()
    assert GraphCanonicalize().fold_limit == 65536
    assert GraphCanonicalize(fold_limit=4).to_text() == "graph-canonicalize{fold-limit=4}"
    assert set(GraphCanonicalize.statistics) == {"num-folded", "num-simplified"}
    assert lookup_op("graph.reshape") is not None


@pytest.mark.parametrize(
    ("value", "message"),
    [("abc", "expects an integer, got 'abc'"), ("-1", "must be >= 0, got -1"), ("", "")],
)
def test_bad_fold_limit(value: str, message: str) -> None:
    if not value:
        pipeline = "builtin.module(graph-canonicalize{fold-limt=4})"
        with pytest.raises(PipelineError, match="has no option 'fold-limt'"):
            Pipeline(pipeline, make_context())
        return
    with pytest.raises(PipelineError) as info:
        Pipeline(f"builtin.module(graph-canonicalize{{fold-limit={value}}})", make_context())
    text = str(info.value)
    assert "option 'fold-limit' of pass 'graph-canonicalize'" in text
    assert message in text
