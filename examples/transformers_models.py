"""The transformers library's own Llama, BERT and GPT-2 models, imported, fused and compiled by graphfuse.

    python examples/transformers_models.py [--model llama,bert,gpt2] [--seq 256] [--hidden 512]
                                           [--layers 2] [--heads 8] [--ffn 1376] [--repeat 20]

Each model is built from its config with random weights (a fixed seed, no downloads), in eval mode, and
fed ``inputs_embeds`` [1, seq, hidden] (the layers alone: token ids import too, the lookup a
``graph.gather``).  For each the run prints the fusions that fired, the error against PyTorch eager and the
median time per call of graphfuse fused (opt level 2), graphfuse unfused (opt level 0), PyTorch eager and
torch.compile, all on the same threads.  Needs transformers: ``pip install -e '.[models]'``.
``make bench-models`` times the same models with the bench's method (cold cache, interleaved rounds).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

MODELS = ("llama", "bert", "gpt2")


class LastHiddenState(torch.nn.Module):
    """An HF model called with ``inputs_embeds``, returning its ``last_hidden_state``."""

    def __init__(self, model: torch.nn.Module, **call: Any):
        super().__init__()
        self.model = model
        self.call = call

    def forward(self, embeds: torch.Tensor) -> torch.Tensor:
        return self.model(inputs_embeds=embeds, **self.call).last_hidden_state


def build(kind: str, seq: int = 16, hidden: int = 64, layers: int = 1, heads: int = 2, ffn: int = 128,
          seed: int = 0) -> tuple[torch.nn.Module, tuple[torch.Tensor]]:
    """The model ``kind`` (llama, bert, gpt2) with random weights, and a random input [1, seq, hidden]."""
    import transformers as hf

    torch.manual_seed(seed)
    if kind == "llama":
        config = hf.LlamaConfig(hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
                                num_attention_heads=heads, num_key_value_heads=heads, vocab_size=1000,
                                max_position_embeddings=max(seq, 2048))
        model = LastHiddenState(hf.LlamaModel(config), use_cache=False)
    elif kind == "bert":
        config = hf.BertConfig(hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
                               num_attention_heads=heads, vocab_size=1000, max_position_embeddings=max(seq, 512))
        model = LastHiddenState(hf.BertModel(config, add_pooling_layer=False))
    elif kind == "gpt2":
        config = hf.GPT2Config(n_embd=hidden, n_inner=ffn, n_layer=layers, n_head=heads, vocab_size=1000,
                               n_positions=max(seq, 1024), bos_token_id=0, eos_token_id=0)
        model = LastHiddenState(hf.GPT2Model(config), use_cache=False)
    else:
        raise ValueError(f"unknown model '{kind}' (one of {', '.join(MODELS)})")
    return model.eval(), (torch.randn(1, seq, hidden),)


def _median_ms(call: Callable[[], Any], repeat: int) -> float:
    for _ in range(3):
        call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def compare(kind: str, seq: int, hidden: int, layers: int, heads: int, ffn: int, repeat: int) -> None:
    """Print the fusions, the error and the four timings of one model."""
    from graphfuse.frontends.torch import compile_module

    model, inputs = build(kind, seq, hidden, layers, heads, ffn)
    with torch.inference_mode():
        want = model(*inputs).numpy()
    fused = compile_module(model, inputs, opt_level=2)
    unfused = compile_module(model, inputs, opt_level=0)
    compiled = torch.compile(model)
    arrays = [x.numpy() for x in inputs]
    error = float(np.abs(fused.executable(*arrays)[0] - want).max() / np.abs(want).max())
    with torch.inference_mode():
        times = {
            "graphfuse fused": _median_ms(lambda: fused.executable(*arrays), repeat),
            "graphfuse opt level 0": _median_ms(lambda: unfused.executable(*arrays), repeat),
            "PyTorch eager": _median_ms(lambda: model(*inputs), repeat),
            "torch.compile": _median_ms(lambda: compiled(*inputs), repeat),
        }
    fusions = ", ".join(f"{name} x{n}" for name, n in sorted(fused.fusions.items())) or "none"
    print(f"== {kind}: {fused.executable.kernels} kernels; fusions: {fusions}")
    print(f"   max relative error vs PyTorch eager: {error:.2e}")
    for label, ms in times.items():
        print(f"   {label:<22} {ms:8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=",".join(MODELS), help="comma-separated subset of llama,bert,gpt2")
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--ffn", type=int, default=1376)
    parser.add_argument("--repeat", type=int, default=20, help="timed calls (median)")
    args = parser.parse_args()

    from graphfuse.lowering.host import default_threads

    torch.set_num_threads(default_threads())  # graphfuse's threads: the same for every column
    for kind in args.model.split(","):
        compare(kind, args.seq, args.hidden, args.layers, args.heads, args.ffn, args.repeat)


if __name__ == "__main__":
    main()
