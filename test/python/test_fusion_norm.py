"""Normalization fusion passes (MindSpore's and TorchAir's): every fusion keeps the reference results bit for bit.

Each test builds a graph with the pattern, runs the reference interpreter on
random inputs (fixed seed) before and after the pass, and checks that the fused
op appeared, the unfused ops are gone, and every result is identical: the fused
ops' references are the composition of the ops they replace.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse import GraphBuilder, parse_module, run_function
from graphfuse.dialect.catalog import VerifyError
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig, sig_from_type
from graphfuse.pipelines.fusion.base import GRAPH_FUSION
from graphfuse.pipelines.registry import lookup_pass
from graphfuse.pipelines.runner import run_pipeline

MINDSPORE_PASSES = [
    "add_layer_norm_fusion",
    "add_layer_norm_v3_fusion",
    "add_layer_norm_ext_fusion",
    "add_rms_norm_fusion",
    "add_cast_rms_norm_cast_fusion",
    "rms_norm_quant_fusion",
    "add_rms_norm_quant_fusion",
]
ALL_PASSES = [*MINDSPORE_PASSES, "pattern_fusion_pass"]
#: graph-fusion's order restricted to these passes (a pass that absorbs more ops first)
RUN_ORDER = sorted(MINDSPORE_PASSES, key=lambda name: lookup_pass(name).priority)
FLOATS = ["f32", "f16", "bf16"]

# --------------------------------------------------------------------------
# Helpers.


graph_ops = graph_op_names

def random_inputs(module: ir.Module, rng: np.random.Generator, scale: float = 2.0) -> list[np.ndarray]:
    """Random normal values for the first function's arguments (dynamic dims get size 3)."""
    func = module.body.operations[0]
    arrays = []
    for arg in func.regions[0].blocks[0].arguments:
        sig = sig_from_type(arg.type)
        shape = tuple(3 if d is None else d for d in sig.shape)
        values = rng.normal(0.0, scale, shape).astype(np.float32)
        arrays.append(values.astype(NUMPY_DTYPES[sig.dtype]))
    return arrays


def assert_identical(want: list[np.ndarray], got: list[np.ndarray]) -> None:
    assert len(want) == len(got)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes(), (w, g)


def fuse(
    module: ir.Module,
    pipeline: str,
    fused: str | list[str],
    gone: list[str],
    samples: int = 3,
    scale: float = 2.0,
    inputs: Callable[[np.random.Generator], list[np.ndarray]] | None = None,
) -> list[str]:
    """Run ``pipeline`` on ``module`` and check fusion and results; returns the graph ops left."""
    rng = np.random.default_rng(0)
    cases = [inputs(rng) if inputs else random_inputs(module, rng, scale) for _ in range(samples)]
    before = [run_function(module, case) for case in cases]
    run_pipeline(module, pipeline if pipeline.startswith("builtin.module") else f"builtin.module({pipeline})")
    assert module.operation.verify()
    ops = graph_ops(module)
    for name in [fused] if isinstance(fused, str) else fused:
        assert f"graph.{name}" in ops, ops
    for name in gone:
        assert f"graph.{name}" not in ops, ops
    for case, want in zip(cases, before, strict=True):
        assert_identical(want, run_function(module, case))
    return ops


# --------------------------------------------------------------------------
# The passes are registered under the seeds' names, with their examples.


@pytest.mark.parametrize("name", ALL_PASSES)
def test_registered(name: str) -> None:
    cls = lookup_pass(name)
    assert cls is not None and cls.name == name
    assert cls.group == GRAPH_FUSION
    assert cls.origin == ("torchair" if name == "pattern_fusion_pass" else "mindspore")
    assert cls.summary and cls.example and cls.patterns
    assert lookup_pass(name.replace("_", "-")) is cls


EXAMPLE_RESULTS = {
    "add_layer_norm_fusion": "add_layer_norm",
    "add_layer_norm_v3_fusion": "add_layer_norm",
    "add_layer_norm_ext_fusion": "add_layer_norm",
    "add_rms_norm_fusion": "add_rms_norm",
    "add_cast_rms_norm_cast_fusion": "add_rms_norm",
    "rms_norm_quant_fusion": "rms_norm_quant",
    "add_rms_norm_quant_fusion": "add_rms_norm_quant",
    "pattern_fusion_pass": "add_rms_norm_dynamic_quant",
}


