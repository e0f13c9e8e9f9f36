"""The benchmark workloads: each as a graph (what a framework hands graphfuse), numpy op by op, and torch.

Sizes: ``"full"`` are the sizes of the performance table; ``"odd"`` the same
workloads at non-power-of-two sizes (``make bench ARGS="--shapes odd"``); ``"small"`` keeps
every shape's structure at a size the test suite can run in milliseconds
(tests check the numerics of every workload at that size).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from bench import models
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.tools.models import TransformerConfig, transformer_block

__all__ = ["MODEL_WORKLOADS", "WORKLOADS", "Workload"]

F32 = 4
BF16 = 2


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    #: size name -> shape parameters
    sizes: dict[str, dict[str, int]]
    #: (params) -> graph module (one public function)
    build: Callable[..., Any]
    #: (params, rng) -> inputs
    inputs: Callable[..., list[np.ndarray]]
    #: numpy op by op: (inputs, params) -> outputs; None: the reference interpreter (numpy per graph op)
    numpy: Callable[..., list[np.ndarray]] | None
    #: minimal bytes moved (inputs read once, outputs written once) and flops, per params
    traffic: Callable[..., int]
    flops: Callable[..., int] = lambda **_: 0
    #: torch eager: (torch module, inputs, params) -> outputs; None when there is none
    torch: Callable[..., Any] | None = None
    #: a real model (bench/models.py): imported by the PyTorch front end, torch eager is the reference
    model: str | None = None
    #: the element type of the inputs and outputs: "f32", "bf16" (ml_dtypes.bfloat16 arrays; torch bf16
    #: tensors), whose products are measured against the machine's bf16 peak, or "int8" (int8 operands), against
    #: the int8 dot-product peak (operations counted as flops)
    dtype: str = "f32"

    def compute_bound(self, **params: int) -> bool:
        return self.flops(**params) > 0


def _normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


# -------------------------------------------------------------------------- gelu(x * 2 + 1)


def _gelu_graph(n: int) -> Any:
    b = GraphBuilder("gelu_affine")
    x = b.arg((n,))
    b.ret(b.gelu(b.add(b.mul(x, b.const(np.float32(2.0))), b.const(np.float32(1.0))), approximate="tanh"))
    return b.module


def _gelu_numpy(inputs: list[np.ndarray], n: int) -> list[np.ndarray]:
    (x,) = inputs
    y = x * np.float32(2.0) + np.float32(1.0)
    inner = np.float32(math.sqrt(2.0 / math.pi)) * (y + np.float32(0.044715) * y * y * y)
    return [np.float32(0.5) * y * (np.float32(1.0) + np.tanh(inner))]


def _gelu_torch(torch: Any, inputs: list[Any], n: int) -> list[Any]:
    return [torch.nn.functional.gelu(inputs[0] * 2.0 + 1.0, approximate="tanh")]


# -------------------------------------------------------------------------- add + layer_norm / rms_norm


def _norm_graph(kind: str) -> Callable[..., Any]:
    def build(rows: int, cols: int) -> Any:
        b = GraphBuilder(f"add_{kind}")
        x, residual = b.arg((rows, cols)), b.arg((rows, cols))
        gamma = b.const(np.linspace(0.5, 1.5, cols, dtype=np.float32))
        s = b.add(x, residual)
        if kind == "layer_norm":
            beta = b.const(np.linspace(-0.1, 0.1, cols, dtype=np.float32))
            b.ret(b.layer_norm(s, gamma, beta, epsilon=1e-5))
        else:
            b.ret(b.rms_norm(s, gamma, epsilon=1e-6))
        return b.module

    return build


def _layer_norm_numpy(inputs: list[np.ndarray], rows: int, cols: int) -> list[np.ndarray]:
    x, residual = inputs
    s = x + residual
    mean = s.mean(axis=-1, keepdims=True)
    centered = s - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    gamma = np.linspace(0.5, 1.5, cols, dtype=np.float32)
    beta = np.linspace(-0.1, 0.1, cols, dtype=np.float32)
    return [centered / np.sqrt(var + np.float32(1e-5)) * gamma + beta]


def _rms_norm_numpy(inputs: list[np.ndarray], rows: int, cols: int) -> list[np.ndarray]:
    x, residual = inputs
    s = x + residual
    gamma = np.linspace(0.5, 1.5, cols, dtype=np.float32)
    return [s / np.sqrt((s * s).mean(axis=-1, keepdims=True) + np.float32(1e-6)) * gamma]


def _layer_norm_torch(torch: Any, inputs: list[Any], rows: int, cols: int) -> list[Any]:
    gamma = torch.linspace(0.5, 1.5, cols)
    beta = torch.linspace(-0.1, 0.1, cols)
    return [torch.nn.functional.layer_norm(inputs[0] + inputs[1], (cols,), gamma, beta, 1e-5)]


def _rms_norm_torch(torch: Any, inputs: list[Any], rows: int, cols: int) -> list[Any]:
    s = inputs[0] + inputs[1]
    return [s * torch.rsqrt((s * s).mean(-1, keepdim=True) + 1e-6) * torch.linspace(0.5, 1.5, cols)]


# -------------------------------------------------------------------------- matmul + bias + gelu


def _matmul_graph(m: int, k: int, n: int) -> Any:
    b = GraphBuilder("matmul_bias_gelu")
    a, w = b.arg((m, k)), b.arg((k, n))
    bias = b.const(np.linspace(-0.5, 0.5, n, dtype=np.float32))
    b.ret(b.gelu(b.add(b.matmul(a, w), bias), approximate="tanh"))
    return b.module


def _matmul_numpy(inputs: list[np.ndarray], m: int, k: int, n: int) -> list[np.ndarray]:
    a, w = inputs
    y = a @ w + np.linspace(-0.5, 0.5, n, dtype=np.float32)
    inner = np.float32(math.sqrt(2.0 / math.pi)) * (y + np.float32(0.044715) * y * y * y)
    return [np.float32(0.5) * y * (np.float32(1.0) + np.tanh(inner))]


def _matmul_torch(torch: Any, inputs: list[Any], m: int, k: int, n: int) -> list[Any]:
    y = inputs[0] @ inputs[1] + torch.linspace(-0.5, 0.5, n)
    return [torch.nn.functional.gelu(y, approximate="tanh")]


#: The sizes of the matmul rows (matmul + bias + gelu in f32 and bf16, the int8 quant_batch_matmul).
_MATMUL_SIZES = {
    "full": {"m": 1024, "k": 1024, "n": 4096},
    "small": {"m": 16, "k": 32, "n": 64},
    "odd": {"m": 1000, "k": 1000, "n": 3000},
}


def _matmul_bf16_graph(m: int, k: int, n: int) -> Any:
    """The bf16 form, as PyTorch's importer writes a bf16 addmm + gelu: the operands widened to f32, the bias
    added to the f32 product, gelu in f32, one rounding to bf16."""
    b = GraphBuilder("matmul_bias_gelu_bf16")
    a, w = b.arg((m, k), "bf16"), b.arg((k, n), "bf16")
    bias = b.const(np.linspace(-0.5, 0.5, n, dtype=np.float32))
    product = b.matmul(b.cast(a, "f32"), b.cast(w, "f32"))
    b.ret(b.cast(b.gelu(b.add(product, bias), approximate="tanh"), "bf16"))
    return b.module


def _matmul_bf16_inputs(rng: np.random.Generator, m: int, k: int, n: int) -> list[np.ndarray]:
    a, w = _normal(rng, m, k), _normal(rng, k, n) * np.float32(k**-0.5)
    return [a.astype(ml_dtypes.bfloat16), w.astype(ml_dtypes.bfloat16)]


def _matmul_bf16_numpy(inputs: list[np.ndarray], m: int, k: int, n: int) -> list[np.ndarray]:
    """In f32 from the bf16 values: what the bf16 variants round."""
    return _matmul_numpy([x.astype(np.float32) for x in inputs], m, k, n)


def _matmul_bf16_torch(torch: Any, inputs: list[Any], m: int, k: int, n: int) -> list[Any]:
    """addmm in bf16 (f32 sums, the bias added before one rounding), then gelu in bf16."""
    bias = torch.linspace(-0.5, 0.5, n).to(torch.bfloat16)
    return [torch.nn.functional.gelu(torch.addmm(bias, inputs[0], inputs[1]), approximate="tanh")]


def _qbmm_graph(m: int, k: int, n: int) -> Any:
    """``quant_batch_matmul`` of int8 activations by an int8 weight (an argument), dequantized per column to f16
    (Ascend's QuantBatchMatmul, as the seeds' quantized products use it)."""
    b = GraphBuilder("quant_batch_matmul")
    x, w = b.arg((m, k), "i8"), b.arg((k, n), "i8")
    b.ret(b.quant_batch_matmul(x, w, b.const(_qbmm_scale(n)), dtype="f16"))
    return b.module


def _qbmm_scale(n: int) -> np.ndarray:
    """Per-column scales that bring sums of 1000s of int8 products to O(1)."""
    return np.linspace(1e-5, 4e-5, n, dtype=np.float32)


def _qbmm_inputs(rng: np.random.Generator, m: int, k: int, n: int) -> list[np.ndarray]:
    return [rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8)]


def _qbmm_numpy(inputs: list[np.ndarray], m: int, k: int, n: int) -> list[np.ndarray]:
    """The exact integer product (in f64, exact while K * 2^14 < 2^53; numpy's int64 matmul has no BLAS and took
    17 s at 1024 x 1024 x 4096), scaled in f32, rounded once to f16."""
    x, w = (v.astype(np.float64) for v in inputs)
    return [((x @ w).astype(np.float32) * _qbmm_scale(n)).astype(np.float16)]


def _qbmm_torch(torch: Any, inputs: list[Any], m: int, k: int, n: int) -> list[Any]:
    """PyTorch's int8 product (``torch._int_mm``: int8 x int8 -> int32), scaled in f32, rounded to f16."""
    scale = torch.from_numpy(_qbmm_scale(n))
    return [(torch._int_mm(inputs[0], inputs[1]).float() * scale).half()]


