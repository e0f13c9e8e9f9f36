"""Text generation latency: HF ``generate`` per token, eager PyTorch beside torch.compile's Inductor and graphfuse
(``torch.compile(backend="graphfuse")``).

Greedy decoding of a Llama (or Qwen2, GPT-2: ``--model``) with random weights from a fixed seed, no downloads,
with transformers' default cache (``DynamicCache``: the key and value lengths grow by one at every step, and each
prompt length is a new shape) or ``--cache static`` (``cache_implementation="static"``: every step has the same
shapes).  Per variant, after one warm-up generation (the compiles), ``--rounds`` interleaved rounds each generate
from prompts of ``--prompts`` lengths:

- ``ms / token``: decoding alone, ``(t(prompt + N tokens) - t(prompt + 1 token)) / (N - 1)``, the median over the
  prompt lengths and rounds;
- ``prompt ms``: ``t(prompt + 1 token)`` per prompt length (its forward pass and the first token), medians;
- ``compiles``: the graphs compiled over the whole run (graphfuse: shapes compiled, summed over its FX graphs;
  Inductor: Dynamo's unique graphs), and for graphfuse the calls that ran in eager PyTorch;
- ``tokens``: whether every generated token equals eager PyTorch's.

``--dtype bf16`` runs the model in bf16; ``--weights int8`` replaces every linear layer by an int8 weight-only one
(a scale per output, ``linear(x, weight.to(x.dtype)) * scales``), eager's tokens then those of that model.

    make bench-generate                                   # writes bench/generate-latest.md
    python -m bench.generate --model qwen2 --hidden 256 --layers 2 --variants eager,graphfuse
    python -m bench.generate --dtype bf16 --weights int8 --variants eager,graphfuse
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import machine

VARIANTS = ("eager", "inductor", "inductor-frozen", "graphfuse", "graphfuse-frozen")
MODELS = ("llama", "qwen2", "gpt2")
CACHES = ("dynamic", "static")
DTYPES = ("fp32", "bf16")
WEIGHTS = ("native", "int8")


def build_model(kind: str, hidden: int, layers: int, heads: int, kv_heads: int, ffn: int, vocab: int,
                max_len: int) -> Any:
    """A causal LM of ``kind`` (MODELS) with random weights from seed 0."""
    import torch
    import transformers

    torch.manual_seed(0)
    if kind == "gpt2":  # no grouped KV heads; its MLP is 4 x hidden
        config = transformers.GPT2Config(vocab_size=vocab, n_embd=hidden, n_layer=layers, n_head=heads,
                                         n_positions=max_len)
        return transformers.GPT2LMHeadModel(config).eval()
    config_class, model_class = {"llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
                                 "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM)}[kind]
    config = config_class(vocab_size=vocab, hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
                          num_attention_heads=heads, num_key_value_heads=kv_heads, max_position_embeddings=max_len)
    return model_class(config).eval()


def int8_weight_linear_class() -> type:
    """The class of :func:`quantize_weights`' layers (built on first use: torch is imported lazily)."""
    import torch

    class Int8WeightLinear(torch.nn.Module):
        """A linear layer with int8 weights and one scale per output, symmetric (weight-only quantization, as
        gpt-fast's int8 layers compute it): ``linear(x, weight.to(x.dtype)) * scales`` (+ bias)."""

        def __init__(self, linear: torch.nn.Linear) -> None:
            super().__init__()
            weight = linear.weight.detach().float()
            scales = weight.abs().amax(dim=1).clamp(min=1e-12) / 127
            self.register_buffer("weight", torch.round(weight / scales[:, None]).to(torch.int8))
            self.register_buffer("scales", scales.to(linear.weight.dtype))
            self.bias = linear.bias

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.nn.functional.linear(x, self.weight.to(x.dtype)) * self.scales
            return y if self.bias is None else y + self.bias

    return Int8WeightLinear


def quantize_weights(model: Any) -> Any:
    """``model`` with each ``nn.Linear`` (the output projection included) replaced by an int8 weight-only layer."""
    import torch

    layer_class = int8_weight_linear_class()
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(module, child_name, layer_class(child))
    if getattr(model.config, "tie_word_embeddings", False):
        model.config.tie_word_embeddings = False  # the output layer's weight is its own now
    return model