@pytest.mark.parametrize("name", ALL_PASSES)
def test_example_fuses(name: str) -> None:
    module = parse_module(lookup_pass(name).example)
    ops = fuse(module, name, EXAMPLE_RESULTS[name], [])
    assert ops == [f"graph.{EXAMPLE_RESULTS[name]}"]  # one fused op is all that is left


def test_run_order() -> None:
    assert sorted(RUN_ORDER) == sorted(MINDSPORE_PASSES)
    position = {name: i for i, name in enumerate(RUN_ORDER)}
    assert position["add_rms_norm_quant_fusion"] < position["add_rms_norm_fusion"]
    assert position["add_rms_norm_quant_fusion"] < position["rms_norm_quant_fusion"]
    assert position["add_cast_rms_norm_cast_fusion"] < position["add_rms_norm_fusion"]
    # graph-fusion runs them in this order too (TorchAir's pass, which starts from add_rms_norm, after them).
    from graphfuse.pipelines.fusion.graph_fusion import fusion_passes

    order = [cls.name for cls in fusion_passes() if cls.name in ALL_PASSES]
    assert order == [*RUN_ORDER, "pattern_fusion_pass"]


# --------------------------------------------------------------------------
# add -> layer_norm


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("shape", "begin"), [((4, 8), -1), ((2, 3, 16), -1), ((2, 3, 16), 1)])
def test_add_layer_norm(dtype: str, shape: tuple[int, ...], begin: int) -> None:
    b = GraphBuilder("f")
    norm = shape[begin:]
    x1, x2, g, beta = b.arg(shape, dtype), b.arg(shape, dtype), b.arg(norm, dtype), b.arg(norm, dtype)
    b.ret(b.exp(b.layer_norm(b.add(x1, x2), g, beta, begin_norm_axis=begin, epsilon=1e-3)))
    fuse(b.module, "add_layer_norm_fusion", "add_layer_norm", ["add", "layer_norm"])


def test_add_layer_norm_broadcast_operand_first() -> None:
    b = GraphBuilder("f")
    bias, x, g, beta = b.arg((16,), "f16"), b.arg((2, 3, 16), "f16"), b.arg((16,), "f16"), b.arg((16,), "f16")
    b.ret(b.layer_norm(b.add(bias, x), g, beta))
    fuse(b.module, "add_layer_norm_fusion", "add_layer_norm", ["add", "layer_norm"])


def test_add_layer_norm_single_use_only() -> None:
    b = GraphBuilder("f")
    x1, x2, g, beta = b.arg((4, 8)), b.arg((4, 8)), b.arg((8,)), b.arg((8,))
    s = b.add(x1, x2)
    b.ret(b.layer_norm(s, g, beta), s)
    module = b.module
    run_pipeline(module, "builtin.module(add_layer_norm_fusion, add_layer_norm_v3_fusion)")
    assert graph_ops(module) == ["graph.add", "graph.layer_norm"]
    fuse(module, "add_layer_norm_ext_fusion", "add_layer_norm", ["add", "layer_norm"])


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_layer_norm_v3(dtype: str) -> None:
    b = GraphBuilder("f")
    x, bias, g, beta = b.arg((2, 5, 16), dtype), b.arg((16,), dtype), b.arg((5, 16), dtype), b.arg((5, 16), dtype)
    s = b.bias_add(x, bias, axis=2)
    b.ret(b.layer_norm(s, g, beta, begin_norm_axis=1), b.mul(s, s))
    ops = fuse(b.module, "add_layer_norm_v3_fusion", "add_layer_norm", ["bias_add", "layer_norm"])
    assert ops == ["graph.add_layer_norm", "graph.mul"]


