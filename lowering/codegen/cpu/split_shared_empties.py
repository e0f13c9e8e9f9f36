"""split-shared-empties: every use of a ``tensor.empty`` gets its own, before bufferization."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import ops_named
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["SplitSharedEmpties", "split_shared_empties"]


@dataclass(frozen=True)
class SplitSharedEmpties(GraphPass):
    name: ClassVar[str] = "split-shared-empties"
    summary: ClassVar[str] = "Give every use of a tensor.empty a copy of its own (no false conflicts in bufferization)"

    def run(self, module: ir.Module, context: PassContext) -> None:
        split_shared_empties(module)


def split_shared_empties(module: ir.Module) -> None:
    """Give every use of a ``tensor.empty`` its own copy.

    CSE merges identical ``tensor.empty`` ops; one-shot bufferization then
    sees several ops writing into "the same" tensor, and inside tiled loops
    (``scf.for`` iter_args) that is a read-after-write conflict it refuses
    instead of copying around.  An empty tensor has no contents, so separate
    ones are always correct.
    """
    for op in ops_named(module, "tensor.empty"):
        uses = [(use.owner, use.operand_number) for use in op.results[0].uses]
        for owner, number in uses[1:]:
            copy = op.clone(ir.InsertionPoint(op))
            owner.operands[number] = copy.results[0]
