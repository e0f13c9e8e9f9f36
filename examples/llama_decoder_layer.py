"""A Llama-style decoder layer in plain PyTorch, imported, fused and compiled by graphfuse.

    python examples/llama_decoder_layer.py [--seq 32] [--dim 128] [--heads 4] [--repeat 50]

The layer: RMSNorm, attention with a fused QKV projection, rotary position
embeddings and a causal mask (``scaled_dot_product_attention(is_causal=True)``),
a residual add, RMSNorm, a SwiGLU MLP whose gate and up projections are one
linear layer cut in two with ``chunk(2, -1)``, and a second residual add.
Random weights.  The run prints the import summary, the fusions that fired
(add_rms_norm_fusion, inference_swiglu_fusion and FlashAttentionFusionV1
among them), the error against PyTorch and the time of both.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import nn

#: fusion passes that must fire on this layer (checked by the tests)
EXPECTED_FUSIONS = ("add_rms_norm_fusion", "inference_swiglu_fusion", "FlashAttentionFusionV1")


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4, hidden: int = 128, max_seq: int = 256, eps: float = 1e-6):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.input_norm = nn.RMSNorm(dim, eps=eps)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.post_attention_norm = nn.RMSNorm(dim, eps=eps)
        self.gate_up = nn.Linear(dim, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        inverse_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(max_seq).float(), inverse_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.input_norm(x)).split(dim, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        cos, sin = self.cos[:seq], self.sin[:seq]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(attention.transpose(1, 2).reshape(batch, seq, dim))
        gate, up = self.gate_up(self.post_attention_norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(seq: int = 16, dim: int = 64, heads: int = 4, batch: int = 1, seed: int = 0):
    """The layer with random weights and a random input of [batch, seq, dim]."""
    torch.manual_seed(seed)
    layer = LlamaDecoderLayer(dim, heads, hidden=2 * dim).eval()
    with torch.no_grad():
        for norm in (layer.input_norm, layer.post_attention_norm):
            norm.weight.uniform_(0.5, 1.5)
    return layer, (torch.randn(batch, seq, dim),)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20, help="timed calls (median)")
    parser.add_argument("--params", choices=("constants", "arguments"), default="constants")
    args = parser.parse_args()

    from graphfuse.frontends.torch import compare

    layer, inputs = build(args.seq, args.dim, args.heads, args.batch)
    print(compare(layer, inputs, name="Llama decoder layer", params=args.params, repeat=args.repeat).report())


if __name__ == "__main__":
    main()
