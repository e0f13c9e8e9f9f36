"""Compile-time and memory scaling: graphs of 1k to 50k ops compiled all the way to CPU code.

    python -m bench.compile_scale [--families chain,random,concat] [--sizes 1000,5000,20000,50000]
                                  [--memory-elements 200000000] [--seed 0] [--timeout S]
                                  [--profile FAMILY:SIZE] [--markdown FILE]

Every case runs in a subprocess of its own, which generates the graph as MLIR
text (in time linear in its size), compiles it with ``graphfuse.compile``
(the default pipeline, opt level 2: graph pipeline, lowering to linalg,
bufferization, LLVM, ExecutionEngine, exactly what ``graphfuse-run`` does)
and calls it once on random inputs.  The parent reads the case's peak RSS
from ``wait4`` (the whole process, imports included; the RSS of a process
that only imports graphfuse is measured too and subtracted for the "per op"
column).

Graph families (:data:`FAMILIES`):

- ``chain``: one elementwise chain ``x -> op -> op -> ...`` whose binary ops
  also read a weight argument; a mix of ops graph-kernel fusion clusters and
  ops it does not (``relu``), so the chain becomes many kernels;
- ``random``: a random DAG, mostly elementwise with some row reductions:
  operands are recent values, values not used yet, or any older value (value
  reuse, diamonds, fan-in and fan-out), reductions broadcast back into rows;
- ``layers``: stacked transformer/MLP-like layers (norms, matmuls with bias,
  activations, softmax gates, reshapes; weights are arguments);
- ``concat``: one ``graph.concat`` of ``size - 1`` small blocks, each a unary op of an argument (torch.cat of a
  long list).

Each case is compiled twice, each time in a new process: cold (the run keeps a compile cache of its own, empty
at first), then warm, loading the first compile's code from that cache (``--no-warm`` skips it).

The memory case (``--memory-elements N``, 0 to skip) runs ``graphfuse-run``
without ``--check`` on ``exp(x) + y`` over ``N`` f32 elements with random
inputs, and reports its peak RSS against the bytes of the inputs and the
output (target: at most 3.5x).  ``--profile FAMILY:SIZE`` prints a cProfile
of ``graphfuse.compile`` on one case (in this process) instead.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import os
import platform
import pstats
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.cold_cache import private_compile_cache

ROWS = 32
COLS = 64
#: seconds per case before it is stopped and reported as a timeout
DEFAULT_TIMEOUT = 1800.0


# --------------------------------------------------------------------------- graph text


class _Writer:
    """Emits graph ops as generic-form MLIR, one SSA value per result; arguments are added as needed."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.lines: list[str] = []
        self.ops = 0

    def arg(self, shape: tuple[int, ...]) -> str:
        self.args.append(_type(shape))
        return f"%arg{len(self.args) - 1}"

    def op(self, name: str, operands: list[tuple[str, tuple[int, ...]]], result: tuple[int, ...],
           attrs: str = "") -> str:
        value = f"%v{self.ops}"
        self.ops += 1
        names = ", ".join(v for v, _ in operands)
        types = ", ".join(_type(s) for _, s in operands)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f'    {value} = "graph.{name}"({names}){attr_text} : ({types}) -> {_type(result)}')
        return value

    def text(self, results: list[tuple[str, tuple[int, ...]]]) -> str:
        args = ", ".join(f"%arg{k}: {t}" for k, t in enumerate(self.args))
        types = ", ".join(_type(s) for _, s in results)
        body = "\n".join(self.lines)
        values = ", ".join(v for v, _ in results)
        return f"func.func @model({args}) -> ({types}) {{\n{body}\n    return {values} : {types}\n}}\n"