# -------------------------------------------------------------------------- softmax


def _softmax_graph(rows: int, cols: int) -> Any:
    b = GraphBuilder("softmax")
    x = b.arg((rows, cols))
    b.ret(b.softmax(x, axis=-1))
    return b.module


def _softmax_numpy(inputs: list[np.ndarray], rows: int, cols: int) -> list[np.ndarray]:
    (x,) = inputs
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return [e / e.sum(axis=-1, keepdims=True)]


# -------------------------------------------------------------------------- swiglu


def _swiglu_graph(rows: int, cols: int) -> Any:
    b = GraphBuilder("swiglu")
    x = b.arg((rows, 2 * cols))
    gate, up = b.split(x, axis=-1, sizes=[cols, cols])
    b.ret(b.mul(b.silu(gate), up))
    return b.module


def _swiglu_numpy(inputs: list[np.ndarray], rows: int, cols: int) -> list[np.ndarray]:
    (x,) = inputs
    gate, up = x[:, :cols], x[:, cols:]
    return [gate / (np.float32(1.0) + np.exp(-gate)) * up]


def _swiglu_torch(torch: Any, inputs: list[Any], rows: int, cols: int) -> list[Any]:
    gate, up = inputs[0].chunk(2, dim=-1)
    return [torch.nn.functional.silu(gate) * up]


