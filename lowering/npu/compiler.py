"""``compile_npu``: graph module -> fused graph -> NPU kernels with assigned buffers -> emulated on the CPU.

Stages, each a textual pipeline that ``graphfuse-opt`` replays:

1. the graph pipeline (``pipeline=``, or :func:`npu_graph_pipeline` of the
   opt level: the CPU path's pipelines with ``backend=npu``);
2. :func:`npu_lowering_pipeline`: every op outside a kernel outlined as a
   kernel (``npu-outline-ops``), graph ops to linalg, each kernel's loops
   fused, bufferization keeping kernels as functions in destination-passing
   style, then ``npu-buffer-assign``;
3. the emulator (:mod:`graphfuse.lowering.npu.emulator`): JIT-compiled CPU
   code that counts GM bytes per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.interpreter import entry_function
from graphfuse.dialect.matching import nested_ops
from graphfuse.dialect.npu_target import NpuTarget, load_target
from graphfuse.dialect.parsing import located_asm, parse_module, relocate
from graphfuse.lowering.compiler import (
    Source,
    check_lowerable,
    refuse_communication,
    resolve_pipeline,
    run_located,
    source_text,
)
from graphfuse.lowering.executable import CompiledGraph
from graphfuse.lowering.graph_pipelines import graph_pipeline
from graphfuse.lowering.npu.cube_tiling import traffic_lower_bound
from graphfuse.lowering.npu.emulator import OUTSIDE_KERNELS, EmulatedFunction, KernelInfo, emulate, kernel_infos
from graphfuse.lowering.options import resolve_options
from graphfuse.pipelines import log

__all__ = ["KernelRow", "NpuExecutable", "NpuReport", "compile_npu", "npu_graph_pipeline", "npu_lowering_pipeline"]

#: Bufferization; then the buffers a loop allocates per iteration (a sort's permutation of each row) are
#: allocated once before it, as on the CPU path: npu-buffer-assign places a kernel's top-level buffers.
BUFFERIZE = (
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},func.func(buffer-loop-hoisting)"
)


def npu_graph_pipeline(opt_level: int) -> str:
    """The NPU graph pipeline of ``opt_level`` (the table in :mod:`graphfuse.pipelines.opt_levels`)."""
    try:
        return graph_pipeline(opt_level, "npu")
    except ValueError as error:
        raise GraphfuseError(str(error)) from None


def npu_lowering_pipeline(target: str = "910b", double_buffer: bool = True) -> str:
    """Graph (kernels outlined) -> bufferized kernels with UB/L1 buffers and explicit GM transfers.

    graph-to-linalg runs without its run-time checks (``checks``): the emulator counts GM traffic and does not raise
    on an integer division by zero (which gives 0) or an index out of range (clamped into its axis, or not written
    by a scatter); docs/npu.md says so.
    """
    assign = f"npu-buffer-assign{{target={target} double-buffer={'true' if double_buffer else 'false'}}}"
    return (
        "builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,"
        f"dedupe-kernel-results,store-booleans-as-bytes,{BUFFERIZE},canonicalize,cse,{assign})"
    )


@dataclass(frozen=True)
class KernelRow:
    name: str
    kind: str
    tiles: int
    ub_bytes: int
    l1_bytes: int
    l0c_bytes: int
    gm_read: int
    gm_write: int
    vector_ops: int
    cube_flops: int
    #: the cost model's estimate, seconds
    time_s: float
    #: what bounds the estimate: "GM" (transfers), "vector" or "cube"
    limit: str = "GM"
    #: a matmul kernel's GM traffic lower bound for the target's L1 (cube_tiling.traffic_lower_bound), bytes
    gm_bound: int | None = None

    @property
    def gm_bytes(self) -> int:
        return self.gm_read + self.gm_write

    @property
    def bound_ratio(self) -> float | None:
        """GM bytes moved over the lower bound (1.0: the bound itself)."""
        return None if not self.gm_bound else self.gm_bytes / self.gm_bound


@dataclass(frozen=True)
class NpuReport:
    target: NpuTarget
    rows: list[KernelRow]

    @property
    def gm_read(self) -> int:
        return sum(r.gm_read for r in self.rows)

    @property
    def gm_write(self) -> int:
        return sum(r.gm_write for r in self.rows)

    @property
    def gm_bytes(self) -> int:
        return self.gm_read + self.gm_write

    @property
    def time_s(self) -> float:
        return sum(r.time_s for r in self.rows)

    def table(self) -> str:
        """A fixed-width table: one line per kernel, then the totals."""
        header = (f"{'kernel':<40} {'kind':<22} {'tiles':>5} {'UB peak':>9} {'L1 peak':>9} {'GM read':>10} "
                  f"{'GM write':>10} {'est. time':>10} {'limit':>6} {'GM bound':>10} {'x bound':>7}")
        lines = [header, "-" * len(header)]
        for r in self.rows:
            bound = f"{r.gm_bound:>10} {r.bound_ratio:>7.2f}" if r.gm_bound else f"{'':>10} {'':>7}"
            lines.append(f"{r.name:<40} {r.kind:<22} {r.tiles:>5} {r.ub_bytes:>9} {r.l1_bytes:>9} {r.gm_read:>10} "
                         f"{r.gm_write:>10} {r.time_s * 1e6:>8.3f}us {r.limit:>6} {bound}".rstrip())
        lines.append("-" * len(header))
        count = f"total ({len(self.rows)} kernel{'' if len(self.rows) == 1 else 's'})"
        lines.append(f"{count:<40} {'':<22} {'':>5} "
                     f"{max((r.ub_bytes for r in self.rows), default=0):>9} "
                     f"{max((r.l1_bytes for r in self.rows), default=0):>9} {self.gm_read:>10} {self.gm_write:>10} "
                     f"{self.time_s * 1e6:>8.3f}us")
        return "\n".join(lines)


@dataclass
class NpuExecutable(CompiledGraph):
    """A graph compiled for the emulated NPU: call it with numpy arrays; ``report()`` after a call."""

    entry: str
    source: ir.Module
    pipeline: str
    fused_graph: str
    #: the module after npu-buffer-assign (what the emulator runs)
    npu_ir: str
    target: NpuTarget
    function: EmulatedFunction
    kernels: list[KernelInfo] = field(default_factory=list)

    def __call__(self, *arrays: np.ndarray, out: list[np.ndarray] | None = None) -> list[np.ndarray]:
        return self.function(*arrays, out=out)

    def report(self) -> NpuReport:
        """Per kernel: buffer peaks, GM bytes counted by the last call, the cost model's time."""
        if not self.function.gm_bytes:
            raise GraphfuseError("report(): call the executable first (GM bytes are counted at run time)")
        t = self.target
        rows = []
        infos = [*self.kernels, KernelInfo(OUTSIDE_KERNELS, "copy", 1, {"ub": 0, "l1": 0, "l0c": 0}, 0, 0)]
        for info in infos:
            read, write = self.function.gm_bytes.get(info.name, (0, 0))
            if info.name == OUTSIDE_KERNELS and read + write == 0:
                continue
            times = {"GM": (read + write) / t.gm_bandwidth_bytes_per_s, "vector": info.vector_ops / t.vector_ops_per_s,
                     "cube": info.cube_flops / t.cube_flops_per_s}
            limit = max(times, key=times.__getitem__)
            bound = None
            if info.matmul is not None:
                batch, m, n, k, size = info.matmul
                bound = batch * traffic_lower_bound(m, n, k, size, t.buffer("l1").bytes)
            rows.append(KernelRow(info.name, info.kind, info.tiles, info.peaks["ub"], info.peaks["l1"],
                                  info.peaks["l0c"], read, write, info.vector_ops, info.cube_flops, times[limit],
                                  limit, bound))
        return NpuReport(t, rows)


