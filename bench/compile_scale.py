"""Compile-time scaling: random layered graphs of 1k, 10k and 50k graph ops through the default graph pipeline.

    python -m bench.compile_scale [--sizes 1000,10000,50000] [--lower-up-to 1000] [--jit-up-to 0]
                                  [--seed 0] [--profile N] [--markdown FILE]

Each graph is a deterministic random stack of transformer/MLP-like layers
(:func:`generate`), written as MLIR text in time linear in its size: a
residual add feeding a norm (layer_norm or rms_norm: add_layer_norm /
add_rms_norm fusions), linears as matmul of a transposed weight plus a bias
(matmul_elem_biasadd_fusion), activations (gelu, relu, x * sigmoid(x)), an
elementwise tail and now and then a softmax gate
(graph-kernel fusion), with random widths.  Weights are function arguments,
so the clean-up passes cannot fold or merge them away.

Reported per size: the ops in the graph, parse + verify time, the graph
pipeline of ``graphfuse.compile`` at opt level 2 (``default_pipeline(2)``:
clean-up, graph-fusion, graph-kernel-fusion, outline) with its per-pass
times, seconds per 1k ops, for sizes up to ``--lower-up-to`` the lowering
(graph -> linalg, ``LOWERING_PIPELINE``) and for sizes up to ``--jit-up-to``
the LLVM JIT compile (off by default: LLVM at O3 on the one function the
kernels are inlined into grows much faster than linearly).  The growth ratio is
(seconds per 1k ops at the largest size) / (seconds per 1k ops at the
smallest): 1.0 is linear; it is given for wall time and for the pipeline's
CPU time, which other processes on a shared machine disturb less.
``--profile N`` prints a cProfile of the graph pipeline on the N-op graph.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import platform
import pstats
import time
from dataclasses import dataclass, field

import numpy as np

from graphfuse.dialect.context import make_context
from graphfuse.dialect.parsing import parse_module
from graphfuse.lowering.compiler import LOWERING_PIPELINE, default_pipeline
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import run_pipeline

SEQ = 8
MODEL = 64
WIDTHS = (32, 48, 64, 96, 128)


class _Writer:
    """Emits graph ops as generic-form MLIR, one SSA value per result; weights become function arguments."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.lines: list[str] = []
        self.ops = 0
        self._next = 0

    def arg(self, shape: tuple[int, ...]) -> str:
        self.args.append(_type(shape))
        return f"%arg{len(self.args) - 1}"

    def op(self, name: str, operands: list[tuple[str, tuple[int, ...]]], result: tuple[int, ...],
           attrs: str = "") -> str:
        value = f"%v{self._next}"
        self._next += 1
        self.ops += 1
        names = ", ".join(v for v, _ in operands)
        types = ", ".join(_type(s) for _, s in operands)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f'    {value} = "graph.{name}"({names}){attr_text} : ({types}) -> {_type(result)}')
        return value

    def text(self, result: str, shape: tuple[int, ...]) -> str:
        args = ", ".join(f"%arg{k}: {t}" for k, t in enumerate(self.args))
        body = "\n".join(self.lines)
        return (f"func.func @model({args}) -> {_type(shape)} {{\n{body}\n"
                f"    return {result} : {_type(shape)}\n}}\n")


def _type(shape: tuple[int, ...]) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


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