def test_add_layer_norm_v3_channel_axis_stays() -> None:
    b = GraphBuilder("f")
    x, bias, g, beta = b.arg((2, 3, 4)), b.arg((3,)), b.arg((4,)), b.arg((4,))
    b.ret(b.layer_norm(b.bias_add(x, bias, axis=1), g, beta))
    module = b.module
    run_pipeline(module, "builtin.module(add_layer_norm_v3_fusion)")
    assert graph_ops(module) == ["graph.bias_add", "graph.layer_norm"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_layer_norm_ext_residual_stream(dtype: str) -> None:
    # Two transformer-style residual blocks: x + attn -> norm, (x + attn) + mlp -> norm.
    b = GraphBuilder("f")
    x, a, m, g, beta = (b.arg((6, 32), dtype), b.arg((6, 32), dtype), b.arg((6, 32), dtype),
                        b.arg((32,), dtype), b.arg((32,), dtype))
    s1 = b.add(x, a)
    n1 = b.layer_norm(s1, g, beta)
    s2 = b.add(s1, b.mul(n1, m))
    n2 = b.layer_norm(s2, g, beta)
    b.ret(n2, s2)
    ops = fuse(b.module, "add_layer_norm_ext_fusion", "add_layer_norm", ["layer_norm"])
    assert ops.count("graph.add_layer_norm") == 2


# --------------------------------------------------------------------------
# add -> rms_norm


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 64), (1, 1, 5)])
def test_add_rms_norm(dtype: str, shape: tuple[int, ...]) -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg(shape, dtype), b.arg(shape, dtype), b.arg(shape[-1:], dtype)
    s = b.add(x1, x2)
    b.ret(b.rms_norm(s, g, epsilon=1e-5), b.neg(s))
    ops = fuse(b.module, "add_rms_norm_fusion", "add_rms_norm", ["add", "rms_norm"])
    assert ops == ["graph.add_rms_norm", "graph.neg"]


def test_add_rms_norm_dynamic_shape() -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg((None, 16), "f16"), b.arg((16,), "f16"), b.arg((16,), "f16")
    b.ret(b.rms_norm(b.add(x1, x2), g))
    fuse(b.module, "add_rms_norm_fusion", "add_rms_norm", ["add", "rms_norm"])


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("return_sum", [False, True])
def test_add_cast_rms_norm_cast(dtype: str, return_sum: bool) -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg((3, 4, 32), dtype), b.arg((3, 4, 32), dtype), b.arg((32,), "f32")
    s = b.add(b.cast(x1, "f32"), b.cast(x2, "f32"))
    y = b.cast(b.rms_norm(s, g), dtype)
    b.ret(*([y, s] if return_sum else [y]))
    ops = fuse(b.module, "add_cast_rms_norm_cast_fusion", "add_rms_norm", ["add", "rms_norm", "cast"])
    assert ops == ["graph.add_rms_norm"]


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("gamma_form", ["constant", "cast", "argument"])
def test_add_then_cast_rms_norm_cast(dtype: str, gamma_form: str) -> None:
    """HF's bf16 RMSNorm after a residual add: the sum in the low type, cast to f32, normalized, cast back =>
    add_rms_norm in the low type, bit for bit (gamma's f32 values are the low type's)."""
    rng = np.random.default_rng(1)
    b = GraphBuilder("f")
    x1, x2 = b.arg((3, 4, 32), dtype), b.arg((3, 4, 32), dtype)
    low_gamma = rng.normal(size=32).astype(np.float32).astype(NUMPY_DTYPES[dtype])
    if gamma_form == "constant":
        g = b.const(low_gamma.astype(np.float32))
    elif gamma_form == "cast":
        g = b.cast(b.const(low_gamma), "f32")
    else:
        g = b.arg((32,), "f32")
    s = b.add(x1, x2)
    b.ret(b.cast(b.rms_norm(b.cast(s, "f32"), g), dtype), s)
    if gamma_form == "argument":  # f32 values the low type may not hold: not fused, and why is logged
        run_pipeline(b.module, "builtin.module(add_cast_rms_norm_cast_fusion)")
        assert "graph.add_rms_norm" not in graph_ops(b.module)
        return
    ops = fuse(b.module, "add_cast_rms_norm_cast_fusion", "add_rms_norm", ["rms_norm", "add"])
    # the sum's casts are gone; the cast making gamma f32 stays for dead-code elimination
    assert ops.count("graph.add_rms_norm") == 1 and ops.count("graph.cast") == (gamma_form == "cast")


