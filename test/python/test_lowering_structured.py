"""graph-to-linalg for reductions, matmul, conv2d and pooling: lowered IR verifies and matches the interpreter."""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.lowering import graph_to_linalg  # noqa: F401  (registers the pass and the lowerings)
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import Pipeline

PIPELINE = "builtin.module(graph-to-linalg{strict})"
FLOATS = ("f32", "f16", "bf16")
# One unit in the last place, relative: the result of an f32 computation rounded once may differ by this.
ULP = {"f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7}
REDUCTIONS = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min")

Shape = tuple[int | None, ...]


# --------------------------------------------------------------------------
# Helpers.


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Normal floats; integers over the whole range of the type (so sums and products wrap)."""
    target = NUMPY_DTYPES[dtype]
    if dtype in FLOATS:
        return rng.normal(0.0, 2.0, shape).astype(np.float32).astype(target)
    info = np.iinfo(target)
    return rng.integers(info.min, info.max, shape, dtype=target, endpoint=True)


def assert_matches(want: np.ndarray, got: np.ndarray, terms: int) -> None:
    """Integers exactly; floats within one rounding plus an error that grows with ``terms`` summed values."""
    assert got.dtype == want.dtype and got.shape == want.shape, (want.dtype, got.dtype, want.shape, got.shape)
    if want.dtype.kind != "f" and want.dtype != ml_dtypes.bfloat16:
        np.testing.assert_array_equal(got, want)
        return
    dtype = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16"}.get(want.dtype, "bf16")
    w, g = want.astype(np.float64), got.astype(np.float64)
    finite = np.abs(w[np.isfinite(w)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    # Sums are reordered (sequential here, pairwise or BLAS in numpy): error ~ terms * f32 eps * magnitude,
    # plus one rounding of the f32 result to the narrow type.
    atol = 4 * terms * 2.0**-23 * scale
    np.testing.assert_allclose(g, w, rtol=2 * ULP[dtype], atol=atol, equal_nan=True)


def lower(module: ir.Module) -> None:
    Pipeline(PIPELINE, module.context).run(module)
    assert module.operation.verify()
    assert graph_op_names(module) == [], str(module)


def check(
    build: Callable[..., object],
    inputs: list[tuple[Shape, str]],
    terms: int = 1,
    arrays: list[np.ndarray] | None = None,
    expect: tuple[str, ...] = (),
    dynamic_size: int = 3,
    run: bool = True,
) -> str:
    """Build, lower (strict), verify and (``run``) compare the JIT-compiled result with the interpreter.

    Dynamic dims (None) take ``dynamic_size`` in the sample; results are then written into ``out=`` buffers.
    Intermediate buffers of dynamic size (a padded input, an f32 accumulator before its division, a product
    before its reshape) are allocated when the code runs.
    ``expect`` names ops the lowered IR must contain. Returns the lowered IR's text.
    """
    b = GraphBuilder("f")
    build(b, *[b.arg(shape, dtype) for shape, dtype in inputs])
    module = b.module
    rng = np.random.default_rng(1)
    if arrays is None:
        arrays = [
            random_array(rng, tuple(dynamic_size if d is None else d for d in shape), dtype) for shape, dtype in inputs
        ]
    want = run_function(module, arrays)
    lower(module)
    text = str(module)
    for name in expect:
        assert name in text, text
    if not run:
        return text
    compiled = compile_linalg(module, "f")
    dynamic = any(d is None for shape, _ in inputs for d in shape)
    got = compiled(*arrays, out=[np.empty(w.shape, w.dtype) for w in want]) if dynamic else compiled(*arrays)
    assert len(got) == len(want)
    for w, g in zip(want, got, strict=True):
        assert_matches(w, g, terms)
    return text


# --------------------------------------------------------------------------
# Reductions.

AXES = [([1], False), ([0, 2], True), ([-1], True), ([-3, -1], False), ([0, 1, 2], False), ([0, 1, 2], True)]


@pytest.mark.parametrize(("axes", "keep_dims"), AXES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduce_axes(name: str, axes: list[int], keep_dims: bool) -> None:
    shape = (3, 4, 5)
    terms = int(np.prod([shape[a] for a in axes]))
    text = check(
        lambda b, x: b.ret(getattr(b, name)(x, axes=axes, keep_dims=keep_dims)),
        [(shape, "f32")],
        terms,
        expect=("linalg.fill", '"reduction"'),
    )
    # keep_dims on static shapes: the reduction writes the kept dims only (a projected permutation, which tiling
    # needs) and an expand_shape puts the size-1 dims back
    assert ("tensor.expand_shape" in text) == (keep_dims and len(axes) > 0)


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("reduce_sum", d) for d in ("f16", "bf16", "i8", "i32", "i64")]
    + [("reduce_mean", d) for d in ("f16", "bf16")]
    + [(n, d) for n in ("reduce_max", "reduce_min") for d in ("f16", "bf16", "i8", "i64")],
)
def test_reduce_dtypes(name: str, dtype: str) -> None:
    text = check(lambda b, x: b.ret(getattr(b, name)(x, axes=[0, -1])), [((6, 2, 7), dtype)], terms=42)
    if name in ("reduce_sum", "reduce_mean") and dtype in ("f16", "bf16"):
        assert "arith.extf" in text and "arith.truncf" in text  # accumulated in f32, rounded once


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_reduce_max_min_nan(name: str, dtype: str) -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6) - 10
    x[1, 3] = np.nan
    x[2, 0] = np.inf
    x[3, 5] = -np.inf
    x[0, :] = np.nan
    text = check(
        lambda b, x: b.ret(getattr(b, name)(x, axes=[1])), [((4, 6), dtype)], arrays=[x.astype(NUMPY_DTYPES[dtype])]
    )
    assert ("arith.maximumf" if name == "reduce_max" else "arith.minimumf") in text


def test_reduce_sum_wraps() -> None:
    x = np.full((3, 4), 100, np.int8)
    check(lambda b, x: b.ret(b.reduce_sum(x, axes=[1])), [((3, 4), "i8")], arrays=[x])


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduce_no_axes_is_a_copy(name: str) -> None:
    check(lambda b, x: b.ret(getattr(b, name)(x, axes=[])), [((2, 3), "f32")])


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean"])
def test_reduce_empty_axis(name: str) -> None:
    # The sum over nothing is 0, the mean 0 / 0 = NaN.
    check(lambda b, x: b.ret(getattr(b, name)(x, axes=[1], keep_dims=True)), [((2, 0, 3), "f32")])


@pytest.mark.parametrize("axes", [[0, 2], [1]])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduce_dynamic(name: str, axes: list[int]) -> None:
    # A mean over dynamic kept dims has a dynamic intermediate (the sum before the division).
    text = check(
        lambda b, x: b.ret(getattr(b, name)(x, axes=axes, keep_dims=True)),
        [((None, 4, None), "f32")],
        terms=9,
    )
    if axes == [1] or name == "reduce_mean":  # dynamic kept sizes, or a dynamic count to divide by
        assert "tensor.dim" in text


# --------------------------------------------------------------------------
# matmul.

MATMULS = [
    # (a shape, b shape, transpose_a, transpose_b, named op expected)
    ((3, 4), (4, 5), False, False, "linalg.matmul"),
    ((4, 3), (4, 5), True, False, "linalg.matmul"),
    ((3, 4), (5, 4), False, True, "linalg.matmul"),
    ((4, 3), (5, 4), True, True, "linalg.matmul"),
    ((2, 3, 4), (2, 4, 5), False, False, "linalg.batch_matmul"),
    ((2, 4, 3), (2, 5, 4), True, True, "linalg.batch_matmul"),
    ((2, 2, 3, 4), (2, 2, 5, 4), False, True, "linalg.contract"),  # static, several batch dims
    ((2, 3, 4), (5, 4), False, True, "linalg.contract"),  # static, b without batch dims
    ((2, 4, 3), (4, 5), True, False, "linalg.generic"),
    ((2, 1, 3, 4), (3, 4, 5), False, False, "linalg.generic"),  # broadcast batch
    ((3, 4), (2, 4, 5), False, False, "linalg.generic"),
    ((1, 3, 4), (2, 4, 5), False, False, "linalg.generic"),
    ((4,), (4, 5), False, False, "linalg.vecmat"),
    ((4,), (5, 4), False, True, "linalg.matvec"),
    ((3, 4), (4,), False, False, "linalg.matvec"),
    ((4, 3), (4,), True, False, "linalg.vecmat"),
    ((4,), (4,), False, False, "linalg.dot"),
    ((2, 3, 4), (4,), False, False, "linalg.matvec"),
    ((4,), (2, 4, 5), False, False, "linalg.generic"),
]


@pytest.mark.parametrize(("a", "b", "ta", "tb", "named"), MATMULS)
def test_matmul_shapes(a: Shape, b: Shape, ta: bool, tb: bool, named: str) -> None:
    check(
        lambda bld, x, y: bld.ret(bld.matmul(x, y, transpose_a=ta, transpose_b=tb)),
        [(a, "f32"), (b, "f32")],
        terms=4,
        expect=(named, "linalg.fill"),
    )


@pytest.mark.parametrize("dtype", ["f16", "bf16", "i8", "i32", "i64"])
@pytest.mark.parametrize(("a", "b", "tb"), [((3, 16), (5, 16), True), ((2, 3, 16), (2, 16, 5), False)])
def test_matmul_dtypes(a: Shape, b: Shape, tb: bool, dtype: str) -> None:
    text = check(lambda bld, x, y: bld.ret(bld.matmul(x, y, transpose_b=tb)), [(a, dtype), (b, dtype)], terms=16)
    if dtype in ("f16", "bf16"):
        assert "outs(%1 : tensor<" in text and "xf32>)" in text and "arith.truncf" in text


@pytest.mark.parametrize(
    ("a", "b", "named"),
    [
        ((None, 4), (4, None), "linalg.matmul"),
        ((None, 3, 4), (4, 5), "linalg.matmul"),  # collapsed rows: the product is reshaped after
        ((None, None, 4), (4, 5), "linalg.matmul"),  # reshaped after into two dynamic sizes: reshape-dynamic-expands
        ((None, 3, 4), (None, 4, 5), "linalg.batch_matmul"),
        ((2, None, 3, 4), (2, None, 4, 5), "linalg.batch_matmul"),
        ((None, 1, 3, 4), (2, 4, 5), "linalg.generic"),
    ],
)
def test_matmul_dynamic(a: Shape, b: Shape, named: str) -> None:
    check(lambda bld, x, y: bld.ret(bld.matmul(x, y)), [(a, "f32"), (b, "f32")], terms=4, expect=(named,))


# --------------------------------------------------------------------------
# conv2d.

CONVS = [
    # (x shape, w shape, strides, pads, dilations, groups, named op expected)
    ((1, 3, 6, 6), (4, 3, 3, 3), [1, 1], [0, 0, 0, 0], [1, 1], 1, "linalg.contract"),  # static: im2col + matmul
    ((2, 3, 7, 6), (4, 3, 3, 2), [2, 1], [1, 0, 2, 1], [1, 2], 1, "linalg.contract"),
    ((1, 4, 8, 8), (6, 2, 3, 3), [2, 1], [1, 1, 1, 1], [1, 2], 2, "linalg.contract"),  # group: a batch dim
    ((2, 8, 9, 5), (8, 2, 3, 1), [1, 1], [1, 0, 1, 0], [1, 1], 4, "linalg.contract"),
    ((1, 4, 6, 6), (4, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 4, "graph.direct_conv"),  # depthwise, unit strides
    ((1, 4, 7, 6), (4, 1, 3, 3), [2, 1], [1, 1, 1, 1], [1, 1], 4, "linalg.depthwise_conv_2d_nchw_chw"),
    ((1, 3, 6, 6), (6, 1, 3, 3), [2, 2], [1, 1, 0, 0], [1, 1], 3, "linalg.contract"),  # multiplier 2
]


@pytest.mark.parametrize(("x", "w", "strides", "pads", "dilations", "groups", "named"), CONVS)
def test_conv2d(
    x: Shape, w: Shape, strides: list[int], pads: list[int], dilations: list[int], groups: int, named: str
) -> None:
    terms = int(np.prod(w[1:]))
    text = check(
        lambda b, x, w: b.ret(b.conv2d(x, w, strides=strides, pads=pads, dilations=dilations, groups=groups)),
        [(x, "f32"), (w, "f32")],
        terms,
        expect=(named, "linalg.fill"),
    )
    assert ("tensor.pad" in text) == any(pads)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_narrow(groups: int, dtype: str) -> None:
    check(
        lambda b, x, w: b.ret(b.conv2d(x, w, pads=[1, 1, 1, 1], groups=groups)),
        [((1, 4, 5, 5), dtype), ((4, 4 // groups, 3, 3), dtype)],
        terms=36,
        expect=("arith.truncf",),
    )


CONV_OPS = {1: "linalg.conv_2d_nchw_fchw", 2: "linalg.conv_2d_ngchw_gfchw", 4: "linalg.depthwise_conv_2d_nchw_chw"}


@pytest.mark.parametrize("pads", [[0, 0, 0, 0], [1, 0, 1, 2]])
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_conv2d_dynamic(groups: int, pads: list[int]) -> None:
    w = (4, 1, 2, 2) if groups == 4 else (None, 4 // groups, 2, 2)  # static O = groups: depthwise
    check(
        lambda b, x, w: b.ret(b.conv2d(x, w, strides=[2, 1], pads=pads, groups=groups)),
        [((None, None, None, None), "f32"), (w, "f32")],
        terms=16,
        dynamic_size=4,  # C = O = 4
        expect=(CONV_OPS[groups],),
    )


# --------------------------------------------------------------------------
# Pooling.

POOLS = [
    # (x shape, kernel, strides, pads)
    ((1, 2, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0]),
    ((1, 2, 7, 7), [3, 3], [2, 2], [1, 1, 1, 1]),
    ((2, 1, 6, 5), [2, 3], [2, 1], [0, 1, 1, 2]),
]


@pytest.mark.parametrize("dtype", ["f32", "f16", "i8", "i32"])
@pytest.mark.parametrize(("x", "kernel", "strides", "pads"), POOLS)
def test_max_pool2d(x: Shape, kernel: list[int], strides: list[int], pads: list[int], dtype: str) -> None:
    text = check(
        lambda b, x: b.ret(b.max_pool2d(x, kernel=kernel, strides=strides, pads=pads)),
        [(x, dtype)],
        expect=("linalg.pooling_nchw_max",),
    )
    assert ("tensor.pad" in text) == any(pads)


def test_max_pool2d_nan() -> None:
    x = np.arange(2 * 5 * 5, dtype=np.float32).reshape(1, 2, 5, 5)
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 4, 4] = -np.inf
    check(lambda b, x: b.ret(b.max_pool2d(x, kernel=[2, 2], pads=[1, 1, 0, 0])), [((1, 2, 5, 5), "f32")], arrays=[x])


@pytest.mark.parametrize("include", [True, False])
@pytest.mark.parametrize(("x", "kernel", "strides", "pads"), POOLS)
def test_avg_pool2d(x: Shape, kernel: list[int], strides: list[int], pads: list[int], include: bool) -> None:
    text = check(
        lambda b, x: b.ret(b.avg_pool2d(x, kernel=kernel, strides=strides, pads=pads, count_include_pad=include)),
        [(x, "f32")],
        terms=kernel[0] * kernel[1],
        expect=("linalg.pooling_nchw_sum", "arith.divf"),
    )
    # Without the pads in the count, each position has its own divisor: a constant tensor.
    assert ("arith.constant dense<" in text) == (not include and any(pads))


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_avg_pool2d_narrow(dtype: str) -> None:
    check(
        lambda b, x: b.ret(b.avg_pool2d(x, kernel=[3, 3], pads=[1, 1, 1, 1])),
        [((1, 2, 5, 5), dtype)],
        terms=9,
        expect=("arith.truncf",),
    )


@pytest.mark.parametrize(("name", "include"), [("max_pool2d", False), ("avg_pool2d", True), ("avg_pool2d", False)])
def test_pool2d_dynamic(name: str, include: bool) -> None:
    attrs = {"count_include_pad": include} if name == "avg_pool2d" else {}
    text = check(
        lambda b, x: b.ret(getattr(b, name)(x, kernel=[2, 3], strides=[2, 1], pads=[1, 1, 0, 2], **attrs)),
        [((None, 2, None, None), "f32")],
        terms=6,
    )
    if name == "avg_pool2d" and not include:
        assert "linalg.index" in text  # the divisor is computed per position at run time


def test_max_pool2d_dynamic_unpadded() -> None:
    check(lambda b, x: b.ret(b.max_pool2d(x, kernel=[2, 3], strides=[2, 1])), [((None, 2, None, None), "f32")])


# --------------------------------------------------------------------------
# argmax / argmin, one_hot, assign


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(("axis", "keep_dims"), [(1, False), (0, True), (-1, True)])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_arg_extremes_take_the_first_and_nan(name: str, axis: int, keep_dims: bool, dtype: str) -> None:
    """The first of equal extremes; a NaN wins over numbers (numpy's rule), the first NaN of a row."""
    import graphfuse

    rng = np.random.default_rng(1)
    x = rng.integers(-3, 3, (5, 7)).astype(NUMPY_DTYPES[dtype])  # many ties
    if dtype == "f32":
        x[1, 3] = x[1, 5] = np.nan
        x[4, 0] = np.nan
    b = GraphBuilder("f")
    b.ret(getattr(b, name)(b.arg((5, 7), dtype), axis=axis, keep_dims=keep_dims))
    exe = graphfuse.compile(b.module)
    (got,) = exe(x)
    want = getattr(np, name)(x, axis=axis, keepdims=keep_dims)
    assert got.dtype == np.int64 and np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_puts_on_values_at_the_indices(axis: int) -> None:
    import graphfuse

    indices = np.array([[0, 5, 2], [-1, 6, 3]], np.int64)  # -1 and 6 are outside [0, 6): all off
    b = GraphBuilder("f")
    b.ret(b.one_hot(b.arg((2, 3), "i64"), b.const(np.float32(2.0)), b.const(np.float32(-1.0)), depth=6, axis=axis))
    (got,) = graphfuse.compile(b.module)(indices)
    positions = np.arange(6).reshape([-1 if i == axis % 3 else 1 for i in range(3)])
    assert np.array_equal(got, np.where(np.expand_dims(indices, axis) == positions, 2.0, -1.0))


def test_assign_is_the_value_broadcast_to_the_variable() -> None:
    import graphfuse

    b = GraphBuilder("f")
    b.ret(b.assign(b.arg((4, 8)), b.arg((8,))))
    (got,) = graphfuse.compile(b.module)(np.zeros((4, 8), np.float32), np.arange(8, dtype=np.float32))
    assert np.array_equal(got, np.broadcast_to(np.arange(8, dtype=np.float32), (4, 8)))


# --------------------------------------------------------------------------
# resize and group_norm

RESIZES = [
    ((2, 3, 5, 6), "f32", {"size": [10, 12], "mode": "bilinear"}),
    ((2, 3, 5, 6), "f32", {"size": [3, 4], "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 6), "f32", {"size": [7, 4], "mode": "bilinear", "ratio_h": float(np.float32(1 / 1.5)),
                           "ratio_w": float(np.float32(1 / 0.7))}),
    ((2, 3, 5, 6), "f32", {"size": [5, 6], "mode": "bilinear"}),  # weights 1 and 0: inf * 0 is NaN, as PyTorch
    ((1, 1, 1, 1), "f32", {"size": [3, 2], "mode": "bilinear", "align_corners": True}),
    ((3, 9), "f32", {"size": [17], "mode": "bilinear"}),
    ((2, 3, 5, 6), "f16", {"size": [9, 4], "mode": "bilinear"}),
    ((2, 3, 5, 6), "bf16", {"size": [9, 4], "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 6), "f32", {"size": [10, 12]}),
    ((2, 3, 5, 6), "f32", {"size": [7, 4], "mode": "nearest_exact"}),
    ((2, 5, 6), "i64", {"size": [8, 3]}),
    ((4, 9), "i1", {"size": [4], "mode": "nearest_exact"}),
]


@pytest.mark.parametrize(("shape", "dtype", "attrs"), RESIZES, ids=str)
def test_resize_is_bit_exact_at_every_opt_level(shape: tuple[int, ...], dtype: str, attrs: dict) -> None:
    """The compiled taps and sums are the reference's (NaN and infinities included)."""
    import graphfuse

    rng = np.random.default_rng(2)
    x = random_array(rng, shape, dtype) if dtype != "i1" else rng.random(shape) < 0.5
    if dtype in FLOATS:
        flat = x.reshape(-1)
        flat[:3] = np.array([np.nan, np.inf, -np.inf], np.float32).astype(NUMPY_DTYPES[dtype])[:flat.size]
    b = GraphBuilder("f")
    b.ret(b.resize(b.arg(shape, dtype), **attrs))
    for level in (0, 1, 3):
        executable = graphfuse.compile(b.module, opt_level=level)
        (want,), (got,) = executable.reference(x), executable(x)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=dtype in FLOATS), level


def test_resize_dynamic_batch_lowers() -> None:
    check(lambda b, x: b.ret(b.resize(x, size=[4, 9], mode="bilinear")), [((None, 3, 5, 6), "f32")],
          expect=("tensor.extract", "tensor.dim"))


@pytest.mark.parametrize(("shape", "groups", "dtype"), [((2, 6, 5), 3, "f32"), ((2, 8, 33), 8, "f32"),
                                                        ((3, 4, 2, 3), 1, "f32"), ((2, 6, 5), 2, "bf16")])
def test_group_norm(shape: tuple[int, ...], groups: int, dtype: str) -> None:
    channels = shape[1]
    check(lambda b, x, g, bt: b.ret(b.group_norm(x, g, bt, num_groups=groups)),
          [(shape, dtype), ((channels,), dtype), ((channels,), dtype)], terms=int(np.prod(shape[1:])) // groups)


def test_group_norm_and_softplus_compile_at_every_opt_level() -> None:
    """Wav2Vec2's feature norm (a group per channel) and Mamba's softplus, fused with their neighbours."""
    import graphfuse

    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 3.0, (2, 8, 40)).astype(np.float32)
    x[0, 1, 5], x[1, 2, 0] = np.nan, np.inf
    gamma, beta = (rng.normal(0.0, 1.0, 8).astype(np.float32) for _ in range(2))
    b = GraphBuilder("f")
    xs, g, bt = b.arg(x.shape), b.arg((8,)), b.arg((8,))
    normed = b.group_norm(xs, g, bt, num_groups=8)
    b.ret(b.gelu(normed), b.softplus(b.mul(xs, b.const(4.0)), beta=1.0, threshold=20.0))
    for level in (0, 1, 2, 3):
        executable = graphfuse.compile(b.module, opt_level=level)
        for want, got in zip(executable.reference(x, gamma, beta), executable(x, gamma, beta), strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True, err_msg=str(level))


@pytest.mark.parametrize("a, b", [((96, 1, 32), (96, 32, 128)), ((8, 1, 32), (8, 32, 16)), ((96, 64, 32), (96, 32, 1))])
def test_compiled_batched_matmul_of_one_row_or_column(a: Shape, b: Shape) -> None:
    """Many batches of a one-row (or one-column) product, as a grouped MoE matmul makes them: the batches are not
    shared out as tasks (folding the unit dim left a vecmat the task script could not name: a compile error)."""
    import graphfuse

    builder = GraphBuilder("f")
    builder.ret(builder.op("matmul", builder.arg(a, "f32"), builder.arg(b, "f32")))
    executable = graphfuse.compile(builder.module, entry="f", opt_level=2)
    rng = np.random.default_rng(0)
    inputs = [random_array(rng, shape, "f32") for shape in (a, b)]
    assert_matches(executable.reference(*inputs)[0], executable(*inputs)[0], a[-1])
