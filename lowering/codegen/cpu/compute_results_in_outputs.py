"""compute-results-in-outputs: a result computed in a buffer of its own, then copied whole into its output,
is computed in the output."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import memref

from graphfuse.lowering.codegen.cpu.buffers import contiguous, loop_result_buffer
from graphfuse.lowering.codegen.cpu.entry import argument_counts, entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ComputeResultsInOutputs", "compute_results_in_outputs"]


@dataclass(frozen=True)
class ComputeResultsInOutputs(GraphPass):
    name: ClassVar[str] = "compute-results-in-outputs"
    summary: ClassVar[str] = ("Compute a result allocated apart, then copied whole into its output argument, in "
                              "that output (after bufferization)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        inputs, _ = argument_counts(func)
        compute_results_in_outputs(func, list(func.regions[0].blocks[0].arguments)[inputs:])


def compute_results_in_outputs(func, outputs: list[ir.Value]) -> None:
    """Let a result computed in a buffer of its own and then copied whole into its output be computed there.

    Empty-tensor elimination does not see through reshapes: a result viewed with another shape while it
    is computed (a matmul's C as [M, N / panel, panel]) gets a buffer of its own and one more pass over
    memory to copy it out.  When the copy is the output's only use and its source is, through reshapes
    and the loops writing it in place, an allocation of the output's type (an identity layout), that
    allocation is the output; an allocation of another static shape with the same elements in the same
    order (a [M, N] matmul result copied into a [B, S, N] output) is the output reshaped.
    """
    block = func.regions[0].blocks[0]
    for op in list(block.operations):
        op = op.operation
        if op.name != "memref.copy" or op.operands[1] not in outputs:
            continue
        output = op.operands[1]
        if sum(1 for _ in output.uses) != 1:
            continue
        source = loop_result_buffer(op.operands[0])
        while not isinstance(source.owner, ir.Block) and source.owner.name in ("memref.expand_shape",
                                                                              "memref.collapse_shape"):
            source = loop_result_buffer(source.owner.operands[0])
        if isinstance(source.owner, ir.Block) or source.owner.name != "memref.alloc":
            continue
        if source.owner.operation.parent != func.operation:  # an allocation of the entry's body, used once
            continue
        if source.type != output.type and not _same_elements(source.type, output.type):
            continue
        op.erase()
        allocation = source.owner.operation
        replacement = output
        if source.type != output.type:
            with ir.InsertionPoint(allocation), allocation.location:
                replacement = _reshaped(output, ir.MemRefType(source.type))
        source.replace_all_uses_with(replacement)
        allocation.erase()


def _same_elements(a: ir.Type, b: ir.Type) -> bool:
    """Whether ``a`` and ``b`` are static, contiguous (identity layout) memrefs of ranks >= 1 with the same
    element type, memory space and element count: the same bytes in the same order under two shapes."""
    if not (isinstance(a, ir.MemRefType) and isinstance(b, ir.MemRefType)):
        return False
    a, b = ir.MemRefType(a), ir.MemRefType(b)
    return (a.rank >= 1 and b.rank >= 1
            and contiguous(a) and contiguous(b) and a.get_strides_and_offset()[1] == 0
            and b.get_strides_and_offset()[1] == 0 and a.element_type == b.element_type
            and a.memory_space == b.memory_space and math.prod(a.shape) == math.prod(b.shape))


def _reshaped(value: ir.Value, target: ir.MemRefType) -> ir.Value:
    """``value`` (a contiguous memref) viewed as ``target``: collapsed to one dimension, then expanded."""
    source = ir.MemRefType(value.type)
    count = math.prod(source.shape)
    if source.rank > 1:
        flat = ir.MemRefType.get([count], source.element_type, memory_space=source.memory_space)
        value = memref.collapse_shape(flat, value, [list(range(source.rank))])
    if target.rank > 1:
        value = memref.expand_shape(target, value, [list(range(target.rank))], [], list(target.shape))
    return value