def test_add_then_cast_rms_norm_cast_refuses_an_f32_gamma_the_low_type_lacks() -> None:
    b = GraphBuilder("f")
    x1, x2 = b.arg((2, 8), "bf16"), b.arg((2, 8), "bf16")
    gamma = np.full(8, 1.0 + 2.0**-12, np.float32)  # not a bf16 value
    b.ret(b.cast(b.rms_norm(b.cast(b.add(x1, x2), "f32"), b.const(gamma)), "bf16"))
    run_pipeline(b.module, "builtin.module(add_cast_rms_norm_cast_fusion)")
    assert "graph.add_rms_norm" not in graph_ops(b.module)


def test_add_cast_rms_norm_cast_keeps_f32_sum() -> None:
    # Large and tiny f16 values: their f32 sum is not an f16 value, and the fused op keeps it in f32.
    x1 = np.array([[60000.0, 1.0, -3.0, 2.0**-14]], np.float16)
    x2 = np.array([[2.0**-10, 2.0**-11, 1024.0, 3.0]], np.float16)
    b = GraphBuilder("f")
    a1, a2, g = b.arg((1, 4), "f16"), b.arg((1, 4), "f16"), b.arg((4,), "f32")
    s = b.add(b.cast(a1, "f32"), b.cast(a2, "f32"))
    b.ret(b.cast(b.rms_norm(s, g), "f16"), s)
    gamma = np.ones(4, np.float32)
    module = b.module
    want = run_function(module, [x1, x2, gamma])
    run_pipeline(module, "builtin.module(add_cast_rms_norm_cast_fusion)")
    got = run_function(module, [x1, x2, gamma])
    assert_identical(want, got)
    assert got[1].dtype == np.float32 and got[1][0, 0] == np.float32(60000.0) + np.float32(2.0**-10)


# --------------------------------------------------------------------------
# quantize chains


def _quant_params(b, per_channel: bool, width: int, constant: bool):
    if constant:
        n = width if per_channel else 1
        scale = np.linspace(20.0, 60.0, n).astype(np.float32)
        return b.const(scale), b.const(np.full(n, 1.5, np.float32))
    shape = (width,) if per_channel else (1,)
    return b.arg(shape, "f32"), b.arg(shape, "f32")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("constant", [False, True])
def test_rms_norm_quant(dtype: str, per_channel: bool, constant: bool) -> None:
    b = GraphBuilder("f")
    x, g = b.arg((4, 3, 16), dtype), b.arg((16,), dtype)
    scale, offset = _quant_params(b, per_channel, 16, constant)
    b.ret(b.quantize(b.rms_norm(x, g), scale, offset))
    # Arguments as scale/offset get the same random normal values: scale * 20 spreads q over int8.
    fuse(b.module, "rms_norm_quant_fusion", "rms_norm_quant", ["rms_norm", "quantize"], scale=20.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("per_channel", [False, True])
def test_add_rms_norm_quant(dtype: str, per_channel: bool) -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg((5, 16), dtype), b.arg((5, 16), dtype), b.arg((16,), dtype)
    scale, offset = _quant_params(b, per_channel, 16, constant=True)
    s = b.add(x1, x2)
    b.ret(b.quantize(b.rms_norm(s, g), scale, offset), s)
    ops = fuse(b.module, "add_rms_norm_quant_fusion", "add_rms_norm_quant", ["add", "rms_norm", "quantize"])
    assert ops == ["graph.add_rms_norm_quant"]


def test_rms_norm_quant_rounds_norm_to_input_type() -> None:
    # The unfused f16 graph rounds rms_norm's output to f16 before quantizing; the fused op does too.
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (64, 32)).astype(np.float16)
    gamma = rng.normal(0, 1, 32).astype(np.float16)
    scale, offset = np.array([100.0], np.float32), np.array([0.25], np.float32)
    y = evaluate_op("rms_norm", [x, gamma])[0]
    want = evaluate_op("quantize", [y, scale, offset])[0]
    got = evaluate_op("rms_norm_quant", [x, gamma, scale, offset])[0]
    np.testing.assert_array_equal(got, want)


