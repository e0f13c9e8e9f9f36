"""drop-results-in-outputs: the entry returns no buffer that is one of its output arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.buffers import loop_result_buffer
from graphfuse.lowering.codegen.cpu.entry import argument_counts, entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["DropResultsInOutputs", "drop_results_in_outputs"]


@dataclass(frozen=True)
class DropResultsInOutputs(GraphPass):
    name: ClassVar[str] = "drop-results-in-outputs"
    summary: ClassVar[str] = ("Drop the entry's returned buffers that are its output arguments, through loop results "
                              "(what drop-equivalent-buffer-results does not see)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        drop_results_in_outputs(func, *argument_counts(func))


def drop_results_in_outputs(func, n_inputs: int, n_outputs: int) -> None:
    """Drop returned buffers that are output arguments (through ``scf.for`` results).

    ``drop-equivalent-buffer-results`` does not see through a tiled loop whose
    iter_args start from the output buffer; the loop result is that buffer.
    It may already have dropped other results (an argument copied into its
    output buffer), so a returned value's position says nothing about its
    output: what counts is that it is one of the output arguments, each of
    which holds its result after the ``materialize_in_destination`` into it.
    """
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    if ret.operation.name != "func.return" or not len(ret.operands):
        return
    keep = []
    for value in ret.operands:
        buffer = loop_result_buffer(value)
        in_place = isinstance(buffer.owner, ir.Block) and buffer.owner == block and (
            n_inputs <= ir.BlockArgument(buffer).arg_number < n_inputs + n_outputs
        )
        if not in_place:
            keep.append(value)
    if len(keep) == len(ret.operands):
        return
    with ret.location, ir.InsertionPoint(ret):
        ir.Operation.create("func.return", operands=keep)
    ret.operation.erase()
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs), [v.type for v in keep]))
