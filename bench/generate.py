"""Text generation latency: HF LlamaForCausalLM.generate per token, eager PyTorch beside torch.compile's Inductor
and graphfuse (``torch.compile(backend="graphfuse")``).

Greedy decoding with transformers' static KV cache (``cache_implementation="static"``: every decoding step has
the same shapes, so each compiler compiles the prompt and one decoding step).  Random weights from a fixed
seed, no downloads.  Per variant, after one warm-up generation (the compiles):

- ``ms / token``: decoding alone, ``(t(prompt + N tokens) - t(prompt + 1 token)) / (N - 1)``, the median over
  ``--rounds`` interleaved rounds;
- ``prompt ms``: ``t(prompt + 1 token)``, the prompt's forward pass and the first token;
- ``compile s``: the warm-up generations' time (compiles included: the static cache's length follows the
  number of new tokens, so the 1-token and the N-token generations have shapes of their own);
- ``tokens``: whether the generated tokens equal eager PyTorch's.

    make bench-generate                                   # writes bench/generate-latest.md
    python -m bench.generate --hidden 256 --layers 2 --new-tokens 16 --variants eager,graphfuse
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import machine

VARIANTS = ("eager", "inductor", "inductor-frozen", "graphfuse", "graphfuse-frozen")


def build_model(hidden: int, layers: int, heads: int, kv_heads: int, ffn: int, vocab: int, max_len: int) -> Any:
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=ffn,
                                      num_hidden_layers=layers, num_attention_heads=heads,
                                      num_key_value_heads=kv_heads, max_position_embeddings=max_len)
    return transformers.LlamaForCausalLM(config).eval()


def compiled_forward(model: Any, variant: str) -> Callable[..., Any]:
    """``model.forward`` as the variant runs it."""
    import torch

    if variant == "eager":
        return model.forward
    if variant.startswith("inductor"):
        return torch.compile(model.forward, backend="inductor", options={"freezing": variant == "inductor-frozen"})
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    config = CompilerConfig()
    config.experimental_config.frozen_parameter = variant == "graphfuse-frozen"
    return torch.compile(model.forward, backend=get_backend(compiler_config=config))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=1408)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--prompt", type=int, default=32, help="prompt tokens")
    parser.add_argument("--new-tokens", type=int, default=32, help="tokens generated per timed generation")
    parser.add_argument("--rounds", type=int, default=5)
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
        import torch
        import transformers  # noqa: F401
    except ImportError:
        print("bench.generate: error: needs the torch and models extras (pip install -e '.[torch,models]')",
              file=sys.stderr)
        return 1

    model = build_model(args.hidden, args.layers, args.heads, args.kv_heads, args.ffn, args.vocab,
                        args.prompt + args.new_tokens + 8)
    prompt = torch.randint(0, args.vocab, (1, args.prompt), generator=torch.Generator().manual_seed(1))
    eager_forward = model.forward
    # Every variant compiles the same forward (one code object): Dynamo's default of 8 compiled versions per
    # code object would send the later variants' graphs (a prompt and a decoding step for each of two cache
    # lengths) back to eager PyTorch.
    torch._dynamo.config.cache_size_limit = 64
    torch._dynamo.config.accumulated_cache_size_limit = max(256, torch._dynamo.config.accumulated_cache_size_limit)

    def generate(forward: Callable[..., Any], tokens: int) -> tuple[Any, float]:
        model.forward = forward
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(prompt, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False,
                                 cache_implementation="static")
        return out, time.perf_counter() - start

    forwards: dict[str, Callable[..., Any]] = {}
    compile_seconds: dict[str, float] = {}
    same_tokens: dict[str, bool] = {}
    want, _ = generate(eager_forward, args.new_tokens)
    for variant in variants:
        forwards[variant] = compiled_forward(model, variant) if variant != "eager" else eager_forward
        got, seconds = generate(forwards[variant], args.new_tokens)  # warm-up: the compiles
        _, short_seconds = generate(forwards[variant], 1)  # a shorter static cache: other shapes, compiled too
        compile_seconds[variant] = seconds + short_seconds
        same_tokens[variant] = bool(torch.equal(got, want))
        print(f"{variant}: warm-up {seconds:.1f} s, tokens {'equal' if same_tokens[variant] else 'DIFFER'}",
              file=sys.stderr)
    per_token: dict[str, list[float]] = {v: [] for v in variants}
    first: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(args.rounds):
        for variant in variants:  # interleaved: the machine's drift affects every variant alike
            _, short = generate(forwards[variant], 1)
            _, full = generate(forwards[variant], args.new_tokens)
            first[variant].append(short)
            per_token[variant].append((full - short) / (args.new_tokens - 1))
    model.forward = eager_forward

    eager_ms = statistics.median(per_token["eager"]) * 1e3
    head = ["variant", "ms / token", "vs eager", "prompt ms", "compile s", "tokens"]
    rows = []
    for variant in variants:
        ms = statistics.median(per_token[variant]) * 1e3
        rows.append([variant, f"{ms:.2f}", f"{eager_ms / ms:.2f}x", f"{statistics.median(first[variant]) * 1e3:.1f}",
                     f"{compile_seconds[variant]:.1f}", "equal" if same_tokens[variant] else "DIFFER"])
    model_line = (f"LlamaForCausalLM hidden {args.hidden}, {args.layers} layers, {args.heads} heads ({args.kv_heads} "
                  f"KV), ffn {args.ffn}, vocab {args.vocab}; prompt {args.prompt} tokens, {args.new_tokens} new "
                  f"tokens, greedy, static KV cache, fp32; median of {args.rounds} interleaved rounds")
    cpu, flags = machine.cpu_info()
    lines = [f"date {machine.today()}, commit {machine.commit()}",
             f"CPU: {cpu} (flags: {', '.join(flags) or 'none of avx512f/avx2/fma'}), torch {torch.__version__}, "
             f"{torch.get_num_threads()} torch threads", model_line, "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows),
             "", "vs eager: eager ms / token over the variant's (> 1: faster than eager). graphfuse-frozen compiles "
             "the weights in as constants (CompilerConfig.experimental_config.frozen_parameter); inductor-frozen is "
             "Inductor's freezing option, the same idea."]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("# Generation latency\n\n" + "\n".join(lines) + "\n")
    return 0 if all(same_tokens.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