def test_full_mindspore_order_fuses_whole_chains() -> None:
    b = GraphBuilder("f")
    x1, x2, g, bias = b.arg((4, 16), "f16"), b.arg((4, 16), "f16"), b.arg((16,), "f16"), b.arg((16,), "f16")
    scale, offset = b.const(np.array([30.0], np.float32)), b.const(np.array([0.0], np.float32))
    s = b.add(x1, x2)
    q = b.quantize(b.rms_norm(s, g), scale, offset)
    t = b.add(s, x1)
    n = b.rms_norm(t, g)
    ln = b.layer_norm(b.add(n, x2), g, bias)
    up = b.add(b.cast(ln, "f32"), b.cast(x1, "f32"))
    down = b.cast(b.rms_norm(up, b.cast(g, "f32")), "f16")
    b.ret(q, ln, down)
    pipeline = f"builtin.module({', '.join(RUN_ORDER)})"
    ops = fuse(b.module, pipeline, ["add_rms_norm_quant", "add_rms_norm", "add_layer_norm"],
               ["add", "rms_norm", "quantize", "layer_norm"])
    # The cast of gamma stays (the mixed-precision add_rms_norm reads it); the other casts were absorbed.
    assert sorted(ops) == ["graph.add_layer_norm", "graph.add_rms_norm", "graph.add_rms_norm",
                           "graph.add_rms_norm_quant", "graph.cast"]


# --------------------------------------------------------------------------
# TorchAir pattern_fusion_pass


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("use_sum", [False, True])
def test_torchair_dynamic_quant_smooth(dtype: str, use_sum: bool) -> None:
    b = GraphBuilder("f")
    x1, x2, g, smooth = b.arg((2, 3, 32), dtype), b.arg((2, 3, 32), dtype), b.arg((32,), dtype), b.arg((32,), dtype)
    y, s = b.add_rms_norm(x1, x2, g, epsilon=1e-5)
    q, scale = b.dynamic_quant(y, smooth)
    b.ret(q, scale, *([b.exp(s)] if use_sum else []))
    ops = fuse(b.module, "pattern_fusion_pass", "add_rms_norm_dynamic_quant", ["add_rms_norm", "dynamic_quant"])
    assert ops == ["graph.add_rms_norm_dynamic_quant"] + (["graph.exp"] if use_sum else [])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 3, 32), (2, 3, 2, 8)])
def test_torchair_dynamic_quant_flatten(dtype: str, shape: tuple[int, ...]) -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg(shape, dtype), b.arg(shape, dtype), b.arg(shape[-1:], dtype)
    y, s = b.add_rms_norm(x1, x2, g)
    rows = shape[0] * shape[1]
    q, scale = b.dynamic_quant(b.reshape(y, (rows, *shape[2:])))
    b.ret(q, b.reshape(scale, (None, 1)), s)  # view(-1, 1), also of a 2-D scale (4-D y)
    ops = fuse(b.module, "pattern_fusion_pass", "add_rms_norm_dynamic_quant", ["add_rms_norm", "dynamic_quant"])
    assert ops.count("graph.reshape") == 2


def test_torchair_dynamic_quant_flatten_dynamic_rows() -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg((None, 4, 16), "bf16"), b.arg((None, 4, 16), "bf16"), b.arg((16,), "bf16")
    y, _ = b.add_rms_norm(x1, x2, g)
    q, scale = b.dynamic_quant(b.reshape(y, (None, 16)))
    b.ret(q, b.reshape(scale, (None, 1)), b.neg(scale))
    ops = fuse(b.module, "pattern_fusion_pass", "add_rms_norm_dynamic_quant", ["add_rms_norm", "dynamic_quant"])
    assert ops.count("graph.reshape") == 3


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("view", [False, True])
def test_torchair_cast(dtype: str, view: bool) -> None:
    b = GraphBuilder("f")
    x1, x2, g = b.arg((2, 3, 32), dtype), b.arg((2, 3, 32), dtype), b.arg((32,), dtype)
    y, s = b.add_rms_norm(x1, x2, g)
    src = b.reshape(y, (None, 32)) if view else y
    b.ret(b.cast(src, "f32"), y, s)
    ops = fuse(b.module, "pattern_fusion_pass", "add_rms_norm_cast", ["add_rms_norm", "cast"])
    assert ops == ["graph.add_rms_norm_cast"] + (["graph.reshape"] if view else [])