# -------------------------------------------------------------------------- attention


def _attention_graph(heads: int, seq: int, dim: int) -> Any:
    b = GraphBuilder("attention")
    q, k, v = b.arg((heads, seq, dim)), b.arg((heads, seq, dim)), b.arg((heads, seq, dim))
    scores = b.mul(b.matmul(q, k, transpose_b=True), b.const(np.float32(1.0 / math.sqrt(dim))))
    b.ret(b.matmul(b.softmax(scores, axis=-1), v))
    return b.module


def _attention_numpy(inputs: list[np.ndarray], heads: int, seq: int, dim: int) -> list[np.ndarray]:
    q, k, v = inputs
    scores = (q @ k.transpose(0, 2, 1)) * np.float32(1.0 / math.sqrt(dim))
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return [(e / e.sum(axis=-1, keepdims=True)) @ v]


def _attention_torch(torch: Any, inputs: list[Any], heads: int, seq: int, dim: int) -> list[Any]:
    q, k, v = inputs
    return [torch.softmax((q @ k.transpose(1, 2)) * (1.0 / math.sqrt(dim)), dim=-1) @ v]


_ATTENTION_SIZES = {
    "full": {"heads": 8, "seq": 1024, "dim": 64},
    "small": {"heads": 2, "seq": 32, "dim": 16},
    "odd": {"heads": 6, "seq": 1000, "dim": 64},
}