def _layer(w: _Writer, rng: np.random.Generator, x: str, branch: str) -> tuple[str, str]:
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
    hidden = int(rng.choice(WIDTHS))
    h = _activation(w, _linear(w, normed, MODEL, hidden), hidden, int(rng.integers(0, 3)))
    hshape = (SEQ, hidden)
    # An elementwise tail graph-kernel fusion clusters: h * s + h, then tanh or exp of a scaled copy.
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
        # A reshape round trip (shape_reshape collapses it).
        split = w.op("reshape", [(out, shape)], (SEQ, 4, MODEL // 4))
        out = w.op("reshape", [(split, (SEQ, 4, MODEL // 4))], shape)
    return residual, out


def generate(target_ops: int, seed: int = 0) -> tuple[str, int]:
    """A random layered graph of about ``target_ops`` graph ops (text, exact op count); linear time."""
    rng = np.random.default_rng(seed)
    w = _Writer()
    shape = (SEQ, MODEL)
    x = w.arg(shape)
    branch = w.op("neg", [(x, shape)], shape)
    while w.ops < target_ops - 2:
        x, branch = _layer(w, rng, x, branch)
    result = w.op("add", [(x, shape), (branch, shape)], shape)
    return w.text(result, shape), w.ops


@dataclass
class Measurement:
    ops: int
    parse_s: float
    graph_s: float
    #: CPU seconds of the graph pipeline (less disturbed than wall time on a shared machine)
    graph_cpu_s: float
    per_pass: dict[str, float] = field(default_factory=dict)
    lowering_s: float | None = None
    jit_s: float | None = None

    @property
    def graph_s_per_1k(self) -> float:
        return self.graph_s / self.ops * 1000

    @property
    def graph_cpu_s_per_1k(self) -> float:
        return self.graph_cpu_s / self.ops * 1000


def measure(target_ops: int, seed: int, lower: bool, jit: bool) -> Measurement:
    text, ops = generate(target_ops, seed)
    context = make_context()
    start = time.perf_counter()
    module = parse_module(text, "<compile-scale>", context)
    parse_s = time.perf_counter() - start
    start, cpu_start = time.perf_counter(), time.process_time()
    runner = run_pipeline(module, default_pipeline(2))
    graph_s, graph_cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    per_pass = {record.step.argument: record.seconds for record in runner.records}
    result = Measurement(ops, parse_s, graph_s, graph_cpu_s, per_pass)
    if lower or jit:
        start = time.perf_counter()
        run_pipeline(module, LOWERING_PIPELINE)
        result.lowering_s = time.perf_counter() - start
    if jit:
        start = time.perf_counter()
        compile_linalg(module, "model", opt_level=3)
        result.jit_s = time.perf_counter() - start
    return result


def profile(target_ops: int, seed: int, top: int = 25) -> str:
    text, _ = generate(target_ops, seed)
    module = parse_module(text, "<compile-scale>", make_context())
    profiler = cProfile.Profile()
    profiler.enable()
    run_pipeline(module, default_pipeline(2))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def table(results: list[Measurement]) -> str:
    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    lines = [
        "| graph ops | parse + verify (s) | graph pipeline (s) | s per 1k ops | graph pipeline CPU (s) "
        "| CPU s per 1k ops | lowering (s) | LLVM JIT (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r.ops} | {r.parse_s:.2f} | {r.graph_s:.2f} | {r.graph_s_per_1k:.3f} | {r.graph_cpu_s:.2f} | "
                     f"{r.graph_cpu_s_per_1k:.3f} | {fmt(r.lowering_s)} | {fmt(r.jit_s)} |")
    if len(results) > 1:
        first, last = results[0], results[-1]
        lines.append("")
        lines.append(f"Growth ratio, s per 1k ops at {last.ops} / at {first.ops} (1.0 is linear): "
                     f"{last.graph_s_per_1k / first.graph_s_per_1k:.2f} wall, "
                     f"{last.graph_cpu_s_per_1k / first.graph_cpu_s_per_1k:.2f} CPU")
    passes = list(results[0].per_pass)
    lines += ["", "| pass | " + " | ".join(f"{r.ops} ops (s)" for r in results) + " |",
              "|---|" + "---:|" * len(results)]
    for name in passes:
        lines.append(f"| {name} | " + " | ".join(f"{r.per_pass.get(name, 0.0):.2f}" for r in results) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compile_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="graph sizes in ops, comma-separated")
    parser.add_argument("--lower-up-to", type=int, default=1000, help="also lower graphs up to this size to linalg")
    parser.add_argument("--jit-up-to", type=int, default=0, help="also JIT-compile graphs up to this size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=int, help="print a cProfile of the graph pipeline on a graph this size")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    if args.profile:
        print(profile(args.profile, args.seed))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = []
    for size in sizes:
        result = measure(size, args.seed, lower=size <= args.lower_up_to, jit=size <= args.jit_up_to)
        extra = "" if result.lowering_s is None else f"; lowering {result.lowering_s:.2f} s"
        extra += "" if result.jit_s is None else f"; LLVM JIT {result.jit_s:.2f} s"
        print(f"{result.ops} ops: graph pipeline {result.graph_s:.2f} s ({result.graph_s_per_1k:.3f} s per 1k ops)"
              f"{extra}", flush=True)
        results.append(result)
    text = table(results)
    print(f"\nmachine: {platform.processor() or platform.machine()}, Python {platform.python_version()}\n")
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as file:
            file.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
