"""`make demo`: build the bundled transformer block, verify it, clean it up, run it, and say what happened."""

from __future__ import annotations

import collections
import time

import numpy as np
from mlir import ir

from graphfuse.dialect.interpreter import run_function
from graphfuse.pipelines.runner import run_pipeline
from graphfuse.tools.models import TransformerConfig, transformer_block
from graphfuse.tools.reporting import run_tool

CLEANUP = "builtin.module(graph-canonicalize,graph-cse,graph-dce)"


def op_histogram(module: ir.Module) -> collections.Counter:
    counts: collections.Counter = collections.Counter()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("graph.") or op.name == "arith.constant":
            counts[op.name] += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return counts


def _main(argv: list[str]) -> int:
    cfg = TransformerConfig()
    builder = transformer_block(cfg)
    module = builder.module
    print(f"graphfuse demo: a pre-norm transformer block (seq={cfg.seq}, d_model={cfg.d_model}, "
          f"heads={cfg.heads}, ffn={cfg.ffn}) built with the graph builder")
    before = op_histogram(module)
    x = np.random.default_rng(1).standard_normal((cfg.seq, cfg.d_model)).astype(np.float32)
    start = time.perf_counter()
    (reference,) = run_function(module, [x])
    run_before = time.perf_counter() - start

    pipeline = run_pipeline(module, CLEANUP)
    after = op_histogram(module)
    start = time.perf_counter()
    (cleaned,) = run_function(module, [x])
    run_after = time.perf_counter() - start

    print(f"\nverified, then ran {CLEANUP}:")
    for record in pipeline.records:
        stats = ", ".join(f"{name}={value}" for name, value in record.statistics.items())
        print(f"  {record.step.argument:<20} {record.seconds * 1000:7.1f} ms  {stats}")
    print(f"\n{'op':<24}{'before':>8}{'after':>8}")
    for name in sorted(set(before) | set(after)):
        print(f"  {name:<22}{before[name]:>8}{after[name]:>8}")
    print(f"  {'total':<22}{sum(before.values()):>8}{sum(after.values()):>8}")
    max_diff = float(np.max(np.abs(reference - cleaned)))
    print(f"\nreference interpreter: output {reference.shape} {reference.dtype}, "
          f"{run_before * 1000:.1f} ms before cleanup, {run_after * 1000:.1f} ms after; "
          f"max |difference| = {max_diff:.3g}")
    return 0 if max_diff <= 1e-5 else 1


def main() -> None:
    raise SystemExit(run_tool("graphfuse-demo", _main))


if __name__ == "__main__":
    main()