def _attention_flops(heads: int, seq: int, dim: int) -> int:
    return 4 * heads * seq * seq * dim


def _sdpa_graph(heads: int, seq: int, dim: int) -> Any:
    b = GraphBuilder("sdpa")
    q, k, v = b.arg((heads, seq, dim)), b.arg((heads, seq, dim)), b.arg((heads, seq, dim))
    b.ret(b.flash_attention(q, k, v, scale=1.0 / math.sqrt(dim)))
    return b.module


def _sdpa_torch(torch: Any, inputs: list[Any], heads: int, seq: int, dim: int) -> list[Any]:
    return [torch.nn.functional.scaled_dot_product_attention(*inputs)]


# -------------------------------------------------------------------------- transformer block


def _block_config(seq: int, d_model: int, heads: int, ffn: int) -> TransformerConfig:
    return TransformerConfig(seq=seq, d_model=d_model, heads=heads, ffn=ffn)


def _block_graph(seq: int, d_model: int, heads: int, ffn: int) -> Any:
    return transformer_block(_block_config(seq, d_model, heads, ffn)).module


def _block_flops(seq: int, d_model: int, heads: int, ffn: int) -> int:
    projections = 2 * seq * d_model * (4 * d_model + 2 * ffn)
    return projections + 2 * 2 * seq * seq * d_model


def _unary(shape_of: Callable[..., tuple[int, ...]], count: int = 1) -> Callable[..., list[np.ndarray]]:
    def make(rng: np.random.Generator, **params: int) -> list[np.ndarray]:
        return [_normal(rng, *shape_of(**params)) for _ in range(count)]

    return make


# -------------------------------------------------------------------------- conv2d 3x3 + relu


def _conv_graph(channels: int, size: int) -> Any:
    b = GraphBuilder("conv3x3_bias_relu")
    x, w, bias = b.arg((1, channels, size, size)), b.arg((channels, channels, 3, 3)), b.arg((channels, 1, 1))
    b.ret(b.relu(b.add(b.conv2d(x, w, pads=[1, 1, 1, 1]), bias)))
    return b.module


def _conv_torch(torch: Any, inputs: list[Any], channels: int, size: int) -> list[Any]:
    x, w, bias = inputs
    return [torch.relu(torch.nn.functional.conv2d(x, w, bias.reshape(-1), padding=1))]


# -------------------------------------------------------------------------- real models (bench/models.py)


