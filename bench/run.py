"""`make bench`: time every workload as graphfuse unfused (opt-level 0), graphfuse fused, numpy and torch.

    python -m bench.run [--size full|small] [--workloads a,b] [--calls N] [--rounds R] [--no-evict]
                        [--markdown FILE]

Method (see docs/performance.md): fp32; a cold cache before every timed call
(a 256 MiB buffer is read first) unless ``--no-evict``; per variant the median
of ``--calls`` calls, best of ``--rounds`` rounds, variants interleaved within
each round so machine drift hits them alike.  graphfuse writes into output
buffers allocated once (``out=``); numpy and torch allocate their results as
they normally do.  Effective GB/s = minimal bytes (inputs read once, outputs
written once) / time; the machine's copy bandwidth is measured the same way on
a 256 MiB ``numpy.copyto``.  Every variant's results are compared with numpy's
(max relative error, printed) before timing.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import graphfuse
from bench.workloads import WORKLOADS, Workload
from graphfuse.dialect.interpreter import run_function

EVICT_BYTES = 256 << 20


class Evictor:
    def __init__(self, enabled: bool):
        self.buffer = np.ones(EVICT_BYTES // 4, np.float32) if enabled else None

    def __call__(self) -> None:
        if self.buffer is not None:
            self.buffer.sum()


def copy_bandwidth() -> float:
    """Effective GB/s of a 256 MiB numpy.copyto (read once + write once), best of 5."""
    src = np.ones(EVICT_BYTES // 4, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = min(_time(lambda: np.copyto(dst, src)) for _ in range(5))
    return 2 * src.nbytes / best / 1e9


def _time(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def max_rel_error(want: list[np.ndarray], got: list[np.ndarray]) -> float:
    worst = 0.0
    for w, g in zip(want, got, strict=True):
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        scale = max(float(np.abs(w64).max()), 1e-30)
        worst = max(worst, float(np.abs(w64 - g64).max()) / scale)
    return worst


def variants(
    workload: Workload, params: dict[str, int], inputs: list[np.ndarray], use_torch: bool
) -> tuple[dict[str, Callable[[], Any]], dict[str, float], list[np.ndarray]]:
    """name -> zero-argument call, compile seconds per graphfuse variant, and numpy's results."""
    module = workload.build(**params)
    calls: dict[str, Callable[[], Any]] = {}
    compile_seconds: dict[str, float] = {}
    if workload.numpy is not None:
        numpy_fn = workload.numpy

        def run_numpy() -> list[np.ndarray]:
            return numpy_fn(inputs, **params)
    else:

        def run_numpy() -> list[np.ndarray]:
            return run_function(module, inputs)

    calls["numpy"] = run_numpy
    want = run_numpy()
    for label, level in (("graphfuse O0", 0), ("graphfuse fused", 2)):
        start = time.perf_counter()
        executable = graphfuse.compile(module, opt_level=level)
        compile_seconds[label] = time.perf_counter() - start
        outs = [np.empty(s, d) for s, d in executable.outputs]

        def run(executable: graphfuse.Executable = executable, outs: list[np.ndarray] = outs) -> list[np.ndarray]:
            return executable(*inputs, out=outs)

        calls[label] = run
    if use_torch and workload.torch is not None:
        import torch

        tensors = [torch.from_numpy(a) for a in inputs]
        torch_fn = workload.torch
        calls["torch eager"] = lambda: torch_fn(torch, tensors, **params)
        compiled = torch.compile(lambda *ts: torch_fn(torch, list(ts), **params))
        calls["torch.compile"] = lambda: compiled(*tensors)
    return calls, compile_seconds, want


def measure(calls: dict[str, Callable[[], Any]], n_calls: int, rounds: int, evict: Evictor) -> dict[str, float]:
    """Median seconds per variant, best of ``rounds``; variants interleaved within a round."""
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, call in calls.items():
            times = []
            for _ in range(n_calls):
                evict()
                times.append(_time(call))
            median = statistics.median(times)
            best[name] = min(best.get(name, median), median)
    return best


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=["full", "small"], default="full")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-evict", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--markdown", help="also write the table as markdown to this file")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(
            f"bench: error: unknown workload(s) {', '.join(unknown)} (known: {', '.join(WORKLOADS)})", file=sys.stderr
        )
        return 1
    use_torch = not args.no_torch and _torch_available()
    bandwidth = copy_bandwidth()
    evict = Evictor(not args.no_evict)
    header = (
        f"machine: {platform.processor() or platform.machine()}, numpy {np.__version__}, graphfuse "
        f"{graphfuse.__version__}; copy bandwidth {bandwidth:.1f} GB/s; "
        f"{'cold' if not args.no_evict else 'warm'} cache; median of {args.calls} calls, "
        f"best of {args.rounds} rounds"
    )
    print(header)
    rows = [
        "| workload | variant | ms | GB/s | % copy bw | GFLOP/s | vs O0 | vs numpy | max rel err |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rng = np.random.default_rng(0)
    for name in names:
        workload = WORKLOADS[name]
        params = workload.sizes[args.size]
        inputs = workload.inputs(rng, **params)
        calls, compile_seconds, want = variants(workload, params, inputs, use_torch)
        errors = {label: max_rel_error(want, [np.asarray(o) for o in call()]) for label, call in calls.items()}
        seconds = measure(calls, args.calls, args.rounds, evict)
        traffic = workload.traffic(**params)
        flops = workload.flops(**params)
        shape = ", ".join(f"{k}={v}" for k, v in params.items())
        print(
            f"\n{workload.title} ({shape}; {traffic / 1e6:.0f} MB moved"
            + (f", {flops / 1e9:.1f} GFLOP" if flops else "")
            + "; compile "
            + ", ".join(f"{k} {v:.2f} s" for k, v in compile_seconds.items())
            + ")"
        )
        for label, t in seconds.items():
            gbs = traffic / t / 1e9
            gflops = f"{flops / t / 1e9:.0f}" if flops else ""
            vs_o0 = seconds["graphfuse O0"] / t
            vs_numpy = seconds["numpy"] / t
            print(
                f"  {label:<16} {t * 1e3:9.2f} ms {gbs:7.1f} GB/s {100 * gbs / bandwidth:5.0f}% "
                f"{gflops:>6}{' GFLOP/s' if flops else ''}  x{vs_o0:5.2f} vs O0  x{vs_numpy:5.2f} vs numpy  "
                f"err {errors[label]:.1e}"
            )
            rows.append(
                f"| {workload.title} | {label} | {t * 1e3:.2f} | {gbs:.1f} | {100 * gbs / bandwidth:.0f}% | "
                f"{gflops} | {vs_o0:.2f}x | {vs_numpy:.2f}x | {errors[label]:.1e} |"
            )
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n\n" + "\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
