"""Run a transform script with the ops it rewrites moved, for its duration, into functions of their own.

``transform.structured.fuse_into_containing_op`` writes the producer and the loop it fuses into into a remark
before it tries (a remark it drops when the fusion succeeds).  Printing an op numbers and verifies the whole
body of its closest isolated-from-above ancestor, the function: so each fusion costs time in proportion to the
function, and a model's products, all in one function, cost in proportion to the model's size times their
number (wav2vec2: 50 ms per product, against 7 ms for the same product alone in a function; the matmul tiling
took 1.8 s of its 7.6 s compile).  :func:`isolated` outlines each cluster of ops (a product, its fill, its
epilogue) into a private function while the script runs and inlines it back afterwards, so the IR the script
leaves is the IR it would have left in place.

A cluster is outlined only when that is exact: its ops are top-level ops of one block, no op outside the
cluster reads one of its results before its last op, and no other cluster holds one of its ops (a fill
that several hold is first copied for each: fusing it would have copied it into each one's loops anyway).
The function gets copies of the constants and empty tensors the cluster reads (the script folds with their values, and
slices of an empty tensor into smaller empties: scratch buffers); the originals stay where they are and take
their uses back afterwards.  Any other value it reads from outside becomes an argument.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from graphfuse.dialect.matching import as_operation, nested_ops, op_id

__all__ = ["isolated"]

#: on a copy in the function: the index of its original in :attr:`_Outlined.originals`
_COPY_OF = "graph.isolated_copy_of"


def _copied(op: ir.Operation) -> bool:
    """Whether the function gets a copy of ``op`` rather than its value as an argument: constants (the script's
    folds may need their values) and empty tensors (their slices fold to smaller empties: scratch buffers).
    The original stays where it is and takes its uses back afterwards."""
    return op.name == "arith.constant" or (op.name == "tensor.empty" and not list(op.operands))


@dataclass
class _Outlined:
    function: ir.Operation
    call: ir.Operation
    #: the ops the function got copies of (:func:`_copied`): a copy that comes back is replaced by its original
    originals: list[ir.Operation]


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else as_operation(owner)


def _parent(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    return None if parent is None else as_operation(parent)


def _nested_ops(op: ir.Operation) -> list[ir.Operation]:
    """``op`` and every op nested in it."""
    return [op, *nested_ops(op)]


def _defined_inside(ops: Sequence[ir.Operation]) -> set[ir.Value]:
    values: set[ir.Value] = set()
    for top in ops:
        for op in _nested_ops(top):
            values.update(op.results)
            for region in op.regions:
                for block in region.blocks:
                    values.update(block.arguments)
    return values


def _top_level_ancestor(op: ir.Operation, block_owner: ir.Operation) -> ir.Operation | None:
    """The op of ``block_owner``'s body that is ``op`` or holds it."""
    op = op.operation
    while (parent := _parent(op)) is not None and parent != block_owner:
        op = parent
    return op if _parent(op) == block_owner else None


def _is_member(op: ir.Operation | None, members: set[int]) -> bool:
    return op is not None and op_id(op) in members


def _position(op: ir.Operation | None, order: dict[int, int]) -> int:
    return -1 if op is None else order.get(op_id(op), -1)


