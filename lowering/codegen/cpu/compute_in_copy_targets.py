"""compute-in-copy-targets: a buffer that one loop nest writes whole and that is then copied whole into another
view is computed in that view."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import op_id
from graphfuse.lowering.codegen.cpu.buffers import VIEWS
from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ComputeInCopyTargets", "compute_in_copy_targets"]


@dataclass(frozen=True)
class ComputeInCopyTargets(GraphPass):
    name: ClassVar[str] = "compute-in-copy-targets"
    summary: ClassVar[str] = ("Compute a buffer one linalg op writes whole, then copied whole into a view (a block "
                              "of a concatenation), in that view (after bufferization)")
    statistics: ClassVar[dict[str, str]] = {"num-redirected": "Writers moved to compute in a copy's target"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        context.count("num-redirected", compute_in_copy_targets(entry_function(module, self.name)))


#: Ops of the entry's body that neither read nor write memory the analysis tracks.
_NO_MEMORY_EFFECT_PREFIXES = ("arith.", "math.", "index.", "ub.")
_NO_MEMORY_EFFECT = VIEWS | {"memref.alloc", "memref.alloca", "memref.dim", "memref.extract_strided_metadata",
                             "memref.get_global", "memref.load", "vector.transfer_read", "vector.load",
                             "builtin.unrealized_conversion_cast", "affine.apply", "func.return"}
#: Ops writing the buffer of one operand (its number).
_WRITES_OPERAND = {"memref.copy": 1, "memref.store": 1, "vector.transfer_write": 1, "vector.store": 1,
                   "memref.dealloc": 0}
#: The class of every argument of the entry: the caller's buffers may overlap, so they are one buffer here.
_ARGUMENTS = -1

_Buffer = tuple[int, int]  # (op id of the root's owner, result number), or (_ARGUMENTS, 0)


def compute_in_copy_targets(func: ir.Operation) -> int:
    """Let ``linalg op -> %a; memref.copy %a, %view`` write ``%view`` itself; returns how many were redirected.

    A long concatenation is bufferized as a buffer per operand, each copied
    into its block of the result (``copy-long-concats``): a loop nest and a
    copy per operand, twice the memory traffic, and twice the functions for
    ``outline-chunks`` and LLVM.  In the entry's body, a ``memref.copy``
    qualifies when its source is an allocation used by nothing but the copy
    and one earlier op writing all of it without reading it: a
    ``linalg.fill``, or a ``linalg.generic`` of parallel loops with that one
    output at a permutation map, its value unread.  The writer moves to just
    before the copy and writes the copy's target; the copy and the
    allocation go.  Moving it is safe when no op between the two writes a
    buffer it reads (a view's buffer is its root allocation; the entry's
    arguments count as one buffer) and none has effects the analysis does
    not know (calls, loops). The target's own reads and writes in between
    keep their order: the writer now writes it where the copy did.  It must
    not read the target's buffer either.
    """
    block = func.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    position = {op_id(op): k for k, op in enumerate(ops)}
    writes: dict[_Buffer, list[int]] = {}
    barriers: list[int] = []
    for k, op in enumerate(ops):
        written = _written(op)
        if written is None:
            barriers.append(k)
            continue
        for value in written:
            writes.setdefault(_buffer(value), []).append(k)

    def written_between(buffer: _Buffer, after: int, before: int) -> bool:
        found = writes.get(buffer, [])
        k = bisect_right(found, after)
        return k < len(found) and found[k] < before

    redirected = 0
    for copy in ops:
        if copy.name != "memref.copy":
            continue
        source, target = copy.operands[0], copy.operands[1]
        writer = _sole_writer(source, copy)  # in the copy's block, so in ``position``
        if writer is None:
            continue
        if ir.MemRefType(source.type).shape != ir.MemRefType(target.type).shape:
            continue
        first, last = position[op_id(writer)], position[op_id(copy)]
        reads = {_buffer(value) for value in _inputs(writer) if isinstance(value.type, ir.MemRefType)}
        if _buffer(target) in reads or any(written_between(b, first, last) for b in reads):
            continue
        if (k := bisect_right(barriers, first)) < len(barriers) and barriers[k] < last:
            continue
        allocation = source.owner.operation
        writer.move_before(copy)
        writer.operands[_segments(writer)[0]] = target
        copy.erase()
        allocation.erase()
        redirected += 1
    return redirected


def _segments(op: ir.Operation) -> tuple[int, int]:
    """(inputs, outputs) of a linalg op."""
    sizes = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
    return sizes[0], sizes[1]


def _inputs(op: ir.Operation) -> list[ir.Value]:
    return list(op.operands)[:_segments(op)[0]]


def _written(op: ir.Operation) -> list[ir.Value] | None:
    """The memrefs ``op`` writes; None when it may have effects the analysis does not follow."""
    name = op.name
    if name in _NO_MEMORY_EFFECT or name.startswith(_NO_MEMORY_EFFECT_PREFIXES):
        return []
    if name in _WRITES_OPERAND:
        return [op.operands[_WRITES_OPERAND[name]]]
    if name.startswith("linalg.") and "operandSegmentSizes" in op.attributes:
        inputs, outputs = _segments(op)
        return [v for v in list(op.operands)[inputs:inputs + outputs] if isinstance(v.type, ir.MemRefType)]
    return None


def _buffer(value: ir.Value) -> _Buffer:
    """The buffer ``value`` views: its root through the view ops, the entry's arguments as one."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    if isinstance(value.owner, ir.Block):
        return (_ARGUMENTS, 0)
    return (op_id(value.owner), ir.OpResult(value).result_number)


def _sole_writer(source: ir.Value, copy: ir.Operation) -> ir.Operation | None:
    """The op writing all of ``source`` without reading it, when ``source`` is an allocation that op and
    ``copy`` alone use (in the same block), else None."""
    if isinstance(source.owner, ir.Block) or source.owner.name != "memref.alloc":
        return None
    if source.owner.operation.block != copy.block:
        return None
    users = [use.owner.operation for use in source.uses]
    others = [user for user in users if user != copy]
    if len(users) != 2 or len(others) != 1:
        return None
    writer = others[0]
    if writer.block != copy.block or not writer.name.startswith("linalg."):
        return None
    if "operandSegmentSizes" not in writer.attributes:
        return None
    inputs, outputs = _segments(writer)
    if outputs != 1 or writer.operands[inputs] != source or source in _inputs(writer):
        return None
    if writer.name == "linalg.fill":
        return writer
    if writer.name != "linalg.generic" or "reduction" in str(writer.attributes["iterator_types"]):
        return None
    output_map = ir.AffineMapAttr(ir.ArrayAttr(writer.attributes["indexing_maps"])[inputs]).value
    if not output_map.is_permutation:
        return None
    body = writer.regions[0].blocks[0]
    if any(True for _ in body.arguments[inputs].uses):
        return None
    return writer
