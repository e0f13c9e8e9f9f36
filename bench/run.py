"""`make bench`: graphfuse fused and unfused beside numpy, torch eager, torch.compile and IREE, in one run.

    python -m bench.run [--size full|small|odd] [--shapes full|small|odd|FILE.json] [--workloads a,b]
                        [--peers numpy,o0,1t,torch,compile,iree] [--calls N] [--rounds R] [--no-evict]
                        [--default-malloc] [--stream-mib M] [--markdown FILE]

Method (see docs/performance.md): fp32 (bf16 or int8 where a workload says so), the same inputs (fixed seed) for every
variant; interleaved rounds (each round times every variant in turn); a cold
cache before every timed call (2 threads read a buffer twice the LLC, at least
256 MiB) unless ``--no-evict``; per variant the median of ``--calls`` calls,
best of ``--rounds`` rounds.  graphfuse writes into output buffers allocated
once (``out=``); the peers allocate their outputs as they normally do.  The
machine's limits are measured in the same run: a streaming-store triad on 1 and
2 threads (bench/stream.c, built with gcc), numpy's 2048^3 fp32 matmul and the
arithmetic peaks (bench/peaks.c: loops of f32 FMAs, bf16 and int8 dot products, as
the CPU has them); the triad again in every workload's interleaved rounds.  A
bf16 (int8) workload's "% matmul peak" is of the bf16 (int8) dot loop's figure.
IREE runs in a child process under the peers venv (``make bench-peers-setup``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

import graphfuse
from bench import machine, models
from bench.workloads import WORKLOADS, Workload
from graphfuse.dialect.interpreter import run_function
from graphfuse.lowering.host import last_level_cache_bytes

REPO = Path(__file__).resolve().parent.parent
PEERS_VENV = REPO / ".venv-peers"
IREE_HINT = "not installed (make bench-peers-setup)"
FUSED, O0, ONE_THREAD = "graphfuse fused", "graphfuse O0", "graphfuse fused 1t"
#: The instruction each peak loop times (bench/peaks.c)
PEAK_NAMES = {"f32": "vfmadd231ps", "bf16": "vdpbf16ps", "int8": "vpdpbusd"}
#: the streaming-store triad timed in each workload's rounds, by thread count
TRIAD = {1: "stream triad 1t", 2: "stream triad 2t"}
TORCH, COMPILE, IREE = "torch eager", "torch.compile", "IREE"
#: --peers name -> variant label (graphfuse fused always runs)
PEER_LABELS = {"numpy": "numpy", "o0": O0, "1t": ONE_THREAD, "torch": TORCH, "compile": COMPILE, "iree": IREE}
RIVALS = (TORCH, COMPILE, IREE)


class Variant:
    """One way of running a workload: timed calls (evicting first) and its outputs for the error check."""

    def __init__(self, call: Callable[[], Any], to_numpy: Callable[[Any], list[np.ndarray]]):
        self.call = call
        self.to_numpy = to_numpy

    def outputs(self) -> list[np.ndarray]:
        return self.to_numpy(self.call())

    def times(self, calls: int, evict: machine.Evictor) -> list[float]:
        out = []
        for _ in range(calls):
            evict()
            start = time.perf_counter()
            result = self.call()
            out.append(time.perf_counter() - start)
            del result  # freed before the next call, so an allocating peer can reuse the memory
        return out


class TriadVariant(Variant):
    """The streaming triad timed among a workload's variants: no eviction (its arrays exceed the caches), no
    outputs to check."""

    def __init__(self, run: Callable[[], object]):
        super().__init__(run, lambda _: [])

    def times(self, calls: int, evict: machine.Evictor) -> list[float]:
        return super().times(calls, _NO_EVICTION)


_NO_EVICTION = machine.Evictor(False, 0)


class IreeChild:
    """The bench/iree_peer.py process under the peers venv, kept for the whole run."""

    def __init__(self, python: Path, lib_path: str | None, evict: machine.Evictor, reuse_memory: bool, workdir: str):
        # The child runs without graphfuse (the peers venv), so it evicts as many bytes as this process does.
        env = dict(os.environ, PYTHONPATH=str(REPO), BENCH_EVICT="1" if evict.enabled else "0")
        env["BENCH_EVICT_BYTES"] = str(evict.nbytes)
        env["BENCH_REUSE_MEMORY"] = "1" if reuse_memory else "0"
        env["OPENBLAS_NUM_THREADS"] = "1"  # numpy is only a loader there
        if lib_path:
            env["BENCH_STREAM_LIB"] = lib_path
        self.workdir = workdir
        self.log = open(os.path.join(workdir, "iree.log"), "w")  # closed in close()
        self.proc = subprocess.Popen(
            [str(python), "-m", "bench.iree_peer"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"IREE peer exited (log: {self.log.name})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def variant(self, workload: Workload, params: dict[str, int], inputs: list[np.ndarray]) -> Variant:
        """Export the workload's torch function, hand it and the inputs to the child, compile there."""
        import torch

        torch_fn = workload.torch
        assert torch_fn is not None

        class Program(torch.nn.Module):
            def forward(self, *xs: Any) -> tuple[Any, ...]:
                return tuple(torch_fn(torch, list(xs), **params))

        exported = torch.export.export(Program(), tuple(torch.from_numpy(a) for a in inputs))
        program = os.path.join(self.workdir, "program.pt2")
        torch.export.save(exported, program)
        paths = []
        for i, a in enumerate(inputs):
            paths.append(os.path.join(self.workdir, f"in{i}.npy"))
            np.save(paths[-1], a)
        self.ask(cmd="load", program=program, inputs=paths)

        def outputs() -> list[np.ndarray]:
            count = self.ask(cmd="output", directory=self.workdir)["outputs"]
            return [np.load(os.path.join(self.workdir, f"out{i}.npy")) for i in range(count)]

        variant = Variant(lambda: None, lambda _: [])
        variant.outputs = outputs  # type: ignore[method-assign]
        variant.times = lambda calls, evict: self.ask(cmd="time", calls=calls)["times"]  # type: ignore[method-assign]
        return variant

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.ask(cmd="quit")
            except (RuntimeError, BrokenPipeError, ValueError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def iree_status(python: Path) -> str | None:
    """None when the peers venv can import IREE's compiler and runtime, else what to do about it."""
    if not python.exists():
        return IREE_HINT
    probe = subprocess.run(
        [str(python), "-c", "import iree.compiler.extras.fx_importer, iree.runtime, torch"],
        capture_output=True,
        text=True,
    )
    return None if probe.returncode == 0 else IREE_HINT


def failure_note(error: Exception) -> str:
    """One line for a variant that failed (a compiler's multi-line diagnostics would break the table)."""
    return " ".join(f"failed: {type(error).__name__}: {error}".split())[:160]


def max_rel_error(want: list[np.ndarray], got: list[np.ndarray]) -> float:
    """Largest |got - want| relative to the largest |want|, over all outputs."""
    if len(want) != len(got):
        raise ValueError(f"{len(got)} outputs, numpy has {len(want)}")
    worst = 0.0
    for w, g in zip(want, got, strict=True):
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        if w64.shape != g64.shape:
            raise ValueError(f"shape {g64.shape}, numpy has {w64.shape}")
        scale = max(float(np.abs(w64).max()), 1e-30)
        worst = max(worst, float(np.abs(w64 - g64).max()) / scale)
    return worst


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def torch_reference(workload: Workload, params: dict[str, int], inputs: list[np.ndarray]) -> list[np.ndarray]:
    """torch eager's outputs: the reference of a real model (its own framework, fp32)."""
    import torch

    assert workload.torch is not None
    with torch.inference_mode():
        return _as_list(workload.torch(torch, [as_tensor(torch, a) for a in inputs], **params))


def as_tensor(torch: Any, array: np.ndarray) -> Any:
    """A tensor over ``array``'s memory; an ml_dtypes.bfloat16 array as a bf16 tensor (its bits)."""
    if array.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _as_list(result: Any) -> list[np.ndarray]:
    items = result if isinstance(result, (list, tuple)) else [result]
    out = []
    for item in items:
        if not hasattr(item, "detach"):
            out.append(np.asarray(item))
            continue
        import torch

        item = item.detach()
        # bf16 has no numpy type: its bits as ml_dtypes.bfloat16
        out.append(item.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if item.dtype == torch.bfloat16
                   else item.numpy())
    return out


@dataclass
class Result:
    workload: Workload
    params: dict[str, int]
    seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)
    #: variant -> why it has no time ("n/a", "not installed ...", "failed: ...")
    notes: dict[str, str] = field(default_factory=dict)
    compile_seconds: dict[str, float] = field(default_factory=dict)
    #: GB/s of the triad timed in this workload's rounds, by thread count
    bandwidth: dict[int, float] = field(default_factory=dict)

    def stream_limit(self, limits: machine.Limits) -> float:
        """The 2-thread bandwidth "% stream bw" divides by: the higher of the run's first and this workload's
        triad (a drop of the machine's bandwidth during the workload does not raise its percentages)."""
        return max(limits.bandwidth[2], self.bandwidth.get(2, 0.0))

    def bandwidth_ratio(self, limits: machine.Limits) -> float:
        """The triad's 2-thread / 1-thread bandwidth, from this workload's rounds when they timed it."""
        if self.bandwidth.get(1) and self.bandwidth.get(2):
            return self.bandwidth[2] / self.bandwidth[1]
        return limits.bw_ratio


