"""Training step time: a transformer encoder layer with a classification head, forward + backward + Adam, in
eager PyTorch, under torch.compile's Inductor, and through graphfuse fused (opt level 2) and unfused (level 0).

The model is ``Classifier`` of examples/train_encoder_layer.py (PyTorch's own ``TransformerEncoderLayer``,
post-norm, ReLU, no dropout, a mean over the sequence, a linear head, cross-entropy), random weights from a
fixed seed, one fixed batch.  A graphfuse step is the joint forward/backward graph imported by
``import_training_step`` (PyTorch's autograd tracing) and compiled, then ``graphfuse.optim.Adam`` (one compiled
graph of ``graph.adam`` ops); a PyTorch step is ``zero_grad``, the forward, ``backward`` and
``torch.optim.Adam.step``.  Every variant trains its own copy of the same initial weights.

- ``losses``: each variant's losses over the first ``--check-steps`` steps against eager PyTorch's (largest
  relative difference; "DIFFER" above 1e-3), and the first step's alone (the same weights: the forward's
  rounding only; later steps add the optimizers' own, graphfuse.optim.Adam placing epsilon as MindSpore does);
- ``ms / step``: the median step over ``--steps`` steps, best of ``--rounds`` interleaved rounds (every round
  runs every variant in turn), the caches evicted before each step unless ``--no-evict``;
- ``compile s``: the first step (imports and compiles included).

    make bench-training                                   # writes bench/training-latest.md
    python -m bench.training --batch 8 --seq 32 --width 64 --variants eager,graphfuse
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import machine
from bench.models import _example
from bench.run import SETTLE_SECONDS, Variant
from graphfuse.lowering.host import last_level_cache_bytes

VARIANTS = ("eager", "inductor", "graphfuse", "graphfuse-O0")
#: Largest relative difference of a variant's losses from eager PyTorch's that still counts as the same training.
LOSS_TOLERANCE = 1e-3


class Trainer:
    """One variant: ``step()`` trains one step of its own copy of the model and returns the loss."""

    def __init__(self, step: Callable[[], float]):
        self.step = step


def _torch_trainer(model: Any, x: Any, labels: Any, lr: float, compiled: bool) -> Trainer:
    import torch

    forward = torch.compile(model) if compiled else model
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def step() -> float:
        optimizer.zero_grad()
        loss = forward(x, labels)[0]
        loss.backward()
        optimizer.step()
        return loss.item()

    return Trainer(step)


def _graphfuse_trainer(model: Any, x: Any, labels: Any, lr: float, opt_level: int) -> Trainer:
    import graphfuse
    from graphfuse.frontends.torch import import_training_step
    from graphfuse.optim import Adam

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.export's own deprecation notices
        imported = import_training_step(model, (x, labels))
    executable = graphfuse.compile(imported.module, opt_level=opt_level, num_threads=machine.THREADS)
    params = dict(zip(imported.parameter_names, imported.parameters, strict=True))
    trained = imported.gradient_names
    adam = Adam([params[n].shape for n in trained], lr=lr)
    inputs = [x.numpy(), labels.numpy()]
    outs = executable.empty_outputs()

    def step() -> float:
        executable(*inputs, *[params[n] for n in imported.parameter_names], out=outs)
        new = adam.step([params[n] for n in trained], outs[1:1 + len(trained)])
        params.update(zip(trained, new, strict=True))
        return float(outs[0])

    return Trainer(step)


def build_trainers(variants: list[str], batch: int, seq: int, width: int, heads: int, classes: int,
                   lr: float) -> tuple[dict[str, Trainer], dict[str, float], dict[str, list[float]]]:
    """(variant -> trainer, variant -> seconds of its first step, variant -> [first loss])."""
    import torch

    torch.set_num_threads(machine.THREADS)
    torch.manual_seed(0)
    classifier = _example("train_encoder_layer").Classifier
    initial = classifier(width, heads, classes)
    x, labels = torch.randn(batch, seq, width), torch.randint(0, classes, (batch,))
    trainers, first, losses = {}, {}, {}
    for variant in variants:
        model = classifier(width, heads, classes)
        model.load_state_dict(initial.state_dict())
        start = time.perf_counter()
        if variant in ("eager", "inductor"):
            trainer = _torch_trainer(model, x, labels, lr, compiled=variant == "inductor")
        else:
            trainer = _graphfuse_trainer(model, x, labels, lr, opt_level=0 if variant == "graphfuse-O0" else 2)
        losses[variant] = [trainer.step()]  # torch.compile compiles on its first step
        first[variant] = time.perf_counter() - start
        trainers[variant] = trainer
    return trainers, first, losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.training", description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--check-steps", type=int, default=10, help="steps whose losses are compared")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per variant and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-evict", action="store_true")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"subset of {','.join(VARIANTS)}")
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or "eager" not in variants:
        print(f"bench.training: error: --variants must include eager and name only {', '.join(VARIANTS)}"
              + (f" (unknown: {', '.join(unknown)})" if unknown else ""), file=sys.stderr)
        return 1
    if args.width % args.heads or min(args.batch, args.seq, args.width, args.classes, args.check_steps,
                                      args.steps, args.rounds) < 1:
        print("bench.training: error: sizes, steps and rounds must be positive and --width a multiple of --heads",
              file=sys.stderr)
        return 1

    trainers, first, losses = build_trainers(variants, args.batch, args.seq, args.width, args.heads, args.classes,
                                             args.lr)
    for _ in range(args.check_steps - 1):
        for variant, trainer in trainers.items():
            losses[variant].append(trainer.step())
    evict = machine.Evictor(not args.no_evict, machine.evict_bytes(last_level_cache_bytes()))
    timed = {variant: Variant(trainer.step, lambda _: []) for variant, trainer in trainers.items()}
    seconds: dict[str, float] = {}
    for _ in range(args.rounds):
        for variant, steps in timed.items():
            time.sleep(SETTLE_SECONDS)  # the previous variant's thread pool stops spinning
            median = statistics.median(steps.times(args.steps, evict))
            seconds[variant] = min(seconds.get(variant, median), median)

    eager = np.array(losses["eager"])
    rows, worst = [], 0.0
    for variant in variants:
        diffs = np.abs(np.array(losses[variant]) - eager) / np.maximum(np.abs(eager), 1e-12)
        diff = float(diffs.max())
        worst = max(worst, diff)
        verdict = f"{diff:.1e}" + (" DIFFER" if diff > LOSS_TOLERANCE else "")
        rows.append([variant, f"{seconds[variant] * 1e3:.2f}", f"{seconds['eager'] / seconds[variant]:.2f}x",
                     f"{first[variant]:.1f}", f"{diffs[0]:.1e}", verdict])
    model_name, _ = machine.cpu_info()
    lines = [
        f"date {machine.today()}, commit {machine.commit()}; CPU: {model_name}, {machine.THREADS} threads",
        f"TransformerEncoderLayer width {args.width}, {args.heads} heads, ffn {2 * args.width}, + a {args.classes}-"
        f"class head; batch {args.batch} x seq {args.seq}; Adam lr {args.lr}; median of {args.steps} steps, best "
        f"of {args.rounds} interleaved rounds, {'cold' if not args.no_evict else 'warm'} cache; losses over the "
        f"first {args.check_steps} steps against eager",
        "",
        "| variant | ms / step | speed-up vs eager | compile s | first loss: rel diff | losses: max rel diff |",
        "|---|---|---|---|---|---|",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    print("\n".join(lines))
    if args.markdown is not None:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0 if worst <= LOSS_TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
