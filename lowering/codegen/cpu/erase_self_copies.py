"""erase-self-copies: no ``memref.copy`` of a buffer into itself, seen through views and loops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.buffers import loop_result_buffer
from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["EraseSelfCopies", "erase_self_copies"]


@dataclass(frozen=True)
class EraseSelfCopies(GraphPass):
    name: ClassVar[str] = "erase-self-copies"
    summary: ClassVar[str] = "Erase the entry's copies of a buffer into itself (a row computed in place)"

    def run(self, module: ir.Module, context: PassContext) -> None:
        erase_self_copies(entry_function(module, self.name))


def erase_self_copies(func) -> None:
    """Erase ``memref.copy %a, %a`` (a result, or a tiled loop's row, already computed in place).

    Each would be a call into the runtime library's copy routine, once per row inside a tiled loop.
    Bufferization writes a row loop's result back through a second, identical ``memref.subview`` of
    the same buffer; that copy is a self copy too, and so are the copy of a loop's result (the buffer
    the loop writes in place) into that buffer (a parallel task's block of a tiled matmul) and the copy
    of a buffer viewed with another shape and back (:func:`_unreshaped`).
    """
    for op in ops_named(func, "memref.copy"):
        if _same_view(op.operands[0], op.operands[1]):
            op.erase()


def _unreshaped(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is, seen through the loops writing it in place and through an expand_shape
    collapsed back to the type it expanded (a matmul's C viewed as panels while it is computed)."""
    while True:
        value = loop_result_buffer(value)
        if isinstance(value.owner, ir.Block) or value.owner.name != "memref.collapse_shape":
            return value
        expanded = loop_result_buffer(value.owner.operands[0])
        if isinstance(expanded.owner, ir.Block) or expanded.owner.name != "memref.expand_shape":
            return value
        if expanded.owner.operands[0].type != value.type:
            return value
        value = expanded.owner.operands[0]


def _same_view(a: ir.Value, b: ir.Value) -> bool:
    """Whether ``a`` and ``b`` are one buffer: the same value, or identical subviews of one buffer."""
    a, b = _unreshaped(a), _unreshaped(b)
    if a == b:
        return True
    if isinstance(a.owner, ir.Block) or isinstance(b.owner, ir.Block):
        return False
    x, y = a.owner.operation, b.owner.operation
    if x.name != "memref.subview" or y.name != "memref.subview" or a.type != b.type:
        return False
    if list(x.operands) != list(y.operands):
        return False
    return all(x.attributes[name] == y.attributes[name]
               for name in ("static_offsets", "static_sizes", "static_strides"))