def build_variants(
    workload: Workload,
    params: dict[str, int],
    inputs: list[np.ndarray],
    labels: list[str],
    iree: IreeChild | str | None,
    result: Result,
) -> dict[str, Variant]:
    """label -> Variant, in table order; what cannot run is noted in ``result.notes``."""
    module = workload.build(**params)
    found: dict[str, Variant] = {}
    if workload.numpy is not None:
        numpy_fn = workload.numpy
        found["numpy"] = Variant(lambda: numpy_fn(inputs, **params), _as_list)
    elif workload.model is None:  # the reference interpreter evaluates each graph op with numpy
        found["numpy"] = Variant(lambda: run_function(module, inputs), _as_list)
    # a real model's reference is torch eager (torch_reference)
    gf = {O0: (0, machine.THREADS), FUSED: (2, machine.THREADS), ONE_THREAD: (2, 1)}
    for label in labels:
        try:
            if label in gf:
                level, threads = gf[label]
                start = time.perf_counter()
                executable = graphfuse.compile(module, opt_level=level, num_threads=threads)
                result.compile_seconds[label] = time.perf_counter() - start
                outs = executable.empty_outputs()

                def run(executable: graphfuse.Executable = executable, outs: list[np.ndarray] = outs) -> Any:
                    return executable(*inputs, out=outs)

                found[label] = Variant(run, _as_list)
            elif label in (TORCH, COMPILE):
                if workload.torch is None:
                    result.notes[label] = "n/a"
                    continue
                import torch

                torch.set_num_threads(machine.THREADS)
                tensors = [as_tensor(torch, a) for a in inputs]
                torch_fn = workload.torch

                def eager(*ts: Any, torch_fn: Callable[..., Any] = torch_fn) -> Any:
                    return torch_fn(torch, list(ts), **params)

                fn = eager if label == TORCH else torch.compile(eager)

                def call(fn: Callable[..., Any] = fn, tensors: list[Any] = tensors) -> Any:
                    with torch.inference_mode():
                        return fn(*tensors)

                start = time.perf_counter()
                call()  # torch.compile compiles on the first call
                result.compile_seconds[label] = time.perf_counter() - start
                found[label] = Variant(call, _as_list)
            elif label == IREE:
                if workload.torch is None or workload.dtype != "f32":
                    result.notes[label] = "n/a"
                elif not isinstance(iree, IreeChild):
                    result.notes[label] = iree or IREE_HINT
                else:
                    start = time.perf_counter()
                    found[label] = iree.variant(workload, params, inputs)
                    result.compile_seconds[label] = time.perf_counter() - start
        except Exception as e:  # one failing peer must not stop the table
            result.notes[label] = failure_note(e)
    return found


