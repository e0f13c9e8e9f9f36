"""CANN graph-fusion passes: fused graphs compute what the unfused ones do (reference interpreter, random inputs).

Tolerances:

- ZConcatv2dFusionPass moves no value and SoftmaxSmallOpFusionPass computes
  the same f32 composition as softmax's reference: exact for f32 (and for
  every dtype for concat).  In f16/bf16 the unfused softmax chain rounds
  each intermediate to the narrow type, the fused op once: a few ulps.
- ConvToFullyConnectionFusionPass and SplitConvConcatFusionPass compute the
  same products, summed in another order: within ``K * 2^-24`` of the
  magnitude ``conv(|x|, |w|)`` (K products per output), plus one rounding of
  the result to a narrow dtype.
- The batch_norm folds round the folded weights and bias once (from float64)
  and skip the unfused chain's intermediate roundings: the bound of
  :mod:`graphfuse.pipelines.fusion.cann_conv`, ``(K * 2^-24 + c * u) * M``
  with ``M = |s| * (conv(|x|, |w|) + |bias| + |mean|) + |offset| + |bias2|``,
  ``u`` the unit roundoff of the dtype and a small count ``c`` of roundings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse import parse_module, run_function, run_pipeline
from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.pipelines.fusion import cann
from graphfuse.pipelines.fusion.base import GRAPH_FUSION
from graphfuse.pipelines.registry import lookup_pass

DOCS = Path(__file__).resolve().parents[2] / "docs"
UNIT_ROUNDOFF = {"f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
PASSES = (
    cann.ConvBatchnormFusionPass,
    cann.ConvBiasAddFusionPass,
    cann.BatchNormSplitFusionPass,
    cann.ConvToFullyConnectionFusionPass,
    cann.ZConcatv2dFusionPass,
    cann.SplitConvConcatFusionPass,
    cann.SoftmaxSmallOpFusionPass,
)

# --------------------------------------------------------------------------
# Helpers.


graph_ops = graph_op_names

def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(NUMPY_DTYPES[dtype])


def apply(module: ir.Module, pass_name: str, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Results before and after running ``pass_name`` on ``module`` (in place)."""
    before = run_function(module, inputs)
    run_pipeline(module, f"builtin.module({pass_name})")
    after = run_function(module, inputs)
    return before, after


def as_f64(array: np.ndarray) -> np.ndarray:
    return np.asarray(array).astype(np.float64)


def conv_magnitude(x: np.ndarray, w: np.ndarray, attrs: dict) -> np.ndarray:
    """conv(|x|, |w|) in f32: what bounds the rounding of a conv's sums."""
    x32 = np.abs(as_f64(x)).astype(np.float32)
    w32 = np.abs(as_f64(w)).astype(np.float32)
    return as_f64(evaluate_op("conv2d", [x32, w32], attrs)[0])