def _own_code(forward: Callable[..., Any], variant: str) -> Callable[..., Any]:
    """A function calling ``forward`` whose code object is the variant's own, in this run: Dynamo keeps its
    compiled versions and its record of which sizes changed per code object (by name and place, for the whole
    process), and neither the variants nor two runs in one process may share them (a size one saw change would
    start the next one symbolic)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return forward(*args, **kwargs)

    call.__code__ = call.__code__.replace(co_name=f"forward_{variant.replace('-', '_')}_{next(_RUNS)}")
    return call


#: Numbers the code objects of :func:`_own_code` apart.
_RUNS = itertools.count()


def compiled_forward(model: Any, variant: str) -> Callable[..., Any]:
    """``model.forward`` as the variant runs it."""
    import torch

    if variant == "eager":
        return model.forward
    forward = _own_code(model.forward, variant)
    if variant.startswith("inductor"):
        return torch.compile(forward, backend="inductor", options={"freezing": variant == "inductor-frozen"})
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    config = CompilerConfig()
    config.experimental_config.frozen_parameter = variant == "graphfuse-frozen"
    return torch.compile(forward, backend=get_backend(compiler_config=config))


class CompileCounter:
    """The compiles and eager calls of each variant: graphfuse's from the reports of the FX graphs compiled while
    the variant ran, Inductor's from Dynamo's count of unique graphs."""

    def __init__(self) -> None:
        self.compiles: dict[str, int] = {}
        self.eager_calls: dict[str, int | None] = {}
        self._reports: dict[str, list[Any]] = {}
        self._seen = 0

    def run(self, variant: str, call: Callable[[], Any]) -> Any:
        from torch._dynamo.utils import counters

        from graphfuse.frontends import torch_backend

        graphs = counters["stats"]["unique_graphs"]
        result = call()
        reports = torch_backend.last_report()
        mine = self._reports.setdefault(variant, [])
        mine += reports[self._seen:]
        self._seen = len(reports)
        if variant.startswith("graphfuse"):
            self.compiles[variant] = sum(len(r.compiled) + r.recompiles for r in mine)
            self.eager_calls[variant] = sum(r.eager_calls for r in mine)
        else:
            self.compiles[variant] = self.compiles.get(variant, 0) + counters["stats"]["unique_graphs"] - graphs
            self.eager_calls.setdefault(variant, None)
        return result


def _lengths(text: str) -> list[int]:
    lengths = [int(part) for part in text.split(",") if part.strip()]
    if not lengths or min(lengths) < 1:
        raise ValueError(text)
    return lengths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=MODELS, default="llama")
    parser.add_argument("--cache", choices=CACHES, default="dynamic",
                        help="dynamic: transformers' default DynamicCache; static: cache_implementation='static'")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=1408)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--dtype", choices=DTYPES, default="fp32", help="the model's parameters and activations")
    parser.add_argument("--weights", choices=WEIGHTS, default="native",
                        help="int8: every linear layer's weight in int8 with a scale per output (weight-only)")
    parser.add_argument("--prompts", default="8,17,32,61,100", help="prompt lengths (tokens), comma-separated")
    parser.add_argument("--new-tokens", type=int, default=32, help="tokens generated per timed generation")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or "eager" not in variants:
        print(f"bench.generate: error: --variants must include eager and name only {', '.join(VARIANTS)}",
              file=sys.stderr)
        return 1
    if args.new_tokens < 2:
        print("bench.generate: error: --new-tokens must be at least 2", file=sys.stderr)
        return 1
    try:
        prompt_lengths = _lengths(args.prompts)
    except ValueError:
        print(f"bench.generate: error: --prompts must be positive lengths separated by commas, got {args.prompts!r}",
              file=sys.stderr)
        return 1
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        print("bench.generate: error: needs the torch and models extras (pip install -e '.[torch,models]')",
              file=sys.stderr)
        return 1

    model = build_model(args.model, args.hidden, args.layers, args.heads, args.kv_heads, args.ffn, args.vocab,
                        max(prompt_lengths) + args.new_tokens + 8)
    if args.dtype == "bf16":
        model = model.to(torch.bfloat16)
    if args.weights == "int8":
        model = quantize_weights(model)
    generator = torch.Generator().manual_seed(1)
    prompts = {length: torch.randint(0, args.vocab, (1, length), generator=generator) for length in prompt_lengths}
    eager_forward = model.forward
    # Each variant compiles a code object of its own (_own_code), but a static cache is a shape per length and
    # prompt: Dynamo's default of 8 versions per code object would send the later ones back to eager PyTorch.
    torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
    torch._dynamo.config.accumulated_cache_size_limit = max(256, torch._dynamo.config.accumulated_cache_size_limit)
    cache = {"cache_implementation": "static"} if args.cache == "static" else {}

    def generate(forward: Callable[..., Any], length: int, tokens: int) -> tuple[Any, float]:
        model.forward = forward
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(prompts[length], max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False,
                                 **cache)
        return out, time.perf_counter() - start

    counter = CompileCounter()
    forwards: dict[str, Callable[..., Any]] = {}
    compile_seconds: dict[str, float] = {}
    same_tokens: dict[str, bool] = {v: True for v in variants}
    want = {length: generate(eager_forward, length, args.new_tokens)[0] for length in prompt_lengths}
    for variant in variants:  # the warm-up: a generation from each prompt length, the compiles among them
        forwards[variant] = compiled_forward(model, variant) if variant != "eager" else eager_forward
        compile_seconds[variant] = 0.0
        for length in prompt_lengths:
            got, seconds = counter.run(variant, lambda v=variant, n=length: generate(forwards[v], n, args.new_tokens))
            compile_seconds[variant] += seconds
            same_tokens[variant] &= bool(torch.equal(got, want[length]))
        print(f"{variant}: warm-up {compile_seconds[variant]:.1f} s, {counter.compiles.get(variant, 0)} compiles, "
              f"tokens {'equal' if same_tokens[variant] else 'DIFFER'}", file=sys.stderr)
    warm_compiles = dict(counter.compiles)
    per_token: dict[str, list[float]] = {v: [] for v in variants}
    first: dict[str, dict[int, list[float]]] = {v: {length: [] for length in prompt_lengths} for v in variants}
    for _ in range(args.rounds):
        for length in prompt_lengths:
            for variant in variants:  # interleaved: the machine's drift affects every variant alike
                _, short = counter.run(variant, lambda v=variant, n=length: generate(forwards[v], n, 1))
                full, seconds = counter.run(variant,
                                            lambda v=variant, n=length: generate(forwards[v], n, args.new_tokens))
                same_tokens[variant] &= bool(torch.equal(full, want[length]))
                first[variant][length].append(short)
                per_token[variant].append((seconds - short) / (args.new_tokens - 1))
    model.forward = eager_forward

    eager_ms = statistics.median(per_token["eager"]) * 1e3
    head = ["variant", "ms / token", "vs eager", f"prompt ms ({' / '.join(map(str, prompt_lengths))} tokens)",
            "compiles (timed)", "eager calls", "warm-up s", "tokens"]
    rows = []
    for variant in variants:
        ms = statistics.median(per_token[variant]) * 1e3
        prompt_ms = " / ".join(f"{statistics.median(first[variant][n]) * 1e3:.1f}" for n in prompt_lengths)
        eager_calls = counter.eager_calls.get(variant)
        compiles = counter.compiles.get(variant, 0)
        rows.append([variant, f"{ms:.2f}", f"{eager_ms / ms:.2f}x", prompt_ms,
                     "-" if variant == "eager" else f"{compiles} ({compiles - warm_compiles.get(variant, 0)})",
                     "-" if eager_calls is None else str(eager_calls),
                     f"{compile_seconds[variant]:.1f}", "equal" if same_tokens[variant] else "DIFFER"])
    cache_text = "static KV cache" if args.cache == "static" else "default DynamicCache"
    model_line = (f"{type(model).__name__} hidden {args.hidden}, {args.layers} layers, {args.heads} heads"
                  + ("" if args.model == "gpt2" else f" ({args.kv_heads} KV), ffn {args.ffn}")
                  + f", vocab {args.vocab}; prompts of {', '.join(map(str, prompt_lengths))} tokens, "
                  f"{args.new_tokens} new tokens, greedy, {cache_text}, {args.dtype}"
                  + (", int8 weights (weight-only, a scale per output)" if args.weights == "int8" else "")
                  + f"; median of {args.rounds} interleaved "
                  "rounds")
    cpu, flags = machine.cpu_info()
    lines = [f"date {machine.today()}, commit {machine.commit()}",
             f"CPU: {cpu} (flags: {', '.join(flags) or 'none of avx512f/avx2/fma'}), torch {torch.__version__}, "
             f"{torch.get_num_threads()} torch threads", model_line, "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows),
             "", "vs eager: eager ms / token over the variant's (> 1: faster than eager). compiles: over the whole "
             "run, every prompt length included (graphfuse: shapes compiled; Inductor: Dynamo's graphs), and in "
             "brackets those during the timed rounds (after a warm-up generation from each prompt length). "
             "graphfuse-frozen compiles the weights in as constants (CompilerConfig.experimental_config."
             "frozen_parameter); inductor-frozen is Inductor's freezing option, the same idea."]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("# Generation latency\n\n" + "\n".join(lines) + "\n")
    return 0 if all(same_tokens.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
