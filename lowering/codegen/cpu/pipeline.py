"""The CPU pipeline as text, and the runner the JIT uses for it.

:func:`cpu_pipeline_text` is every step from tensor-level linalg IR to the LLVM dialect: graphfuse's passes of
this package between the upstream pass-manager runs (empty-tensor elimination, bufferization, loops, the
parallel lowering, the conversion to LLVM).  ``graphfuse-opt --print-cpu-pipeline`` prints it, and
``graphfuse-opt --pass-pipeline=<that text>`` replays the runtime's lowering step by step, with IR printing after
each.  :func:`run_cpu_pipeline` is how the runtime runs it: without instrumentation, each run of consecutive
upstream passes in one pass manager as before, and a pass's error raised as the pass raised it.
"""

from __future__ import annotations

import re

from mlir import ir
from mlir.passmanager import PassManager

from graphfuse.dialect.diagnostics import GraphfuseError, from_mlir_error
from graphfuse.lowering.parallel import openmp_library
from graphfuse.pipelines.pass_base import PassContext
from graphfuse.pipelines.pipeline_parser import PassElement, parse_pipeline
from graphfuse.pipelines.registry import lookup_pass

__all__ = ["BUFFERIZE", "LOOPS", "PRE_BUFFERIZE", "TO_LLVM", "cpu_pipeline_text",
           "openmp_to_llvm", "parallel_loops", "run_cpu_pipeline"]

#: Before bufferization: let results be computed directly into the output arguments.
PRE_BUFFERIZE = "eliminate-empty-tensors"
BUFFERIZE = (
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
    "drop-equivalent-buffer-results,func.func(buffer-loop-hoisting)"
)
#: f16/bf16 arithmetic in f32; bf16 <-> f32 conversions as integer ops (no libcalls needed).
LOOPS = (
    "func.func(convert-linalg-to-loops,"
    "arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32},arith-expand{include-bf16=true})"
)
#: The function-local steps nested per function (one pass over each function while it is in cache, in parallel
#: where the context allows); the dialects left after the memref, vector and math conversions go to LLVM in one
#: convert-to-llvm walk instead of one walk of the whole module per dialect (same output, a quarter less time).
#: The vector and math conversions to LLVM rewrite ops inside a function only: nested, they run on both cores
#: (a random graph of 5,000 ops: 1.65 -> 0.52 s, the same code).  The math-to-funcs and math-to-libm ones add
#: functions to the module and stay at its level.  x86vector's ops (the bf16 dot products of
#: lowering/contraction/dot_tiles.py) become LLVM's x86 intrinsics.
TO_LLVM = (
    "func.func(convert-vector-to-scf{full-unroll},expand-strided-metadata,lower-affine,convert-scf-to-cf),"
    "finalize-memref-to-llvm,"
    "func.func(convert-vector-to-llvm{enable-x86vector=1 reassociate-fp-reductions=1},convert-math-to-llvm),"
    "convert-math-to-funcs,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts"
)


def openmp_to_llvm() -> str:
    """TO_LLVM for code with OpenMP loops.

    convert-scf-to-openmp wraps each loop body in a ``memref.alloca_scope``, a
    single-block region: the memrefs are lowered first (which inlines the
    scope between a stack save and restore), then the scf loops inside become
    blocks; the omp ops go to LLVM before the rest.
    """
    pipeline = TO_LLVM.replace(",convert-scf-to-cf),finalize-memref-to-llvm,func.func(",
                               "),finalize-memref-to-llvm,func.func(convert-scf-to-cf,")
    pipeline = pipeline.replace("convert-to-llvm,", "convert-openmp-to-llvm,convert-to-llvm,")
    assert pipeline.count("convert-openmp-to-llvm") == 1 and "finalize-memref-to-llvm,func.func(" in pipeline, pipeline
    return pipeline


