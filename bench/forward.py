"""Forward latency over (batch, sequence) sizes: one graphfuse compile serving every size beside a static compile
of each size, for a BERT encoder and a Llama decoder called as users call them (token ids and the tokenizer's
attention mask, the first row left-padded).

Per model (``--model``), the variants:

- ``graphfuse``: ``torch.compile(model, backend="graphfuse")`` with its defaults, called at every size in turn:
  the first size compiles static, the first that differs compiles the changed dims symbolic (as Inductor's
  automatic dynamic shapes), and that compile serves the later sizes;
- ``graphfuse-static``: ``torch.compile(..., dynamic=False)``: a static compile per size, the reference;
- ``eager`` (and ``inductor`` when asked): PyTorch as it is.

After a warm-up call per size and variant (the compiles), ``--rounds`` interleaved rounds time each size and
variant (the fastest of ``--calls`` calls in a row); the table gives the medians, graphfuse over its static
compile per size, and the compiles and eager calls over the run.  The outputs are checked against eager's.

    make bench-forward                   # writes bench/forward-bert-latest.md, bench/forward-llama-latest.md
    python -m bench.forward --model llama --sizes 1x8,2x33,4x64 --rounds 3
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
from bench.generate import CompileCounter, _own_code

MODELS = ("bert", "llama")
VARIANTS = ("eager", "graphfuse", "graphfuse-static", "inductor")
#: Sizes a server sees: one request first (batch 1), then batches of 2-8 of lengths up to 512.  Dynamo compiles a
#: graph of its own for a size of 1, so the first size is the only one of batch 1: two compiles in all.
DEFAULT_SIZES = "1x8,2x33,4x64,2x128,3x200,8x17,2x512,4x300"
#: Relative error of the outputs against eager PyTorch's (f32, orders of sums differ).
TOLERANCE = 1e-4


def build_model(kind: str, hidden: int, layers: int, heads: int, ffn: int, vocab: int, max_len: int) -> Any:
    """A BERT encoder or a Llama decoder (no LM head) with random weights from seed 0."""
    import torch
    import transformers

    torch.manual_seed(0)
    if kind == "bert":
        config = transformers.BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                                         num_attention_heads=heads, intermediate_size=ffn,
                                         max_position_embeddings=max_len)
        return transformers.BertModel(config).eval()
    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=ffn,
                                      num_hidden_layers=layers, num_attention_heads=heads,
                                      num_key_value_heads=max(1, heads // 2), max_position_embeddings=max_len)
    return transformers.LlamaModel(config).eval()


def compiled(model: Any, variant: str) -> Callable[..., Any]:
    import torch

    if variant == "eager":
        return model.forward
    forward = _own_code(model.forward, variant)
    if variant == "inductor":
        return torch.compile(forward, backend="inductor")
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    return torch.compile(forward, backend=get_backend(compiler_config=CompilerConfig()),
                         dynamic=False if variant == "graphfuse-static" else None)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    sizes = []
    for part in text.split(","):
        batch, _, length = part.strip().partition("x")
        sizes.append((int(batch), int(length)))
    if not sizes or min(min(s) for s in sizes) < 1:
        raise ValueError(text)
    return sizes


def inputs(batch: int, length: int, vocab: int) -> dict[str, Any]:
    """Token ids and the attention mask of a batch, the first row left-padded to a third when there are others."""
    import torch

    generator = torch.Generator().manual_seed(batch * 1000 + length)
    ids = torch.randint(0, vocab, (batch, length), generator=generator)
    mask = torch.ones(batch, length, dtype=torch.long)
    if batch > 1:
        mask[0, : length // 3] = 0
    return {"input_ids": ids, "attention_mask": mask}


def _relative_error(got: Any, want: Any) -> float:
    import torch

    mask = torch.isfinite(want)
    scale = float(want[mask].abs().max()) if bool(mask.any()) else 1.0
    return float((got[mask] - want[mask]).abs().max()) / max(scale, 1e-30) if bool(mask.any()) else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=MODELS, default="llama")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--ffn", type=int, default=None, help="default: 1408 (llama), 2048 (bert)")
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="batch x sequence sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3, help="calls per sample, the fastest counted")
    parser.add_argument("--variants", default="eager,graphfuse,graphfuse-static",
                        help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if any(v not in VARIANTS for v in variants) or not {"eager", "graphfuse", "graphfuse-static"} <= set(variants):
        print(f"bench.forward: error: --variants must include eager, graphfuse and graphfuse-static and name only "
              f"{', '.join(VARIANTS)}", file=sys.stderr)
        return 1
    try:
        sizes = parse_sizes(args.sizes)
    except ValueError:
        print(f"bench.forward: error: --sizes must be BATCHxLENGTH sizes separated by commas, got {args.sizes!r}",
              file=sys.stderr)
        return 1
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        print("bench.forward: error: needs the torch and models extras (pip install -e '.[torch,models]')",
              file=sys.stderr)
        return 1

    ffn = args.ffn or (2048 if args.model == "bert" else 1408)
    model = build_model(args.model, args.hidden, args.layers, args.heads, ffn, args.vocab,
                        max(length for _, length in sizes) + 8)
    torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
    torch._dynamo.config.accumulated_cache_size_limit = max(256, torch._dynamo.config.accumulated_cache_size_limit)
    batches = {size: inputs(*size, args.vocab) for size in sizes}
    counter = CompileCounter()
    forwards = {variant: compiled(model, variant) for variant in variants}

    def call(variant: str, size: tuple[int, int]) -> tuple[Any, float]:
        start = time.perf_counter()
        with torch.no_grad():
            out = forwards[variant](**batches[size]).last_hidden_state
        return out, time.perf_counter() - start

    with torch.no_grad():
        want = {size: model(**batches[size]).last_hidden_state for size in sizes}
    error = {v: 0.0 for v in variants}
    warm = {v: 0.0 for v in variants}
    for variant in variants:
        for size in sizes:
            out, seconds = counter.run(variant, lambda v=variant, s=size: call(v, s))
            warm[variant] += seconds
            error[variant] = max(error[variant], _relative_error(out, want[size]))
        print(f"{variant}: warm-up {warm[variant]:.1f} s, {counter.compiles.get(variant, 0)} compiles",
              file=sys.stderr)
    warm_compiles = dict(counter.compiles)
    times: dict[str, dict[tuple[int, int], list[float]]] = {v: {s: [] for s in sizes} for v in variants}
    for _ in range(args.rounds):
        for size in sizes:
            for variant in variants:  # interleaved: the machine's drift affects every variant alike
                best = float("inf")
                for _ in range(args.calls):  # a sample is the fastest of a few calls in a row (small sizes are noisy)
                    out, seconds = counter.run(variant, lambda v=variant, s=size: call(v, s))
                    best = min(best, seconds)
                times[variant][size].append(best)
                error[variant] = max(error[variant], _relative_error(out, want[size]))

    def ms(variant: str, size: tuple[int, int]) -> float:
        return statistics.median(times[variant][size]) * 1e3

    head = ["batch x length", *(f"{v} ms" for v in variants), "graphfuse / static"]
    rows, ratios = [], []
    for size in sizes:
        ratio = ms("graphfuse", size) / ms("graphfuse-static", size)
        ratios.append(ratio)
        rows.append([f"{size[0]} x {size[1]}", *(f"{ms(v, size):.2f}" for v in variants), f"{ratio:.2f}"])
    summary = []
    for variant in variants:
        if variant == "eager":
            continue
        compiles = counter.compiles.get(variant, 0)
        eager_calls = counter.eager_calls.get(variant)
        summary.append(f"{variant}: {compiles} compiles ({compiles - warm_compiles.get(variant, 0)} in the timed "
                       f"rounds), {'-' if eager_calls is None else eager_calls} eager calls, warm-up "
                       f"{warm[variant]:.1f} s, largest relative error against eager {error[variant]:.1e}")
    cpu, flags = machine.cpu_info()
    model_line = (f"{type(model).__name__} hidden {args.hidden}, {args.layers} layers, {args.heads} heads, ffn {ffn}, "
                  f"vocab {args.vocab}, fp32, attention mask with the first row left-padded; median of "
                  f"{args.rounds} interleaved rounds of the fastest of {args.calls} calls")
    lines = [f"date {machine.today()}, commit {machine.commit()}",
             f"CPU: {cpu} (flags: {', '.join(flags) or 'none of avx512f/avx2/fma'}), torch {torch.__version__}, "
             f"{torch.get_num_threads()} torch threads", model_line, "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows),
             "", *summary, f"graphfuse / static: largest {max(ratios):.2f}, geometric mean "
             f"{statistics.geometric_mean(ratios):.2f}"]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text(f"# Forward latency over sizes ({args.model})\n\n" + "\n".join(lines) + "\n")
    return 0 if all(e <= TOLERANCE for e in error.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
