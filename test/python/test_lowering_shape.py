"""graph-to-linalg on the data-movement ops: the lowered IR verifies, holds no graph op and matches the interpreter.

These ops only move elements, so results are compared bit for bit (NaN
payloads and signed zeros included) for every element type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import graph_op_names, nested_ops
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.lowering import graph_to_linalg  # noqa: F401  (registers the pass)
from graphfuse.lowering.common import LOWERINGS
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import Pipeline, PipelineFailure

STRICT = "builtin.module(graph-to-linalg{strict})"
LENIENT = "builtin.module(graph-to-linalg)"

DTYPES = ("f32", "f16", "bf16", "i1", "i8", "i32", "i64")

Shape = tuple[int | None, ...]


# --------------------------------------------------------------------------
# Helpers.


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Distinct-looking values of ``dtype``; floats include NaN, infinities and -0.0."""
    target = NUMPY_DTYPES[dtype]
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype.startswith("i"):
        info = np.iinfo(target)
        return rng.integers(info.min, info.max, shape, dtype=target, endpoint=True)
    values = rng.normal(0.0, 100.0, shape).astype(np.float32).astype(target)
    flat = values.reshape(-1)
    picks = rng.random(flat.shape) < 0.2
    specials = np.array([np.nan, -0.0, np.inf, -np.inf], dtype=np.float32).astype(target)
    flat[picks] = rng.choice(specials, int(picks.sum()))
    return values


def lower(module: ir.Module, pipeline: str = STRICT) -> dict[str, int]:
    runner = Pipeline(pipeline, module.context)
    runner.run(module)
    return runner.records[0].statistics


