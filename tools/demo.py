"""`make demo`: build the bundled transformer block, clean it up, fuse it, compile and run it, say what happened."""

from __future__ import annotations

import collections
import contextlib
import io
import statistics
import time

import numpy as np
from mlir import ir

from graphfuse.dialect.interpreter import run_function
from graphfuse.lowering.compiler import compile as compile_graph
from graphfuse.pipelines import log
from graphfuse.pipelines.runner import Pipeline, run_pipeline
from graphfuse.tools.models import TransformerConfig, transformer_block
from graphfuse.tools.reporting import run_tool

CLEANUP = "builtin.module(graph-canonicalize,graph-cse,graph-dce)"
FUSION = "builtin.module(graph-fusion,graph-dce)"


def op_histogram(module: ir.Module) -> collections.Counter:
    counts: collections.Counter = collections.Counter()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("graph.") or op.name == "arith.constant":
            counts[op.name] += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return counts


def _timed_run(module: ir.Module, x: np.ndarray) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    (y,) = run_function(module, [x])
    return y, time.perf_counter() - start


def _print_steps(pipeline: Pipeline) -> None:
    for record in pipeline.records:
        stats = ", ".join(f"{name}={value}" for name, value in record.statistics.items())
        print(f"  {record.step.argument:<20} {record.seconds * 1000:7.1f} ms  {stats}")


def _main(argv: list[str]) -> int:
    cfg = TransformerConfig()
    module = transformer_block(cfg).module
    print(f"graphfuse demo: a pre-norm transformer block (seq={cfg.seq}, d_model={cfg.d_model}, "
          f"heads={cfg.heads}, ffn={cfg.ffn}) built with the graph builder and verified")
    x = np.random.default_rng(1).standard_normal((cfg.seq, cfg.d_model)).astype(np.float32)
    histograms = [("built", op_histogram(module))]
    reference, seconds = _timed_run(module, x)
    timings = [("built", seconds)]

    print(f"\n1. clean-up: {CLEANUP}")
    _print_steps(run_pipeline(module, CLEANUP))
    histograms.append(("cleaned", op_histogram(module)))
    cleaned, seconds = _timed_run(module, x)
    timings.append(("cleaned", seconds))

    print(f"\n2. pattern fusion: {FUSION}")
    print("  the --log-level=info log, lines of the patterns that matched:")
    captured = io.StringIO()
    log.configure("info")
    try:
        with contextlib.redirect_stderr(captured):
            fusion = run_pipeline(module, FUSION)
    finally:
        log.configure()
    for line in captured.getvalue().splitlines():
        if "graph kernel passes:" in line or ("matched_times=" in line and "matched_times=0" not in line):
            print(f"    {line}")
    fired = {name: counts["effect_times"] for name, counts in fusion.fusion_result()["graph_fusion"].items()
             if counts["effect_times"] != "0"}
    print("  fusions that fired: " + ", ".join(f"{name} x{times}" for name, times in fired.items()))
    histograms.append(("fused", op_histogram(module)))
    fused, seconds = _timed_run(module, x)
    timings.append(("fused", seconds))

    print("\n3. graph-kernel fusion: builtin.module(graph-kernel-fusion{opt-level=2})")
    kernel_module = transformer_block(cfg).module
    run_pipeline(kernel_module, "builtin.module(graph-canonicalize,graph-cse,graph-dce)")
    run_pipeline(kernel_module, "builtin.module(graph-kernel-fusion{opt-level=2})")
    tops = [op.operation for op in kernel_module.body.operations]
    kernels = [op for op in tops if "graph.kernel" in op.attributes]
    kinds = collections.Counter(str(op.attributes["graph.fusion_kind"]).strip('"') for op in kernels)
    print(f"  on the cleaned block (a separate copy): {len(kernels)} graph.kernel functions ("
          + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")")
    (kernel_out, seconds) = _timed_run(kernel_module, x)
    histograms_kernel_diff = float(np.max(np.abs(kernel_out - reference)))
    print(f"  reference interpreter through the kernels: max |y - y_built| = {histograms_kernel_diff:.3g}")

    names = sorted(set().union(*(h for _, h in histograms)))
    print("\n  " + f"{'op':<30}" + "".join(f"{label:>9}" for label, _ in histograms))
    for name in names:
        print("  " + f"{name:<30}" + "".join(f"{h[name]:>9}" for _, h in histograms))
    print("  " + f"{'total':<30}" + "".join(f"{sum(h.values()):>9}" for _, h in histograms))

    print("\n4. reference interpreter on the same input, at each stage:")
    worst = 0.0
    for (label, seconds), result in zip(timings, (reference, cleaned, fused), strict=True):
        diff = float(np.max(np.abs(result - reference)))
        worst = max(worst, diff)
        print(f"  {label:<8} {seconds * 1000:6.1f} ms   max |y - y_built| = {diff:.3g}")
    print(f"\noutput {reference.shape} {reference.dtype}; "
          f"{'identical within 1e-4' if worst <= 1e-4 else 'MISMATCH'}")

    compiled_worst = _compiled_runs(x, reference)
    return 0 if max(worst, histograms_kernel_diff, compiled_worst) <= 1e-4 else 1


def _compiled_runs(x: np.ndarray, reference: np.ndarray) -> float:
    """Step 5: compile the block for the CPU unfused and fused, run both, time them, compare."""
    print("\n5. compiled for the CPU (graphfuse.compile: linalg, LLVM, JIT), unfused (opt level 0) and fused:")
    worst = 0.0
    runs = []
    for label, level in (("unfused", 0), ("fused", 2)):
        start = time.perf_counter()
        executable = compile_graph(transformer_block(TransformerConfig()).module, opt_level=level)
        compile_seconds = time.perf_counter() - start
        out = [np.empty(shape, dtype) for shape, dtype in executable.outputs]
        executable(x, out=out)
        times = []
        for _ in range(50):
            begin = time.perf_counter()
            executable(x, out=out)
            times.append(time.perf_counter() - begin)
        diff = float(np.max(np.abs(out[0] - reference)))
        worst = max(worst, diff)
        runs.append((label, statistics.median(times)))
        print(f"  {label:<8} {executable.kernels:2d} kernels, compiled in {compile_seconds:5.2f} s, "
              f"run {statistics.median(times) * 1e3:7.3f} ms (median of 50), max |y - y_built| = {diff:.3g}")
    print(f"  fused is {runs[0][1] / runs[1][1]:.2f}x the speed of unfused; `make bench` times larger workloads")
    return worst


def main() -> None:
    raise SystemExit(run_tool("graphfuse-demo", _main))


if __name__ == "__main__":
    main()
