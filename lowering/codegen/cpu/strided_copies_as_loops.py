"""strided-copies-as-loops: copies between non-contiguous views become loops LLVM vectorizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import linalg

from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.buffers import contiguous
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["StridedCopiesAsLoops", "strided_copies_as_loops"]


@dataclass(frozen=True)
class StridedCopiesAsLoops(GraphPass):
    name: ClassVar[str] = "strided-copies-as-loops"
    summary: ClassVar[str] = "Rewrite memref.copy between non-contiguous views as linalg.copy (loops, not memrefCopy)"

    def run(self, module: ir.Module, context: PassContext) -> None:
        strided_copies_as_loops(module)


def strided_copies_as_loops(module: ir.Module) -> None:
    """Rewrite each ``memref.copy`` between views that are not contiguous (a slice, a part of a concat) as
    ``linalg.copy``, which becomes loops LLVM vectorizes.

    Lowered as it is, such a copy calls the runtime library's generic ``memrefCopy``, which copies one
    element at a time through its index arithmetic (a [1, 8, 256, 32] half of [1, 8, 256, 64], the
    slices and concat of a rotary embedding: about 0.3 ms each).
    """
    copies = ops_named(module, "memref.copy")
    for op in copies:
        source, target = op.operands
        if contiguous(ir.MemRefType(source.type)) and contiguous(ir.MemRefType(target.type)):
            continue
        with op.location, ir.InsertionPoint(op):
            linalg.copy(source, outs=[target])
        op.erase()