def test_torchair_cast_mixed_precision() -> None:
    # add_rms_norm's mixed form (f32 gamma) carries over to add_rms_norm_cast.
    b = GraphBuilder("f")
    x1, x2, g = b.arg((4, 16), "bf16"), b.arg((4, 16), "bf16"), b.arg((16,), "f32")
    y, s = b.add_rms_norm(x1, x2, g)
    b.ret(b.cast(y, "f32"), s)
    fuse(b.module, "pattern_fusion_pass", "add_rms_norm_cast", ["add_rms_norm", "cast"])


def test_mindspore_then_torchair() -> None:
    # add -> rms_norm becomes add_rms_norm (MindSpore), whose y TorchAir's pass then folds into the quantization.
    b = GraphBuilder("f")
    x1, x2, g, smooth = b.arg((8, 64), "f16"), b.arg((8, 64), "f16"), b.arg((64,), "f16"), b.arg((64,), "f16")
    s = b.add(x1, x2)
    q, scale = b.dynamic_quant(b.rms_norm(s, g), smooth)
    b.ret(q, scale, s)
    ops = fuse(b.module, "builtin.module(add_rms_norm_fusion, pattern_fusion_pass)", "add_rms_norm_dynamic_quant",
               ["add", "rms_norm", "add_rms_norm", "dynamic_quant"])
    assert ops == ["graph.add_rms_norm_dynamic_quant"]


# --------------------------------------------------------------------------
# The ops themselves.


