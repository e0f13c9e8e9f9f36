"""Bundled model graphs, built with the builder API, for the demo, the tests and the benchmarks.

Weights are constants drawn from a seeded generator, stored the way PyTorch's
``nn.Linear`` stores them (``[out, in]``) and transposed in the graph, as a
graph exported from a framework looks: that is the kind of graph the cleanup
and fusion passes are meant for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphfuse.dialect.builder import FunctionBuilder, GraphBuilder, Tensor


@dataclass(frozen=True)
class TransformerConfig:
    seq: int = 32
    d_model: int = 64
    heads: int = 4
    ffn: int = 256
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


def _linear(b: FunctionBuilder, x: Tensor, rng: np.random.Generator, out_dim: int) -> Tensor:
    """x @ W^T + bias with W stored [out, in], as a framework exports nn.Linear."""
    in_dim = x.shape[-1]
    weight = b.const(rng.normal(0.0, in_dim**-0.5, (out_dim, in_dim)).astype(np.float32))
    bias = b.const(rng.normal(0.0, 0.02, (out_dim,)).astype(np.float32))
    return b.bias_add(b.matmul(x, b.transpose(weight, perm=[1, 0])), bias)


def _split_heads(b: FunctionBuilder, x: Tensor, cfg: TransformerConfig) -> Tensor:
    """[S, D] -> [H, S, Dh]."""
    return b.transpose(b.reshape(x, (cfg.seq, cfg.heads, cfg.head_dim)), perm=[1, 0, 2])


def transformer_block(cfg: TransformerConfig = TransformerConfig()) -> FunctionBuilder:
    """A pre-norm decoder block: causal multi-head self-attention and a GELU MLP, with residuals.

    Returns the finished builder (``.module`` is the graph module); the one
    argument is the activation ``x`` of shape [seq, d_model].
    """
    rng = np.random.default_rng(cfg.seed)
    b = GraphBuilder("transformer_block")
    x = b.arg((cfg.seq, cfg.d_model))

    def norm(t: Tensor) -> Tensor:
        gamma = b.const(np.ones(cfg.d_model, np.float32))
        beta = b.const(np.zeros(cfg.d_model, np.float32))
        return b.layer_norm(t, gamma, beta, epsilon=1e-5)

    h = norm(x)
    q = _split_heads(b, _linear(b, h, rng, cfg.d_model), cfg)
    k = _split_heads(b, _linear(b, h, rng, cfg.d_model), cfg)
    v = _split_heads(b, _linear(b, h, rng, cfg.d_model), cfg)
    # Exporters compute the softmax scale in the graph: 1/sqrt(head_dim).
    scale = b.rsqrt(b.const(np.full((1,), cfg.head_dim, np.float32)))
    scores = b.mul(b.matmul(q, k, transpose_b=True), scale)
    causal = np.triu(np.full((cfg.seq, cfg.seq), -1e9, np.float32), k=1)
    probs = b.softmax(b.add(scores, b.const(causal)), axis=-1)
    context = b.reshape(b.transpose(b.matmul(probs, v), perm=[1, 0, 2]), (cfg.seq, cfg.d_model))
    x1 = b.add(x, _linear(b, context, rng, cfg.d_model))
    hidden = b.gelu(_linear(b, norm(x1), rng, cfg.ffn), approximate="tanh")
    y = b.add(x1, _linear(b, hidden, rng, cfg.d_model))
    b.ret(y)
    return b