def _outline(module: ir.Module, cluster: Sequence[ir.Operation], name: str) -> _Outlined | None:
    """Move ``cluster`` into a new private function called where its last op was; None (nothing changed)
    when that would not be exact (module docstring)."""
    owner = _parent(cluster[0])
    if owner is None or any(_parent(op) != owner for op in cluster):
        return None
    block = cluster[0].block
    block_ops = [o.operation for o in block.operations]
    order = {op_id(op): i for i, op in enumerate(block_ops)}
    if any(op_id(op) not in order for op in cluster):
        return None
    members = {op_id(op) for op in cluster}
    ops = sorted(cluster, key=lambda op: order[op_id(op)])
    inside = _defined_inside(ops)
    last = order[op_id(ops[-1])]
    results: list[ir.Value] = []
    for op in ops:
        for result in op.results:
            outside = [use.owner for use in result.uses
                       if not _is_member(_top_level_ancestor(use.owner, owner), members)]
            if not outside:
                continue
            if any(_position(_top_level_ancestor(user, owner), order) <= last for user in outside):
                return None  # read between the cluster's ops: the call could not come after them all
            results.append(result)
    arguments: list[ir.Value] = []
    copied: list[ir.Operation] = []
    for op in ops:
        for nested in _nested_ops(op):
            for value in nested.operands:
                if value in inside or value in arguments:
                    continue
                source = _defining_op(value)
                if source is not None and _copied(source):
                    if source not in copied:
                        copied.append(source)
                else:
                    arguments.append(value)
    with ir.InsertionPoint(module.body), ops[0].location:
        function = func.FuncOp(name, ([v.type for v in arguments], [v.type for v in results]), visibility="private")
        entry = function.add_entry_block()
    with ir.InsertionPoint(entry), ops[0].location:
        ret = func.ReturnOp([])
    replacement: dict[ir.Value, ir.Value] = dict(zip(arguments, entry.arguments, strict=True))
    i64 = ir.IntegerType.get_signless(64)
    for index, source in enumerate(copied):
        clone = source.clone(ir.InsertionPoint(ret))
        clone.attributes[_COPY_OF] = ir.IntegerAttr.get(i64, index)
        replacement[source.results[0]] = clone.results[0]
    with ir.InsertionPoint(block_ops[last + 1]), ops[-1].location:  # a block ends in its terminator
        call = func.CallOp([v.type for v in results], ir.FlatSymbolRefAttr.get(name), arguments)
    for result, value in zip(results, call.results, strict=True):
        for use in list(result.uses):
            if not _is_member(_top_level_ancestor(use.owner, owner), members):
                use.owner.operation.operands[use.operand_number] = value
    for op in ops:
        op.move_before(ret)
        for nested in _nested_ops(op):
            for i, value in enumerate(nested.operands):
                if value in replacement:
                    nested.operands[i] = replacement[value]
    with ir.InsertionPoint(ret), ops[0].location:
        func.ReturnOp(results)
    ret.erase()
    return _Outlined(function.operation, call.operation, copied)


def _inline(outlined: _Outlined) -> None:
    """Move the function's body back before its call and erase both."""
    entry = outlined.function.regions[0].blocks[0]
    body = [op.operation for op in entry.operations]
    ret = body.pop()
    for argument, value in zip(entry.arguments, outlined.call.operands, strict=True):
        argument.replace_all_uses_with(value)
    for op in body:
        if _COPY_OF in op.attributes:
            original = outlined.originals[ir.IntegerAttr(op.attributes[_COPY_OF]).value]
            op.results[0].replace_all_uses_with(original.results[0])
            op.erase()
        else:
            op.move_before(outlined.call)
    for result, value in zip(outlined.call.results, ret.operands, strict=True):
        result.replace_all_uses_with(value)
    outlined.call.erase()
    outlined.function.erase()


def _private_fills(clusters: list[list[ir.Operation]]) -> list[list[ir.Operation]]:
    """``clusters`` with each ``linalg.fill`` that several of them hold replaced, in each, by a copy of its own
    placed before it, which that cluster's ops read instead; the original keeps its other readers (unread, the
    schedules erase it with the fills their fusions leave)."""
    holders: dict[int, list[int]] = {}
    fills: dict[int, ir.Operation] = {}
    for index, cluster in enumerate(clusters):
        for op in cluster:
            if op.name == "linalg.fill":
                holders.setdefault(op_id(op), []).append(index)
                fills[op_id(op)] = op
    result = [list(cluster) for cluster in clusters]
    for key, indices in holders.items():
        fill = fills[key]
        if len(indices) < 2:
            continue
        for index in indices:
            copy = fill.clone(ir.InsertionPoint(fill)).operation  # before the original: it dominates its readers
            for op in result[index]:
                if op == fill:
                    continue
                for nested in _nested_ops(op):
                    for i, value in enumerate(nested.operands):
                        if value == fill.results[0]:
                            nested.operands[i] = copy.results[0]
            result[index] = [copy if op == fill else op for op in result[index]]
    return result


@contextmanager
def isolated(module: ir.Module, clusters: Sequence[Sequence[ir.Operation]], prefix: str = "__isolated"
             ) -> Iterator[int]:
    """While the ``with`` body runs, each cluster of ``clusters`` lives in a private function of its own;
    yields how many were outlined.  Clusters that share an op other than a fill are left in place, all of them."""
    # an op two clusters share (a fill both products start from) stays in place with both: outlined with one,
    # the other's script would find a call where it fuses a producer.  A shared fill is copied instead, one
    # for each cluster (fusing it would have copied it into each cluster's loops anyway)
    clusters = _private_fills([[op.operation for op in cluster] for cluster in clusters])
    counts: dict[int, int] = {}
    for cluster in clusters:
        for key in {op_id(op) for op in cluster}:
            counts[key] = counts.get(key, 0) + 1
    outlined: list[_Outlined] = []
    try:
        for index, ops in enumerate(clusters):
            if any(counts[op_id(op)] > 1 for op in ops):
                continue
            done = _outline(module, ops, f"{prefix}{index}")
            if done is not None:
                outlined.append(done)
        yield len(outlined)
    finally:
        for done in outlined:
            _inline(done)
