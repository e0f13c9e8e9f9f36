"""check-bufferized-entry: refuse, before any code is made, an entry the runtime could not call.

Three checks, in this order: the results and the workspace must fit in this machine's memory together (numpy's
``empty`` of a few TiB may "succeed" and the process die later, inside compiled code); no boolean buffer
(``memref<...xi1>``) may be left, as LLVM's memref lowering aborts on its stores; and every result must have been
written in place into its output argument (the entry returns nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import nested_ops
from graphfuse.lowering.codegen.cpu.entry import argument_specs, entry_function, entry_name, workspace_specs
from graphfuse.lowering.codegen.cpu.specs import check_fits_in_memory, spec_bytes
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["CheckBufferizedEntry"]


@dataclass(frozen=True)
class CheckBufferizedEntry(GraphPass):
    name: ClassVar[str] = "check-bufferized-entry"
    summary: ClassVar[str] = ("Refuse an entry whose buffers exceed the memory, that stores booleans or that still "
                              "returns results (after hoist-allocations and bind-status-word)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        entry = entry_name(func)
        _, outputs = argument_specs(func)
        check_fits_in_memory(
            [*((f"result {k} {s.type_str}", spec_bytes(s)) for k, s in enumerate(outputs)),
             *((f"intermediate {s.type_str}", spec_bytes(s)) for s in workspace_specs(func))],
            f"@{entry}: its results and intermediate buffers",
        )
        _reject_i1_buffers(module, entry)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        if len(ftype.results):
            raise GraphfuseError(
                f"@{entry}: result(s) could not be written in place into the output buffers "
                f"(bufferized signature {ftype}); compute each result into a tensor.empty destination"
            )


def _reject_i1_buffers(module: ir.Module, entry: str) -> None:
    """Refuse IR with an i1 buffer left after bufferization.

    finalize-memref-to-llvm asserts (aborting the process) on stores to
    memref<...xi1>; boolean intermediates that elementwise fusion could not
    remove (e.g. a comparison with two users) would get there.
    """
    for op in nested_ops(module):
        for result in op.results:
            t = result.type
            if isinstance(t, ir.MemRefType) and str(t.element_type) == "i1":
                raise GraphfuseError(
                    f"@{entry}: a boolean (i1) intermediate would be stored in memory ({t}, from "
                    f"{op.name}); the CPU lowering cannot store i1 buffers yet"
                )
