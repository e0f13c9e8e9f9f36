"""The tiles of the copies of B into panels of groups of K (``@pack_pair_panels``) as vector code.

A tile writes ``a`` groups of ``g`` K steps (bf16 pairs, int8 quads: 32 bits a group) by ``b`` columns of a
panel, Bp [1, a, b, g], a run of ``g b`` values per group of K.  From a transposed Bt it reads Bt's ``b`` rows,
``g a`` values each: each group is one 32-bit word, so the tile is a transpose of ``b`` x ``a`` words (16 x 16:
upstream's shuffles of whole registers).  From B [K, N] it reads ``a`` groups of rows of ``b`` values and
interleaves each group's rows (``vector.interleave``: rows 0 and 1 of a pair; rows 0 and 2, 1 and 3, then the
two results, of a quad).  Vectorized by upstream, the groups' innermost dim would make every read or write one of
two or four values.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor, ub, vector

from graphfuse.lowering.schedules.library import apply_sequence

__all__ = ["PAIR_COPIES", "PAIR_COPY", "read_whole", "vectorize_pair_copies", "write_whole"]

#: Marks a tile of a copy into panels of pairs, and the task loop holding a copy's tiles (``pack.mlir``).
PAIR_COPY, PAIR_COPIES = "graph.pair_copy", "graph.pair_copies"
#: The two copies' permutations (the result's dims (panel, pair of K, column, half) in the source's order).
_FROM_TRANSPOSED, _FROM_ROWS = [0, 2, 1, 3], [2, 0, 3, 1]


def _collapsed(value: ir.Value, groups: list[list[int]]) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    shape = [1] * len(groups)
    for k, group in enumerate(groups):
        for d in group:
            shape[k] *= t.shape[d]
    return tensor.collapse_shape(ir.RankedTensorType.get(shape, t.element_type), value, groups)


def read_whole(value: ir.Value) -> ir.Value:
    """All of ``value`` (a static float or integer tensor) as one vector of its shape."""
    t = ir.RankedTensorType(value.type)
    zero = arith.constant(ir.IndexType.get(), 0)
    pad = arith.constant(t.element_type, 0 if isinstance(t.element_type, ir.IntegerType) else 0.0)
    return vector.transfer_read(ir.VectorType.get(t.shape, t.element_type), value, [zero] * t.rank,
                                ir.AffineMap.get_minor_identity(t.rank, t.rank), pad,
                                in_bounds=ir.ArrayAttr.get([ir.BoolAttr.get(True)] * t.rank))


def write_whole(values: ir.Value, dest: ir.Value) -> ir.Value:
    """``values`` (a vector of ``dest``'s shape) written over all of tensor ``dest``."""
    rank = ir.RankedTensorType(dest.type).rank
    zero = arith.constant(ir.IndexType.get(), 0)
    return vector.transfer_write(dest.type, values, dest, [zero] * rank, ir.AffineMap.get_minor_identity(rank, rank),
                                 in_bounds=ir.ArrayAttr.get([ir.BoolAttr.get(True)] * rank))


def _rewrite(op: ir.Operation) -> bool:
    source, init = op.operands
    permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    out = ir.RankedTensorType(init.type)
    if not out.has_static_shape or not ir.RankedTensorType(source.type).has_static_shape:
        return False
    _, pairs, columns, group = out.shape
    element, i32 = out.element_type, ir.IntegerType.get_signless(32)
    with op.location, ir.InsertionPoint(op):
        if permutation == _FROM_TRANSPOSED:  # source [1, b, a, g]: b rows of a words
            rows = read_whole(_collapsed(source, [[0, 1], [2, 3]]))
            words = vector.bitcast(ir.VectorType.get([columns, pairs], i32), rows)
            turned = vector.transpose(ir.VectorType.get([pairs, columns], i32), words, [1, 0])
            tile = vector.bitcast(ir.VectorType.get([pairs, group * columns], element), turned)
        elif permutation == _FROM_ROWS:  # source [a, g, 1, b]: a groups of g rows of b columns
            rows = read_whole(_collapsed(source, [[0], [1, 2], [3]]))
            tile = ub.poison(ir.VectorType.get([pairs, group * columns], element))
            for pair in range(pairs):  # interleaves of whole rows: shuffles of whole registers
                row = [vector.extract(rows, [], [pair, r]) for r in range(group)]
                if group == 4:  # (0, 2) and (1, 3), then those: 0 1 2 3 of each column in turn
                    row = [vector.interleave(row[0], row[2]), vector.interleave(row[1], row[3])]
                tile = vector.insert(vector.interleave(row[0], row[1]), tile, [], [pair])
        else:
            return False
        written = write_whole(tile, _collapsed(init, [[0, 1], [2, 3]]))
        result = tensor.expand_shape(out, written, [[0, 1], [2, 3]], [], list(out.shape))
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def vectorize_pair_copies(module: ir.Module) -> None:
    """Rewrite the marked tiles of the copies into panels of pairs, then lower their 16 x 16 transposes to
    shuffles of whole registers in each task loop."""
    tiles: list[ir.Operation] = []
    tasks: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.transpose" and PAIR_COPY in op.attributes:
            tiles.append(op)
        elif PAIR_COPIES in op.attributes:
            tasks.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in tiles:
        if not _rewrite(op):
            del op.attributes[PAIR_COPY]
    for task in tasks:
        apply_sequence(task, "shuffle_transposes", "vectorizing the copies into panels of pairs")
        del task.attributes[PAIR_COPIES]
