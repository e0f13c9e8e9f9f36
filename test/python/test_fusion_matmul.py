"""Matmul, attention and shape fusion passes: the fused graphs compute what the unfused graphs computed.

Each test builds a graph with the pattern, runs the reference interpreter on
random inputs (fixed seeds) before and after the pass, checks the fused op
replaced the unfused ones, and compares the results: bit for bit for every
rewrite that keeps the computation (all but FlashAttentionFusionV2 with a
scale that is not a power of two, which is checked with tolerances).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder
from graphfuse.dialect.catalog import VerifyError, lookup_op
from graphfuse.dialect.context import make_context
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.interpreter import entry_function, run_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.parsing import parse_module
from graphfuse.dialect.types import NUMPY_DTYPES, TensorSig, sig_from_type
from graphfuse.dialect.verifier import verify_operation
from graphfuse.pipelines.fusion.attention import FlashAttentionFusionV1, FlashAttentionFusionV2
from graphfuse.pipelines.fusion.matmul import (
    InferenceMatmulSplitFusion,
    InferenceSwigluFusion,
    MatMulBiasAddFusionPass,
    MatmulElemAddFusion,
    MatmulElemBiasaddFusion,
    MatmulElemGeluFusion,
    MatmulElemReluFusion,
)
from graphfuse.pipelines.fusion.reshape import ShapeReshape, ShapeReshape2, SplitConcatFusion, moves_only_unit_dims
from graphfuse.pipelines.registry import lookup_pass
from graphfuse.pipelines.runner import run_pipeline

PASSES = (
    MatmulElemBiasaddFusion,
    MatMulBiasAddFusionPass,
    MatmulElemAddFusion,
    MatmulElemReluFusion,
    MatmulElemGeluFusion,
    InferenceSwigluFusion,
    InferenceMatmulSplitFusion,
    FlashAttentionFusionV1,
    FlashAttentionFusionV2,
    ShapeReshape,
    ShapeReshape2,
    SplitConcatFusion,
)
FLOATS = ("f32", "f16", "bf16")

# --------------------------------------------------------------------------
# Helpers.


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype in FLOATS:
        return rng.normal(0.0, 1.0, shape).astype(np.float32).astype(NUMPY_DTYPES[dtype])
    return rng.integers(-5, 6, shape).astype(NUMPY_DTYPES[dtype])


graph_ops = graph_op_names

def argument_sigs(module: ir.Module) -> list[TensorSig]:
    func = entry_function(module)
    return [sig_from_type(a.type) for a in func.regions[0].blocks[0].arguments]


def apply(module: ir.Module, pass_name: str, seeds: int = 2) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """Run the pass on ``module``; the interpreter's results before and after on ``seeds`` random inputs."""
    rng = np.random.default_rng(1234)
    samples = [[random_array(rng, s.shape, s.dtype) for s in argument_sigs(module)] for _ in range(seeds)]
    before = [run_function(module, sample) for sample in samples]
    run_pipeline(module, f"builtin.module({pass_name})")
    assert module.operation.verify()
    assert verify_operation(module.operation) == []
    after = [run_function(module, sample) for sample in samples]
    return before, after