def assert_same_bits(want: np.ndarray, got: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (want.dtype, got.dtype, want.shape, got.shape)
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
        return
    unsigned = np.dtype(f"u{want.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(unsigned), want.view(unsigned))


def check(
    build: Callable[..., None],
    inputs: Sequence[tuple[Shape, str]],
    run_shapes: Sequence[tuple[int, ...]] | None = None,
) -> ir.Module:
    """Build, lower strictly, verify, then run the compiled module against the interpreter on the original.

    ``run_shapes`` gives the argument shapes at run time (dynamic dims: 4 when not given).
    """
    b = GraphBuilder("f")
    args = [b.arg(shape, dtype) for shape, dtype in inputs]
    build(b, *args)
    module = b.module
    if run_shapes is None:
        run_shapes = [tuple(4 if d is None else d for d in shape) for shape, _ in inputs]
    rng = np.random.default_rng(0)
    samples = [
        [random_array(rng, s, dtype) for s, (_, dtype) in zip(run_shapes, inputs, strict=True)] for _ in range(2)
    ]
    expected = [run_function(module, sample) for sample in samples]
    lower(module)
    assert module.operation.verify()
    assert graph_op_names(module) == [], str(module)
    compiled = compile_linalg(module, "f")
    for sample, want in zip(samples, expected, strict=True):
        got = compiled(*sample, out=[np.empty(w.shape, w.dtype) for w in want])
        assert len(got) == len(want)
        for w, g in zip(want, got, strict=True):
            assert_same_bits(w, g)
    return module


def op_names(module: ir.Module) -> list[str]:
    """Names of the ops inside the functions, in order."""
    found: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name not in ("builtin.module", "func.func", "func.return", "arith.constant"):
            found.append(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def test_registered() -> None:
    for name in ("reshape", "broadcast_to", "transpose", "concat", "split", "slice", "pad"):
        assert f"graph.{name}" in LOWERINGS


# --------------------------------------------------------------------------
# reshape

RESHAPES: list[tuple[Shape, Shape]] = [
    ((4, 8), (2, 16)),
    ((4, 8), (32,)),
    ((32,), (4, 8)),
    ((2, 3, 4), (6, 4)),
    ((2, 3, 4), (4, 6)),
    ((2, 3, 4), (3, 8)),
    ((4, 1, 8), (4, 8)),
    ((4, 8), (1, 4, 8, 1)),
    ((1, 6, 1), (2, 1, 3)),
    ((), (1, 1)),
    ((1, 1), ()),
    ((1,), ()),
    ((6,), (6,)),
    ((0, 4), (4, 0)),
    ((3, 0, 2), (0,)),
    ((4, 8), (None, 16)),
    ((4, 8), (2, None, 2)),
]


@pytest.mark.parametrize(("source", "target"), RESHAPES, ids=str)
def test_reshape(source: Shape, target: Shape) -> None:
    check(lambda b, x: b.ret(b.reshape(x, target)), [(source, "f32")])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("source", "target"), [((4, 6), (2, 12)), ((2, 3, 4), (4, 6)), ((1, 1), ())], ids=str)
def test_reshape_dtypes(source: Shape, target: Shape, dtype: str) -> None:
    check(lambda b, x: b.ret(b.reshape(x, target)), [(source, dtype)])


DYNAMIC_RESHAPES: list[tuple[Shape, Shape, tuple[int, ...]]] = [
    ((None, 8, 4), (None, 32), (3, 8, 4)),  # the dynamic dim is grouped on its own
    ((None, 4), (None, 2, 2), (5, 4)),
    ((4, None), (2, 2, None), (4, 3)),
    ((None, 8, 4), (2, None), (3, 8, 4)),  # through 1-D, the result size divided out
    ((None, 8), (4, 2, 8), (8, 8)),  # through 1-D, cast to the static count
    ((2, None, 3), (None, 3), (2, 5, 3)),
    ((None, None), (None,), (3, 5)),
    ((1, None), (), (1, 1)),
    ((None,), (None,), (7,)),
    ((None, 4), (None, 2), (0, 4)),  # no elements at run time
    ((None, 0), (3, 0), (5, 0)),  # no elements: a tensor.empty
    ((2, 0), (None, 5), (2, 0)),
    # several dynamic dims, each paired with an operand dim: one group per pair
    ((None, None, 12), (None, None, 3, 4), (2, 5, 12)),  # an attention's heads split off
    ((None, None, 3, 4), (None, None, 12), (2, 5, 3, 4)),
    ((None, 4, None, 2), (None, 4, 1, None, 2), (3, 4, 5, 2)),  # repeat_kv's unsqueeze
    ((None, 2, 3, None, 2), (None, 6, None, 2), (1, 2, 3, 1, 2)),  # and its merge; sizes 1 at run time
    ((None, 4), (1, None, 2, 2), (3, 4)),  # a leading unit dim joins the dynamic one
    ((None, None, 4), (None, None, 2, 2), (0, 3, 4)),  # no elements at run time
]


@pytest.mark.parametrize(("source", "target", "run_shape"), DYNAMIC_RESHAPES, ids=str)
def test_reshape_dynamic(source: Shape, target: Shape, run_shape: tuple[int, ...]) -> None:
    check(lambda b, x: b.ret(b.reshape(x, target)), [(source, "i32")], [run_shape])


def test_reshape_ir() -> None:
    """Only the ops the shapes need: a collapse, an expand, or both through the common shape."""
    cases = {
        ((4, 1, 8), (4, 8)): ["tensor.collapse_shape"],
        ((4, 8), (1, 4, 8, 1)): ["tensor.expand_shape"],
        ((4, 8), (2, 16)): ["tensor.collapse_shape", "tensor.expand_shape"],
        ((6,), (6,)): [],
        ((4, 8), (None, 16)): ["tensor.collapse_shape", "tensor.expand_shape", "tensor.cast"],
        ((None, 8, 4), (None, 32)): ["tensor.collapse_shape"],
    }
    for (source, target), ops in cases.items():
        b = GraphBuilder("f")
        b.ret(b.reshape(b.arg(source), target))
        module = b.module
        lower(module)
        assert op_names(module) == ops, (source, target, str(module))
    b = GraphBuilder("f")
    b.ret(b.reshape(b.arg((4, 8)), (2, 16)))
    module = b.module
    lower(module)
    text = str(module)
    assert "tensor.collapse_shape %arg0 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>" in text
    assert "output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>" in text


def _undefined_reshape() -> ir.Module:
    # The static result sizes multiply to 0: the dynamic one cannot be recovered (numpy's -1 fails too).
    b = GraphBuilder("f")
    b.ret(b.reshape(b.arg((None, 4)), (0, None)))
    return b.module


def test_reshape_undefined_stays() -> None:
    module = _undefined_reshape()
    before = str(module)
    stats = lower(module, LENIENT)
    assert module.operation.verify()
    assert graph_op_names(module) == ["graph.reshape"]
    assert stats["num-unlowered"] == 1
    assert str(module) == before  # nothing was built before the lowering gave up


def test_reshape_undefined_strict() -> None:
    with pytest.raises(PipelineFailure, match=r"cannot lower 'graph\.reshape'"):
        lower(_undefined_reshape())


# --------------------------------------------------------------------------
# broadcast_to

BROADCASTS: list[tuple[Shape, Shape]] = [
    ((1, 8), (4, 8)),
    ((8,), (3, 4, 8)),
    ((), (2, 3)),
    ((3, 1), (3, 5)),
    ((4, 1, 1), (2, 4, 3, 5)),
    ((1,), (7,)),
    ((1,), (1,)),
    ((2, 3), (2, 3)),
    ((0, 1), (2, 0, 3)),
]


@pytest.mark.parametrize(("source", "target"), BROADCASTS, ids=str)
def test_broadcast_to(source: Shape, target: Shape) -> None:
    check(lambda b, x: b.ret(b.broadcast_to(x, target)), [(source, "f32")])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("source", "target"), [((3, 1), (2, 3, 5)), ((), (4,))], ids=str)
def test_broadcast_to_dtypes(source: Shape, target: Shape, dtype: str) -> None:
    check(lambda b, x: b.ret(b.broadcast_to(x, target)), [(source, dtype)])


DYNAMIC_BROADCASTS: list[tuple[Shape, Shape, tuple[int, ...]]] = [
    ((None, 8), (None, 8), (3, 8)),
    ((None, 1), (3, None, 8), (5, 1)),
    ((None, 8), (2, None, 8), (3, 8)),
    ((None, 8), (3, 4, 8), (4, 8)),  # a dynamic dim under a static one: its size ...
    ((None, 8), (3, 4, 8), (1, 8)),  # ... decides at run time whether it broadcasts
    ((None, None), (2, 5, None), (1, 6)),
]


@pytest.mark.parametrize(("source", "target", "run_shape"), DYNAMIC_BROADCASTS, ids=str)
def test_broadcast_to_dynamic(source: Shape, target: Shape, run_shape: tuple[int, ...]) -> None:
    check(lambda b, x: b.ret(b.broadcast_to(x, target)), [(source, "i64")], [run_shape])


def test_broadcast_to_ir() -> None:
    b = GraphBuilder("f")
    b.ret(b.broadcast_to(b.arg((3, 1)), (2, 3, 5)))
    module = b.module
    lower(module)
    text = str(module)
    assert op_names(module) == ["tensor.empty", "linalg.generic", "linalg.yield"]
    assert "affine_map<(d0, d1, d2) -> (d1, 0)>" in text
    assert 'iterator_types = ["parallel", "parallel", "parallel"]' in text


# --------------------------------------------------------------------------
# transpose

TRANSPOSES: list[tuple[Shape, list[int]]] = [
    ((2, 4, 8), [0, 2, 1]),
    ((3, 5), [1, 0]),
    ((2, 3, 4, 5), [3, 1, 0, 2]),
    ((1, 4, 1), [2, 0, 1]),
    ((3, 5), [0, 1]),
    ((7,), [0]),
    ((), []),
    ((0, 3), [1, 0]),
]


@pytest.mark.parametrize(("shape", "perm"), TRANSPOSES, ids=str)
def test_transpose(shape: Shape, perm: list[int]) -> None:
    check(lambda b, x: b.ret(b.transpose(x, perm=perm)), [(shape, "f32")])


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_dtypes(dtype: str) -> None:
    check(lambda b, x: b.ret(b.transpose(x, perm=[2, 0, 1])), [((2, 3, 4), dtype)])


def test_transpose_dynamic() -> None:
    module = check(lambda b, x: b.ret(b.transpose(x, perm=[2, 0, 1])), [((None, 3, 5), "f16")], [(6, 3, 5)])
    assert "tensor.empty(%dim) : tensor<5x?x3xf16>" in str(module)


def test_transpose_ir() -> None:
    b = GraphBuilder("f")
    b.ret(b.transpose(b.arg((2, 4, 8)), perm=[0, 2, 1]))
    module = b.module
    lower(module)
    assert op_names(module) == ["tensor.empty", "linalg.transpose", "linalg.yield"]
    assert "permutation = [0, 2, 1]" in str(module)
    transpose = next(op for op in nested_ops(module) if op.name == "linalg.transpose")
    assert "test_lowering_shape.py" in str(transpose.location)


def test_identity_transpose_is_the_operand() -> None:
    b = GraphBuilder("f")
    b.ret(b.transpose(b.arg((3, 5)), perm=[0, 1]))
    module = b.module
    lower(module)
    assert op_names(module) == []


# --------------------------------------------------------------------------
# concat

CONCATS: list[tuple[list[Shape], int]] = [
    ([(4, 8), (4, 2)], -1),
    ([(4, 8), (4, 2)], 1),
    ([(1, 3), (2, 3)], 0),
    ([(2, 3), (1, 3)], -2),
    ([(2, 3, 1), (2, 3, 4), (2, 3, 2), (2, 3, 2)], 2),
    ([(3,), (5,), (1,), (1,), (1,)], 0),
    ([(2, 0), (2, 3), (2, 0)], 1),
    ([(0, 3), (0, 3)], 1),
    ([(0, 3), (0, 0), (0, 2), (0, 2)], -1),
]


@pytest.mark.parametrize(("shapes", "axis"), CONCATS, ids=str)
def test_concat(shapes: list[Shape], axis: int) -> None:
    check(lambda b, *xs: b.ret(b.concat(*xs, axis=axis)), [(s, "f32") for s in shapes])


@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_dtypes(dtype: str) -> None:
    check(lambda b, *xs: b.ret(b.concat(*xs, axis=0)), [((1, 4), dtype), ((2, 4), dtype), ((3, 4), dtype)])


DYNAMIC_CONCATS: list[tuple[list[Shape], int, list[tuple[int, ...]]]] = [
    ([(None, 3), (2, None), (2, 0)], -1, [(2, 3), (2, 5), (2, 0)]),
    ([(None, 3), (None, 3)], 0, [(1, 3), (4, 3)]),
    ([(None, None), (None, 2)], 1, [(3, 4), (3, 2)]),
    ([(None, 1), (0, 3), (None, 2)], -1, [(0, 1), (0, 3), (0, 2)]),  # no elements: nothing inserted
]


@pytest.mark.parametrize(("shapes", "axis", "run_shapes"), DYNAMIC_CONCATS, ids=str)
def test_concat_dynamic(shapes: list[Shape], axis: int, run_shapes: list[tuple[int, ...]]) -> None:
    check(lambda b, *xs: b.ret(b.concat(*xs, axis=axis)), [(s, "i8") for s in shapes], run_shapes)


def test_concat_ir() -> None:
    b = GraphBuilder("f")
    b.ret(b.concat(b.arg((4, 8)), b.arg((4, 0)), b.arg((4, 2)), axis=-1))
    module = b.module
    lower(module)
    text = str(module)
    assert op_names(module) == ["tensor.empty", "tensor.insert_slice", "tensor.insert_slice"]  # the empty one skipped
    assert "tensor.insert_slice %arg0 into %0[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x10xf32>" in text
    assert "tensor.insert_slice %arg2 into %inserted_slice[0, 8] [4, 2] [1, 1]" in text


def test_concat_of_many_operands_is_built_in_groups() -> None:
    """70 operands: three groups of at most 32 inserts, each into its own destination, then the groups into the
    result (one chain of 70 inserts made bufferization's analysis superlinear: 179 s at 1,000 operands)."""
    b = GraphBuilder("f")
    b.ret(b.concat(b.arg((2, 3)), b.arg((2, 1)), *[b.arg((2, 2)) for _ in range(68)], axis=1))
    module = b.module
    lower(module)
    names = op_names(module)
    assert names.count("tensor.insert_slice") == 70 + 3 and names.count("tensor.empty") == 1 + 3


@pytest.mark.parametrize("dynamic", [False, True])
def test_concat_of_many_operands(dynamic: bool) -> None:
    """Groups with an empty operand among them and, with dynamic sizes, offsets computed at run time."""
    shapes = [(3, 2), (3, 0)] + [(3, 1)] * 73
    declared = [(3, None)] * 75 if dynamic else shapes
    check(lambda b, *xs: b.ret(b.concat(*xs, axis=-1)), [(s, "f32") for s in declared], shapes if dynamic else None)


# --------------------------------------------------------------------------
# split

SPLITS: list[tuple[Shape, int, list[int]]] = [
    ((4, 8), 1, [2, 6]),
    ((4, 8), 0, [1, 3]),
    ((4, 7), -1, [1, 0, 3, 3]),
    ((6,), 0, [2, 2, 2]),
    ((5,), -1, [0, 5]),
    ((2, 6, 3), -2, [4, 1, 1]),
    ((5, 2), 0, [5, 0]),  # an empty last piece starts at the end of the axis
    ((0, 2), 1, [2, 0]),
]


@pytest.mark.parametrize(("shape", "axis", "sizes"), SPLITS, ids=str)
def test_split(shape: Shape, axis: int, sizes: list[int]) -> None:
    check(lambda b, x: b.ret(*b.split(x, axis=axis, sizes=sizes)), [(shape, "f32")])


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_dtypes(dtype: str) -> None:
    check(lambda b, x: b.ret(*b.split(x, axis=1, sizes=[1, 2, 2])), [((3, 5), dtype)])


@pytest.mark.parametrize(
    ("shape", "axis", "sizes", "run_shape"),
    [
        ((None, 7), -1, [1, 0, 3, 3], (5, 7)),
        ((None, 4), 0, [1, 3], (4, 4)),
        ((2, None), 1, [2, 1], (2, 3)),
        ((None, 2), 1, [2, 0, 0], (3, 2)),
    ],
    ids=str,
)
def test_split_dynamic(shape: Shape, axis: int, sizes: list[int], run_shape: tuple[int, ...]) -> None:
    check(lambda b, x: b.ret(*b.split(x, axis=axis, sizes=sizes)), [(shape, "bf16")], [run_shape])


def test_split_ir() -> None:
    b = GraphBuilder("f")
    b.ret(*b.split(b.arg((4, 8)), axis=1, sizes=[2, 6]))
    module = b.module
    lower(module)
    text = str(module)
    assert op_names(module) == ["tensor.extract_slice", "tensor.extract_slice"]
    assert "tensor.extract_slice %arg0[0, 0] [4, 2] [1, 1] : tensor<4x8xf32> to tensor<4x2xf32>" in text
    assert "tensor.extract_slice %arg0[0, 2] [4, 6] [1, 1] : tensor<4x8xf32> to tensor<4x6xf32>" in text


# --------------------------------------------------------------------------
# slice

SLICES: list[tuple[Shape, list[int], list[int], list[int] | None]] = [
    ((4, 8), [1, 0], [3, 8], [1, 2]),
    ((7, 9), [1, 2], [7, 9], [3, 4]),
    ((4, 8), [0, 0], [4, 8], None),
    ((4, 8), [2, 0], [2, 8], None),
    ((10,), [2], [9], [3]),
    ((10,), [9], [10], [5]),
    ((), [], [], None),
    ((2, 1, 6), [1, 0, 1], [2, 1, 6], [1, 1, 2]),
    ((4, 8), [4, 0], [4, 8], None),  # empty, starting at the end of dim 0
    ((0, 8), [0, 0], [0, 8], [1, 3]),
]


@pytest.mark.parametrize(("shape", "start", "limit", "strides"), SLICES, ids=str)
def test_slice(shape: Shape, start: list[int], limit: list[int], strides: list[int] | None) -> None:
    check(lambda b, x: b.ret(b.slice(x, start=start, limit=limit, strides=strides)), [(shape, "f32")])


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_dtypes(dtype: str) -> None:
    check(lambda b, x: b.ret(b.slice(x, start=[1, 0], limit=[4, 5], strides=[2, 2])), [((4, 5), dtype)])


def test_empty_pieces_are_empty_tensors() -> None:
    b = GraphBuilder("f")
    x = b.arg((5, 2))
    b.ret(*b.split(x, axis=0, sizes=[5, 0]), b.slice(x, start=[5, 0], limit=[5, 2]))
    module = b.module
    lower(module)
    assert op_names(module) == ["tensor.extract_slice", "tensor.empty", "tensor.empty"]


def test_slice_dynamic() -> None:
    module = check(
        lambda b, x: b.ret(b.slice(x, start=[1, 0], limit=[3, 7], strides=[1, 3])), [((None, 7), "f32")], [(5, 7)]
    )
    assert "tensor.extract_slice %arg0[1, 0] [2, 3] [1, 3] : tensor<?x7xf32> to tensor<2x3xf32>" in str(module)


# --------------------------------------------------------------------------
# Composition.


def test_chain() -> None:
    """reshape -> transpose -> slice -> concat, with elementwise ops between, in one function."""

    def build(b: FunctionBuilder, x, y):
        r = b.reshape(x, (4, 3, 2))
        t = b.transpose(b.neg(r), perm=[2, 0, 1])  # 2x4x3
        s = b.slice(b.add(t, t), start=[0, 1, 0], limit=[2, 4, 3], strides=[1, 2, 2])  # 2x2x2
        b.ret(b.concat(s, b.mul(y, y), axis=-1), t)

    check(build, [((6, 4), "f32"), ((2, 2, 3), "f32")])


def test_chain_with_split_and_broadcast() -> None:
    def build(b: FunctionBuilder, x, bias):
        lo, hi = b.split(x, axis=0, sizes=[2, 3])
        wide = b.broadcast_to(bias, (3, 5))
        joined = b.concat(b.add(hi, wide), b.sub(b.transpose(lo, perm=[0, 1]), lo), axis=0)
        b.ret(b.reshape(joined, (5, 5)), b.slice(joined, start=[0, 4], limit=[5, 5], strides=[2, 1]))

    check(build, [((5, 5), "i32"), ((1, 5), "i32")])


# --------------------------------------------------------------------------
# pad: every mode, positive and negative pads, every element type, NaN/inf/-0.0 moved bit for bit

PADS: list[tuple[Shape, list[int], list[int], str]] = [
    ((3, 5), [0, 2], [1, 1], "constant"),
    ((2, 3, 5, 7), [0, 1, 2, -1], [0, 2, 1, 2], "constant"),
    ((2, 3, 5, 7), [0, 0, 4, 1], [0, 0, 4, 6], "reflect"),
    ((2, 3, 5, 7), [0, 0, -2, 3], [0, 0, 3, -1], "reflect"),
    ((2, 3, 5, 7), [1, 0, 5, 0], [0, 2, 9, 1], "replicate"),
    ((2, 3, 5, 7), [0, 0, -1, 2], [0, 0, 2, -3], "replicate"),
    ((2, 3, 5, 7), [0, 0, 5, 7], [0, 0, 5, 7], "circular"),
    ((2, 3, 5, 7), [0, 0, -2, 4], [0, 0, 3, -2], "circular"),
    ((9,), [-3], [-2], "reflect"),  # crops only: a slice
    ((1, 1), [2, 3], [1, 0], "replicate"),
    ((0, 4), [1, 0], [2, 1], "constant"),  # nothing to read
]


@pytest.mark.parametrize(("shape", "low", "high", "mode"), PADS, ids=str)
def test_pad(shape: Shape, low: list[int], high: list[int], mode: str) -> None:
    check(lambda b, x: b.ret(b.pad(x, low=low, high=high, mode=mode)), [(shape, "f32")])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_dtypes(mode: str, dtype: str) -> None:
    check(lambda b, x: b.ret(b.pad(x, low=[1, 2], high=[2, -1], mode=mode)), [((3, 4), dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_with_a_value(dtype: str) -> None:
    """The padding value is an operand of the element type (token ids padded with a given id, masks with True)."""
    check(lambda b, x, v: b.ret(b.pad(x, v, low=[0, 1], high=[1, 3])), [((4, 12), dtype), ((), dtype)])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_dynamic(mode: str) -> None:
    check(lambda b, x: b.ret(b.pad(x, low=[2, 1], high=[1, 1], mode=mode)), [((None, 5), "f32")], [(4, 5)])
    check(lambda b, x: b.ret(b.pad(x, low=[0, -1], high=[1, 2], mode=mode)), [((3, None), "i32")], [(3, 6)])


def test_pad_fused_with_its_neighbours_at_every_opt_level() -> None:
    """Through the whole compiler (fusion, kernel loops, row tiling): the same bits as the interpreter."""
    import graphfuse

    rng = np.random.default_rng(3)
    x = random_array(rng, (2, 3, 6, 7), "f32")
    for mode in ("constant", "reflect", "replicate", "circular"):
        b = GraphBuilder("f")
        arg = b.arg(x.shape)
        padded = b.pad(b.mul(arg, b.const(2.0)), low=[0, 0, 1, 3], high=[0, 0, 2, -1], mode=mode)
        b.ret(b.add(b.exp(padded), b.const(1.0)), b.reduce_sum(padded, axes=[3], keep_dims=True))
        for level in (0, 1, 2, 3):
            executable = graphfuse.compile(b.module, opt_level=level)
            for want, got in zip(executable.reference(x), executable(x), strict=True):
                # (the row sums may add in another order)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=f"{mode} {level}")
