"""A BERT-style encoder layer in plain PyTorch, imported, fused and compiled by graphfuse.

    python examples/bert_encoder_layer.py [--seq 32] [--dim 128] [--heads 4] [--repeat 50]

The layer (post-norm, as BERT): separate Q, K, V projections, attention
written out by hand (``q @ k^T / sqrt(d) + mask``, softmax, ``@ v``) with an
additive padding mask, the output projection, add & LayerNorm, a GELU
feed-forward network and a second add & LayerNorm.  Random weights; the last
quarter of the second sequence is padding.  The run prints the import
summary, the fusions that fired (FlashAttentionFusionV2 and
add_layer_norm_fusion among them), the error against PyTorch and the time of
both.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

#: fusion passes that must fire on this layer (checked by the tests)
EXPECTED_FUSIONS = ("add_layer_norm_fusion", "FlashAttentionFusionV2")


class BertEncoderLayer(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4, hidden: int = 256, eps: float = 1e-12):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.query, self.key, self.value = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.attention_out = nn.Linear(dim, dim)
        self.attention_norm = nn.LayerNorm(dim, eps=eps)
        self.intermediate = nn.Linear(dim, hidden)
        self.output = nn.Linear(hidden, dim)
        self.output_norm = nn.LayerNorm(dim, eps=eps)

    def heads_first(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q, k, v = (self.heads_first(proj(x)) for proj in (self.query, self.key, self.value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + attention_mask
        context = (scores.softmax(dim=-1) @ v).permute(0, 2, 1, 3).reshape(batch, seq, dim)
        x = self.attention_norm(x + self.attention_out(context))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


def build(seq: int = 16, dim: int = 64, heads: int = 4, batch: int = 2, seed: int = 0):
    """The layer with random weights, a random input and an additive mask [batch, 1, 1, seq] (-10000 = padding)."""
    torch.manual_seed(seed)
    layer = BertEncoderLayer(dim, heads, hidden=4 * dim).eval()
    with torch.no_grad():
        for norm in (layer.attention_norm, layer.output_norm):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    keep = torch.ones(batch, seq)
    keep[-1, seq - seq // 4 :] = 0.0  # padding at the end of the last sequence
    attention_mask = ((1.0 - keep) * -10000.0).view(batch, 1, 1, seq)
    return layer, (torch.randn(batch, seq, dim), attention_mask)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20, help="timed calls (median)")
    parser.add_argument("--params", choices=("constants", "arguments"), default="constants")
    args = parser.parse_args()

    from graphfuse.frontends.torch import compare

    layer, inputs = build(args.seq, args.dim, args.heads, args.batch)
    print(compare(layer, inputs, name="BERT encoder layer", params=args.params, repeat=args.repeat).report())


if __name__ == "__main__":
    main()