def assert_same(before: list[list[np.ndarray]], after: list[list[np.ndarray]]) -> None:
    for want_all, got_all in zip(before, after, strict=True):
        for want, got in zip(want_all, got_all, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def assert_close(before: list[list[np.ndarray]], after: list[list[np.ndarray]], rtol: float, atol: float) -> None:
    for want_all, got_all in zip(before, after, strict=True):
        for want, got in zip(want_all, got_all, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def build(inputs: list[tuple[tuple[int | None, ...], str]], body: Callable[..., None]) -> ir.Module:
    b = GraphBuilder("f")
    args = [b.arg(shape, dtype) for shape, dtype in inputs]
    body(b, *args)
    return b.module


def fuse_exact(module: ir.Module, pass_name: str) -> list[str]:
    before, after = apply(module, pass_name)
    assert_same(before, after)
    return graph_ops(module)


# --------------------------------------------------------------------------
# Registration, shared patterns and each pass's example.


@pytest.mark.parametrize("cls", PASSES, ids=lambda c: c.name)
def test_registered_under_the_seed_name(cls) -> None:
    assert lookup_pass(cls.name) is cls
    assert cls.summary and cls.example and cls.patterns
    assert cls.origin == ("cann" if cls.name == "MatMulBiasAddFusionPass" else "mindspore")


def test_biasadd_passes_share_their_patterns() -> None:
    assert MatMulBiasAddFusionPass.patterns is MatmulElemBiasaddFusion.patterns


EXAMPLE_RESULTS = {
    "matmul_elem_biasadd_fusion": ["graph.matmul_bias_add"],
    "MatMulBiasAddFusionPass": ["graph.matmul_bias_add"],
    "matmul_elem_add_fusion": ["graph.matmul_add"],
    "matmul_elem_relu_fusion": ["graph.matmul_relu"],
    "matmul_elem_gelu_fusion": ["graph.matmul_gelu"],
    "inference_swiglu_fusion": ["graph.swiglu"],
    "inference_matmul_split_fusion": ["graph.matmul_split"],
    "FlashAttentionFusionV1": ["graph.flash_attention"],
    "FlashAttentionFusionV2": ["graph.flash_attention"],
    "shape_reshape": ["graph.reshape"],
    "shape_reshape_2": [],
    "split_concat_fusion": ["graph.slice"],
}


@pytest.mark.parametrize("cls", PASSES, ids=lambda c: c.name)
def test_example_fuses(cls) -> None:
    module = parse_module(cls.example, context=make_context())
    before_ops = graph_ops(module)
    assert fuse_exact(module, cls.name) == EXAMPLE_RESULTS[cls.name]
    assert len(before_ops) > len(EXAMPLE_RESULTS[cls.name])


# --------------------------------------------------------------------------
# matmul_elem_biasadd_fusion / MatMulBiasAddFusionPass


@pytest.mark.parametrize("pass_name", ["matmul_elem_biasadd_fusion", "MatMulBiasAddFusionPass"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["bias_add", "add", "add_reversed", "constant"])
@pytest.mark.parametrize(("a_shape", "b_shape", "flags"), [
    ((4, 16), (16, 32), {}),
    ((2, 3, 8), (5, 8), {"transpose_b": True}),
    ((2, 8, 3), (2, 8, 5), {"transpose_a": True}),
])
def test_matmul_bias_add(pass_name: str, dtype: str, form: str, a_shape, b_shape, flags) -> None:
    n = b_shape[-2] if flags.get("transpose_b") else b_shape[-1]

    def body(b: FunctionBuilder, x, w, bias) -> None:
        m = b.matmul(x, w, **flags)
        if form == "bias_add":
            b.ret(b.bias_add(m, bias, axis=-1))
        elif form == "add":
            b.ret(b.add(m, bias))
        elif form == "add_reversed":
            b.ret(b.add(bias, m))
        else:
            b.ret(b.add(m, b.const(np.linspace(-1, 1, n), dtype)))

    module = build([(a_shape, dtype), (b_shape, dtype), ((n,), dtype)], body)
    assert fuse_exact(module, pass_name) == ["graph.matmul_bias_add"]


def test_matmul_bias_add_refuses_shared_matmul() -> None:
    def body(b, x, w, bias):
        m = b.matmul(x, w)
        b.ret(b.bias_add(m, bias), b.exp(m))

    module = build([((4, 8), "f32"), ((8, 6), "f32"), ((6,), "f32")], body)
    assert fuse_exact(module, "matmul_elem_biasadd_fusion") == ["graph.matmul", "graph.bias_add", "graph.exp"]


# --------------------------------------------------------------------------
# matmul_elem_add_fusion


@pytest.mark.parametrize("dtype", [*FLOATS, "i32", "i8"])
@pytest.mark.parametrize("c_shape", [(2, 4, 6), (4, 6), (1, 6), (4, 1), (6,), ()])
@pytest.mark.parametrize("reversed_operands", [False, True])
def test_matmul_add(dtype: str, c_shape, reversed_operands: bool) -> None:
    def body(b, x, w, c):
        m = b.matmul(x, w)
        b.ret(b.add(c, m) if reversed_operands else b.add(m, c))

    module = build([((2, 4, 8), dtype), ((8, 6), dtype), (c_shape, dtype)], body)
    assert fuse_exact(module, "matmul_elem_add_fusion") == ["graph.matmul_add"]


def test_matmul_add_refuses_enlarging_addend() -> None:
    def body(b, x, w, c):
        b.ret(b.add(b.matmul(x, w), c))

    module = build([((4, 8), "f32"), ((8, 6), "f32"), ((3, 4, 6), "f32")], body)
    assert fuse_exact(module, "matmul_elem_add_fusion") == ["graph.matmul", "graph.add"]


# --------------------------------------------------------------------------
# matmul_elem_relu_fusion / matmul_elem_gelu_fusion


@pytest.mark.parametrize("dtype", [*FLOATS, "i8", "i32"])
@pytest.mark.parametrize(("a_shape", "b_shape", "flags"), [
    ((4, 16), (16, 32), {}),
    ((3, 16, 4), (3, 32, 16), {"transpose_a": True, "transpose_b": True}),
    ((16,), (2, 16, 5), {}),
])
def test_matmul_relu(dtype: str, a_shape, b_shape, flags) -> None:
    module = build([(a_shape, dtype), (b_shape, dtype)], lambda b, x, w: b.ret(b.relu(b.matmul(x, w, **flags))))
    assert fuse_exact(module, "matmul_elem_relu_fusion") == ["graph.matmul_relu"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", [None, "none", "tanh"])
def test_matmul_gelu(dtype: str, approximate: str | None) -> None:
    attrs = {} if approximate is None else {"approximate": approximate}

    def body(b, x, w):
        b.ret(b.gelu(b.matmul(x, w, transpose_b=True), **attrs))

    module = build([((2, 4, 16), dtype), ((32, 16), dtype)], body)
    assert fuse_exact(module, "matmul_elem_gelu_fusion") == ["graph.matmul_gelu"]
    (op,) = [o for o in entry_function(module).regions[0].blocks[0].operations if o.name == "graph.matmul_gelu"]
    if approximate == "tanh":
        assert str(op.attributes["approximate"]) == '"tanh"'
    else:
        assert "approximate" not in op.attributes  # the default stays implicit


def test_activation_of_shared_matmul_stays() -> None:
    def body(b, x, w):
        m = b.matmul(x, w)
        b.ret(b.relu(m), b.gelu(m))

    module = build([((4, 8), "f32"), ((8, 6), "f32")], body)
    assert fuse_exact(module, "matmul_elem_relu_fusion") == ["graph.matmul", "graph.relu", "graph.gelu"]
    assert fuse_exact(module, "matmul_elem_gelu_fusion") == ["graph.matmul", "graph.relu", "graph.gelu"]


# --------------------------------------------------------------------------
# inference_swiglu_fusion


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 64), (2, 3, 16), (2,)])
@pytest.mark.parametrize("form", ["split", "split_swapped", "slices"])
def test_swiglu(dtype: str, shape: tuple[int, ...], form: str) -> None:
    half = shape[-1] // 2

    def body(b, x):
        if form == "slices":
            zeros = [0] * len(shape)
            first = b.slice(x, start=zeros, limit=[*shape[:-1], half])
            second = b.slice(x, start=[*zeros[:-1], half], limit=list(shape))
        else:
            first, second = b.split(x, axis=len(shape) - 1, sizes=[half, half])
        gate = b.silu(first)
        b.ret(b.mul(second, gate) if form == "split_swapped" else b.mul(gate, second))

    module = build([(shape, dtype)], body)
    assert fuse_exact(module, "inference_swiglu_fusion") == ["graph.swiglu"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["split", "slices"])
def test_swiglu_through_reshapes_of_the_halves(dtype: str, form: str) -> None:
    """[tokens, 2h] halves viewed as [batch, seq, h] (a linear layer's output): bit for bit the unfused chain."""

    def body(b, x):
        if form == "slices":
            first = b.slice(x, start=[0, 0], limit=[6, 8])
            second = b.slice(x, start=[0, 8], limit=[6, 16])
        else:
            first, second = b.split(x, axis=-1, sizes=[8, 8])
        gate = b.silu(b.reshape(first, (2, 3, 8)))
        b.ret(b.mul(gate, b.reshape(second, (2, 3, 8))))

    module = build([((6, 16), dtype)], body)
    assert fuse_exact(module, "inference_swiglu_fusion") == ["graph.reshape", "graph.swiglu"]


def test_swiglu_refuses_shared_silu() -> None:
    def body(b, x):
        first, second = b.split(x, axis=-1, sizes=[8, 8])
        gate = b.silu(first)
        b.ret(b.mul(gate, second), b.exp(gate))

    module = build([((4, 16), "f32")], body)
    assert "graph.swiglu" not in fuse_exact(module, "inference_swiglu_fusion")


# --------------------------------------------------------------------------
# inference_matmul_split_fusion


@pytest.mark.parametrize("dtype", [*FLOATS, "i32"])
@pytest.mark.parametrize(("sizes", "flags"), [([8, 8, 8], {}), ([20, 4], {"transpose_b": True}), ([4, 10, 10], {})])
def test_matmul_split(dtype: str, sizes: list[int], flags) -> None:
    n = sum(sizes)
    w_shape = (n, 16) if flags else (16, n)

    def body(b, x, w):
        pieces = b.split(b.matmul(x, w, **flags), axis=-1, sizes=sizes)
        b.ret(*reversed(pieces))

    module = build([((2, 4, 16), dtype), (w_shape, dtype)], body)
    assert fuse_exact(module, "inference_matmul_split_fusion") == ["graph.matmul_split"]


# --------------------------------------------------------------------------
# FlashAttentionFusionV1 / V2


def _attention_body(variant: str, scale_value: float, dtype: str, with_mask: bool, transposed_k: bool):
    def body(b, q, k, v, *mask):
        rank = len(k.shape)
        perm = [*range(rank - 2), rank - 1, rank - 2]
        c = b.const(np.array(scale_value), dtype)
        if variant == "prescale_q":
            q = b.mul(q, c)
        elif variant == "prescale_q_div":
            q = b.div(q, c)
        scores = b.matmul(q, b.transpose(k, perm=perm)) if transposed_k else b.matmul(q, k, transpose_b=True)
        if variant == "mul":
            scores = b.mul(c, scores)
        elif variant == "div":
            scores = b.div(scores, c)
        if with_mask:
            scores = b.add(scores, mask[0])
        b.ret(b.matmul(b.softmax(scores, axis=-1), v))

    return body


def _attention_module(variant: str, scale_value: float, dtype: str, with_mask: bool, transposed_k: bool,
                      shapes: tuple) -> ir.Module:
    q_shape, k_shape, v_shape, mask_shape = shapes
    inputs = [(q_shape, dtype), (k_shape, dtype), (v_shape, dtype)]
    if with_mask:
        inputs.append((mask_shape, dtype))
    return build(inputs, _attention_body(variant, scale_value, dtype, with_mask, transposed_k))


ATTENTION_SHAPES = [
    ((8, 16), (6, 16), (6, 4), (8, 6)),
    ((2, 3, 8, 16), (2, 3, 8, 16), (2, 3, 8, 16), (1, 1, 8, 8)),
    ((2, 5, 16), (7, 16), (7, 8), (5, 7)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize("transposed_k", [False, True])
@pytest.mark.parametrize("shapes", ATTENTION_SHAPES, ids=["2d", "4d", "broadcast_kv"])
def test_flash_attention_v1_is_exact(dtype: str, with_mask: bool, transposed_k: bool, shapes) -> None:
    module = _attention_module("mul", 0.3, dtype, with_mask, transposed_k, shapes)
    assert fuse_exact(module, "FlashAttentionFusionV1") == ["graph.flash_attention"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("variant", ["div", "prescale_q", "prescale_q_div"])
@pytest.mark.parametrize("with_mask", [False, True])
def test_flash_attention_v2_power_of_two_scale_is_exact(dtype: str, variant: str, with_mask: bool) -> None:
    # Scaling by a power of two commutes with every rounding: the fused op is bit-exact.
    value = 0.25 if variant == "prescale_q" else 4.0
    module = _attention_module(variant, value, dtype, with_mask, True, ATTENTION_SHAPES[1])
    assert fuse_exact(module, "FlashAttentionFusionV2") == ["graph.flash_attention"]


@pytest.mark.parametrize(("dtype", "tol"), [("f32", 2e-6), ("f16", 4e-3), ("bf16", 3e-2)])
@pytest.mark.parametrize("variant", ["div", "prescale_q", "prescale_q_div"])
@pytest.mark.parametrize("shapes", ATTENTION_SHAPES, ids=["2d", "4d", "broadcast_kv"])
def test_flash_attention_v2_matches_up_to_rounding(dtype: str, tol: float, variant: str, shapes) -> None:
    value = 0.3 if variant == "prescale_q" else 3.0
    module = _attention_module(variant, value, dtype, True, False, shapes)
    before, after = apply(module, "FlashAttentionFusionV2", seeds=3)
    assert graph_ops(module) == ["graph.flash_attention"]
    # Outputs are convex combinations of v rows (|v| ~ 1 to 4): absolute tolerance in units of the dtype's epsilon.
    assert_close(before, after, rtol=tol, atol=4 * tol)


def test_flash_attention_variants_are_split_between_v1_and_v2() -> None:
    for variant, owner in (("mul", "FlashAttentionFusionV1"), ("div", "FlashAttentionFusionV2"),
                           ("prescale_q", "FlashAttentionFusionV2")):
        other = "FlashAttentionFusionV2" if owner == "FlashAttentionFusionV1" else "FlashAttentionFusionV1"
        module = _attention_module(variant, 2.0, "f32", True, False, ATTENTION_SHAPES[0])
        assert "graph.flash_attention" not in fuse_exact(module, other)
        assert fuse_exact(module, owner) == ["graph.flash_attention"]


def test_flash_attention_refuses_shared_probabilities() -> None:
    def body(b, q, k, v):
        c = b.const(np.array(0.5), "f32")
        probs = b.softmax(b.mul(b.matmul(q, k, transpose_b=True), c), axis=-1)
        b.ret(b.matmul(probs, v), probs)

    module = build([((4, 8), "f32"), ((4, 8), "f32"), ((4, 8), "f32")], body)
    assert "graph.flash_attention" not in fuse_exact(module, "FlashAttentionFusionV1")


# --------------------------------------------------------------------------
# shape_reshape, shape_reshape_2, split_concat_fusion


@pytest.mark.parametrize("dtype", ["f32", "i8", "i1"])
def test_shape_reshape(dtype: str) -> None:
    def body(b, x):
        b.ret(
            b.reshape(b.reshape(b.reshape(x, (64,)), (4, 16)), (8, 8)),
            b.reshape(b.reshape(x, (8, 8)), (2, 4, 8)),
            b.reshape(x, (2, 4, 8)),
        )

    module = build([((2, 4, 8), dtype)], body)
    assert fuse_exact(module, "shape_reshape") == ["graph.reshape"]


@pytest.mark.parametrize(("shape", "mid", "perm", "out"), [
    ((4, 64), (4, 1, 64), [1, 0, 2], (4, 64)),
    ((2, 8, 16), (2, 8, 1, 16), [0, 2, 1, 3], (16, 16)),
    ((6,), (1, 6, 1), [2, 1, 0], (2, 3)),
])
def test_shape_reshape_2(shape, mid, perm, out) -> None:
    def body(b, x):
        b.ret(b.reshape(b.transpose(b.reshape(x, mid), perm=perm), out))

    module = build([(shape, "f16")], body)
    assert fuse_exact(module, "shape_reshape_2") == ([] if out == shape else ["graph.reshape"])


def test_shape_reshape_2_keeps_real_transposes() -> None:
    def body(b, x):
        b.ret(b.reshape(b.transpose(b.reshape(x, (2, 4, 8, 16)), perm=[0, 2, 1, 3]), (2, 4, 128)))

    module = build([((2, 4, 128), "f32")], body)
    assert fuse_exact(module, "shape_reshape_2") == ["graph.reshape", "graph.transpose", "graph.reshape"]


def test_moves_only_unit_dims() -> None:
    assert moves_only_unit_dims((4, 1, 8), [1, 0, 2])
    assert moves_only_unit_dims((1, None, 1, 8), [2, 1, 3, 0])
    assert not moves_only_unit_dims((4, 2, 8), [1, 0, 2])
    assert not moves_only_unit_dims((None, None), [1, 0])
    assert moves_only_unit_dims((3, 4), [0, 1])


@pytest.mark.parametrize(("sizes", "run", "axis"), [
    ([4, 4, 4], (0, 3), 1),
    ([2, 3, 7], (1, 3), -1),
    ([2, 2, 2], (0, 2), 1),
    ([5, 7], (0, 2), 0),
])
def test_split_concat(sizes: list[int], run: tuple[int, int], axis: int) -> None:
    total = sum(sizes)
    shape = (total, 3) if axis == 0 else (2, total)

    def body(b, x):
        pieces = b.split(x, axis=axis, sizes=sizes)
        b.ret(b.concat(*pieces[run[0] : run[1]], axis=axis))

    module = build([(shape, "bf16")], body)
    whole = run == (0, len(sizes))
    assert fuse_exact(module, "split_concat_fusion") == ([] if whole else ["graph.slice"])


def test_split_concat_keeps_reordered_pieces() -> None:
    def body(b, x):
        first, second = b.split(x, axis=1, sizes=[4, 4])
        b.ret(b.concat(second, first, axis=1))

    module = build([((4, 8), "f32")], body)
    assert fuse_exact(module, "split_concat_fusion") == ["graph.split", "graph.concat"]


# --------------------------------------------------------------------------
# The fused ops: references are the unfused compositions, inference errors are precise.


def _rng_arrays(*shapes_dtypes):
    rng = np.random.default_rng(7)
    return [random_array(rng, shape, dtype) for shape, dtype in shapes_dtypes]


@pytest.mark.parametrize("dtype", FLOATS)
def test_references_are_the_unfused_compositions(dtype: str) -> None:
    a, b, bias, c = _rng_arrays(((3, 4, 8), dtype), ((8, 6), dtype), ((6,), dtype), ((4, 6), dtype))
    mm = evaluate_op("matmul", [a, b])[0]
    fused = evaluate_op("matmul_bias_add", [a, b, bias])[0]
    np.testing.assert_array_equal(fused, evaluate_op("bias_add", [mm, bias])[0])
    np.testing.assert_array_equal(evaluate_op("matmul_add", [a, b, c])[0], evaluate_op("add", [mm, c])[0])
    np.testing.assert_array_equal(evaluate_op("matmul_relu", [a, b])[0], evaluate_op("relu", [mm])[0])
    np.testing.assert_array_equal(
        evaluate_op("matmul_gelu", [a, b], {"approximate": "tanh"})[0],
        evaluate_op("gelu", [mm], {"approximate": "tanh"})[0],
    )
    pieces = evaluate_op("matmul_split", [a, b], {"sizes": [2, 2, 2]})
    for got, want in zip(pieces, evaluate_op("split", [mm], {"axis": -1, "sizes": [2, 2, 2]}), strict=True):
        np.testing.assert_array_equal(got, want)
    x = _rng_arrays(((4, 10), dtype))[0]
    lo, hi = evaluate_op("split", [x], {"axis": 1, "sizes": [5, 5]})
    unfused = evaluate_op("mul", [evaluate_op("silu", [lo])[0], hi])[0]
    np.testing.assert_array_equal(evaluate_op("swiglu", [x])[0], unfused)


def test_flash_attention_reference_is_attention() -> None:
    q, k, v, mask = _rng_arrays(((2, 5, 8), "f32"), ((2, 7, 8), "f32"), ((2, 7, 3), "f32"), ((5, 7), "f32"))
    scores = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k.astype(np.float64)) * 0.3 + mask
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    want = probs @ v.astype(np.float64)
    got = evaluate_op("flash_attention", [q, k, v, mask], {"scale": 0.3})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    unmasked = evaluate_op("flash_attention", [q, k, v], {"scale": 0.3})[0]
    assert unmasked.shape == (2, 5, 3)


def _infer(name: str, sigs: list[tuple[tuple, str]], **attrs):
    spec = lookup_op(f"graph.{name}")
    from graphfuse.dialect.catalog import infer_results

    return infer_results(spec, [TensorSig(s, d) for s, d in sigs], spec.with_defaults(attrs), None)


@pytest.mark.parametrize(("name", "sigs", "attrs", "message"), [
    ("matmul_bias_add", [((4, 8), "f32"), ((8, 6), "f32"), ((5,), "f32")], {},
     "operand bias tensor<5xf32> must be 1-D of length 6 (the last dim of the matmul result tensor<4x6xf32>)"),
    ("matmul_bias_add", [((4, 8), "i32"), ((8, 6), "i32"), ((6,), "i32")], {},
     "operand a tensor<4x8xi32> must have a floating-point element type (f32, f16, bf16)"),
    ("matmul_bias_add", [((4, 8), "f32"), ((7, 6), "f32"), ((6,), "f32")], {},
     "contraction dimensions differ"),
    ("matmul_add", [((4, 8), "f32"), ((8, 6), "f32"), ((3, 4, 6), "f32")], {},
     "operand c tensor<3x4x6xf32> must broadcast to the matmul result tensor<4x6xf32> without changing its shape"),
    ("matmul_add", [((4, 8), "f32"), ((8, 6), "f32"), ((4, 6), "f16")], {}, "must have the same element type"),
    ("matmul_gelu", [((4, 8), "i8"), ((8, 6), "i8")], {}, "operand a tensor<4x8xi8> must have a floating-point"),
    ("matmul_relu", [((4, 8), "f32"), ((4, 6), "f32")], {"transpose_a": True, "transpose_b": True},
     "contraction dimensions differ"),
    ("swiglu", [((4, 7), "f32")], {},
     "dimension 1 of operand x tensor<4x7xf32> has odd size 7; it must split into two equal halves"),
    ("swiglu", [((4, 8), "i32")], {}, "operand x tensor<4x8xi32> must have a floating-point"),
    ("swiglu", [((4, 8), "f32")], {"axis": 2}, "axis 2 is out of range for rank 2"),
    ("matmul_split", [((4, 8), "f32"), ((8, 6), "f32")], {"sizes": [2, 3]},
     "sizes [2, 3] sum to 5, not to the size 6 of dimension 1 of tensor<4x6xf32> "
     "(splitting the matmul result tensor<4x6xf32> along its last axis)"),
    ("matmul_split", [((4, 8), "f32"), ((8, 6), "f32")], {"sizes": [1, 1, 1, 3]},
     "pieces after the second must all have one size"),
    ("matmul_split", [((4, 8), "f32"), ((8, 6), "f32")], {"sizes": [6]}, "must describe at least 2 pieces"),
    ("flash_attention", [((4, 8), "f32"), ((6, 7), "f32"), ((6, 8), "f32")], {"scale": 1.0},
     "operands q tensor<4x8xf32> and k tensor<6x7xf32> must have the same head dim (last dim)"),
    ("flash_attention", [((4, 8), "f32"), ((6, 8), "f32"), ((5, 8), "f32")], {"scale": 1.0},
     "operands k tensor<6x8xf32> and v tensor<5x8xf32> must have the same sequence length (dim -2)"),
    ("flash_attention", [((4, 8), "f32"), ((6, 8), "f32"), ((6, 8), "f32"), ((2, 4, 6), "f32")], {"scale": 1.0},
     "operand mask tensor<2x4x6xf32> must broadcast to the scores tensor<4x6xf32> without changing their shape"),
    ("flash_attention", [((8,), "f32"), ((6, 8), "f32"), ((6, 8), "f32")], {"scale": 1.0},
     "operand q tensor<8xf32> must have rank >= 2"),
    ("flash_attention", [((4, 8), "f32"), ((6, 8), "f32"), ((6, 8), "f32")], {"scale": float("inf")},
     "attribute 'scale' must be a finite float, got inf"),
    ("flash_attention", [((2, 4, 8), "f32"), ((3, 6, 8), "f32"), ((6, 8), "f32")], {"scale": 1.0},
     "batch dimensions of operands"),
    ("flash_attention", [((4, 8), "f32"), ((6, 8), "f32"), ((6, 8), "f32")], {}, "requires attribute 'scale'"),
])
def test_inference_errors(name: str, sigs, attrs, message: str) -> None:
    with pytest.raises(VerifyError) as info:
        _infer(name, sigs, **attrs)
    assert message in info.value.message


def test_inference_results() -> None:
    assert _infer("matmul_bias_add", [((None, 8), "f16"), ((8, 6), "f16"), ((6,), "f16")]) == [
        TensorSig((None, 6), "f16")
    ]
    assert _infer("matmul_add", [((None, 8), "f32"), ((8, 6), "f32"), ((4, 1), "f32")]) == [TensorSig((4, 6), "f32")]
    assert _infer("swiglu", [((None, 8), "bf16")], axis=0) == [TensorSig((None, 8), "bf16")]
    assert _infer("matmul_split", [((2, 4, 8), "i32"), ((8, 9), "i32")], sizes=[3, 3, 3]) == [
        TensorSig((2, 4, 3), "i32")
    ] * 3
    assert _infer("flash_attention", [((2, 1, 5, 8), "f32"), ((3, 7, 8), "f32"), ((7, 4), "f32"), ((1, 7), "f32")],
                  scale=0.5) == [TensorSig((2, 3, 5, 4), "f32")]
