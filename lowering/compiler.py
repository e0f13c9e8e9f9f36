"""``graphfuse.compile``: graph module -> fused graph -> linalg -> JIT-compiled CPU code (an :class:`Executable`,
lowering/executable.py).

Three stages, each an ordinary textual pipeline (so any of them can be
replayed with ``graphfuse-opt --pass-pipeline=...``):

1. the *graph pipeline* (``pipeline=``; by default :func:`default_pipeline`
   of the opt level: clean-up, pattern fusion, graph-kernel fusion), after
   :data:`FOLD_EMPTY_PIPELINE` has taken empty tensors out of the graph;
2. the *lowering pipeline* :data:`LOWERING_PIPELINE`: everything is lowered
   to linalg on tensors, each kernel's loops are fused, kernels are inlined;
3. the runtime (:func:`graphfuse.lowering.runtime.compile_linalg`):
   destination-passing style, bufferization, LLVM, ExecutionEngine.

Compiled executables are cached in-process per (module text, options), and on disk across processes
(lowering/compile_cache.py).
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.interpreter import entry_function, functions
from graphfuse.dialect.matching import nested_ops
from graphfuse.dialect.ops.collective import COLLECTIVE_OPS
from graphfuse.dialect.parsing import SourceText, is_bytecode, load_module, parse_module, relocate
from graphfuse.dialect.types import sig_from_type
from graphfuse.lowering.codegen.cpu.specs import check_fits_in_memory
from graphfuse.lowering.compile_cache import compile_key, load_compile, store_compile
from graphfuse.lowering.executable import Executable
from graphfuse.lowering.graph_pipelines import graph_pipeline
from graphfuse.lowering.host import dot_products, vector_bits
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.launches import LAUNCH_ENTRY, LaunchRunner, launches_of
from graphfuse.lowering.options import CompileOptions, resolve_options
from graphfuse.lowering.runtime import (
    DEFAULT_LLVM_OPT_LEVEL,
    CompiledFunction,
    compile_linalg,
)
from graphfuse.pipelines import registry
from graphfuse.pipelines.fusion.switches import FusionSwitches
from graphfuse.pipelines.opt_levels import DEFAULT_OPT_LEVEL, opt_level_error
from graphfuse.pipelines.pass_base import active_rewrite_budget
from graphfuse.pipelines.runner import Pipeline, PipelineFailure, run_pipeline

__all__ = ["LOWERING_PIPELINE", "Executable", "clear_cache", "compile", "default_pipeline"]

#: What :func:`compile` takes: a module, a path, MLIR text, or text with the name its errors give it.
Source = ir.Module | str | Path | SourceText

#: Graph ops -> linalg with each kernel's loops fused, kernels inlined into their callers, integer divisors and
#: indices checked at run time (lowering/run_checks.py).  CSE (of the copies row tiling leaves) runs per function
#: before inlining: after it, every row loop of the graph is in one function, they hash alike (same bounds, same
#: tensor.empty init once CSE has merged those) and CSE compared each with every other (89 s of a 22,000-op random
#: graph's compile, 10 s now).
LOWERING_PIPELINE = (
    "builtin.module(graph-to-linalg{strict checks},fuse-kernel-loops,select-row-schedules,apply-row-schedules,"
    "parallelize-kernels,"
    "func.func(canonicalize,cse),inline,symbol-dce,canonicalize)"
)

#: Run on the graph before its pipeline: no pass and no lowering meets an empty iteration space (linalg tiling
#: asserts on one); empty tensors are left only as arguments, results and constants.
FOLD_EMPTY_PIPELINE = "builtin.module(graph-fold-empty-tensors)"


def default_pipeline(opt_level: int) -> str:
    """The CPU graph pipeline of ``opt_level`` (the table in :mod:`graphfuse.pipelines.opt_levels`)."""
    try:
        return graph_pipeline(opt_level, "cpu")
    except ValueError as error:
        raise GraphfuseError(str(error)) from None


_CACHE: dict[tuple, Executable] = {}
_LOCK = threading.Lock()


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()


def lower_to_linalg(module: ir.Module, filename: str, fast_math: bool = True) -> str:
    """Lower a fused graph module in place with :data:`LOWERING_PIPELINE`; return the linalg text."""
    lowering = LOWERING_PIPELINE if fast_math else LOWERING_PIPELINE.replace(
        "graph-to-linalg{strict checks}", "graph-to-linalg{strict checks fast-math=false}")
    run_located(module, lowering, filename)
    return str(module)


@dataclass(frozen=True)
class _Jit:
    """The CPU code of a fused graph module: the lowering pipeline, then the runtime."""

    filename: str
    options: CompileOptions

    def __call__(self, module: ir.Module, entry: str, timings: dict[str, float]) -> tuple[str, CompiledFunction]:
        """(the linalg text, the compiled ``@entry``) of ``module``, which is lowered in place."""
        start = time.perf_counter()
        linalg_text = lower_to_linalg(module, self.filename, self.options.fast_math)
        timings["lowering"] = timings.get("lowering", 0.0) + time.perf_counter() - start
        function = compile_linalg(module, entry, opt_level=self.options.jit_opt_level, threads=self.options.threads,
                                  filename=self.filename, streaming=self.options.streaming,
                                  jobs=self.options.codegen_jobs)
        for stage, seconds in function.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
        return linalg_text, function


def _launch_runner(module: ir.Module, entry: str, context: ir.Context, jit: _Jit) -> LaunchRunner:
    """enable_debug_mode: each launch of the fused graph ``module`` compiled on its own (the module is not changed)."""
    launches = launches_of(module, entry, jit.filename)
    compiled = []
    for launch in launches:
        lowered = parse_module(launch.text, jit.filename, context)
        linalg_text, function = jit(lowered, LAUNCH_ENTRY, {})
        source = parse_module(launch.text, jit.filename, context)
        compiled.append(Executable(LAUNCH_ENTRY, source, "", launch.text, linalg_text, function,
                                   filename=jit.filename))
    fused = parse_module(module.operation.get_asm(enable_debug_info=True), jit.filename, context)
    return LaunchRunner(fused, entry, launches, compiled)


def resolve_pipeline(options: CompileOptions, switches: FusionSwitches) -> str:
    """The graph pipeline of ``options``: their pipeline as given, else that of their opt level (default: the
    flags', else 2, with graph-kernel fusion unless graphfuse.context turned it off)."""
    pipeline, opt_level = options.pipeline, options.opt_level
    if pipeline is not None:
        if opt_level is not None:
            raise GraphfuseError("pass either pipeline= or opt_level=, not both")
        return pipeline
    if opt_level is None:
        opt_level = switches.flags.opt_level
    if opt_level is None:  # graphfuse's default level, graph-kernel fusion as MindSpore's context says
        return graph_pipeline(DEFAULT_OPT_LEVEL, options.target, graph_kernel=options.graph_kernel is not False)
    problem = opt_level_error(opt_level)
    if problem is not None:
        raise GraphfuseError(problem)
    return graph_pipeline(opt_level, options.target)


def compile(
    source: Source,
    *,
    entry: str | None = None,
    pipeline: str | None = None,
    opt_level: int | None = None,
    graph_kernel_flags: str | None = None,
    fusion_switch_file: str | Path | None = None,
    strict_flags: bool = False,
    jit_opt_level: int = DEFAULT_LLVM_OPT_LEVEL,
    num_threads: int | None = None,
    fast_math: bool = True,
    options: CompileOptions | None = None,
) -> Executable:
    """Fuse, lower and JIT-compile function ``entry`` (default: the first public one) of ``source``.

    ``source`` is a module, a path to a ``.mlir`` file, MLIR text, or a
    :class:`~graphfuse.dialect.parsing.SourceText` (text its errors name as given,
    e.g. ``<stdin>``).  The graph
    pipeline is ``pipeline`` when given, else :func:`default_pipeline` of
    ``opt_level`` (default: the flags' ``--opt_level``, else 2; docs/fusion-switches.md).
    ``graph_kernel_flags`` (``MS_DEV_GRAPH_KERNEL_FLAGS`` syntax, read from the
    environment too; the argument's keys win) and ``fusion_switch_file`` (CANN
    ``fusion_switch.cfg``) switch fusion passes as they do in graphfuse-opt.
    ``num_threads`` runs the parallel loops of large kernels on that many
    threads (default: ``GRAPHFUSE_NUM_THREADS``, else the cores available).
    ``fast_math=False`` lowers without the fast-math forms (FMA contraction,
    one reciprocal per row; docs/lowering.md).  ``options`` gives them all at
    once, as :func:`~graphfuse.lowering.options.resolve_options` made them
    (then none of the others may be given).  The caller's module is not
    modified; the compiled code is cached per (module text, options).
    """
    if options is None:
        options = resolve_options(pipeline=pipeline, opt_level=opt_level, graph_kernel_flags=graph_kernel_flags,
                                  fusion_switch_file=fusion_switch_file, strict_flags=strict_flags,
                                  jit_opt_level=jit_opt_level, num_threads=num_threads, fast_math=fast_math)
    elif (pipeline, opt_level, graph_kernel_flags, fusion_switch_file, strict_flags, jit_opt_level, num_threads,
          fast_math) != (None, None, None, None, False, DEFAULT_LLVM_OPT_LEVEL, None, True):
        raise GraphfuseError("compile() takes options= or the separate options, not both")
    text, filename = source_text(source)
    # The registry's generation: code compiled before a pass (a user pattern) was added or removed is not reused;
    # nor code for other vectors or dot products (the host's, narrowed by the environment when asked again).
    key = (hashlib.sha256(text.encode()).digest(), filename, entry, options, registry.generation(), vector_bits(),
           dot_products())
    # Under a rewrite budget (graphfuse-bisect) the same options fuse differently, saving the IR means running the
    # passes, and a switch file read from a pipe is not known by its bytes: none reads or fills the cache.
    cacheable = active_rewrite_budget() is None and options.save_graphs_dir is None and options.cacheable
    with _LOCK:
        hit = _CACHE.get(key) if cacheable else None
    if hit is not None:
        return hit
    disk_key = compile_key(text, filename, entry, options, options.switches().flags.enable_debug_mode) \
        if cacheable else None
    stored = None if disk_key is None else load_compile(disk_key, SourceText(text, filename))
    if stored is not None:
        with _LOCK:
            return _CACHE.setdefault(key, stored)
    fused = fuse_graph(text, filename, entry=entry, options=options)
    module, name, timings, runner = fused.module, fused.entry, fused.timings, fused.runner
    fusions = {}
    for record in runner.records:
        for statistic, value in record.statistics.items():
            if value:
                key_name = f"{record.step.argument}.{statistic}"
                fusions[key_name] = fusions.get(key_name, 0) + value
    fused_graph = str(module)
    kernels = sum(1 for func_op in functions(module).values() if is_kernel(func_op))
    jit = _Jit(filename, options)
    launcher = _launch_runner(module, name, fused.context, jit) if fused.switches.flags.enable_debug_mode else None
    linalg_text, function = jit(module, name, timings)
    executable = Executable(
        name,
        fused.source,
        runner.text,
        fused_graph,
        linalg_text,
        function,
        fusions,
        kernels,
        fusion_result=runner.fusion_result(),
        launcher=launcher,
        filename=filename,
        timings=timings,
    )
    if not cacheable:
        return executable
    if disk_key is not None:
        store_compile(disk_key, executable, options.threads, options.streaming)
    with _LOCK:
        return _CACHE.setdefault(key, executable)


@dataclass
class FusedGraph:
    """A graph function after the graph pipeline, before its lowering (the JIT and graphfuse-compile take it)."""

    entry: str
    filename: str
    context: ir.Context
    #: the graph module as given
    source: ir.Module
    #: the fused module (lower_to_linalg lowers it in place)
    module: ir.Module
    runner: Pipeline
    switches: FusionSwitches
    #: seconds per stage so far: parse, graph
    timings: dict[str, float]


def fuse_graph(
    source: Source,
    filename: str | None = None,
    *,
    entry: str | None = None,
    options: CompileOptions,
    collectives: bool = False,
) -> FusedGraph:
    """Parse ``source`` (text named ``filename``, or as :func:`compile` takes it), check that ``entry`` can be
    compiled and run the graph pipeline ``options`` select (see :func:`compile`).  ``collectives``: the graph may
    communicate (a rank's graph, for graphfuse.distributed)."""
    if filename is None:
        source, filename = source_text(source)
    switches = options.switches()
    pipeline = resolve_pipeline(options, switches)
    start = time.perf_counter()
    context = make_context()
    source_module = parse_module(source, filename, context)
    entry_op = entry_function(source_module, entry)
    name = ir.StringAttr(entry_op.attributes["sym_name"]).value
    _check_compilable(source_module, entry_op, name, filename, collectives)
    module = parse_module(source, filename, context)
    timings = {"parse": time.perf_counter() - start}
    start = time.perf_counter()
    run_located(module, FOLD_EMPTY_PIPELINE, filename)
    dump_dir = None if options.save_graphs_dir is None else str(Path(options.save_graphs_dir) / name)
    runner = run_located(module, pipeline, filename, switches, dump_dir=dump_dir)
    timings["graph"] = time.perf_counter() - start
    return FusedGraph(name, filename, context, source_module, module, runner, switches, timings)


#: The ops a graph module may hold to be compiled: graph ops are lowered, the rest is kept as it is.
COMPILED_OPS = frozenset({"builtin.module", "func.func", "func.call", "func.return", "arith.constant"})


def check_lowerable(module: ir.Module, filename: str) -> None:
    """Refuse ops the lowering neither lowers nor keeps, e.g. ``arith.addf`` on tensors.

    They pass the verifiers (they are valid MLIR) but reach bufferization untouched, which fails with a bare
    "op was not bufferized"; one located error per op name says which op it is instead.
    """
    found: dict[str, Diagnostic] = {}
    for op in nested_ops(module):
        if not op.name.startswith("graph.") and op.name not in COMPILED_OPS and op.name not in found:
            found[op.name] = relocate(Diagnostic(
                "error", f"'{op.name}' is not supported by the lowering: compiled functions hold graph ops, "
                "arith.constant and func.call (the graph dialect has an op for most arith and math ops)",
                source_loc(op.location)), filename)
    if found:
        raise GraphfuseError(list(found.values()))


def refuse_communication(module: ir.Module, filename: str, why: str) -> None:
    """A located error on the first collective of ``module`` over more than one rank."""
    for op in nested_ops(module):
        if op.name in COLLECTIVE_OPS and "group_size" in op.attributes:
            size = ir.IntegerAttr(op.attributes["group_size"]).value
            if size != 1:
                raise GraphfuseError([relocate(Diagnostic(
                    "error", f"'{op.name}' communicates with {size} ranks: {why}", source_loc(op.location)),
                    filename)])


def _check_compilable(module: ir.Module, entry: ir.Operation, name: str, filename: str,
                      collectives: bool = False) -> None:
    """Refuse, before any pass runs, graphs the CPU code generator cannot compile safely.

    - Ops the lowering neither lowers nor keeps, and (unless ``collectives``) collectives over several ranks.
    - Arguments and results that cannot fit in memory together
      (``tensor<1000000x1000000xf32>`` is 4 TB): an error now, not an
      allocation failure or an out-of-memory kill at the first call.
    """
    check_lowerable(module, filename)
    if not collectives:
        refuse_communication(module, filename, "a single-process compile cannot run it; compile each rank's graph "
                             "with graphfuse.distributed.compile under torch.distributed (docs/distributed.md)")
    ftype = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
    buffers = []
    for what, types in (("argument", ftype.inputs), ("result", ftype.results)):
        for k, t in enumerate(types):
            sig = sig_from_type(t)
            buffers.append((f"{what} {k} {t}", None if sig is None else sig.num_bytes))
    check_fits_in_memory(buffers, f"@{name}: its arguments and results")


def run_located(module: ir.Module, pipeline: str, filename: str, switches: FusionSwitches | None = None,
                dump_dir: str | None = None) -> Pipeline:
    """run_pipeline, verified once at the end (a failure is still located at its step), with failures located
    in ``filename`` rather than in the parser's buffer "-"."""
    try:
        return run_pipeline(module, pipeline, switches=switches, dump_dir=dump_dir, verify_each_step=False)
    except PipelineFailure as failure:
        diagnostics = [relocate(d, filename) for d in failure.diagnostics]
        raise PipelineFailure(diagnostics, failure.step, failure.pipeline, failure.reproducer) from None


def _looks_like_path(source: str) -> bool:
    """A one-line string that names a file or directory, rather than MLIR text."""
    if "\n" in source:
        return False
    return source.endswith(".mlir") or Path(source).exists() or "{" not in source


def source_text(source: Source) -> tuple[str, str]:
    """The MLIR text of ``source`` and the name its diagnostics give it."""
    if isinstance(source, SourceText):
        return source.text, source.filename
    if isinstance(source, ir.Module):
        # Keep the module's own locations (file:line:col of the ops it was parsed or built from).
        return source.operation.get_asm(enable_debug_info=True), "<module>"
    if isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        if path.is_dir():
            raise GraphfuseError(f"could not open input file '{path}': it is a directory")
        module = load_module(path)  # located errors for a missing or malformed file
        if is_bytecode(path.read_bytes()[:4]):  # bytecode: its text, with the locations it carries
            return module.operation.get_asm(enable_debug_info=True), str(path)
        return path.read_text(), str(path)
    if isinstance(source, str):
        return source, "<string>"
    raise GraphfuseError(f"compile() takes a module, a path, MLIR text or a SourceText, not {type(source).__name__}")