#: Seconds between two variants' calls.  Thread pools keep their workers spinning after a call (OpenBLAS
#: behind numpy, torch's OpenMP, graphfuse's: Intel OpenMP's KMP_BLOCKTIME is 200 ms), and a variant timed
#: while they spin shares its cores with them: graphfuse's convolution right after numpy's reference took its
#: one-thread time (1.3 ms against 0.7).
SETTLE_SECONDS = 0.3


def measure(variants: dict[str, Variant], calls: int, rounds: int, evict: machine.Evictor, result: Result) -> None:
    """Median seconds per variant, best of ``rounds``; every round runs every variant in turn, each after
    :data:`SETTLE_SECONDS` of quiet."""
    gc.disable()
    try:
        for _ in range(rounds):
            for label, variant in list(variants.items()):
                time.sleep(SETTLE_SECONDS)
                try:
                    median = statistics.median(variant.times(calls, evict))
                except Exception as e:
                    result.notes[label] = failure_note(e)
                    del variants[label]
                    continue
                result.seconds[label] = min(result.seconds.get(label, median), median)
    finally:
        gc.enable()


def run_workload(
    workload: Workload,
    params: dict[str, int],
    labels: list[str],
    iree: IreeChild | str | None,
    calls: int,
    rounds: int,
    evict: machine.Evictor,
    triad: machine.Triad | None = None,
) -> Result:
    result = Result(workload, params)
    inputs = workload.inputs(np.random.default_rng(0), **params)
    variants = build_variants(workload, params, inputs, labels, iree, result)
    want = variants["numpy"].outputs() if "numpy" in variants else torch_reference(workload, params, inputs)
    for label, variant in list(variants.items()):
        try:
            result.errors[label] = max_rel_error(want, variant.outputs())
            variant.outputs()  # one more warm-up call
        except Exception as e:
            result.notes[label] = failure_note(e)
            del variants[label]
    if triad is not None:
        for threads, label in TRIAD.items():
            variants[label] = TriadVariant(triad.runs[threads])
    measure(variants, calls, rounds, evict, result)
    if triad is not None:
        timed = {t: label for t, label in TRIAD.items() if label in result.seconds}
        result.bandwidth = {t: triad.gbs(result.seconds[label]) for t, label in timed.items()}
    return result