def _model_workload(name: str, title: str, sizes: dict[str, dict[str, int]]) -> Workload:
    """A model of bench/models.py: graphfuse compiles its import (parameters as constants); torch runs it."""

    def build(**params: int) -> Any:
        import torch

        from graphfuse.frontends.torch import import_module

        example = torch.zeros(models.MODELS[name].input_shape(**params))
        return import_module(models.model(name, **params), (example,)).module

    def inputs(rng: np.random.Generator, **params: int) -> list[np.ndarray]:
        return [_normal(rng, *models.MODELS[name].input_shape(**params))]

    def traffic(**params: int) -> int:
        # the input and the output (the same shape for each model here), and every weight read once
        return 2 * math.prod(models.MODELS[name].input_shape(**params)) * F32 + models.weight_bytes(name, **params)

    def eager(torch: Any, tensors: list[Any], **params: int) -> list[Any]:
        return [models.model(name, **params)(tensors[0])]

    return Workload(name, title, sizes, build, inputs, None, traffic,
                    flops=lambda **params: models.model_flops(name, **params), torch=eager, model=name)


#: The transformers models' sizes: two layers, head size 64 (48 at the odd size).
_TRANSFORMER_SIZES = {
    "full": {"seq": 256, "hidden": 512, "layers": 2, "heads": 8, "ffn": 1376},
    "small": {"seq": 16, "hidden": 64, "layers": 1, "heads": 2, "ffn": 128},
    "odd": {"seq": 250, "hidden": 480, "layers": 2, "heads": 10, "ffn": 1000},
}

