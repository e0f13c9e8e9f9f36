"""stack-loop-buffers: small static buffers allocated in a loop body go on the stack.

How many did is recorded on the entry (``graphfuse.cpu.stack_buffers``): ``hoist-stack-buffers`` moves them out
of the loops once those are lowered, and has nothing to do when there are none."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.buffers import in_loop_body
from graphfuse.lowering.codegen.cpu.entry import STACK_BUFFERS, entry_function, set_count
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["STACK_BUFFER_MAX_BYTES", "StackLoopBuffers", "stack_loop_buffers"]


#: Buffers allocated inside a loop body up to this size go on the stack (see stack_loop_buffers): a matmul
#: task's block of C (up to 288 rows of 8 panels of 16 floats with AVX2, of 32 with AVX-512: 288 KiB) fits;
#: each OpenMP thread has MiBs (libiomp5's default stack is 4 MiB; libgomp's threads, which JIT code uses beside
#: PyTorch, get the pthread default: 8 MiB under the usual stack limit), the calling thread 8.
STACK_BUFFER_MAX_BYTES = 512 << 10


@dataclass(frozen=True)
class StackLoopBuffers(GraphPass):
    name: ClassVar[str] = "stack-loop-buffers"
    summary: ClassVar[str] = "Allocate small static buffers of loop bodies on the stack (after bufferization)"

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        set_count(func, STACK_BUFFERS, stack_loop_buffers(func))


def stack_loop_buffers(func) -> int:
    """Small static buffers allocated in a loop body (a row's scratch) become stack buffers.

    Such a ``memref.alloc`` (row_chunks' stash of a row value the row's write reads back) becomes a
    ``memref.alloca`` where it is; ``hoist-stack-buffers`` moves it out of the loops once they are
    lowered to threads or to plain loops.  Larger or dynamic allocations in loops are left for
    ``hoist-allocations`` to refuse.  Returns how many buffers it put on the stack.
    """
    stacked = 0
    for op in ops_named(func, "memref.alloc"):
        if len(op.operands) or not in_loop_body(op):
            continue
        t = ir.MemRefType(op.results[0].type)
        bits = getattr(t.element_type, "width", 64)  # index and other widthless types: at most 64 bits
        if not t.has_static_shape or math.prod(t.shape) * max(1, bits // 8) > STACK_BUFFER_MAX_BYTES:
            continue
        with ir.InsertionPoint(op), op.location:
            stack = ir.Operation.create("memref.alloca", results=[t], operands=[],
                                        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])})
        op.results[0].replace_all_uses_with(stack.results[0])
        op.erase()
        stacked += 1
    return stacked
