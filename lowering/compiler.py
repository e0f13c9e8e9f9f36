"""``graphfuse.compile``: graph module -> fused graph -> linalg -> JIT-compiled CPU code.

Three stages, each an ordinary textual pipeline (so any of them can be
replayed with ``graphfuse-opt --pass-pipeline=...``):

1. the *graph pipeline* (``pipeline=``; by default :func:`default_pipeline`
   of the opt level: clean-up, pattern fusion, graph-kernel fusion);
2. the *lowering pipeline* :data:`LOWERING_PIPELINE`: everything is lowered
   to linalg on tensors, each kernel's loops are fused, kernels are inlined;
3. the runtime (:func:`graphfuse.lowering.runtime.compile_linalg`):
   destination-passing style, bufferization, LLVM, ExecutionEngine.

Compiled executables are cached in-process per (module text, options).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import Interpreter, entry_function, functions, run_function
from graphfuse.dialect.parsing import load_module, parse_module
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.runtime import CompiledFunction, compile_linalg
from graphfuse.pipelines.fusion.switches import FusionSwitches, parse_graph_kernel_flags, parse_switch_file
from graphfuse.pipelines.runner import run_pipeline

__all__ = ["LOWERING_PIPELINE", "Executable", "clear_cache", "compile", "default_pipeline"]

#: Graph ops -> linalg with each kernel's loops fused, kernels inlined into their callers.
LOWERING_PIPELINE = (
    "builtin.module(graph-to-linalg{strict},fuse-kernel-loops,tile-kernel-rows,inline,symbol-dce,canonicalize,cse)"
)
CLEANUP = "graph-canonicalize,graph-cse,graph-dce"
#: Basic ops the CPU code generator fuses well that the seed's CPU cluster list leaves out: the comparisons and
#: logical ops of expanded gelu/erf and of masks (left out, they cut one elementwise chain into several kernels).
CPU_EXTRA_CLUSTER_OPS = "greater,greater_equal,not_equal,logical_and,logical_or,isfinite,broadcast_to,reduce_min"


def default_pipeline(opt_level: int) -> str:
    """The graph pipeline of ``opt_level``.

    0 cleans up only: every op, a fused op's parts included, becomes its own
    loop nest (the unfused baseline).  1-3 also run pattern fusion,
    graph-kernel fusion at that level, and outline each remaining fused op as
    a kernel, so that its parts are fused into few loop nests too.
    """
    if not 0 <= opt_level <= 3:
        raise GraphfuseError(f"opt_level must be 0..3, got {opt_level}")
    if opt_level == 0:
        return f"builtin.module({CLEANUP})"
    return (
        f"builtin.module({CLEANUP},graph-fusion{{opt-level={min(opt_level, 2)}}},"
        f"graph-kernel-fusion{{opt-level={opt_level} enable-cluster-ops={CPU_EXTRA_CLUSTER_OPS}}},graph-dce,"
        "outline-fused-ops)"
    )


@dataclass
class Executable:
    """A compiled graph function: call it with numpy arrays, get a list of numpy arrays."""

    entry: str
    #: the graph module as given (kept for :meth:`reference`)
    source: ir.Module
    #: the graph pipeline that ran, and the fused graph it produced
    pipeline: str
    fused_graph: str
    #: the linalg module handed to the runtime
    linalg: str
    function: CompiledFunction
    #: per fusion pass (or kernel step) how often it fired, from the graph pipeline's statistics
    fusions: dict[str, int] = field(default_factory=dict)
    kernels: int = 0
    #: enable_debug_mode: check every call's results for NaN/Inf and name the kernels that produce them
    debug: bool = False

    def __call__(self, *arrays: np.ndarray, out: list[np.ndarray] | None = None) -> list[np.ndarray]:
        results = self.function(*arrays, out=out)
        if self.debug:
            self._check_finite(arrays, results)
        return results

    def _check_finite(self, arrays: tuple[np.ndarray, ...], results: list[np.ndarray]) -> None:
        """MindSpore's enable_debug_mode: NaN/Inf in a result is an error naming the kernels behind it.

        The kernels are found by running the fused graph in the reference
        interpreter and checking each kernel call's outputs; when none produces
        a non-finite value there, the compiled code and the graph disagree, and
        the message says so.
        """
        bad = [
            (k, int(np.isnan(r).sum()), int(np.isinf(r).sum()))
            for k, r in enumerate(results)
            if r.dtype.kind == "f" and not np.isfinite(r).all()
        ]
        if not bad:
            return
        found = ", ".join(f"result {k}: {nans} NaN, {infs} Inf" for k, nans, infs in bad)
        checker = _KernelChecker(parse_module(self.fused_graph, "<fused graph>"))
        checker.run(list(arrays), self.entry)
        if checker.findings:
            where = "; ".join(checker.findings[:5])
            raise GraphfuseError(f"enable_debug_mode: @{self.entry} {found}; first produced by kernel {where}")
        raise GraphfuseError(
            f"enable_debug_mode: @{self.entry} {found}; no kernel of the fused graph produces "
            "them in the reference interpreter: the compiled code differs from the graph"
        )

    def reference(self, *arrays: np.ndarray) -> list[np.ndarray]:
        """The reference interpreter's results on the unfused graph."""
        return run_function(self.source, list(arrays), self.entry)

    @property
    def inputs(self) -> list[tuple[tuple[int | None, ...], np.dtype]]:
        return [(s.shape, s.dtype) for s in self.function.inputs]

    @property
    def outputs(self) -> list[tuple[tuple[int | None, ...], np.dtype]]:
        return [(s.shape, s.dtype) for s in self.function.outputs]