def refuse_dynamic_shapes(module: ir.Module, filename: str) -> None:
    """A located error naming the first dim known only at run time in ``module``: the NPU's buffer assignment
    sizes every tile of UB and L1 when compiling, from static shapes."""
    why = "the emulated NPU assigns its UB and L1 buffers when compiling, from static shapes; compile for the CPU " \
          "(graphfuse.compile), which takes dynamic dims, or give the graph static shapes"
    for op in nested_ops(module):
        if op.name == "func.func":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            named = [("argument", ftype.inputs), ("result", ftype.results)]
            owner = f"@{ir.StringAttr(op.attributes['sym_name']).value}"
        else:
            named = [("operand", [v.type for v in op.operands]), ("result", [v.type for v in op.results])]
            owner = f"'{op.name}'"
        for kind, types in named:
            for k, t in enumerate(types):
                if isinstance(t, ir.RankedTensorType) and not ir.RankedTensorType(t).has_static_shape:
                    dim = next(d for d, size in enumerate(ir.RankedTensorType(t).shape) if size < 0)
                    raise GraphfuseError([relocate(Diagnostic(
                        "error", f"dim {dim} of {kind} #{k} of {owner} ({t}) is dynamic: {why}",
                        source_loc(op.location)), filename)])


def compile_npu(
    source: Source,
    *,
    entry: str | None = None,
    pipeline: str | None = None,
    opt_level: int | None = None,
    target: str | Path = "910b",
    double_buffer: bool = True,
    graph_kernel_flags: str | None = None,
    fusion_switch_file: str | Path | None = None,
    jit_opt_level: int = 0,
) -> NpuExecutable:
    """Fuse ``source`` for the NPU, assign its buffers on ``target`` and build the GM-counting emulator.

    ``jit_opt_level`` is LLVM's level for the emulation code: 0 by default, since the emulator is there to
    count bytes and check numerics, and LLVM's optimizer costs seconds on a fully inlined model.
    """
    npu_target = load_target(target)
    options = resolve_options(target="npu", pipeline=pipeline, opt_level=opt_level,
                              graph_kernel_flags=graph_kernel_flags, fusion_switch_file=fusion_switch_file,
                              jit_opt_level=jit_opt_level)
    text, filename = source_text(source)
    switches = options.switches()
    pipeline = resolve_pipeline(options, switches)
    if switches.flags.enable_debug_mode:
        log.warning("enable_debug_mode applies to the CPU backend (graphfuse.compile): the emulated NPU runs "
                    "its kernels inlined in one function, with no launches to check between")
    context = make_context()
    source_module = parse_module(text, filename, context)
    check_lowerable(source_module, filename)
    refuse_communication(source_module, filename, "the emulated NPU is one device (docs/distributed.md runs the "
                         "ranks' graphs on CPUs)")
    entry_op = entry_function(source_module, entry)
    refuse_dynamic_shapes(source_module, filename)
    name = ir.StringAttr(entry_op.attributes["sym_name"]).value
    n_outputs = len(ir.FunctionType(ir.TypeAttr(entry_op.attributes["function_type"]).value).results)
    module = parse_module(text, filename, context)
    runner = run_located(module, pipeline, filename, switches)
    fused_graph = str(module)
    run_located(module, npu_lowering_pipeline(str(target), double_buffer), filename)
    npu_ir = str(module)
    ftype = ir.FunctionType(ir.TypeAttr(entry_op.attributes["function_type"]).value)
    booleans = [k for k, t in enumerate([*ftype.inputs, *ftype.results])  # held as bytes, passed as numpy bools
                if isinstance(t, ir.RankedTensorType) and str(ir.RankedTensorType(t).element_type) == "i1"]
    # Emulated from the text with locations: an error of the emulation names the op in the graph's file.
    function = emulate(located_asm(module, filename), name, n_outputs, options.jit_opt_level, booleans)
    order = {row: k for k, row in enumerate(function.rows)}
    infos = sorted(kernel_infos(module), key=lambda info: order.get(info.name, len(order)))
    return NpuExecutable(name, source_module, runner.text, fused_graph, npu_ir, npu_target, function, infos)
