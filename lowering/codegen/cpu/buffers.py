"""What several CPU passes ask of bufferized IR: loops, views of buffers, the buffer a loop result is.

Shared by the passes after bufferization (lowering/codegen/cpu/*.py); each question is answered one way for all.
"""

from __future__ import annotations

from mlir import ir

__all__ = ["ARENA_ALIGNMENT", "CONSTANTS", "LOOP_OPS", "VIEWS", "buffer_users", "contiguous", "in_loop_body",
           "loop_result_buffer", "top_level_op"]

#: Byte alignment of the buffers in the workspace arena, and of constant buffers (a cache line).
ARENA_ALIGNMENT = 64
#: Ops that define a value from nothing: cloned where used rather than passed around.
CONSTANTS = frozenset({"arith.constant", "ub.poison"})
#: Ops that only describe a buffer (no memory access): rebuilt where used rather than kept live across the entry.
VIEWS = frozenset({
    "memref.cast", "memref.collapse_shape", "memref.expand_shape", "memref.reinterpret_cast", "memref.subview",
    "memref.view",
})


#: Ops whose body runs once per iteration.
LOOP_OPS = frozenset({"scf.for", "scf.forall", "scf.parallel", "scf.while"})


def in_loop_body(op: ir.Operation) -> bool:
    """Whether ``op`` is in a loop body, directly or in a branch (``scf.if``) there: a grouped matmul's
    blocks of a size the group may not have are such branches."""
    parent = op.parent
    while parent is not None and parent.name == "scf.if":
        parent = parent.parent
    return parent is not None and parent.name in LOOP_OPS


def contiguous(t: ir.MemRefType) -> bool:
    """Whether memref type ``t`` is static and row-major without gaps (a copy of it is one ``memcpy``)."""
    if not t.has_static_shape:
        return False
    strides, _ = t.get_strides_and_offset()
    expected = 1
    for size, stride in zip(reversed(t.shape), reversed(strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def buffer_users(buffer: ir.Value) -> list[ir.Operation]:
    """The ops using ``buffer`` or a view of it (subviews, casts, reshapes), transitively."""
    found, pending = [], [buffer]
    while pending:
        for use in pending.pop().uses:
            user = use.owner
            found.append(user)
            if user.name in VIEWS:
                pending.extend(user.results)
    return found


def top_level_op(op: ir.Operation, block: ir.Block) -> ir.Operation:
    """The op of ``block`` that is or holds ``op``."""
    op = op.operation
    while op.block != block:
        op = op.parent.operation
    return op


def loop_result_buffer(value: ir.Value) -> ir.Value:
    """The buffer a bufferized ``scf.for`` result is: its iter_args init, where the body yields that buffer back.

    Followed through nested loops (a loop nest yields its inner loop's result); any other value is returned as it is.
    """
    while not isinstance(value.owner, ir.Block) and value.owner.name == "scf.for":
        loop = value.owner.operation
        index = ir.OpResult(value).result_number
        body = loop.regions[0].blocks[0]
        yielded = body.operations[len(body.operations) - 1].operands[index]
        if loop_result_buffer(yielded) != body.arguments[1 + index]:  # induction variable, then the iter_args
            break
        value = loop.operands[3 + index]
    return value