class _KernelChecker(Interpreter):
    """The reference interpreter, recording kernel calls whose float outputs hold NaN or Inf."""

    def __init__(self, module: ir.Module):
        super().__init__(module)
        self.findings: list[str] = []

    def call(self, func: ir.Operation, inputs: list[np.ndarray]) -> list[np.ndarray]:
        outputs = super().call(func, inputs)
        if "graph.kernel" in func.attributes:
            name = ir.StringAttr(func.attributes["sym_name"]).value
            for k, array in enumerate(outputs):
                if array.dtype.kind == "f" and not np.isfinite(array).all():
                    inputs_finite = all(a.dtype.kind != "f" or np.isfinite(a).all() for a in inputs)
                    origin = "from finite inputs" if inputs_finite else "(its inputs already were not finite)"
                    self.findings.append(f"@{name} output {k} {origin}")
        return outputs


_CACHE: dict[tuple, Executable] = {}
_LOCK = threading.Lock()


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()


def _switches(graph_kernel_flags: str | None, fusion_switch_file: str | Path | None, strict: bool) -> FusionSwitches:
    flags = parse_graph_kernel_flags(graph_kernel_flags or "", strict, "graph kernel flags")
    switch_file = parse_switch_file(fusion_switch_file) if fusion_switch_file else None
    return FusionSwitches(flags, switch_file)


def compile(
    source: ir.Module | str | Path,
    *,
    entry: str | None = None,
    pipeline: str | None = None,
    opt_level: int | None = None,
    graph_kernel_flags: str | None = None,
    fusion_switch_file: str | Path | None = None,
    strict_flags: bool = False,
    jit_opt_level: int = 3,
) -> Executable:
    """Fuse, lower and JIT-compile function ``entry`` (default: the first public one) of ``source``.

    ``source`` is a module, a path to a ``.mlir`` file, or MLIR text.  The graph
    pipeline is ``pipeline`` when given, else :func:`default_pipeline` of
    ``opt_level`` (default: the flags' ``--opt_level``, else 2).
    ``graph_kernel_flags`` (``MS_DEV_GRAPH_KERNEL_FLAGS`` syntax) and
    ``fusion_switch_file`` (CANN ``fusion_switch.cfg``) switch fusion passes as
    they do in graphfuse-opt.  The caller's module is not modified.
    """
    text, filename = _source_text(source)
    key = (text, entry, pipeline, opt_level, graph_kernel_flags, str(fusion_switch_file), strict_flags, jit_opt_level)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    switches = _switches(graph_kernel_flags, fusion_switch_file, strict_flags)
    if pipeline is None:
        level = opt_level
        if level is None:
            level = switches.flags.opt_level if switches.flags.opt_level is not None else 2
        pipeline = default_pipeline(level)
    elif opt_level is not None:
        raise GraphfuseError("pass either pipeline= or opt_level=, not both")
    context = make_context()
    source_module = parse_module(text, filename, context)
    name = ir.StringAttr(entry_function(source_module, entry).attributes["sym_name"]).value
    module = parse_module(text, filename, context)
    runner = run_pipeline(module, pipeline, switches=switches)
    fusions = {}
    for record in runner.records:
        for statistic, value in record.statistics.items():
            if value:
                key_name = f"{record.step.argument}.{statistic}"
                fusions[key_name] = fusions.get(key_name, 0) + value
    fused_graph = str(module)
    kernels = sum(1 for func_op in functions(module).values() if is_kernel(func_op))
    run_pipeline(module, LOWERING_PIPELINE)
    linalg_text = str(module)
    function = compile_linalg(module, name, opt_level=jit_opt_level)
    executable = Executable(
        name,
        source_module,
        runner.text,
        fused_graph,
        linalg_text,
        function,
        fusions,
        kernels,
        debug=switches.flags.enable_debug_mode,
    )
    with _LOCK:
        return _CACHE.setdefault(key, executable)


def _source_text(source: ir.Module | str | Path) -> tuple[str, str]:
    if isinstance(source, ir.Module):
        # Keep the module's own locations (file:line:col of the ops it was parsed or built from).
        return source.operation.get_asm(enable_debug_info=True), "<module>"
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and source.endswith(".mlir")):
        path = Path(source)
        load_module(path)  # located errors for a missing or malformed file
        return path.read_text(), str(path)
    if isinstance(source, str):
        return source, "<string>"
    raise GraphfuseError(f"compile() takes a module, a path or MLIR text, not {type(source).__name__}")
