"""hoist-stack-buffers: each stack buffer moves out of the loops around it, once they are lowered.

Runs after the parallel loops are lowered (to OpenMP or to plain loops), and only when ``stack-loop-buffers``
put buffers on the stack (``graphfuse.cpu.stack_buffers`` on the entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.buffers import LOOP_OPS
from graphfuse.lowering.codegen.cpu.entry import STACK_BUFFERS, count, entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["HoistStackBuffers", "hoist_stack_buffers"]


@dataclass(frozen=True)
class HoistStackBuffers(GraphPass):
    name: ClassVar[str] = "hoist-stack-buffers"
    summary: ClassVar[str] = ("Move stack buffers out of the loops around them (after the loops are lowered; when "
                              "stack-loop-buffers made any)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if count(entry_function(module, self.name), STACK_BUFFERS):
            hoist_stack_buffers(module)


def hoist_stack_buffers(module: ir.Module) -> None:
    """Move each stack buffer out of the loops around it, to the start of the block that owns its lifetime.

    An ``alloca`` inside a loop would take more stack on every iteration (a row's 4 KB, 8192 rows: past the
    stack's end).  It goes to the start of the nearest enclosing ``memref.alloca_scope`` (convert-scf-to-openmp
    wraps each parallel loop body in one: one buffer per iteration of each thread), OpenMP region or function
    (plain loops: one buffer per call).
    """
    for op in ops_named(module, "memref.alloca"):
        owner, crossed_loop = op.parent, False
        while owner is not None and owner.name not in {"memref.alloca_scope", "func.func", "llvm.func"} \
                and not owner.name.startswith("omp."):
            crossed_loop = crossed_loop or owner.name in LOOP_OPS
            owner = owner.parent
        if owner is None or not crossed_loop:
            continue
        block = owner.regions[0].blocks[0]
        op.move_before(block.operations[0])
