"""free-loop-buffers: a buffer allocated in a loop body, too large for the stack, is freed at the end of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import op_id, ops_named
from graphfuse.lowering.codegen.cpu.buffers import buffer_users, in_loop_body
from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["FreeLoopBuffers", "free_loop_buffers"]


@dataclass(frozen=True)
class FreeLoopBuffers(GraphPass):
    name: ClassVar[str] = "free-loop-buffers"
    summary: ClassVar[str] = "Free each buffer a loop body allocates at the end of that body (after stack-loop-buffers)"

    def run(self, module: ir.Module, context: PassContext) -> None:
        free_loop_buffers(entry_function(module, self.name))


def free_loop_buffers(func) -> int:
    """Free at the end of its loop body each buffer still allocated in one (too large for the stack).

    A ``memref.alloc`` in a loop body (a task's scratch larger than :data:`STACK_BUFFER_MAX_BYTES`: Whisper's
    attention over 1500 frames) gets a ``memref.dealloc`` before the body's terminator, so each iteration frees
    what it allocated; the cost, a malloc and a free per task, is small beside the task's work.  A buffer the
    terminator reads (yielded out of the iteration, itself or a view of it) is left for
    ``hoist-allocations`` to refuse.  Returns how many buffers it frees.
    """
    freed = 0
    for op in ops_named(func, "memref.alloc"):
        if not in_loop_body(op):
            continue
        block = op.block
        terminator = block.operations[len(block.operations) - 1]
        if any(op_id(user) == op_id(terminator) for user in buffer_users(op.results[0])):
            continue
        with ir.InsertionPoint(terminator), op.location:
            ir.Operation.create("memref.dealloc", operands=[op.results[0]])
        freed += 1
    return freed