def assert_within(got: np.ndarray, want: np.ndarray, tolerance: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    error = np.abs(as_f64(got) - as_f64(want))
    worst = np.unravel_index(np.argmax(error - tolerance), error.shape)
    assert np.all(error <= tolerance), (
        f"error {error[worst]} > tolerance {tolerance[worst]} at {worst}: got {got[worst]}, want {want[worst]}"
    )


# Conv configurations: (x shape, weight shape, attributes).
CONVS = [
    ((2, 3, 6, 6), (4, 3, 3, 3), {}),
    ((1, 4, 9, 7), (6, 2, 3, 2), {"strides": [2, 1], "pads": [1, 0, 2, 1], "groups": 2}),
    ((3, 2, 8, 8), (5, 2, 2, 3), {"dilations": [2, 2], "pads": [1, 1, 1, 1], "strides": [1, 3]}),
    ((2, 6, 5, 5), (6, 1, 3, 3), {"groups": 6, "pads": [1, 1, 1, 1]}),  # depthwise
    ((4, 8, 4, 4), (16, 8, 1, 1), {}),  # pointwise
]


def bn_params(rng: np.random.Generator, channels: int, dtype: str) -> list[np.ndarray]:
    scale = rand(rng, (channels,), dtype)
    offset = rand(rng, (channels,), dtype)
    mean = rand(rng, (channels,), dtype)
    var = (rng.random(channels) * 2 + 0.1).astype(np.float32).astype(NUMPY_DTYPES[dtype])
    return [scale, offset, mean, var]


def fold_tolerance(
    x: np.ndarray,
    w: np.ndarray,
    attrs: dict,
    params: list[np.ndarray],
    eps: float,
    dtype: str,
    pre_bias: np.ndarray | None = None,
    post_bias: np.ndarray | None = None,
) -> np.ndarray:
    """The batch_norm fold's bound: ``2 (K 2^-24 + 8 u) M`` (see the module docstring)."""
    scale, offset, mean, var = (as_f64(p) for p in params)
    channels = scale.shape[0]
    pre = np.zeros(channels) if pre_bias is None else np.abs(as_f64(pre_bias))
    post = np.zeros(channels) if post_bias is None else np.abs(as_f64(post_bias))
    s = np.abs(scale / np.sqrt(var + eps))

    def per_channel(v: np.ndarray) -> np.ndarray:
        return v[None, :, None, None]

    magnitude = per_channel(s) * (conv_magnitude(x, w, attrs) + per_channel(pre + np.abs(mean)))
    magnitude = magnitude + per_channel(np.abs(offset) + post)
    k = w.shape[1] * w.shape[2] * w.shape[3]
    return 2 * (k * 2.0**-24 + 8 * UNIT_ROUNDOFF[dtype]) * magnitude + 1e-30


# --------------------------------------------------------------------------
# Pass registration.


@pytest.mark.parametrize("cls", PASSES, ids=lambda c: c.name)
def test_registered_as_cann_graph_fusion(cls: type) -> None:
    assert lookup_pass(cls.name) is cls
    assert cls.origin == "cann" and cls.group == GRAPH_FUSION
    # off by default: the small-op softmax (the seed's configs switch it), and conv + bias on the CPU (slower
    # there than the bias in the convolution's epilogue)
    expected = {cann.SoftmaxSmallOpFusionPass: frozenset(), cann.ConvBiasAddFusionPass: frozenset({"npu"})}
    assert cls.default_backends == expected.get(cls, frozenset({"cpu", "npu"}))


@pytest.mark.parametrize("cls", PASSES, ids=lambda c: c.name)
def test_example_fuses(cls: type) -> None:
    """Each pass's catalog example fuses and keeps the results."""
    module = parse_module(cls.example)
    rng = np.random.default_rng(0)
    func = module.body.operations[0]
    inputs = []
    for arg_type in ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs:
        t = ir.RankedTensorType(arg_type)
        inputs.append(rand(rng, tuple(t.shape), "f32"))
    before_ops = graph_ops(module)
    before, after = apply(module, cls.name, inputs)
    after_ops = graph_ops(module)
    assert after_ops != before_ops and len(after_ops) <= len(before_ops) + 3
    for want, got in zip(before, after, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_unsupported_passes_are_documented_not_registered() -> None:
    page = (DOCS / "unsupported-passes.md").read_text()
    assert len(cann.UNSUPPORTED_PASSES) == 11  # seed 001's; seed 000's collective and quantized ones exist
    for name in cann.UNSUPPORTED_PASSES:
        assert lookup_pass(name) is None
        assert f"`{name}`" in page
        assert f"``{name}``" in (cann.__doc__ or "")


# --------------------------------------------------------------------------
# ConvBatchnormFusionPass


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("bias", [None, "bias_add", "add", "operand"])
@pytest.mark.parametrize("config", range(len(CONVS)))
def test_conv_batchnorm(config: int, bias: str | None, dtype: str) -> None:
    rng = np.random.default_rng(100 + config)
    x_shape, w_shape, attrs = CONVS[config]
    channels = w_shape[0]
    eps = 1e-3
    b = GraphBuilder("main")
    x = b.arg(x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    params = bn_params(rng, channels, dtype)
    c = rand(rng, (channels,), dtype)
    y = b.conv2d(x, b.const(w), *([b.const(c)] if bias == "operand" else []), **attrs)  # the conv's own bias
    if bias in ("bias_add", "add"):
        y = b.bias_add(y, b.const(c), axis=1) if bias == "bias_add" else b.add(b.const(c.reshape(channels, 1, 1)), y)
    out = b.batch_norm(y, *(b.const(p) for p in params), epsilon=eps)
    b.ret(out)
    xv = rand(rng, x_shape, dtype)
    before, after = apply(b.module, "ConvBatchnormFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.conv2d", "graph.bias_add"]
    tolerance = fold_tolerance(xv, w, attrs, params, eps, dtype, pre_bias=c if bias else None)
    assert_within(after[0], before[0], tolerance)


def test_conv_batchnorm_f32_is_tight() -> None:
    """The float64 fold keeps f32 results within a few ulps of the conv magnitude."""
    rng = np.random.default_rng(7)
    b = GraphBuilder("main")
    x = b.arg((2, 8, 10, 10), "f32")
    w = rand(rng, (16, 8, 3, 3), "f32")
    params = bn_params(rng, 16, "f32")
    b.ret(b.batch_norm(b.conv2d(x, b.const(w), pads=[1, 1, 1, 1]), *(b.const(p) for p in params)))
    xv = rand(rng, (2, 8, 10, 10), "f32")
    before, after = apply(b.module, "ConvBatchnormFusionPass", [xv])
    np.testing.assert_allclose(after[0], before[0], rtol=1e-4, atol=1e-4)


def test_conv_batchnorm_rejects_non_constant_parameters() -> None:
    b = GraphBuilder("main")
    x = b.arg((1, 2, 4, 4))
    mean = b.arg((2,))
    p = b.const(np.ones(2, np.float32))
    b.ret(b.batch_norm(b.conv2d(x, b.const(np.ones((2, 2, 1, 1), np.float32))), p, p, mean, p))
    run_pipeline(b.module, "builtin.module(ConvBatchnormFusionPass)")
    assert graph_ops(b.module) == ["graph.conv2d", "graph.batch_norm"]


# --------------------------------------------------------------------------
# BatchNormSplitFusionPass


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("consumer", ["bias_add", "add", "add_scalar"])
@pytest.mark.parametrize("config", range(len(CONVS)))
def test_batchnorm_split(config: int, consumer: str, dtype: str) -> None:
    rng = np.random.default_rng(200 + config)
    x_shape, w_shape, attrs = CONVS[config]
    channels = w_shape[0]
    eps = 1e-5
    b = GraphBuilder("main")
    x = b.arg(x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    params = bn_params(rng, channels, dtype)
    y = b.batch_norm(b.conv2d(x, b.const(w), **attrs), *(b.const(p) for p in params), epsilon=eps)
    if consumer == "bias_add":
        c = rand(rng, (channels,), dtype)
        out = b.bias_add(y, b.const(c), axis=1)
    elif consumer == "add":
        c = rand(rng, (channels,), dtype)
        out = b.add(y, b.const(c.reshape(1, channels, 1, 1)))
    else:
        c = np.full(channels, 0.75, NUMPY_DTYPES[dtype])
        out = b.add(b.const(np.asarray(0.75, NUMPY_DTYPES[dtype])), y)
    b.ret(out)
    xv = rand(rng, x_shape, dtype)
    before, after = apply(b.module, "BatchNormSplitFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.conv2d", "graph.bias_add"]
    # The consumer's bias enters after the batch_norm: no |s| factor on it.
    tolerance = fold_tolerance(xv, w, attrs, params, eps, dtype, post_bias=c)
    assert_within(after[0], before[0], tolerance)


def test_batchnorm_split_and_conv_batchnorm_differ() -> None:
    """On conv -> batch_norm -> bias_add the split fusion leaves one bias_add, ConvBatchnorm two; same values."""
    rng = np.random.default_rng(3)

    def build() -> FunctionBuilder:
        b = GraphBuilder("main")
        x = b.arg((1, 3, 5, 5))
        y = b.conv2d(x, b.const(rand(np.random.default_rng(4), (4, 3, 3, 3), "f32")))
        params = bn_params(np.random.default_rng(5), 4, "f32")
        y = b.batch_norm(y, *(b.const(p) for p in params))
        b.ret(b.bias_add(y, b.const(np.arange(4, dtype=np.float32)), axis=1))
        return b

    xv = rand(rng, (1, 3, 5, 5), "f32")
    split, convbn = build(), build()
    before, after_split = apply(split.module, "BatchNormSplitFusionPass", [xv])
    _, after_convbn = apply(convbn.module, "ConvBatchnormFusionPass", [xv])
    assert graph_ops(split.module) == ["graph.conv2d", "graph.bias_add"]
    assert graph_ops(convbn.module) == ["graph.conv2d", "graph.bias_add", "graph.bias_add"]
    np.testing.assert_allclose(after_split[0], before[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(after_convbn[0], before[0], rtol=1e-5, atol=1e-5)
    # Only ConvBatchnorm applies without a bias consumer.
    b = GraphBuilder("main")
    x = b.arg((1, 3, 5, 5))
    y = b.conv2d(x, b.const(rand(rng, (4, 3, 3, 3), "f32")))
    b.ret(b.relu(b.batch_norm(y, *(b.const(p) for p in bn_params(rng, 4, "f32")))))
    run_pipeline(b.module, "builtin.module(BatchNormSplitFusionPass)")
    assert "graph.batch_norm" in graph_ops(b.module)
    run_pipeline(b.module, "builtin.module(ConvBatchnormFusionPass)")
    assert graph_ops(b.module) == ["graph.conv2d", "graph.bias_add", "graph.relu"]


# --------------------------------------------------------------------------
# ConvToFullyConnectionFusionPass


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("constant_weights", [True, False])
@pytest.mark.parametrize(
    ("x_shape", "out", "strides"),
    [((2, 3, 4, 4), 8, [1, 1]), ((5, 16, 1, 1), 7, [1, 1]), ((1, 2, 3, 5), 4, [2, 3]), ((3, 7, 6, 2), 1, [5, 1])],
)
def test_conv_to_fully_connection(x_shape: tuple, out: int, strides: list, constant_weights: bool, dtype: str) -> None:
    rng = np.random.default_rng(sum(x_shape) + out)
    w_shape = (out, *x_shape[1:])
    b = GraphBuilder("main")
    x = b.arg(x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    w_value = b.const(w) if constant_weights else b.arg(w_shape, dtype)
    b.ret(b.conv2d(x, w_value, strides=strides))
    xv = rand(rng, x_shape, dtype)
    inputs = [xv] if constant_weights else [xv, w]
    before, after = apply(b.module, "ConvToFullyConnectionFusionPass", inputs)
    reshapes = ["graph.reshape"] * (2 if constant_weights else 3)
    assert sorted(graph_ops(b.module)) == sorted([*reshapes, "graph.matmul"])
    k = int(np.prod(x_shape[1:]))
    magnitude = conv_magnitude(xv, w, {"strides": strides})
    tolerance = 2 * k * 2.0**-24 * magnitude + 2 * UNIT_ROUNDOFF[dtype] * np.abs(as_f64(before[0])) + 1e-30
    assert_within(after[0], before[0], tolerance)


def test_conv_to_fully_connection_dynamic_batch() -> None:
    rng = np.random.default_rng(11)
    b = GraphBuilder("main")
    x = b.arg((None, 3, 2, 2))
    b.ret(b.conv2d(x, b.const(rand(rng, (5, 3, 2, 2), "f32"))))
    for n in (1, 4):
        module = parse_module(str(b.module))
        xv = rand(rng, (n, 3, 2, 2), "f32")
        before, after = apply(module, "ConvToFullyConnectionFusionPass", [xv])
        assert "graph.conv2d" not in graph_ops(module)
        np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-6)


def test_conv_to_fully_connection_keeps_real_convs() -> None:
    b = GraphBuilder("main")
    x = b.arg((1, 2, 4, 4))
    w = b.arg((3, 2, 4, 4))
    b.ret(
        b.conv2d(x, w, pads=[1, 1, 1, 1]), b.conv2d(x, b.arg((4, 1, 4, 4)), groups=2), b.conv2d(x, b.arg((3, 2, 3, 3)))
    )
    run_pipeline(b.module, "builtin.module(ConvToFullyConnectionFusionPass)")
    assert graph_ops(b.module) == ["graph.conv2d"] * 3


# --------------------------------------------------------------------------
# ZConcatv2dFusionPass


@pytest.mark.parametrize("dtype", ["f32", "f16", "i32", "i1"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_zconcat_exact(axis: int, dtype: str) -> None:
    rng = np.random.default_rng(21)
    shape = (3, 4, 2)
    b = GraphBuilder("main")
    args = [b.arg(shape, dtype) for _ in range(5)]
    inner = b.concat(args[1], args[2], axis=axis)
    innermost = b.concat(args[3], args[4], axis=axis)
    middle = b.concat(inner, innermost, axis=axis)
    b.ret(b.concat(args[0], middle, axis=axis))
    if dtype == "i1":
        inputs = [rng.random(shape) < 0.5 for _ in args]
    elif dtype == "i32":
        inputs = [rng.integers(-100, 100, shape, dtype=np.int32) for _ in args]
    else:
        inputs = [rand(rng, shape, dtype) for _ in args]
    before, after = apply(b.module, "ZConcatv2dFusionPass", inputs)
    assert graph_ops(b.module) == ["graph.concat"]
    np.testing.assert_array_equal(after[0], before[0])
    assert after[0].dtype == before[0].dtype


def test_zconcat_respects_irdl_rule() -> None:
    b = GraphBuilder("main")
    x, y = b.arg((2, 1)), b.arg((2, 1))
    inner = b.concat(b.arg((2, 2)), b.arg((2, 3)), axis=1)
    b.ret(b.concat(x, y, inner, axis=1))
    run_pipeline(b.module, "builtin.module(ZConcatv2dFusionPass)")
    assert graph_ops(b.module) == ["graph.concat", "graph.concat"]


# --------------------------------------------------------------------------
# SplitConvConcatFusionPass


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize(
    ("pieces", "in_per_piece", "out_per_conv", "kernel", "attrs"),
    [
        (2, 2, 3, (3, 3), {}),
        (3, 1, 2, (1, 1), {}),
        (4, 2, 1, (2, 3), {"strides": [2, 1], "pads": [1, 0, 1, 2], "dilations": [1, 2]}),
        (2, 3, 4, (3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ],
)
def test_split_conv_concat(
    pieces: int, in_per_piece: int, out_per_conv: int, kernel: tuple, attrs: dict, dtype: str
) -> None:
    rng = np.random.default_rng(pieces * 10 + in_per_piece)
    x_shape = (2, pieces * in_per_piece, 7, 6)
    b = GraphBuilder("main")
    x = b.arg(x_shape, dtype)
    parts = b.split(x, axis=1, sizes=[in_per_piece] * pieces)
    weights = [rand(rng, (out_per_conv, in_per_piece, *kernel), dtype) for _ in range(pieces)]
    convs = [b.conv2d(p, b.const(w), **attrs) for p, w in zip(parts, weights, strict=True)]
    b.ret(b.concat(*convs, axis=1))
    xv = rand(rng, x_shape, dtype)
    before, after = apply(b.module, "SplitConvConcatFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.conv2d"]
    grouped = {**attrs, "groups": pieces}
    magnitude = conv_magnitude(xv, np.concatenate(weights), grouped)
    k = in_per_piece * kernel[0] * kernel[1]
    tolerance = 2 * k * 2.0**-24 * magnitude + 2 * UNIT_ROUNDOFF[dtype] * np.abs(as_f64(before[0])) + 1e-30
    assert_within(after[0], before[0], tolerance)


def test_split_conv_concat_unequal_groups_not_fused() -> None:
    b = GraphBuilder("main")
    x = b.arg((1, 6, 4, 4))
    p0, p1 = b.split(x, axis=1, sizes=[2, 4])
    c0 = b.conv2d(p0, b.const(np.ones((2, 2, 1, 1), np.float32)))
    c1 = b.conv2d(p1, b.const(np.ones((2, 4, 1, 1), np.float32)))
    b.ret(b.concat(c0, c1, axis=1))
    run_pipeline(b.module, "builtin.module(SplitConvConcatFusionPass)")
    assert graph_ops(b.module) == ["graph.split", "graph.conv2d", "graph.conv2d", "graph.concat"]


# --------------------------------------------------------------------------
# ConvBiasAddFusionPass and convolutions with a bias operand


def conv_bias_tolerance(x: np.ndarray, w: np.ndarray, bias: np.ndarray, attrs: dict, dtype: str) -> np.ndarray:
    """The bias summed first rather than last: ``(K + 1) 2^-24`` of ``M = conv(|x|, |w|) + |bias|``; in a
    narrow dtype the unfused chain also rounds the conv's result (at most M) and the sum: ``2 u M``."""
    k = w.shape[1] * w.shape[2] * w.shape[3]
    magnitude = conv_magnitude(x, w, attrs) + np.abs(as_f64(bias))[None, :, None, None]
    return 2 * ((k + 1) * 2.0**-24 + 2 * UNIT_ROUNDOFF[dtype]) * magnitude + 1e-30


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("form", ["bias_add", "bias_add_argument", "add", "add_scalar", "add_argument"])
@pytest.mark.parametrize("config", range(len(CONVS)))
def test_conv_bias_add(config: int, form: str, dtype: str) -> None:
    """conv2d + a per-channel bias -> conv2d with the bias as its operand, for every conv shape."""
    rng = np.random.default_rng(300 + config)
    x_shape, w_shape, attrs = CONVS[config]
    channels = w_shape[0]
    b = GraphBuilder("main")
    x = b.arg(x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    bias = rand(rng, (1,) if form == "add_scalar" else (channels,), dtype, scale=4.0)
    inputs = [rand(rng, x_shape, dtype)]
    y = b.conv2d(x, b.const(w), **attrs)
    if form == "bias_add_argument":
        y = b.bias_add(y, b.arg((channels,), dtype), axis=1)
        inputs.append(bias)
    elif form == "bias_add":
        y = b.bias_add(y, b.const(bias), axis=-3)
    elif form == "add":
        y = b.add(y, b.const(bias.reshape(1, channels, 1, 1)))
    elif form == "add_argument":
        y = b.add(b.arg((channels, 1, 1), dtype), y)
        inputs.append(bias.reshape(channels, 1, 1))
    else:
        y = b.add(b.const(bias.reshape(())), y)
    b.ret(y)
    before, after = apply(b.module, "ConvBiasAddFusionPass", inputs)
    assert graph_ops(b.module) == (["graph.reshape"] if form == "add_argument" else []) + ["graph.conv2d"]
    full_bias = np.broadcast_to(bias, (channels,))
    assert_within(after[0], before[0], conv_bias_tolerance(inputs[0], w, full_bias, attrs, dtype))


def test_conv_bias_add_keeps_what_it_cannot_fuse() -> None:
    """Another axis, a conv that already has a bias, a shared conv result, a non-constant add: no rewrite."""
    text = """
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x1x1xf32>, %b: tensor<4xf32>, %c: tensor<1x4x1x1xf32>)
    -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %k = arith.constant dense<1.0> : tensor<4xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = "graph.bias_add"(%0, %k) {axis = 3 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %2 = "graph.conv2d"(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %3 = "graph.bias_add"(%2, %k) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %4 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %5 = "graph.add"(%4, %c) : (tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %1, %3, %5, %4 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}"""
    module = parse_module(text)
    before = str(module)
    run_pipeline(module, "builtin.module(ConvBiasAddFusionPass)")
    assert str(module) == before


@pytest.mark.parametrize("config", range(len(CONVS)))
def test_conv2d_bias_operand_compiles(config: int) -> None:
    """Every CPU lowering of conv2d (direct, im2col, named, depthwise, grouped) starts from the bias, and the
    NPU emulator does too."""
    from graphfuse.lowering.npu.compiler import compile_npu

    rng = np.random.default_rng(400 + config)
    x_shape, w_shape, attrs = CONVS[config]
    b = GraphBuilder("main")
    b.ret(b.conv2d(b.arg(x_shape), b.arg(w_shape), b.arg((w_shape[0],)), **attrs))
    inputs = [rand(rng, x_shape, "f32"), rand(rng, w_shape, "f32"), rand(rng, (w_shape[0],), "f32", scale=4.0)]
    want = run_function(b.module, inputs)[0]
    tolerance = conv_bias_tolerance(inputs[0], inputs[1], inputs[2], attrs, "f32")
    for compiled in (graphfuse.compile(b.module, opt_level=0), compile_npu(b.module, opt_level=0)):
        assert_within(compiled(*inputs)[0], want, tolerance)


def test_conv2d_direct_with_bias_compiles() -> None:
    """A 3x3 conv wide enough for the direct convolution's register tiles, its bias in the accumulator."""
    rng = np.random.default_rng(5)
    b = GraphBuilder("main")
    b.ret(b.conv2d(b.arg((1, 16, 20, 40)), b.arg((32, 16, 3, 3)), b.arg((32,)), pads=[1, 1, 1, 1]))
    inputs = [rand(rng, (1, 16, 20, 40), "f32"), rand(rng, (32, 16, 3, 3), "f32"), rand(rng, (32,), "f32", 4.0)]
    want = run_function(b.module, inputs)[0]
    exe = graphfuse.compile(b.module)
    assert "graph.direct_conv" in exe.linalg
    assert_within(exe(*inputs)[0], want, conv_bias_tolerance(*inputs, {"pads": [1, 1, 1, 1]}, "f32"))


def test_conv_joins_take_biases() -> None:
    """ConvConcat and SplitConvConcat concatenate the convs' biases (zeros for a conv without one);
    ConvToFullyConnection adds the bias to the matmul."""
    rng = np.random.default_rng(9)
    b = GraphBuilder("main")
    x = b.arg((1, 4, 5, 5))
    w0, w1 = rand(rng, (2, 4, 3, 3), "f32"), rand(rng, (3, 4, 3, 3), "f32")
    c0 = b.conv2d(x, b.const(w0), b.const(rand(rng, (2,), "f32")), pads=[1, 1, 1, 1])
    c1 = b.conv2d(x, b.const(w1), pads=[1, 1, 1, 1])
    b.ret(b.concat(c0, c1, axis=1))
    xv = rand(rng, (1, 4, 5, 5), "f32")
    before, after = apply(b.module, "ConvConcatFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.conv2d"] and len(list(b.module.body.operations[0].regions[0]
                                                                  .blocks[0].arguments)) == 1
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-5)

    b = GraphBuilder("main")
    parts = b.split(b.arg((1, 4, 5, 5)), axis=1, sizes=[2, 2])
    convs = [b.conv2d(p, b.const(rand(rng, (3, 2, 1, 1), "f32")), b.const(rand(rng, (3,), "f32"))) for p in parts]
    b.ret(b.concat(*convs, axis=1))
    before, after = apply(b.module, "SplitConvConcatFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.conv2d"]
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-5)

    b = GraphBuilder("main")
    b.ret(b.conv2d(b.arg((2, 4, 5, 5)), b.const(rand(rng, (6, 4, 5, 5), "f32")), b.arg((6,))))
    inputs = [rand(rng, (2, 4, 5, 5), "f32"), rand(rng, (6,), "f32")]
    before, after = apply(b.module, "ConvToFullyConnectionFusionPass", inputs)
    assert sorted(graph_ops(b.module)) == ["graph.bias_add", "graph.matmul", "graph.reshape", "graph.reshape"]
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-5)


def test_conv_joins_refuse_non_constant_biases() -> None:
    b = GraphBuilder("main")
    x, bias = b.arg((1, 4, 5, 5)), b.arg((2,))
    c0 = b.conv2d(x, b.const(np.ones((2, 4, 1, 1), np.float32)), bias)
    c1 = b.conv2d(x, b.const(np.ones((2, 4, 1, 1), np.float32)))
    b.ret(b.concat(c0, c1, axis=1))
    run_pipeline(b.module, "builtin.module(ConvConcatFusionPass)")
    assert graph_ops(b.module) == ["graph.conv2d", "graph.conv2d", "graph.concat"]


# --------------------------------------------------------------------------
# SoftmaxSmallOpFusionPass


def build_small_op_softmax(shape: tuple, axis: int, dtype: str) -> FunctionBuilder:
    b = GraphBuilder("main")
    x = b.arg(shape, dtype)
    m = b.reduce_max(x, axes=[axis], keep_dims=True)
    e = b.exp(b.sub(x, m))
    b.ret(b.div(e, b.reduce_sum(e, axes=[axis], keep_dims=True)))
    return b


@pytest.mark.parametrize(("shape", "axis"), [((4, 8), -1), ((4, 8), 0), ((2, 3, 5), 1), ((2, 3, 4, 5), -2), ((7,), 0)])
def test_softmax_f32_exact(shape: tuple, axis: int) -> None:
    rng = np.random.default_rng(len(shape) * 10 + axis)
    b = build_small_op_softmax(shape, axis, "f32")
    xv = rand(rng, shape, "f32", scale=10.0)
    before, after = apply(b.module, "SoftmaxSmallOpFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.softmax"]
    np.testing.assert_array_equal(after[0], before[0])


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_softmax_narrow_types(dtype: str) -> None:
    rng = np.random.default_rng(31)
    b = build_small_op_softmax((6, 16), 1, dtype)
    xv = rand(rng, (6, 16), dtype, scale=3.0)
    before, after = apply(b.module, "SoftmaxSmallOpFusionPass", [xv])
    assert graph_ops(b.module) == ["graph.softmax"]
    # Unfused: x - max rounds to the narrow type (an absolute error u * |x - max|, which exp turns into a
    # relative one), then exp, sum and div round once each: relative error about (|x - max| + 4) u.
    u = UNIT_ROUNDOFF[dtype]
    shift = np.abs(as_f64(xv) - as_f64(xv).max(axis=1, keepdims=True))
    assert_within(after[0], before[0], 2 * (shift + 4) * u * np.abs(as_f64(before[0])) + 1e-30)


def test_softmax_is_off_in_graph_fusion_by_default() -> None:
    b = build_small_op_softmax((4, 8), 1, "f32")
    run_pipeline(b.module, "builtin.module(graph-fusion)")
    assert "graph.softmax" not in graph_ops(b.module)
    run_pipeline(b.module, "builtin.module(graph-fusion{enable-pass=SoftmaxSmallOpFusionPass})")
    assert graph_ops(b.module) == ["graph.softmax"]


# --------------------------------------------------------------------------
# Whole graphs: every CANN pass through graph-fusion keeps the results.


def test_graph_fusion_on_a_small_cnn() -> None:
    """split -> convs -> concat -> batch_norm -> bias_add -> relu -> conv (FC head) -> nested concat."""
    rng = np.random.default_rng(41)
    b = GraphBuilder("main")
    x = b.arg((2, 4, 6, 6))
    parts = b.split(x, axis=1, sizes=[2, 2])
    convs = [b.conv2d(p, b.const(rand(rng, (3, 2, 3, 3), "f32")), pads=[1, 1, 1, 1]) for p in parts]
    y = b.concat(*convs, axis=1)
    y = b.batch_norm(y, *(b.const(p) for p in bn_params(rng, 6, "f32")))
    y = b.relu(b.bias_add(y, b.const(rand(rng, (6,), "f32")), axis=1))
    head = b.conv2d(y, b.const(rand(rng, (5, 6, 6, 6), "f32")))
    flat = b.reshape(head, (2, 5))
    b.ret(b.concat(b.concat(flat, flat, axis=1), flat, axis=1))
    xv = rand(rng, (2, 4, 6, 6), "f32")
    before, after = apply(b.module, "graph-fusion", [xv])
    ops = graph_ops(b.module)
    assert "graph.batch_norm" not in ops and "graph.split" not in ops
    assert ops.count("graph.concat") == 1 and ops.count("graph.conv2d") == 1 and "graph.matmul" in ops
    np.testing.assert_allclose(after[0], before[0], rtol=1e-4, atol=1e-4)