def parallel_loops(threads: int) -> tuple[str, list[str]]:
    """(the passes lowering scf.forall for ``threads`` threads, the runtime library they need)."""
    library = openmp_library()
    if threads == 1 or library is None:
        return "scf-forall-to-for", []
    return f"scf-forall-to-parallel,convert-scf-to-openmp{{num-threads={threads}}}", [library]


#: Entry names written as they are in an option value; any other is quoted.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.$-]+")


def cpu_pipeline_text(entry: str, threads: int, streaming: int | None = None, pooled_buffers: bool = False) -> str:
    """The CPU pipeline compiling ``@entry`` for ``threads`` threads, its stores into the results streamed and its
    rows prefetched in loop nests touching at least ``streaming`` bytes (None: neither); with ``pooled_buffers``
    its buffers allocated by the buffer pool's functions (graphfuse.lowering.buffer_pool), else by malloc."""
    parallel, libraries = parallel_loops(threads)
    name = entry if _PLAIN_NAME.fullmatch(entry) else f'"{entry}"'
    streamed = [] if streaming is None else [f"version-large-loop-nests{{min-bytes={streaming}}}",
                                             f"stream-large-stores{{min-bytes={streaming}}}",
                                             f"prefetch-next-rows{{min-bytes={streaming}}}"]
    steps = [
        f"to-destination-passing-style{{entry={name}}}",
        "narrow-contraction-operands",
        "widen-contraction-operands",
        f"select-contraction-schedules{{threads={threads}}}",
        "apply-contraction-schedules",
        "privatize-entry",  # drop-equivalent-buffer-results leaves public functions alone
        "store-booleans-as-bytes",
        "split-shared-empties",
        "copy-long-concats",
        "reshape-dynamic-expands",
        PRE_BUFFERIZE,
        "drop-redundant-materializations",
        BUFFERIZE,
        "restore-entry-visibility",
        "align-constants",
        "erase-self-copies",
        "compute-in-copy-targets",
        "compute-results-in-outputs",
        "stack-loop-buffers",
        "free-loop-buffers",
        "drop-results-in-outputs",
        "hoist-allocations",
        "bind-status-word",  # after the arena: the word outlives the call, no buffer shares it
        "check-bufferized-entry",
        "forward-loop-results",
        *streamed,
        "pack-arguments",
        "strided-copies-as-loops",
        "outline-chunks",
        LOOPS,
        parallel,
        "hoist-stack-buffers",
        openmp_to_llvm() if libraries else TO_LLVM,
    ]
    if pooled_buffers:
        pooled = "finalize-memref-to-llvm{use-generic-functions=true},"
        steps[-1] = steps[-1].replace("finalize-memref-to-llvm,", pooled)
    return f"builtin.module({','.join(steps)})"


def run_cpu_pipeline(module: ir.Module, text: str) -> None:
    """Run pipeline ``text`` on ``module`` in place, in the module's context and an unknown location.

    graphfuse's passes run in Python; the upstream passes between two of them run in one pass manager, as
    written.  Nothing is printed, timed or verified between steps (graphfuse-opt's runner does that), and a
    pass's error propagates as it was raised.
    """
    upstream: list[str] = []
    for element in [*parse_pipeline(text, default_anchor="builtin.module").elements, None]:
        cls = lookup_pass(element.name) if isinstance(element, PassElement) else None
        if element is not None and cls is None:
            upstream.append(element.to_text())
            continue
        if upstream:
            _run_upstream(",".join(upstream), module)
            upstream = []
        if cls is not None:
            graph_pass = cls.from_options((option.key, option.value) for option in element.options)
            graph_pass.run(module, PassContext(graph_pass))


def _run_upstream(passes: str, module: ir.Module) -> None:
    try:
        PassManager.parse(f"builtin.module({passes})").run(module.operation)
    except ir.MLIRError as e:
        raise GraphfuseError([*from_mlir_error(e)]) from None
    except Exception as e:  # e.g. a pipeline string the build does not know
        raise GraphfuseError(f"the passes {passes} failed: {e}") from None