def test_quantize_semantics() -> None:
    x = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 200.0, -200.0, np.nan, np.inf, -np.inf]], np.float32)
    (q,) = evaluate_op("quantize", [x, np.array([1.0], np.float32), np.array([0.0], np.float32)])
    assert q.dtype == np.int8
    np.testing.assert_array_equal(q, [[0, 2, 2, 0, -2, 127, -128, 0, 127, -128]])
    # Per channel along the last axis: x * scale[c] + offset[c].
    x = np.ones((2, 3), np.float16)
    scale, offset = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, 0.0, -10.0], np.float32)
    (q,) = evaluate_op("quantize", [x, scale, offset])
    np.testing.assert_array_equal(q, [[2, 2, -7], [2, 2, -7]])  # 1.5 rounds to 2


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([(4, 8), (8,), (1,)], "operand offset tensor<1xf16> must have element type f32"),
        ([(4, 8), (3,), (1,)], "operand scale tensor<3xf32> must be 1-D of length 1 (per tensor) or 8"),
        ([(4, 8), (1, 8), (1,)], "operand scale tensor<1x8xf32> must be 1-D"),
    ],
)
def test_quantize_rejects(inputs: list[tuple[int, ...]], message: str) -> None:
    arrays = [np.zeros(inputs[0], np.float16), np.ones(inputs[1], np.float32), np.zeros(inputs[2], np.float32)]
    if "f16" in message:
        arrays[2] = arrays[2].astype(np.float16)
    with pytest.raises(VerifyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate_op("quantize", arrays)


def _special(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    values = rng.normal(0.0, 3.0, shape).astype(np.float32)
    flat = values.reshape(-1)
    picks = rng.random(flat.shape) < 0.1
    flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e4], np.float32), int(picks.sum()))
    return values.astype(NUMPY_DTYPES[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_fused_references_are_compositions(dtype: str) -> None:
    # Special values included (NaN, inf, large): the fused references still equal the composed basic ops.
    rng = np.random.default_rng(3)
    x1, x2 = _special(rng, (3, 16), dtype), _special(rng, (3, 16), dtype)
    g, beta, smooth = (rng.normal(0, 1, 16).astype(NUMPY_DTYPES[dtype]) for _ in range(3))
    scale, offset = np.full(16, 40.0, np.float32), np.array([0.5], np.float32)
    with np.errstate(all="ignore"):
        s = evaluate_op("add", [x1, x2])[0]
        ln = evaluate_op("layer_norm", [s, g, beta])[0]
        rn = evaluate_op("rms_norm", [s, g])[0]
        assert_identical([ln, s], evaluate_op("add_layer_norm", [x1, x2, g, beta]))
        assert_identical([rn, s], evaluate_op("add_rms_norm", [x1, x2, g]))
        cast = evaluate_op("cast", [rn], declared=[TensorSig(rn.shape, "f32")])[0]
        assert_identical([cast, rn, s], evaluate_op("add_rms_norm_cast", [x1, x2, g]))
        q = evaluate_op("quantize", [rn, scale, offset])[0]
        assert_identical([q, s], evaluate_op("add_rms_norm_quant", [x1, x2, g, scale, offset]))
        assert_identical([evaluate_op("quantize", [evaluate_op("rms_norm", [x1, g])[0], scale, offset])[0]],
                         evaluate_op("rms_norm_quant", [x1, g, scale, offset]))
        dq = evaluate_op("dynamic_quant", [rn, smooth])
        assert_identical([*dq, s], evaluate_op("add_rms_norm_dynamic_quant", [x1, x2, g, smooth]))
        dq = evaluate_op("dynamic_quant", [rn])
        assert_identical([*dq, s], evaluate_op("add_rms_norm_dynamic_quant", [x1, x2, g]))


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_mixed_precision_add_rms_norm_is_the_cast_chain(dtype: str) -> None:
    rng = np.random.default_rng(4)
    x1, x2 = _special(rng, (4, 32), dtype), _special(rng, (4, 32), dtype)
    gamma = rng.normal(0, 1, 32).astype(np.float32)
    with np.errstate(all="ignore"):
        s = evaluate_op("add", [x1.astype(np.float32), x2.astype(np.float32)])[0]
        y = evaluate_op("rms_norm", [s, gamma])[0].astype(NUMPY_DTYPES[dtype])
        assert_identical([y, s], evaluate_op("add_rms_norm", [x1, x2, gamma]))


@pytest.mark.parametrize(
    ("op", "inputs", "message"),
    [
        ("add_layer_norm", [((4, 1), "f32"), ((1, 8), "f32"), ((8,), "f32"), ((8,), "f32")],
         "must broadcast to the shape of x1"),
        ("add_layer_norm", [((4, 8), "f32"), ((4, 8), "f16"), ((8,), "f32"), ((8,), "f32")],
         "must have the same element type"),
        ("add_rms_norm", [((4, 8), "f32"), ((4, 8), "f32"), ((8,), "f16")],
         "operand gamma tensor<8xf16> must have the element type of x1 tensor<4x8xf32> \\(or f32 with f16/bf16"),
        ("add_rms_norm_quant", [((4, 8), "f16"), ((4, 8), "f16"), ((8,), "f32"), ((1,), "f32"), ((1,), "f32")],
         "operand gamma tensor<8xf32> must have the element type of x1 tensor<4x8xf16>$"),
        ("add_rms_norm", [((4, 8), "f32"), ((4, 8), "f32"), ((4,), "f32")], "operand gamma tensor<4xf32> must be 1-D"),
        ("rms_norm_quant", [((4, 8), "f32"), ((8,), "f32"), ((2,), "f32"), ((1,), "f32")],
         "operand scale tensor<2xf32> must be 1-D of length 1"),
        ("add_rms_norm_dynamic_quant", [((4, 8), "f16"), ((4, 8), "f16"), ((8,), "f16"), ((4,), "f16")],
         "operand smooth_scales tensor<4xf16> must be 1-D of length 8"),
    ],
)
def test_fused_ops_reject(op: str, inputs: list, message: str) -> None:
    arrays = [np.ones(shape, NUMPY_DTYPES[dtype]) for shape, dtype in inputs]
    with pytest.raises(VerifyError, match=message):
        evaluate_op(op, arrays)


def test_bf16_arrays_round_trip() -> None:
    # ml_dtypes' bfloat16 is the dialect's bf16 (the helpers above rely on it).
    assert NUMPY_DTYPES["bf16"] == np.dtype(ml_dtypes.bfloat16)