# ------------------------------------------------------------------------------------------------ report


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "" if value is None else f"{value:{spec}}{suffix}"


def variant_rows(r: Result, labels: list[str], limits: machine.Limits) -> list[list[str]]:
    traffic, flops = r.workload.traffic(**r.params), r.workload.flops(**r.params)
    peak = peak_gflops(r.workload, limits)
    rows = []
    for label in ["numpy", *labels]:
        if label in r.seconds:
            t = r.seconds[label]
            gbs = traffic / t / 1e9
            gflops = flops / t / 1e9 if flops else None
            rows.append(
                [
                    label,
                    f"{t * 1e3:.2f}",
                    f"{gbs:.1f}",
                    f"{100 * gbs / r.stream_limit(limits):.0f}%",
                    _fmt(gflops, ".0f"),
                    _fmt(100 * gflops / peak if gflops and peak else None, ".0f", "%"),
                    f"{r.errors[label]:.1e}",
                ]
            )
        elif label in r.notes:
            rows.append([label, r.notes[label], "", "", "", "", ""])
    for threads, gbs in sorted(r.bandwidth.items()):
        label = TRIAD[threads]
        rows.append([label, f"{r.seconds[label] * 1e3:.2f}", f"{gbs:.1f}",
                     f"{100 * gbs / r.stream_limit(limits):.0f}%", "", "", ""])
    return rows


def peak_gflops(workload: Workload, limits: machine.Limits) -> float | None:
    """What "% matmul peak" divides by: numpy's f32 matmul for f32 workloads, the bf16 or int8 dot loop's figure
    for bf16 and int8 ones (None where the machine has no such dot product)."""
    return limits.matmul_gflops if workload.dtype == "f32" else limits.peaks.get(workload.dtype)


