"""forward-loop-results: a bufferized row loop's result is read from the buffer the loop writes in place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.buffers import loop_result_buffer
from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ForwardLoopResults", "forward_loop_results"]


@dataclass(frozen=True)
class ForwardLoopResults(GraphPass):
    name: ClassVar[str] = "forward-loop-results"
    summary: ClassVar[str] = "Read the entry's bufferized loop results from the buffers the loops write in place"

    def run(self, module: ir.Module, context: PassContext) -> None:
        forward_loop_results(entry_function(module, self.name))


def forward_loop_results(func: ir.Operation) -> None:
    """Read a bufferized row loop's result from the buffer the loop writes in place (its iter_args init).

    The loop result is that buffer; reading the buffer itself leaves no value
    live from the loop to its readers, which may be far down the entry.
    """
    block = func.regions[0].blocks[0]
    for op in block.operations:
        op = op.operation
        if op.name != "scf.for":
            continue
        for result in op.results:
            buffer = loop_result_buffer(result)
            if buffer != result:
                result.replace_all_uses_with(buffer)
