"""The register tiles of products of pairs (:mod:`.pairs`) as AVX512_BF16 dot instructions.

A tile of ``R`` rows by ``NR`` columns and one pair of K steps reads A [R, 1, 2], the panel row Bp [1, 1, NR, 2]
and C [R, 1, NR] (f32).  It becomes, for each row, the row's pair of A (32 bits) broadcast to 16 lanes, and per
16 columns one ``x86vector.avx512.dot`` (``vdpbf16ps``) of it with 32 bf16 of the panel row (16 columns' pairs)
into 16 of the row's sums; the last 8 or 4 columns of a narrower panel take the instruction's 256- or 128-bit
form.  C's tile is read and written whole (``vector.transfer_read``/``transfer_write``), as
the vectorizer writes the f32 tiles, so that the accumulators are then kept in registers across K the same way
(``hoist_accumulators``).  Upstream's vectorizer would widen the pairs to f32 and reduce them lane by lane.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor, vector

from graphfuse.lowering.contraction.pair_copies import read_whole, write_whole

__all__ = ["DOT_LANES", "vectorize_pair_tiles"]

#: f32 sums one 512-bit dot instruction updates (each from a pair of bf16 products); the 256- and 128-bit forms
#: (AVX512VL) update 8 and 4, for the columns of a panel narrower than 16 (a product's last few columns).
DOT_LANES = 16
_NARROWER_LANES = (8, 4)


def _dot_widths(columns: int) -> list[int]:
    """The lanes of the dot instructions covering ``columns`` columns, widest first (56: 16, 16, 16, 8)."""
    widths = [DOT_LANES] * (columns // DOT_LANES)
    rest = columns % DOT_LANES
    for lanes in _NARROWER_LANES:
        if rest >= lanes:
            widths.append(lanes)
            rest -= lanes
    return widths


def _pair_tile(op: ir.Operation) -> tuple[int, int] | None:
    """(rows, columns) when ``op`` is a marked static tile of a product of pairs: a generic of five loops with
    bf16 operands A [R, 1, 2], Bp [1, 1, NR, 2] and an f32 C [R, 1, NR], NR a multiple of DOT_LANES."""
    if op.name != "linalg.generic" or "graph.vectorize" not in op.attributes:
        return None
    if len(ir.ArrayAttr(op.attributes["iterator_types"])) != 5 or len(op.operands) != 3:
        return None
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if not all(isinstance(t.element_type, ir.BF16Type) for t in types[:2]):
        return None
    if not isinstance(types[2].element_type, ir.F32Type) or not all(t.has_static_shape for t in types):
        return None
    (rows, one, two), (p, q, columns, two_b), (rows_c, one_c, columns_c) = (t.shape for t in types)
    if (one, two, p, q, two_b, one_c) != (1, 2, 1, 1, 2, 1) or (rows_c, columns_c) != (rows, columns):
        return None
    return (rows, columns) if columns % min(_NARROWER_LANES) == 0 else None


def _dot(acc: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create("x86vector.avx512.dot", results=[acc.type], operands=[acc, a, b]).results[0]


def _rewrite(op: ir.Operation, rows: int, columns: int) -> None:
    a, b, c = op.operands
    f32, bf16, i32 = ir.F32Type.get(), ir.BF16Type.get(), ir.IntegerType.get_signless(32)
    vec = ir.VectorType.get
    with op.location, ir.InsertionPoint(op):
        acc = read_whole(c)  # vector<R x 1 x NR x f32>
        a_tile = read_whole(a)  # vector<R x 1 x 2 x bf16>
        # the panel row as one run of 2 NR bf16: read as [1, 1, NR, 2], it would be NR reads of a pair
        b_flat = read_whole(tensor.collapse_shape(ir.RankedTensorType.get([2 * columns], bf16), b, [[0, 1, 2, 3]]))
        parts, offset = [], 0  # (first column, lanes, the panel row's pairs of those columns)
        for lanes in _dot_widths(columns):
            pairs = vector.extract_strided_slice(vec([2 * lanes], bf16), b_flat, [2 * offset], [2 * lanes], [1])
            parts.append((offset, lanes, pairs))
            offset += lanes
        result = acc
        for row in range(rows):
            pair = vector.extract(a_tile, [], [row, 0])  # vector<2xbf16>
            word = vector.extract(vector.bitcast(vec([1], i32), pair), [], [0])
            broadcast = {lanes: vector.bitcast(vec([2 * lanes], bf16), vector.broadcast(vec([lanes], i32), word))
                         for lanes in {lanes for _, lanes, _ in parts}}
            sums = vector.extract(acc, [], [row, 0])  # vector<NR x f32>
            row_result = sums
            for offset, lanes, pairs in parts:
                part_sums = vector.extract_strided_slice(vec([lanes], f32), sums, [offset], [lanes], [1])
                row_result = vector.insert_strided_slice(_dot(part_sums, broadcast[lanes], pairs), row_result,
                                                         [offset], [1])
            result = vector.insert(row_result, result, [], [row, 0])
        written = write_whole(result, c)
    op.results[0].replace_all_uses_with(written)
    op.erase()


def vectorize_pair_tiles(module: ir.Module) -> int:
    """Rewrite every marked register tile of a product of pairs in ``module`` (:func:`_pair_tile`) into dot
    instructions; the number rewritten."""
    tiles: list[tuple[ir.Operation, tuple[int, int]]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        shape = _pair_tile(op)
        if shape is not None:
            tiles.append((op, shape))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op, (rows, columns) in tiles:
        _rewrite(op, rows, columns)
    return len(tiles)