#: Both attention workloads' inputs (q, k, v), numpy reference and minimal traffic.
_ATTENTION_DATA = (
    _unary(lambda heads, seq, dim: (heads, seq, dim), 3),
    _attention_numpy,
    lambda heads, seq, dim: 4 * heads * seq * dim * F32,
)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload(
            "gelu",
            "gelu(x*2+1), tanh form",
            {"full": {"n": 16 * 1024 * 1024}, "small": {"n": 4096}, "odd": {"n": 10_000_003}},
            _gelu_graph,
            _unary(lambda n: (n,)),
            _gelu_numpy,
            lambda n: 2 * n * F32,
            torch=_gelu_torch,
        ),
        Workload(
            "add_layer_norm",
            "add + layer_norm",
            {
                "full": {"rows": 8192, "cols": 1024},
                "small": {"rows": 16, "cols": 64},
                "odd": {"rows": 6000, "cols": 1000},
            },
            _norm_graph("layer_norm"),
            _unary(lambda rows, cols: (rows, cols), 2),
            _layer_norm_numpy,
            lambda rows, cols: 3 * rows * cols * F32,
            torch=_layer_norm_torch,
        ),
        Workload(
            "add_rms_norm",
            "add + rms_norm",
            {
                "full": {"rows": 8192, "cols": 1024},
                "small": {"rows": 16, "cols": 64},
                "odd": {"rows": 6000, "cols": 1000},
            },
            _norm_graph("rms_norm"),
            _unary(lambda rows, cols: (rows, cols), 2),
            _rms_norm_numpy,
            lambda rows, cols: 3 * rows * cols * F32,
            torch=_rms_norm_torch,
        ),
        Workload(
            "matmul_bias_gelu",
            "matmul + bias + gelu",
            _MATMUL_SIZES,
            _matmul_graph,
            lambda rng, m, k, n: [_normal(rng, m, k), _normal(rng, k, n) * np.float32(k**-0.5)],
            _matmul_numpy,
            lambda m, k, n: (m * k + k * n + m * n) * F32,
            flops=lambda m, k, n: 2 * m * k * n,
            torch=_matmul_torch,
        ),
        Workload(
            "matmul_bias_gelu_bf16",
            "matmul + bias + gelu, bf16",
            _MATMUL_SIZES,
            _matmul_bf16_graph,
            _matmul_bf16_inputs,
            _matmul_bf16_numpy,
            lambda m, k, n: (m * k + k * n + m * n) * BF16,
            flops=lambda m, k, n: 2 * m * k * n,
            torch=_matmul_bf16_torch,
            dtype="bf16",
        ),
        Workload(
            "quant_batch_matmul",
            "quant_batch_matmul, int8 -> f16",
            _MATMUL_SIZES,
            _qbmm_graph,
            _qbmm_inputs,
            _qbmm_numpy,
            lambda m, k, n: m * k + k * n + m * n * 2,
            flops=lambda m, k, n: 2 * m * k * n,
            torch=_qbmm_torch,
            dtype="int8",
        ),
        Workload(
            "softmax",
            "softmax",
            {
                "full": {"rows": 8192, "cols": 1024},
                "small": {"rows": 16, "cols": 64},
                "odd": {"rows": 6000, "cols": 1000},
            },
            _softmax_graph,
            _unary(lambda rows, cols: (rows, cols)),
            _softmax_numpy,
            lambda rows, cols: 2 * rows * cols * F32,
            torch=lambda torch, inputs, rows, cols: [torch.softmax(inputs[0], dim=-1)],
        ),
        Workload(
            "swiglu",
            "swiglu",
            {
                "full": {"rows": 4096, "cols": 2816},
                "small": {"rows": 16, "cols": 48},
                "odd": {"rows": 3000, "cols": 2750},
            },
            _swiglu_graph,
            _unary(lambda rows, cols: (rows, 2 * cols)),
            _swiglu_numpy,
            lambda rows, cols: 3 * rows * cols * F32,
            torch=_swiglu_torch,
        ),
        Workload(
            "attention",
            "attention, explicit ops",
            _ATTENTION_SIZES,
            _attention_graph,
            *_ATTENTION_DATA,
            flops=_attention_flops,
            torch=_attention_torch,
        ),
        Workload(
            "attention_sdpa",
            "attention, SDPA (flash_attention op)",
            _ATTENTION_SIZES,
            _sdpa_graph,
            *_ATTENTION_DATA,
            flops=_attention_flops,
            torch=_sdpa_torch,
        ),
        Workload(
            "transformer_block",
            "transformer block",
            {
                "full": {"seq": 512, "d_model": 512, "heads": 8, "ffn": 2048},
                "small": {"seq": 32, "d_model": 64, "heads": 4, "ffn": 256},
                "odd": {"seq": 500, "d_model": 512, "heads": 8, "ffn": 2000},
            },
            _block_graph,
            lambda rng, seq, d_model, heads, ffn: [_normal(rng, seq, d_model)],
            None,  # numpy op by op is the reference interpreter here (it evaluates each graph op with numpy)
            lambda seq, d_model, heads, ffn: 2 * seq * d_model * F32,
            flops=_block_flops,
        ),
        Workload(
            "conv3x3",
            "conv2d 3x3 + bias + relu",
            {
                "full": {"channels": 64, "size": 56},
                "small": {"channels": 4, "size": 18},
                "odd": {"channels": 60, "size": 50},
            },
            _conv_graph,
            lambda rng, channels, size: [_normal(rng, 1, channels, size, size),
                                         _normal(rng, channels, channels, 3, 3) * np.float32((9 * channels) ** -0.5),
                                         _normal(rng, channels, 1, 1)],
            None,  # numpy op by op is the reference interpreter (im2col with numpy)
            lambda channels, size: (2 * channels * size * size + 9 * channels * channels + channels) * F32,
            flops=lambda channels, size: 2 * channels * channels * 9 * size * size,
            torch=_conv_torch,
        ),
        _model_workload("llama", "LlamaModel (transformers)", _TRANSFORMER_SIZES),
        _model_workload("bert", "BertModel (transformers)", _TRANSFORMER_SIZES),
        _model_workload("gpt2", "GPT2Model (transformers)", _TRANSFORMER_SIZES),
        _model_workload(
            "resnet_block",
            "ResNet basic block",
            {
                "full": {"size": 56, "channels": 64},
                "small": {"size": 8, "channels": 8},
                "odd": {"size": 50, "channels": 60},
            },
        ),
    ]
}

#: The real models (``make bench-models`` runs only these).
MODEL_WORKLOADS = tuple(name for name, w in WORKLOADS.items() if w.model)
