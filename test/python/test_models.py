"""The bundled model graphs (graphfuse.tools.models): valid, correct, and fused as the pass catalog says.

For every model of ``MODELS``: the built module verifies, the reference
interpreter runs it, and its output equals an independent float64 numpy
implementation of the same layer written here.  The numpy code reads the
parameters from the builder's ``weights`` (name -> the array stored in the
graph's ``arith.constant``; a test below checks they are those constants);
non-parameter constants (softmax scales, causal masks, RoPE tables) are
recomputed here from the config.  Then the cleanup pipeline and pattern
fusion run, the result stays within tolerance, and exactly the fusions that
docs/passes.md predicts for each graph fire.

Tolerance: rtol 1e-4, with atol 1e-5 for entries near zero (relu outputs,
small residual sums) where a relative bound means nothing.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse import run_function, run_pipeline
from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.interpreter import entry_function
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.types import NUMPY_DTYPES, sig_from_type
from graphfuse.dialect.verifier import verify_operation
from graphfuse.tools.models import (
    MODELS,
    TRAINING_MODELS,
    BertConfig,
    LlamaConfig,
    MLPConfig,
    ResNetConfig,
    TrainStepConfig,
    TransformerConfig,
    bert_layer,
    inputs_for,
    llama_layer,
    mlp,
    model_inputs,
)

CLEANUP = "builtin.module(graph-canonicalize,graph-cse,graph-dce)"
FUSION = "builtin.module(graph-fusion,graph-dce)"
RTOL, ATOL = 1e-4, 1e-5

# --------------------------------------------------------------------------
# Independent numpy implementations (float64).

Weights = dict[str, np.ndarray]


def f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64)


def linear(x: np.ndarray, w: Weights, name: str) -> np.ndarray:
    y = x @ f64(w[f"{name}.weight"]).T
    bias = w.get(f"{name}.bias")
    return y if bias is None else y + f64(bias)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * f64(gamma) + f64(beta)


def rms_norm(x: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * f64(gamma)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_erf(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, mask: np.ndarray) -> np.ndarray:
    return softmax(q @ np.swapaxes(k, -1, -2) * scale + mask) @ v


def causal_mask(seq: int) -> np.ndarray:
    return np.where(np.arange(seq)[None, :] > np.arange(seq)[:, None], -1e9, 0.0)


def conv2d(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Cross-correlation NCHW x OIHW, as a sum of shifted, strided views."""
    n, _, h, width = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (width + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            window = xp[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,oc->nohw", window, f64(w[:, :, i, j]))
    return out


def batch_norm(x: np.ndarray, w: Weights, name: str, eps: float) -> np.ndarray:
    per_channel = lambda key: f64(w[f"{name}.{key}"])[None, :, None, None]  # noqa: E731
    return (x - per_channel("mean")) / np.sqrt(per_channel("var") + eps) * per_channel("scale") + per_channel("offset")


def ref_transformer_block(cfg: TransformerConfig, w: Weights, x: np.ndarray) -> np.ndarray:
    S, H, Dh = cfg.seq, cfg.heads, cfg.head_dim
    heads = lambda t: t.reshape(S, H, Dh).transpose(1, 0, 2)  # noqa: E731
    h = layer_norm(x, w["ln1.gamma"], w["ln1.beta"], 1e-5)
    q, k, v = (heads(linear(h, w, name)) for name in ("q_proj", "k_proj", "v_proj"))
    context = attention(q, k, v, Dh**-0.5, causal_mask(S)).transpose(1, 0, 2).reshape(S, cfg.d_model)
    x1 = x + linear(context, w, "o_proj")
    hidden = gelu_tanh(linear(layer_norm(x1, w["ln2.gamma"], w["ln2.beta"], 1e-5), w, "fc1"))
    return x1 + linear(hidden, w, "fc2")


def ref_mlp(cfg: MLPConfig, w: Weights, x: np.ndarray) -> np.ndarray:
    h = linear(x, w, "fc1")
    return linear(gelu_tanh(linear(relu(h), w, "fc2")), w, "fc3") + h


def ref_bert_layer(cfg: BertConfig, w: Weights, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    B, S, H, Dh = cfg.batch, cfg.seq, cfg.heads, cfg.head_dim
    heads = lambda t: t.reshape(B, S, H, Dh).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = (heads(linear(x, w, name)) for name in ("q_proj", "k_proj", "v_proj"))
    context = attention(q, k, v, 1.0 / math.sqrt(Dh), f64(mask)).transpose(0, 2, 1, 3).reshape(B, S, cfg.hidden)
    a = layer_norm(linear(context, w, "o_proj") + x, w["ln1.gamma"], w["ln1.beta"], cfg.epsilon)
    out = linear(gelu_erf(linear(a, w, "fc1")), w, "fc2")
    return layer_norm(out + a, w["ln2.gamma"], w["ln2.beta"], cfg.epsilon)


def ref_llama_layer(cfg: LlamaConfig, w: Weights, x: np.ndarray) -> np.ndarray:
    S, H, KV, Dh = cfg.seq, cfg.heads, cfg.kv_heads, cfg.head_dim
    qkv = rms_norm(x, w["input_norm.gamma"], cfg.epsilon) @ f64(w["qkv_proj.weight"]).T
    q = qkv[:, : H * Dh].reshape(S, H, Dh).transpose(1, 0, 2)
    k = qkv[:, H * Dh : (H + KV) * Dh].reshape(S, KV, Dh).transpose(1, 0, 2)
    v = qkv[:, (H + KV) * Dh :].reshape(S, KV, Dh).transpose(1, 0, 2)
    if cfg.rope_theta is not None:
        freqs = np.outer(np.arange(S), cfg.rope_theta ** (-np.arange(0, Dh, 2) / Dh))
        cos, sin = np.cos(np.concatenate([freqs, freqs], -1)), np.sin(np.concatenate([freqs, freqs], -1))
        rotate_half = lambda t: np.concatenate([-t[..., Dh // 2 :], t[..., : Dh // 2]], -1)  # noqa: E731
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    # repeat_kv: query head h reads key/value head h // (H // KV)
    k, v = np.repeat(k, H // KV, axis=0), np.repeat(v, H // KV, axis=0)
    context = attention(q, k, v, Dh**-0.5, causal_mask(S)).transpose(1, 0, 2).reshape(S, H * Dh)
    x1 = x + linear(context, w, "o_proj")
    gate_up = linear(rms_norm(x1, w["post_norm.gamma"], cfg.epsilon), w, "gate_up_proj")
    gate, up = gate_up[:, : cfg.ffn], gate_up[:, cfg.ffn :]
    return x1 + linear(silu(gate) * up, w, "down_proj")


def ref_resnet_block(cfg: ResNetConfig, w: Weights, x: np.ndarray) -> np.ndarray:
    eps = cfg.epsilon
    h = relu(batch_norm(conv2d(x, w["conv1.weight"], cfg.stride, 1), w, "bn1", eps))
    h = batch_norm(conv2d(h, w["conv2.weight"], 1, 1), w, "bn2", eps)
    shortcut = batch_norm(conv2d(x, w["conv_down.weight"], 2, 0), w, "bn_down", eps) if cfg.downsample else x
    return relu(h + shortcut)


REFERENCES = {
    "transformer_block": (TransformerConfig(), ref_transformer_block),
    "mlp": (MLPConfig(), ref_mlp),
    "bert_layer": (BertConfig(), ref_bert_layer),
    "llama_layer": (LlamaConfig(), ref_llama_layer),
    "resnet_block": (ResNetConfig(), ref_resnet_block),
    "resnet_block_downsample": (ResNetConfig(downsample=True), ref_resnet_block),
}

#: pass -> effect_times after CLEANUP then FUSION, per model (docs/passes.md, and why):
EXPECTED_FUSIONS = {
    # pre-norm: the residual sum x1 feeds ln2 and the last add, so the _ext variant fuses add -> layer_norm;
    # scores are matmul(q, k, transpose_b) * rsqrt(const) (folded to a constant): V1.  The q, k and v
    # projections (constant weights of one input) become one product and a split, then a matmul_split; their
    # biases stay adds on the pieces, the other three linear layers take theirs.
    "transformer_block": {"FlashAttentionFusionV1": 1, "add_layer_norm_ext_fusion": 1, "matmul_weight_concat_fusion": 1,
                          "inference_matmul_split_fusion": 1, "matmul_elem_biasadd_fusion": 3},
    # every matmul feeds a bias_add, so relu/gelu/add epilogues never see a matmul (see test_mlp_without_bias)
    "mlp": {"matmul_elem_biasadd_fusion": 3},
    # post-norm: both residual adds feed only their layer_norm.  No flash attention: see test_bert_attention_*.
    # scores divided by sqrt(head_dim), k^T as a transpose merged with the head split by cleanup: V2.
    # q, k and v merged as in transformer_block.
    "bert_layer": {"FlashAttentionFusionV2": 1, "add_layer_norm_fusion": 2, "matmul_weight_concat_fusion": 1,
                   "inference_matmul_split_fusion": 1, "matmul_elem_biasadd_fusion": 3},
    # swiglu takes the gate_up split before matmul_split runs (graph-fusion's order), so matmul_split fuses
    # only the qkv projection; add_rms_norm takes the first residual add, matmul_add the second.
    "llama_layer": {
        "FlashAttentionFusionV1": 1,
        "add_rms_norm_fusion": 1,
        "inference_swiglu_fusion": 1,
        "inference_matmul_split_fusion": 1,
        "matmul_elem_add_fusion": 1,
    },
    "resnet_block": {"ConvBatchnormFusionPass": 2},
    "resnet_block_downsample": {"ConvBatchnormFusionPass": 3},
}

#: fused ops each fused graph holds (and how many)
EXPECTED_FUSED_OPS = {
    "transformer_block": {"graph.flash_attention": 1, "graph.add_layer_norm": 1, "graph.matmul_bias_add": 3,
                          "graph.matmul_split": 1},
    "mlp": {"graph.matmul_bias_add": 3},
    "bert_layer": {"graph.add_layer_norm": 2, "graph.matmul_bias_add": 3, "graph.matmul_split": 1,
                   "graph.flash_attention": 1},
    "llama_layer": {
        "graph.flash_attention": 1,
        "graph.add_rms_norm": 1,
        "graph.swiglu": 1,
        "graph.matmul_split": 1,
        "graph.matmul_add": 1,
        "graph.rms_norm": 1,
    },
    "resnet_block": {"graph.conv2d": 2, "graph.bias_add": 2, "graph.batch_norm": 0},
    "resnet_block_downsample": {"graph.conv2d": 3, "graph.bias_add": 3, "graph.batch_norm": 0},
}


# --------------------------------------------------------------------------
# Helpers.


def fired(pipeline) -> dict[str, int]:
    result = pipeline.fusion_result()["graph_fusion"]
    return {name: int(c["effect_times"]) for name, c in result.items() if c["effect_times"] != "0"}


def check_close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def constants(module: ir.Module) -> list[np.ndarray]:
    arrays: list[np.ndarray] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "arith.constant":
            arrays.append(attr_to_array(op.attributes["value"]))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return arrays


def cleanup_and_fuse(module: ir.Module, inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """(output after cleanup, output after fusion, fusions fired)."""
    run_pipeline(module, CLEANUP)
    assert verify_operation(module.operation) == []
    (cleaned,) = run_function(module, inputs)
    fusion = run_pipeline(module, FUSION)
    assert verify_operation(module.operation) == []
    (fused,) = run_function(module, inputs)
    return cleaned, fused, fired(fusion)


# --------------------------------------------------------------------------
# Every bundled model.


def test_registry_names():
    assert set(MODELS) == {
        "transformer_block", "mlp", "bert_layer", "llama_layer", "resnet_block", "resnet_block_downsample",
    }
    assert set(REFERENCES) == set(MODELS) == set(EXPECTED_FUSIONS)


@pytest.mark.parametrize("name", list(MODELS))
def test_model(name: str):
    builder = MODELS[name]()
    module = builder.module
    assert builder.finished
    assert verify_operation(module.operation) == []
    inputs = model_inputs(name)
    (built,) = run_function(module, inputs)
    assert built.dtype == np.float32 and np.isfinite(built).all()

    cfg, reference = REFERENCES[name]
    want = reference(cfg, builder.weights, *(f64(a) for a in inputs))
    assert built.shape == want.shape
    check_close(built, want)

    cleaned, fused, fusions = cleanup_and_fuse(module, inputs)
    check_close(cleaned, built)
    check_close(fused, built)
    check_close(fused, want)
    assert fusions == EXPECTED_FUSIONS[name]
    ops = Counter(graph_op_names(module))
    assert {op: ops[op] for op in EXPECTED_FUSED_OPS[name]} == EXPECTED_FUSED_OPS[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_model_inputs_match_signature(name: str):
    builder = MODELS[name]()  # keep the module alive while its ops are in use
    func = entry_function(builder.module)
    args = list(func.regions[0].blocks[0].arguments)
    inputs = model_inputs(name, seed=3)
    assert len(inputs) == len(args)
    for array, arg in zip(inputs, args, strict=True):
        sig = sig_from_type(arg.type)
        assert array.shape == sig.shape and array.dtype == NUMPY_DTYPES[sig.dtype]
    assert all(np.array_equal(a, b) for a, b in zip(inputs, model_inputs(name, seed=3), strict=True))
    with pytest.raises(KeyError):
        model_inputs("no_such_model")


def test_bert_masks_are_padding_patterns():
    _, mask = model_inputs("bert_layer")
    assert mask.shape == (2, 1, 16, 16)
    assert set(np.unique(mask)) <= {0.0, np.float32(-1e9)}
    assert (mask[0] == 0).all()  # the first sequence is unpadded
    assert (mask[1, 0, :, :13] == 0).all() and (mask[1, 0, :, 13:] == np.float32(-1e9)).all()


@pytest.mark.parametrize("name", list(MODELS))
def test_weights_are_the_graph_constants(name: str):
    """``weights`` lists (in order) the very arrays the module's constants hold."""
    builder = MODELS[name]()
    remaining = iter(constants(builder.module))
    for key, array in builder.weights.items():
        assert array.dtype == np.float32
        assert any(c.shape == array.shape and np.array_equal(c, array) for c in remaining), key


# --------------------------------------------------------------------------
# Config variants and the fusions they change.


def test_mlp_without_bias():
    """No biases: matmul -> gelu and matmul -> residual add fuse; matmul -> relu does not, as fc1's
    result also feeds the residual add (matmul_relu absorbs only a single-use matmul)."""
    cfg = MLPConfig(bias=False)
    builder = mlp(cfg)
    inputs = inputs_for(cfg)
    (built,) = run_function(builder.module, inputs)
    check_close(built, ref_mlp(cfg, builder.weights, f64(inputs[0])))
    _, fused, fusions = cleanup_and_fuse(builder.module, inputs)
    check_close(fused, built)
    assert fusions == {"matmul_elem_gelu_fusion": 1, "matmul_elem_add_fusion": 1}


def test_bert_square_mask():
    cfg = BertConfig(mask="square")
    builder = bert_layer(cfg)
    inputs = inputs_for(cfg)
    assert inputs[1].shape == (cfg.seq, cfg.seq)
    (built,) = run_function(builder.module, inputs)
    check_close(built, ref_bert_layer(cfg, builder.weights, *(f64(a) for a in inputs)))
    _, fused, fusions = cleanup_and_fuse(builder.module, inputs)
    check_close(fused, built)
    assert fusions == EXPECTED_FUSIONS["bert_layer"]


def test_llama_multi_head_without_rope():
    """kv_heads == heads (plain MHA) and no RoPE: k^T is then transpose(transpose(reshape(k))), which
    graph-canonicalize composes into one transpose; flash attention still matches (it rebuilds k)."""
    cfg = LlamaConfig(kv_heads=4, rope_theta=None)
    builder = llama_layer(cfg)
    inputs = inputs_for(cfg)
    (built,) = run_function(builder.module, inputs)
    check_close(built, ref_llama_layer(cfg, builder.weights, f64(inputs[0])))
    _, fused, fusions = cleanup_and_fuse(builder.module, inputs)
    check_close(fused, built)
    assert fusions == EXPECTED_FUSIONS["llama_layer"]


def test_bert_attention_fuses_without_cleanup():
    """BERT divides the scores by sqrt(head_dim) and transposes k explicitly: FlashAttentionFusionV2's form."""
    module = MODELS["bert_layer"]().module
    inputs = model_inputs("bert_layer")
    (built,) = run_function(module, inputs)
    fusion = run_pipeline(module, FUSION)
    assert fired(fusion)["FlashAttentionFusionV2"] == 1
    (fused,) = run_function(module, inputs)
    check_close(fused, built)


def test_bert_attention_fuses_after_cleanup():
    """graph-canonicalize composes k's head transpose [0,2,1,3] and k^T's [0,1,3,2] into one transpose
    [0,2,3,1] of the un-split k; flash attention rebuilds k as a transpose [0,2,1,3] and still fuses."""
    module = MODELS["bert_layer"]().module
    inputs = model_inputs("bert_layer")
    (built,) = run_function(module, inputs)
    run_pipeline(module, CLEANUP)
    fusion = run_pipeline(module, FUSION)
    assert fired(fusion).get("FlashAttentionFusionV2") == 1
    (fused,) = run_function(module, inputs)
    check_close(fused, built)


# --------------------------------------------------------------------------
# Training steps written with MindSpore's training ops.


def ref_mlp_train_step(cfg: TrainStepConfig, w: Weights, x: np.ndarray, labels: np.ndarray) -> list[np.ndarray]:
    """Forward, backward by hand, and MindSpore's Adam, in float64."""
    w = {k: f64(v) for k, v in w.items()}
    pre = x @ w["fc1.weight"].T + w["fc1.bias"]
    h = np.maximum(pre, 0)
    logits = h @ w["fc2.weight"].T + w["fc2.bias"]
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    loss = -(labels * log_probs).sum(-1).mean()
    dlogits = (np.exp(log_probs) - labels) / cfg.batch
    dh = (dlogits @ w["fc2.weight"]) * (h > 0)
    grads = {"fc1.weight": dh.T @ x, "fc1.bias": dh.sum(0), "fc2.weight": dlogits.T @ h, "fc2.bias": dlogits.sum(0)}
    b1, b2 = cfg.beta1, cfg.beta2
    lr_t = cfg.learning_rate * math.sqrt(1 - b2**cfg.step) / (1 - b1**cfg.step)
    updated = []
    for name, g in grads.items():
        m = w[f"{name}.m"] + (g - w[f"{name}.m"]) * (1 - b1)
        v = w[f"{name}.v"] + (g * g - w[f"{name}.v"]) * (1 - b2)
        updated.append(w[name] - lr_t * m / (np.sqrt(v) + cfg.epsilon))
    return [np.asarray(loss), *updated]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_training_step_model(level: int) -> None:
    """mlp_train_step computes a training step (numpy float64 by hand), before and after graph-kernel fusion
    at every level, compiled for the CPU too; the gradient and optimizer ops are expanded at levels 1-3."""
    builder = TRAINING_MODELS["mlp_train_step"]()
    module = builder.module
    assert verify_operation(module.operation) == []
    inputs = model_inputs("mlp_train_step")
    want = ref_mlp_train_step(TrainStepConfig(), builder.weights, *(f64(a) for a in inputs))
    for got, expected in zip(run_function(module, inputs), want, strict=True):
        check_close(got, expected)
    pipeline = run_pipeline(module, f"builtin.module(graph-kernel-fusion{{opt-level={level}}})")
    assert (pipeline.records[0].statistics.get("num-expanded", 0) > 0) is (level > 0)
    if level:
        assert not {"graph.adam", "graph.bias_add_grad"} & set(  # the CPU column: Y; ReluGrad and SoftmaxCE: N
            graph_op_names(module))
    for got, expected in zip(run_function(module, inputs), want, strict=True):
        check_close(got, expected)
    for got, expected in zip(graphfuse.compile(builder.module, opt_level=level)(*inputs), want, strict=True):
        check_close(got, expected)
