"""Lowering an entry function to the LLVM dialect with the CPU pipeline, and what the JIT and the
ahead-of-time compiler read of the result (:class:`LoweredEntry`).

:func:`lower_entry` is the one function that lowers: ``lowering/runtime.py`` JIT-compiles its result and
``lowering/aot.py`` writes it out, so both run the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from graphfuse.dialect.context import new_context
from graphfuse.dialect.diagnostics import GraphfuseError, from_mlir_error
from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.entry import (
    CHECKS,
    ENTRY,
    STREAMED_STORES,
    argument_specs,
    count,
    strip_decisions,
    workspace_specs,
)
from graphfuse.lowering.codegen.cpu.pipeline import cpu_pipeline_text, parallel_loops, run_cpu_pipeline
from graphfuse.lowering.codegen.cpu.specs import ArgSpec
from graphfuse.lowering.run_checks import CheckSite, site_of

__all__ = ["LoweredEntry", "lower_entry", "lowered_entry"]


@dataclass
class LoweredEntry:
    """An entry function lowered to the LLVM dialect, as the JIT and the ahead-of-time compiler take it.

    The entry takes one ``!llvm.ptr``: a table of memref descriptor addresses, the inputs', the outputs' and the
    workspace buffers' in that order (``pack-arguments``).
    """

    context: ir.Context
    module: ir.Module
    #: the entry function's name
    entry: str
    inputs: list[ArgSpec]
    outputs: list[ArgSpec]
    #: the intermediate buffers the caller allocates once (statically shaped)
    workspace: list[ArgSpec]
    #: the runtime libraries the code calls into (the OpenMP runtime of parallel loops)
    libraries: list[str]
    #: vector stores into the results made non-temporal: they need BUFFER_ALIGNMENT-aligned result buffers
    streamed_stores: int
    #: the run-time checks (lowering/run_checks.py); when there are any, the last workspace buffer is their status
    #: word (``memref<1xi32>``), cleared before a call and non-zero after it when one failed
    checks: tuple[CheckSite, ...] = ()


def lower_entry(text: str, entry: str, threads: int, streaming: int | None = None,
                buffer_pool: str | None = None) -> LoweredEntry:
    """Parse the linalg text into a new context and lower ``@entry`` to the LLVM dialect with the CPU pipeline
    (:func:`~graphfuse.lowering.codegen.cpu.pipeline.cpu_pipeline_text`).

    ``streaming`` is the loop-nest footprint from which stores into the results are made non-temporal
    (:mod:`graphfuse.lowering.streaming`; None: never).  ``buffer_pool``: the library whose allocation functions
    the code calls (:mod:`graphfuse.lowering.buffer_pool`; None: malloc and free).
    """
    context = new_context()
    with context, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise GraphfuseError(from_mlir_error(e)) from None
        if ops_named(module, "graph."):
            raise GraphfuseError("compile_linalg expects linalg/tensor/arith/math IR; lower graph ops first")
        run_cpu_pipeline(module, cpu_pipeline_text(entry, threads, streaming, buffer_pool is not None))
        libraries = parallel_loops(threads)[1] + ([buffer_pool] if buffer_pool else [])
        return lowered_entry(context, module, entry, libraries)


def lowered_entry(context: ir.Context, module: ir.Module, entry: str, libraries: list[str]) -> LoweredEntry:
    """What the JIT needs of ``module``, lowered by the CPU pipeline: its entry's decisions, read from the entry's
    attributes and then removed (LLVM need not see them).  ``libraries`` are the runtime libraries of its parallel
    loops (:func:`~graphfuse.lowering.codegen.cpu.pipeline.parallel_loops`)."""
    func = next((op for op in module.body.operations if op.operation.name == "llvm.func"
                 and ir.StringAttr(op.attributes["sym_name"]).value == entry), None)
    if func is None or ENTRY not in func.attributes:
        raise GraphfuseError(f"@{entry} is not an entry lowered by the CPU pipeline")
    inputs, outputs = argument_specs(func)
    checks = tuple(site_of(ir.DictAttr(site)) for site in ir.ArrayAttr(func.attributes[CHECKS])) \
        if CHECKS in func.attributes else ()
    lowered = LoweredEntry(context, module, entry, inputs, outputs, workspace_specs(func), libraries,
                           count(func, STREAMED_STORES), checks)
    strip_decisions(module)
    return lowered
