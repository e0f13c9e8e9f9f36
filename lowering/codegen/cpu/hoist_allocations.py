"""hoist-allocations: the entry's static intermediate buffers become arguments the runtime allocates once; those of
dynamic size are freed after their last use.

The static buffers' types are recorded on the entry (``graphfuse.cpu.workspace``, and ``graphfuse.cpu.arena`` when the
first is the byte arena the intermediates share): the runtime allocates them from that list.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.matching import op_id, ops_named
from graphfuse.lowering.codegen.cpu.buffers import ARENA_ALIGNMENT, top_level_op
from graphfuse.lowering.codegen.cpu.entry import ARENA, add_workspace, entry_function
from graphfuse.lowering.codegen.cpu.specs import ArgSpec, numpy_dtype
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["HoistAllocations", "hoist_allocations"]


@dataclass(frozen=True)
class HoistAllocations(GraphPass):
    name: ClassVar[str] = "hoist-allocations"
    summary: ClassVar[str] = ("Make the entry's static intermediate buffers workspace arguments, allocated once by "
                              "the caller, and free those of dynamic size after their last use (after bufferization)")
    arena: bool = option(True, "buffers are views of one byte arena, those whose lifetimes do not overlap sharing "
                               "its bytes")

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        specs = hoist_allocations(func, self.arena)
        # The types as allocated (the argument of a buffer with a layout has none): the runtime's specs of them.
        add_workspace(func, [ir.Type.parse(spec.type_str) for spec in specs])
        if specs and specs[0].dtype == np.dtype(np.uint8):  # only the arena's spec is of bytes without a sign
            func.attributes[ARENA] = ir.UnitAttr.get()


def _lift_branch_buffers(func, block: ir.Block) -> None:
    """Move each static ``memref.alloc`` in a branch of the entry (``scf.if`` regions, no loop around it) to the
    start of the entry, where it becomes workspace like the others: buffer-loop-hoisting takes a loop's static
    buffers out of it into the branch the loop is in (a linear layer's path for a few rows)."""
    first = block.operations[0]
    for op in ops_named(func, "memref.alloc"):
        if len(op.operands) or op.parent is None or op.parent.name != "scf.if":
            continue
        parent = op.parent
        while parent is not None and parent.name == "scf.if":
            parent = parent.parent
        if parent is not None and parent.name == "func.func":
            op.move_before(first)


def hoist_allocations(func, arena: bool = False) -> list[ArgSpec]:
    """Turn the entry's statically shaped intermediate buffers into arguments the runtime allocates once, and free
    the others after their last use.

    Bufferization gives every intermediate a ``memref.alloc``; allocating them
    on every call costs page faults (a fresh 4 MiB buffer costs more than
    the loop that fills it) and they would need deallocation.  Each top-level
    static ``memref.alloc`` becomes a trailing function argument instead: a
    workspace array owned by the CompiledFunction and reused by every call
    (calls are serialized by its lock).  With ``arena``, the buffers are
    views of one byte array instead, buffers whose lifetimes do not overlap
    sharing its bytes (:func:`_pack_buffers`).  A buffer of dynamic size
    is allocated when the entry runs and freed after its last use
    (:func:`_free_dynamic_buffers`); one allocated in a loop without being
    freed there is refused: nothing may leak.
    """
    block = func.regions[0].blocks[0]
    _lift_branch_buffers(func, block)
    for op in list(block.operations):
        if op.operation.name == "memref.dealloc":  # the runtime owns the buffers; a dealloc would end no lifetime
            op.operation.erase()
    specs: list[ArgSpec] = []
    types: list[ir.Type] = []
    if arena:
        specs, types = _pack_buffers(block)
    _free_dynamic_buffers(block)
    for op in list(block.operations):
        if op.operation.name != "memref.alloc" or len(op.operands):
            continue
        t = ir.MemRefType(op.results[0].type)
        specs.append(ArgSpec(tuple(t.shape), numpy_dtype(t.element_type, "workspace"), str(t)))
        types.append(ir.MemRefType.get(t.shape, t.element_type))
        arg = block.add_argument(types[-1], op.location)
        op.results[0].replace_all_uses_with(arg)
        op.operation.erase()
    for op in ops_named(func, "memref.alloc"):
        if not any(use.owner.name == "memref.dealloc" for use in op.results[0].uses):
            raise GraphfuseError([Diagnostic(
                "error", f"a buffer is allocated inside a loop ({op.results[0].type}); this would leak",
                source_loc(op.location))])
    if specs:
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = [*ftype.inputs, *types]
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        if "arg_attrs" in func.attributes:
            attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})] * len(specs))
    return specs


#: Terminators that hand a buffer to their parent op's results (an ``scf.if`` takes no buffer operand).
_REGION_EXITS = frozenset({"scf.yield", "scf.condition"})