def summary_row(r: Result, limits: machine.Limits) -> list[str]:
    s = r.seconds
    fused = s.get(FUSED)
    rivals = {k: s[k] for k in RIVALS if k in s}
    best = min(rivals, key=rivals.__getitem__) if rivals else None
    ratio = f"{fused / rivals[best]:.2f} ({best})" if fused and best else "-"
    vs_o0 = f"{s[O0] / fused:.2f}x" if fused and O0 in s else "-"
    threads = f"{s[ONE_THREAD] / fused:.2f}x" if fused and ONE_THREAD in s else "-"
    return [
        r.workload.title,
        _fmt(fused and fused * 1e3, ".2f") or "-",
        ratio,
        vs_o0,
        threads,
        f"{r.bandwidth_ratio(limits):.2f}x",
    ]


def shape_text(params: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def markdown_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


VARIANT_HEAD = ["variant", "ms", "GB/s", "% stream bw", "GFLOP/s", "% matmul peak", "max rel err"]
SUMMARY_HEAD = ["workload", "fused ms", "fused / best peer", "fused vs O0", "1t -> 2t graphfuse", "1 -> 2 core bw"]


def header_lines(args: argparse.Namespace, limits: machine.Limits, torch_version: str) -> list[str]:
    model, flags = machine.cpu_info()
    return [
        f"date {machine.today()}, commit {machine.commit()}",
        f"CPU: {model} ({os.cpu_count()} logical CPUs; flags: {', '.join(flags) or 'none of avx512f/avx2/fma'}), "
        f"{machine.THREADS} threads for every multi-threaded variant",
        f"numpy {np.__version__}, torch {torch_version}, graphfuse {graphfuse.__version__}",
        f"bandwidth ({limits.bandwidth_method}, {args.stream_mib} MiB arrays): 1 thread "
        f"{limits.bandwidth[1]:.1f} GB/s, 2 threads {limits.bandwidth[2]:.1f} GB/s (ratio {limits.bw_ratio:.2f}); "
        f"fp32 matmul 2048^3 (numpy) {limits.matmul_gflops:.0f} GFLOP/s; peak loops on {machine.THREADS} threads: "
        + (", ".join(f"{kind} {PEAK_NAMES[kind]} {value:.0f} G{'OP' if kind == 'int8' else 'FLOP'}/s"
                     for kind, value in limits.peaks.items()) or "not measured"),
        f"{'cold cache' if not args.no_evict else 'warm cache'}; median of {args.calls} calls, best of "
        f"{args.rounds} interleaved rounds; shapes: {args.shapes}; "
        f"{'glibc keeps freed memory' if not args.default_malloc else 'default malloc'}",
    ]


def load_shapes(spec: str, names: list[str]) -> dict[str, dict[str, int]]:
    """Per workload its parameters: a size name of bench/workloads.py or a JSON file
    ``{"workload": {"param": value}}`` (workloads it leaves out keep their full size)."""
    if spec in ("full", "small", "odd"):
        return {n: WORKLOADS[n].sizes[spec] for n in names}
    with open(spec) as f:
        overrides = json.load(f)
    return {n: {**WORKLOADS[n].sizes["full"], **overrides.get(n, {})} for n in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=["full", "small", "odd"], default=None, help="same as --shapes")
    parser.add_argument("--shapes", default="full", help="full, small, odd (non-power-of-two) or a JSON file")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--peers", default=",".join(PEER_LABELS), help=f"subset of {','.join(PEER_LABELS)}")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-evict", action="store_true")
    parser.add_argument("--no-torch", action="store_true", help="leave out torch eager and torch.compile")
    parser.add_argument("--default-malloc", action="store_true", help="leave glibc's freed-memory policy alone")
    parser.add_argument("--stream-mib", type=int, default=256, help="MiB per array of the bandwidth triad")
    parser.add_argument("--peers-python", default=str(PEERS_VENV / "bin" / "python"), help="python with IREE")
    parser.add_argument("--markdown", help="also write the table as markdown to this file")
    args = parser.parse_args(argv)
    if args.size:
        args.shapes = args.size
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = [n for n in names if n not in WORKLOADS] + [p for p in peers if p not in PEER_LABELS]
    if unknown:
        print(
            f"bench: error: unknown workload(s)/peer(s) {', '.join(unknown)} (workloads: {', '.join(WORKLOADS)}; "
            f"peers: {', '.join(PEER_LABELS)})",
            file=sys.stderr,
        )
        return 1
    shapes = load_shapes(args.shapes, names)
    have_torch = _torch_available()
    if args.no_torch or not have_torch:
        peers = [p for p in peers if p not in ("torch", "compile", "iree")]
    labels = [FUSED] + [PEER_LABELS[p] for p in PEER_LABELS if p in peers and p != "numpy"]
    if not args.default_malloc:
        machine.reuse_freed_memory()
    torch_version = "not installed"
    if have_torch:
        import torch

        torch_version = torch.__version__
    with tempfile.TemporaryDirectory(prefix="bench_") as workdir:
        lib, how = machine.build_stream_lib(workdir)
        triad = machine.Triad(lib, how, args.stream_mib)
        limits = machine.measure_limits(triad, lib=lib)
        evict = machine.Evictor(not args.no_evict, machine.evict_bytes(last_level_cache_bytes()), lib)
        iree: IreeChild | str | None = None
        if IREE in labels:
            python = Path(args.peers_python)
            iree = iree_status(python)
            if iree is None:
                lib_path = os.path.join(workdir, "libbenchstream.so") if lib is not None else None
                iree = IreeChild(python, lib_path, evict, not args.default_malloc, workdir)
        header = header_lines(args, limits, torch_version)
        print("\n".join(header), flush=True)
        out = ["# graphfuse vs peers\n", *(line + "  " for line in header), ""]
        results = []
        try:
            for name in names:
                missing = models.available(WORKLOADS[name].model) if WORKLOADS[name].model else None
                if missing:
                    print(f"\n{WORKLOADS[name].title}: not run: {missing}")
                    out.append(f"\n## {WORKLOADS[name].title}: not run: {missing}")
                    continue
                r = run_workload(WORKLOADS[name], shapes[name], labels, iree, args.calls, args.rounds, evict, triad)
                results.append(r)
                traffic, flops = r.workload.traffic(**r.params), r.workload.flops(**r.params)
                title = (
                    f"{r.workload.title} ({shape_text(r.params)}; {traffic / 1e6:.0f} MB minimal"
                    + (f", {flops / 1e9:.1f} GFLOP" if flops else "")
                    + "; compile "
                    + ", ".join(f"{k} {v:.2f} s" for k, v in r.compile_seconds.items())
                    + ")"
                )
                rows = variant_rows(r, labels, limits)
                print(f"\n{title}")
                for row in rows:
                    print(f"  {row[0]:<20} " + "  ".join(f"{c:>9}" for c in row[1:]))
                out += [f"\n## {title}\n", *markdown_table(VARIANT_HEAD, rows)]
        finally:
            if isinstance(iree, IreeChild):
                iree.close()
    summary = [summary_row(r, limits) for r in results]
    widths = [max(len(row[i]) for row in [SUMMARY_HEAD, *summary]) for i in range(len(SUMMARY_HEAD))]
    print()
    for row in [SUMMARY_HEAD, *summary]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(
        "fused / best peer: graphfuse fused time over the fastest of torch eager, torch.compile and IREE "
        "(<= 1.00: graphfuse at least as fast)"
    )
    out += ["\n## Summary\n", *markdown_table(SUMMARY_HEAD, summary)]
    out.append(
        "\nfused / best peer = graphfuse fused time / the fastest of torch eager, torch.compile and IREE "
        "(<= 1.00: graphfuse at least as fast). % stream bw = effective GB/s (minimal bytes / time) over the "
        "2-thread streaming-store triad (the higher of the run's first and the workload's own). "
        "max rel err = largest |variant - numpy| / largest |numpy| (for the real models: against torch eager)."
    )
    if args.markdown:
        Path(args.markdown).write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
