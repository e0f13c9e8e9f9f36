"""copy-long-concats: long concatenations copied into one buffer before bufferization, whose analysis of them
then stays linear.

``graph.concat`` lowers to a ``tensor.empty`` of the result and one
``tensor.insert_slice`` per operand (more than
:data:`~graphfuse.lowering.shape_ops.CONCAT_GROUP` operands in groups, each
built in a destination of its own, then inserted into the result).  Every
value of such a chain is the one buffer once bufferized, and one-shot
bufferization checks each insert against the reads and writes of every other:
its analysis grew faster than the square of the operand count (a static
concat of 1,000 operands: 11 s of a 15 s compile; 2,000: 26 s of 33 s).

:func:`copy_long_concats` turns a static chain of more than ``CONCAT_GROUP``
operands (its groups flattened) into the destination-passing form that
bufferization reads one op at a time: a ``memref.alloc`` of the result, one
``bufferization.materialize_in_destination`` of each operand into a subview of
it, and a ``bufferization.to_tensor`` of the buffer in place of the chain's
value.  What changes at run time: an operand computed by an op is computed in a
buffer of its own and copied, where empty-tensor elimination let the tensor
chain compute it in the result; the result's buffer still becomes an output
buffer when the concatenation is a result (``compute-results-in-outputs``).  Shorter chains keep that: their analysis
is quick.  After it, 1,000 operands compile in 5 s and 2,000 in 12 s, most of
it LLVM's, in proportion to the operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import bufferization, memref

from graphfuse.lowering.shape_ops import CONCAT_GROUP
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["CopyLongConcats", "copy_long_concats"]


@dataclass(frozen=True)
class CopyLongConcats(GraphPass):
    name: ClassVar[str] = "copy-long-concats"
    summary: ClassVar[str] = "Copy the operands of long static concatenations into one buffer before bufferization"
    min_pieces: int = option(CONCAT_GROUP + 1, "the fewest operands a concatenation is copied from")

    def run(self, module: ir.Module, context: PassContext) -> None:
        copy_long_concats(module, self.min_pieces)

#: The alignment one-shot bufferization gives the buffers it allocates.
_ALIGNMENT = 64


@dataclass(frozen=True)
class _Piece:
    """An operand of a concatenation: the value, the op before which it is copied, and where it goes."""

    value: ir.Value
    #: the insert that placed it, or that placed its group: the writes keep the chain's order where they overlap
    insert: ir.Operation
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class _Concat:
    """A chain of inserts flattened: the operands it places, and its inserts (its groups' included), last ones
    first: the order they can be erased in."""

    pieces: list[_Piece]
    inserts: list[ir.Operation]


def _only_use(value: ir.Value) -> tuple[ir.Operation, int] | None:
    """(owner, operand number) of the single use of ``value``, or None."""
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    return uses[0].owner.operation, uses[0].operand_number


def _static_insert(op: ir.Operation) -> bool:
    """A ``tensor.insert_slice`` with static offsets, sizes and strides, of a source of the destination's rank."""
    if op.name != "tensor.insert_slice" or len(op.operands) != 2:
        return False
    source, dest = (ir.RankedTensorType(v.type) for v in op.operands)
    return source.has_static_shape and dest.has_static_shape and source.rank == dest.rank


def _static_array(op: ir.Operation, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _chain_links(first: ir.Operation) -> list[ir.Operation]:
    """The inserts of the chain ``first`` starts: each writes into the previous one's result, its only use, in
    ``first``'s block."""
    links = [first]
    while (use := _only_use(links[-1].results[0])) is not None:
        owner, number = use
        if number != 1 or not _static_insert(owner) or owner.block != first.block:
            break
        links.append(owner)
    return links


#: each chain's value -> the ``tensor.empty`` it starts from and its inserts
_Chains = dict[ir.Value, tuple[ir.Operation, list[ir.Operation]]]


def _inserts_group(link: ir.Operation, chains: _Chains) -> bool:
    """Whether ``link`` inserts the whole value of another chain (a group), its only use, with unit strides."""
    source = link.operands[0]
    return source in chains and _only_use(source) is not None and \
        all(s == 1 for s in _static_array(link, "static_strides"))


def _flatten(value: ir.Value, chains: _Chains, base: tuple[int, ...], at: ir.Operation | None = None) -> _Concat:
    """The chain of ``value`` with the operands of its groups in place of the groups, offset by ``base``; ``at``:
    the insert of a group, where its operands are copied."""
    links = chains[value][1]
    pieces: list[_Piece] = []
    groups: list[ir.Operation] = []
    for link in links:
        offsets = tuple(b + o for b, o in zip(base, _static_array(link, "static_offsets"), strict=True))
        if _inserts_group(link, chains):
            group = _flatten(link.operands[0], chains, offsets, at or link)
            pieces += group.pieces
            groups[:0] = group.inserts
        else:
            pieces.append(_Piece(link.operands[0], at or link, offsets, _static_array(link, "static_sizes"),
                                 _static_array(link, "static_strides")))
    return _Concat(pieces, [*reversed(links), *groups])


def _row_major_strides(shape: list[int]) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def _copy_into_buffer(empty: ir.Operation, pieces: list[_Piece], result: ir.Value) -> None:
    """Replace ``result`` (the chain's value) by a buffer the pieces are copied into."""
    tensor_type = ir.RankedTensorType(empty.results[0].type)
    shape = list(tensor_type.shape)
    with ir.InsertionPoint(empty), empty.location:
        buffer = memref.AllocOp(ir.MemRefType.get(shape, tensor_type.element_type), [], [],
                                alignment=_ALIGNMENT).result
    steps = _row_major_strides(shape)
    for piece in pieces:
        layout = ir.StridedLayoutAttr.get(sum(o * s for o, s in zip(piece.offsets, steps, strict=True)),
                                          [s * t for s, t in zip(steps, piece.strides, strict=True)])
        view_type = ir.MemRefType.get(list(piece.sizes), tensor_type.element_type, layout)
        with ir.InsertionPoint(piece.insert), piece.insert.location:
            view = memref.SubViewOp(view_type, buffer, [], [], [], list(piece.offsets), list(piece.sizes),
                                    list(piece.strides)).result
            bufferization.MaterializeInDestinationOp(None, piece.value, view, writable=True)
    last = result.owner
    with ir.InsertionPoint(last), last.location:  # restrict: the buffer is reached through this tensor alone
        whole = bufferization.ToTensorOp(tensor_type, buffer, restrict=True, writable=True).result
    result.replace_all_uses_with(whole)


def copy_long_concats(module: ir.Module, min_pieces: int = CONCAT_GROUP + 1) -> int:
    """Copy the static insert chains in ``module``'s function bodies that place at least ``min_pieces`` operands
    into buffers (see the module's docstring); returns how many.  Chains inside loops are left as they are."""
    count = 0
    for func in module.body.operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        chains: _Chains = {}
        empties: list[ir.Operation] = []  # those chains start from
        for op in func.regions[0].blocks[0].operations:
            empty = op.operation
            if empty.name != "tensor.empty":
                continue
            # CSE may have merged the empty tensors of several chains: each chain starts at a use.
            firsts = [use.owner.operation for use in empty.results[0].uses if use.operand_number == 1]
            for first in firsts:
                if _static_insert(first) and first.block == empty.block:
                    links = _chain_links(first)
                    chains[links[-1].results[0]] = (empty, links)
            if firsts:
                empties.append(empty)
        groups = {link.operands[0] for _, links in chains.values() for link in links if _inserts_group(link, chains)}
        for value, (empty, _) in list(chains.items()):
            if value in groups:
                continue
            concat = _flatten(value, chains, (0,) * ir.RankedTensorType(value.type).rank)
            if len(concat.pieces) < min_pieces:
                continue
            with module.context, ir.Location.unknown():
                _copy_into_buffer(empty, concat.pieces, value)
            for op in concat.inserts:
                op.erase()
            count += 1
        for empty in empties:
            if not any(True for _ in empty.results[0].uses):
                empty.erase()
    return count