def _type(shape: tuple[int, ...]) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcasting of the shapes the generators use ([R, C], [R, 1], [C])."""
    a, b = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b, strict=True))


#: Unary ops of the chain and the random graphs: clustered by graph-kernel fusion (tanh, exp, neg, abs), expanded
#: into clustered ops (sigmoid), or left out of clusters (relu: a kernel boundary).
UNARY = ("tanh", "exp", "neg", "abs", "sigmoid", "relu")
BINARY = ("add", "mul", "sub", "maximum")


def chain(size: int, seed: int) -> tuple[str, int]:
    """An elementwise chain of ``size`` ops over [ROWS, COLS]; binary ops read a full or a row-vector weight."""
    rng = random.Random(seed)
    w = _Writer()
    full, row = (ROWS, COLS), (COLS,)
    x = w.arg(full)
    weights = [(w.arg(full), full), (w.arg(row), row)]
    for _ in range(size):
        if rng.random() < 0.5:
            x = w.op(rng.choice(UNARY), [(x, full)], full)
        else:
            x = w.op(rng.choice(BINARY), [(x, full), rng.choice(weights)], full)
    return w.text([(x, full)]), w.ops


def random_dag(size: int, seed: int) -> tuple[str, int]:
    """A random DAG of about ``size`` ops: mostly elementwise, some row reductions broadcast back.

    The first operand is a value nobody has read yet (most of the time), so
    few values are dead; the second is a recent value or, now and then, any
    older one (long edges: fan-out, diamonds).  The values left unread at the
    end are summed into the result, except for a few returned as they are.
    """
    rng = random.Random(seed)
    w = _Writer()
    full, col, vec = (ROWS, COLS), (ROWS, 1), (COLS,)
    values: list[tuple[str, tuple[int, ...]]] = [(w.arg(full), full) for _ in range(4)]
    values += [(w.arg(vec), vec) for _ in range(2)]
    unread = list(range(len(values)))
    is_unread = [True] * len(values)

    def take(index: int) -> tuple[str, tuple[int, ...]]:
        is_unread[index] = False
        return values[index]

    def pick_first() -> int:
        while unread and not is_unread[unread[-1]]:
            unread.pop()
        if unread and rng.random() < 0.7:
            return unread.pop(rng.randrange(max(0, len(unread) - 4), len(unread)))
        return pick_other()

    def pick_other() -> int:
        if rng.random() < 0.15:
            return rng.randrange(len(values))  # any older value
        return rng.randrange(max(0, len(values) - 12), len(values))

    def add(value: str, shape: tuple[int, ...]) -> None:
        values.append((value, shape))
        unread.append(len(values) - 1)
        is_unread.append(True)

    while w.ops < size - 8:
        roll = rng.random()
        first = pick_first()
        name, shape = values[first]
        if roll < 0.08 and shape == full:
            take(first)
            reduce = rng.choice(("reduce_sum", "reduce_max"))
            add(w.op(reduce, [(name, shape)], col, "axes = array<i64: 1>, keep_dims = true"), col)
        elif roll < 0.45:
            take(first)
            add(w.op(rng.choice(UNARY), [(name, shape)], shape), shape)
        else:
            second = pick_other()
            a, b = take(first), take(second)
            add(w.op(rng.choice(BINARY), [a, b], _broadcast(a[1], b[1])), _broadcast(a[1], b[1]))
    leftover = [k for k in range(len(values)) if is_unread[k] and k >= 6]
    results = [values[k] for k in leftover[-3:]]
    total = values[-1]
    for k in leftover[:-3]:
        total = (w.op("add", [total, values[k]], _broadcast(total[1], values[k][1])),
                 _broadcast(total[1], values[k][1]))
    results.append(total)
    return w.text(results), w.ops


SEQ = 8
MODEL = 64
WIDTHS = (32, 48, 64, 96, 128)


def _linear(w: _Writer, x: str, d_in: int, d_out: int) -> str:
    """x @ W^T + b with W stored [out, in], as exporters write nn.Linear."""
    weight = w.arg((d_out, d_in))
    bias = w.arg((d_out,))
    transposed = w.op("transpose", [(weight, (d_out, d_in))], (d_in, d_out), "perm = array<i64: 1, 0>")
    product = w.op("matmul", [(x, (SEQ, d_in)), (transposed, (d_in, d_out))], (SEQ, d_out))
    return w.op("bias_add", [(product, (SEQ, d_out)), (bias, (d_out,))], (SEQ, d_out))


def _activation(w: _Writer, x: str, width: int, kind: int) -> str:
    shape = (SEQ, width)
    if kind == 0:
        return w.op("gelu", [(x, shape)], shape, 'approximate = "tanh"')
    if kind == 1:
        return w.op("relu", [(x, shape)], shape)
    gate = w.op("sigmoid", [(x, shape)], shape)
    return w.op("mul", [(x, shape), (gate, shape)], shape)


def _layer(w: _Writer, rng: random.Random, x: str, branch: str) -> tuple[str, str]:
    """One pre-norm block: residual add, norm, MLP with a random hidden width, elementwise tail, optional gate."""
    shape = (SEQ, MODEL)
    residual = w.op("add", [(x, shape), (branch, shape)], shape)
    gamma = w.arg((MODEL,))
    if rng.random() < 0.5:
        beta = w.arg((MODEL,))
        normed = w.op("layer_norm", [(residual, shape), (gamma, (MODEL,)), (beta, (MODEL,))], shape,
                      "begin_norm_axis = 1 : i64, epsilon = 1.0e-05 : f32")
    else:
        normed = w.op("rms_norm", [(residual, shape), (gamma, (MODEL,))], shape, "epsilon = 1.0e-06 : f32")
    hidden = rng.choice(WIDTHS)
    h = _activation(w, _linear(w, normed, MODEL, hidden), hidden, rng.randrange(3))
    hshape = (SEQ, hidden)
    scale = w.arg((hidden,))
    scaled = w.op("mul", [(h, hshape), (scale, (hidden,))], hshape)
    h = w.op("add", [(scaled, hshape), (h, hshape)], hshape)
    if rng.random() < 0.5:
        h = w.op("tanh", [(h, hshape)], hshape)
    out = _linear(w, h, hidden, MODEL)
    if rng.random() < 0.3:
        gate = w.op("softmax", [(out, shape)], shape, "axis = -1 : i64")
        out = w.op("mul", [(out, shape), (gate, shape)], shape)
    if rng.random() < 0.3:
        split = w.op("reshape", [(out, shape)], (SEQ, 4, MODEL // 4))
        out = w.op("reshape", [(split, (SEQ, 4, MODEL // 4))], shape)
    return residual, out


def layers(size: int, seed: int) -> tuple[str, int]:
    """Stacked transformer/MLP-like layers, about ``size`` ops."""
    rng = random.Random(seed)
    w = _Writer()
    shape = (SEQ, MODEL)
    x = w.arg(shape)
    branch = w.op("neg", [(x, shape)], shape)
    while w.ops < size - 2:
        x, branch = _layer(w, rng, x, branch)
    result = w.op("add", [(x, shape), (branch, shape)], shape)
    return w.text([(result, shape)]), w.ops


def concat(size: int, seed: int) -> tuple[str, int]:
    """One ``graph.concat`` of ``size - 1`` operands (torch.cat of a long list): each a small [ROWS, 4] block made
    by a unary op of an argument of its own."""
    rng = random.Random(seed)
    w = _Writer()
    block = (ROWS, 4)
    parts = [(w.op(rng.choice(UNARY), [(w.arg(block), block)], block), block) for _ in range(max(size - 1, 1))]
    result = (ROWS, 4 * len(parts))
    return w.text([(w.op("concat", parts, result, "axis = 1 : i64"), result)]), w.ops


FAMILIES: dict[str, Callable[[int, int], tuple[str, int]]] = {"chain": chain, "random": random_dag, "layers": layers,
                                                             "concat": concat}


def exp_add(elements: int) -> str:
    t = f"tensor<{elements}xf32>"
    return (f"func.func @exp_add(%x: {t}, %y: {t}) -> {t} {{\n"
            f'    %e = "graph.exp"(%x) : ({t}) -> {t}\n'
            f'    %r = "graph.add"(%e, %y) : ({t}, {t}) -> {t}\n'
            f"    return %r : {t}\n}}\n")


# --------------------------------------------------------------------------- one case, in a subprocess


def _worker(family: str, size: int, seed: int) -> dict:
    """Compile one case in this process; the stage times, the op and kernel counts."""
    import numpy as np

    import graphfuse

    if family == "baseline":
        return {}
    text, ops = FAMILIES[family](size, seed)
    start = time.perf_counter()
    executable = graphfuse.compile(text)
    seconds = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(shape, dtype=np.float32) for shape, _ in executable.inputs]
    start = time.perf_counter()
    outputs = executable(*inputs)
    call_s = time.perf_counter() - start
    stages = getattr(executable, "timings", {})  # absent before the stage timings existed (measuring old commits)
    digest = hashlib.sha256(b"".join(output.tobytes() for output in outputs)).hexdigest()
    return {"ops": ops, "kernels": executable.kernels, "compile_s": seconds, "stages": stages, "call_s": call_s,
            "from_cache": getattr(executable, "from_cache", False), "digest": digest}


@dataclass
class Case:
    family: str
    size: int
    ops: int = 0
    kernels: int = 0
    compile_s: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)
    peak_rss: int = 0  # bytes
    #: CPU seconds of the whole process (user + system; other jobs on a shared machine disturb it less than wall time)
    cpu_s: float = 0.0
    error: str = ""
    from_cache: bool = False
    #: a SHA-256 of the outputs of the call on the case's random inputs
    digest: str = ""
    #: the same case again in a new process, which loads the first one's code from the compile cache: its compile
    #: seconds, and whether it was loaded and computed the same bits ("" when not run)
    warm_s: float | None = None
    warm: str = ""

    def per_op_ms(self) -> float:
        return 1000 * self.compile_s / self.ops

    def per_op_kb(self, baseline: int) -> float:
        return (self.peak_rss - baseline) / 1024 / self.ops


def _run_measured(command: list[str], timeout: float, environment: dict[str, str] | None = None
                  ) -> tuple[int, str, int, float]:
    """Run ``command`` (with ``environment`` added to this process's); its exit status, its output, its peak RSS in
    bytes and its CPU seconds (from wait4)."""
    with tempfile.TemporaryFile("w+") as out:
        # A session of its own: a timeout stops the worker and every tool it started (the code generator's).
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True,
                                   env={**os.environ, **(environment or {})}, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(process.pid, 0)
                status = -1
                break
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status) if status != -1 else -1
        out.seek(0)
        return process.returncode, out.read(), usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def measure(family: str, size: int, seed: int, timeout: float, warm: bool = False) -> Case:
    """One case compiled in a process of its own (cold: the compile cache the run keeps starts without it); with
    ``warm``, then again in another, which loads it from that cache."""
    case = _measure_once(family, size, seed, timeout)
    if warm and not case.error:
        again = _measure_once(family, size, seed, timeout)
        if again.error:
            case.warm = f"failed: {again.error}"
        else:
            case.warm_s = again.compile_s
            case.warm = ("loaded" if again.from_cache else "compiled again") + \
                ("" if again.digest == case.digest else ", other outputs")
    return case


def _measure_once(family: str, size: int, seed: int, timeout: float) -> Case:
    command = [sys.executable, "-m", "bench.compile_scale", "--worker", family, str(size), str(seed)]
    status, output, peak, cpu = _run_measured(command, timeout)
    case = Case(family, size, peak_rss=peak, cpu_s=cpu)
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    if status != 0 or not lines:
        case.error = "timeout" if status == -1 else (output.strip().splitlines() or ["failed"])[-1][:200]
        return case
    result = json.loads(lines[-1].removeprefix("RESULT "))
    for key, value in result.items():
        setattr(case, key, value)
    return case


@dataclass
class MemoryCase:
    elements: int
    data_bytes: int
    peak_rss: int = 0
    seconds: float = 0.0
    error: str = ""

    @property
    def ratio(self) -> float:
        return self.peak_rss / self.data_bytes


def measure_memory(elements: int, timeout: float) -> MemoryCase:
    """graphfuse-run (random inputs, no --check) on exp(x) + y over ``elements`` f32 values: peak RSS."""
    case = MemoryCase(elements, 3 * 4 * elements)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "exp_add.mlir"
        path.write_text(exp_add(elements))
        command = [sys.executable, "-m", "graphfuse.tools.graphfuse_run", str(path)]
        start = time.perf_counter()
        status, output, case.peak_rss, _ = _run_measured(command, timeout, {"GRAPHFUSE_CACHE": "off"})
        case.seconds = time.perf_counter() - start
    if status != 0:
        case.error = "timeout" if status == -1 else (output.strip().splitlines() or ["failed"])[-1][:200]
    return case


# --------------------------------------------------------------------------- report

STAGES = ("graph", "lowering", "bufferize", "llvm")


def table(cases: list[Case], baseline: Case, memory: MemoryCase | None) -> str:
    lines = [
        "| graph | ops | kernels | compile (s) | ms per op | process CPU (s) | graph pipeline (s) | lowering (s) "
        "| bufferize + to LLVM (s) | LLVM JIT (s) | peak RSS (MB) | KB per op | warm: new process (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in cases:
        if c.error:
            lines.append(f"| {c.family} | ~{c.size} | | {c.error} | | | | | | | {c.peak_rss / 2**20:.0f} | | |")
            continue
        stages = " | ".join(f"{c.stages[s]:.2f}" if s in c.stages else "-" for s in STAGES)
        warm = "-" if not c.warm else (f"{c.warm_s:.3f} ({c.warm})" if c.warm_s is not None else c.warm)
        lines.append(f"| {c.family} | {c.ops} | {c.kernels} | {c.compile_s:.2f} | {c.per_op_ms():.2f} | "
                     f"{c.cpu_s - baseline.cpu_s:.1f} | {stages} | {c.peak_rss / 2**20:.0f} | "
                     f"{c.per_op_kb(baseline.peak_rss):.1f} | {warm} |")
    lines.append("")
    lines.append(f"A process that only imports graphfuse: peak RSS {baseline.peak_rss / 2**20:.0f} MB, "
                 f"{baseline.cpu_s:.1f} s CPU (subtracted for KB per op and process CPU).")
    for family in dict.fromkeys(c.family for c in cases):
        done = [c for c in cases if c.family == family and not c.error]
        if len(done) > 1:
            first, last = done[0], done[-1]
            lines.append(f"Growth, {family}: ms per op at {last.ops} ops / at {first.ops} ops = "
                         f"{last.per_op_ms() / first.per_op_ms():.2f} (1.0 is linear).")
    if memory is not None:
        lines.append("")
        if memory.error:
            lines.append(f"Memory case: graphfuse-run exp(x) + y, {memory.elements} f32 elements: {memory.error}")
        else:
            net = (memory.peak_rss - baseline.peak_rss) / memory.data_bytes
            lines.append(f"Memory case: graphfuse-run exp(x) + y over {memory.elements:,} f32 elements (inputs + "
                         f"output {memory.data_bytes / 1e9:.2f} GB), no --check: peak RSS "
                         f"{memory.peak_rss / 1e9:.2f} GB = {memory.ratio:.2f}x inputs + output ({net:.2f}x without "
                         f"the imports' RSS; target <= 3.5x), {memory.seconds:.1f} s.")
    lines += ["", "Targets: " + "; ".join(_targets(cases, memory))]
    return "\n".join(lines)


#: (family, size, seconds): compile-time targets (cold)
TARGETS = (("chain", 5000, 5.0), ("random", 50000, 60.0), ("concat", 5000, 5.0))
#: the most the per-op cost may grow from the smallest case to the largest of a family
GROWTH_TARGET = 1.3


def _targets(cases: list[Case], memory: MemoryCase | None) -> list[str]:
    """The issue's targets, each with the figure measured (where this run has the case)."""
    out = []
    for family, size, limit in TARGETS:
        case = next((c for c in cases if c.family == family and c.size == size), None)
        if case is None:
            continue
        got = case.error or f"{case.compile_s:.1f} s, {'met' if case.compile_s < limit else 'missed'}"
        out.append(f"{family} of {size} ops < {limit:.0f} s: {got}")
    for family in dict.fromkeys(c.family for c in cases):
        done = [c for c in cases if c.family == family and not c.error]
        if len(done) > 1 and done[0].ops <= 1000 and done[-1].ops >= 50000:
            growth = done[-1].per_op_ms() / done[0].per_op_ms()
            out.append(f"{family}: per-op cost at {done[-1].ops} ops within {GROWTH_TARGET}x of {done[0].ops}: "
                       f"{growth:.2f}x, {'met' if growth <= GROWTH_TARGET else 'missed'}")
    if memory is not None and not memory.error:
        out.append(f"graphfuse-run peak <= 3.5x inputs + outputs: {memory.ratio:.2f}x, "
                   f"{'met' if memory.ratio <= 3.5 else 'missed'}")
    return out or ["none measured in this run"]


def profile(family: str, size: int, seed: int, top: int = 30) -> str:
    os.environ["GRAPHFUSE_CACHE"] = "off"  # a cold compile, whatever the user's cache holds
    import graphfuse

    text, ops = FAMILIES[family](size, seed)
    profiler = cProfile.Profile()
    profiler.enable()
    executable = graphfuse.compile(text)
    profiler.disable()
    out = io.StringIO()
    out.write(f"{family}, {ops} ops, {executable.kernels} kernels; stages (s): "
              + ", ".join(f"{k} {v:.2f}" for k, v in executable.timings.items()) + "\n")
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compile_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default="chain,random,concat",
                        help=f"comma-separated, of {', '.join(FAMILIES)}")
    parser.add_argument("--sizes", default="1000,5000,20000,50000", help="graph sizes in ops, comma-separated")
    parser.add_argument("--memory-elements", type=int, default=200_000_000,
                        help="elements of the exp + add memory case (0: skip it)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case")
    parser.add_argument("--profile", metavar="FAMILY:SIZE", help="print a cProfile of compiling one case")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--warm", action=argparse.BooleanOptionalAction, default=True,
                        help="compile each case again in a new process, from the compile cache")
    parser.add_argument("--worker", nargs=3, metavar=("FAMILY", "SIZE", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        family, size, seed = args.worker
        print("RESULT " + json.dumps(_worker(family, int(size), int(seed))), flush=True)
        return 0
    if args.profile:
        family, _, size = args.profile.partition(":")
        print(profile(family, int(size), args.seed))
        return 0
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    # The cases share a compile cache of the run's own, empty at first: the first compile of each is cold.
    with private_compile_cache("graphfuse-compile-scale-"):
        baseline = measure("baseline", 0, 0, args.timeout)
        cases = []
        for family in families:
            for size in sizes:
                case = measure(family, size, args.seed, args.timeout, args.warm)
                cases.append(case)
                summary = case.error or (f"{case.ops} ops, {case.kernels} kernels: {case.compile_s:.2f} s "
                                         f"({case.per_op_ms():.2f} ms per op), peak RSS "
                                         f"{case.peak_rss / 2**20:.0f} MB" +
                                         (f"; warm {case.warm_s:.3f} s ({case.warm})" if case.warm_s else ""))
                print(f"{family} {size}: {summary}", flush=True)
    memory = None
    if args.memory_elements:
        memory = measure_memory(args.memory_elements, args.timeout)
        print(f"memory case: {memory.error or f'peak RSS {memory.peak_rss / 1e9:.2f} GB ({memory.ratio:.2f}x)'}",
              flush=True)
    text = table(cases, baseline, memory)
    print(f"\nmachine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}\n")
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