def _lifetime(alloc: ir.Operation, at: int, block: ir.Block, position: dict) -> tuple[int, int]:
    """The positions in ``block`` of the first and last top-level ops using buffer ``alloc`` (at position ``at``)
    or a value derived from it: a view, a loop or ``scf.if`` result."""
    first, last, pending, seen = len(position), at, [alloc.results[0]], set()
    while pending:
        for use in pending.pop().uses:
            owner = use.owner.operation
            user = position[op_id(top_level_op(owner, block))]
            first, last = min(first, user), max(last, user)
            if op_id(owner) not in seen:
                seen.add(op_id(owner))
                pending.extend(r for r in owner.results if isinstance(r.type, ir.MemRefType))
                if owner.name in _REGION_EXITS:  # yielded out of a region: the parent's results are the buffer
                    pending.extend(r for r in owner.parent.results if isinstance(r.type, ir.MemRefType))
    return min(first, last), last


def _free_dynamic_buffers(block: ir.Block) -> None:
    """Free each top-level buffer of dynamic size right after the last top-level op using it.

    Its size is known only when the entry runs (a dim of an input), so it cannot be a view of the workspace the
    runtime allocates before the call: it is allocated where bufferization put it and freed as soon as it is
    dead.  One that the entry returns, or that a use after the entry's terminator would need, is refused.
    """
    from mlir.dialects import memref

    ops = [op.operation for op in block.operations]
    position = {op_id(op): k for k, op in enumerate(ops)}
    for k, op in enumerate(ops):
        if op.name != "memref.alloc" or not len(op.operands):
            continue
        _, last = _lifetime(op, k, block, position)
        if ops[last].name == "func.return":
            raise GraphfuseError([Diagnostic(
                "error", f"intermediate buffer {op.results[0].type} of dynamic size is returned by the entry",
                source_loc(op.location))])
        with ir.InsertionPoint.after(ops[last]), op.location:
            memref.DeallocOp(op.results[0])


def _pack_buffers(block: ir.Block) -> tuple[list[ArgSpec], list[ir.Type]]:
    """Make the identity-layout static ``memref.alloc`` ops of ``block`` views of one byte arena argument.

    A buffer is live from the first to the last top-level op that uses it
    or a value derived from it (a view, a loop or ``scf.if`` result; bufferization puts
    the allocations first); a buffer first used after another's last use
    takes its bytes (best fit among the free blocks).  A graph of thousands of intermediates needs a few of them at a
    time, and each call passes one descriptor for all of them.  Returns the
    arena's spec and type (none when there is nothing to pack).
    """
    from mlir.dialects import arith, memref

    ops = [op.operation for op in block.operations]
    position = {op_id(op): k for k, op in enumerate(ops)}
    buffers = []  # (alloc, first, last, bytes)
    for k, op in enumerate(ops):
        if op.name != "memref.alloc" or len(op.operands):
            continue
        t = ir.MemRefType(op.results[0].type)
        identity = isinstance(t.layout, ir.AffineMapAttr) and (
            ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(t.rank))
        if not t.has_static_shape or not identity or t.memory_space is not None:
            continue
        first, last = _lifetime(op, k, block, position)
        size = math.prod(t.shape) * numpy_dtype(t.element_type, "workspace").itemsize
        buffers.append((op, first, last, -(-max(size, 1) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT))
    if not buffers:
        return [], []
    buffers.sort(key=lambda buffer: buffer[1])
    free: list[tuple[int, int]] = []  # (bytes, offset), sorted
    live: list[tuple[int, int, int]] = []  # heap of (last use, offset, bytes)
    offsets, end = [], 0
    for _, first, last, size in buffers:
        while live and live[0][0] < first:
            _, offset, freed = heapq.heappop(live)
            bisect.insort(free, (freed, offset))
        k = bisect.bisect_left(free, (size, -1))
        if k < len(free):
            found, offset = free.pop(k)
            if found > size:
                bisect.insort(free, (found - size, offset + size))
        else:
            offset, end = end, end + size
        heapq.heappush(live, (last, offset, size))
        offsets.append(offset)
    arena_type = ir.MemRefType.get([end], ir.IntegerType.get_signless(8))
    arena = block.add_argument(arena_type, ir.Location.unknown())
    index = ir.IndexType.get()
    for (alloc, *_), offset in zip(buffers, offsets, strict=True):
        with ir.InsertionPoint(alloc), alloc.location:
            view = memref.ViewOp(alloc.results[0].type, arena, arith.constant(index, offset), []).result
        alloc.results[0].replace_all_uses_with(view)
        alloc.erase()
    return [ArgSpec((end,), np.dtype(np.uint8), str(arena_type))], [arena_type]
