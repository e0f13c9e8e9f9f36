"""The register tiles of products on dot instructions (:mod:`.pairs`): AVX512_BF16's and AVX512_VNNI's.

A tile of ``R`` rows by ``NR`` columns and one group of ``g`` K steps reads A [R, 1, g], the panel row Bp [1, 1,
NR, g] and C [R, 1, NR].  It becomes, for each row, the row's group of A (32 bits) broadcast to 16 lanes, and per
16 columns one dot instruction of it with the panel row's 16 groups into 16 of the row's sums: for bf16 pairs
``x86vector.avx512.dot`` (``vdpbf16ps``, f32 sums), for int8 quads ``vpdpbusd`` (i32 sums; A's bytes unsigned,
B's signed), which has no op of its own upstream: LLVM's intrinsic, called from the vector code.  The last 8 or
4 columns of a narrower panel take the instructions' 256- or 128-bit form.  C's tile is read and written whole
(``vector.transfer_read``/``transfer_write``), as the vectorizer writes the f32 tiles, so that the accumulators
are then kept in registers across K the same way (``hoist_accumulators``).  Upstream's vectorizer would widen
the groups and reduce them lane by lane.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import llvm, tensor, vector

from graphfuse.lowering.contraction.pair_copies import read_whole, write_whole
from graphfuse.lowering.contraction.pairs import dot_group

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
    """(rows, columns) when ``op`` is a marked static tile of a product on dot instructions: a generic of five
    loops with operands A [R, 1, g], Bp [1, 1, NR, g] and C [R, 1, NR] of a :func:`.pairs.dot_group`, NR a multiple
    of 4."""
    if op.name != "linalg.generic" or "graph.vectorize" not in op.attributes:
        return None
    if len(ir.ArrayAttr(op.attributes["iterator_types"])) != 5 or len(op.operands) != 3:
        return None
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    group = dot_group(*(t.element_type for t in types))
    if not group or not all(t.has_static_shape for t in types):
        return None
    (rows, one, g), (p, q, columns, g_b), (rows_c, one_c, columns_c) = (t.shape for t in types)
    if (one, g, p, q, g_b, one_c) != (1, group, 1, 1, group, 1) or (rows_c, columns_c) != (rows, columns):
        return None
    return (rows, columns) if columns % min(_NARROWER_LANES) == 0 else None


def _dot(acc: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    """``acc`` plus the dot products of the groups of ``a`` and ``b``'s lanes: ``vdpbf16ps`` for bf16 pairs,
    ``vpdpbusd`` (a's bytes unsigned, b's signed) for int8 quads."""
    if isinstance(ir.VectorType(a.type).element_type, ir.BF16Type):
        return ir.Operation.create("x86vector.avx512.dot", results=[acc.type], operands=[acc, a, b]).results[0]
    lanes = ir.VectorType(acc.type).shape[0]
    suffix = {16: "512", 8: "256", 4: "128"}[lanes]
    return llvm.call_intrinsic(acc.type, f"llvm.x86.avx512.vpdpbusd.{suffix}", [acc, a, b], [], [])


def _rewrite(op: ir.Operation, rows: int, columns: int) -> None:
    a, b, c = op.operands
    i32 = ir.IntegerType.get_signless(32)
    element, accumulator = ir.RankedTensorType(a.type).element_type, ir.RankedTensorType(c.type).element_type
    g = ir.RankedTensorType(a.type).shape[2]
    vec = ir.VectorType.get
    with op.location, ir.InsertionPoint(op):
        acc = read_whole(c)  # vector<R x 1 x NR x f32 or i32>
        a_tile = read_whole(a)  # vector<R x 1 x g x bf16 or i8>
        # the panel row as one run of g NR values: read as [1, 1, NR, g], it would be NR reads of a group
        b_flat = read_whole(tensor.collapse_shape(ir.RankedTensorType.get([g * columns], element), b, [[0, 1, 2, 3]]))
        parts, offset = [], 0  # (first column, lanes, the panel row's groups of those columns)
        for lanes in _dot_widths(columns):
            pairs = vector.extract_strided_slice(vec([g * lanes], element), b_flat, [g * offset], [g * lanes], [1])
            parts.append((offset, lanes, pairs))
            offset += lanes
        result = acc
        for row in range(rows):
            pair = vector.extract(a_tile, [], [row, 0])  # vector<g x bf16 or i8>
            word = vector.extract(vector.bitcast(vec([1], i32), pair), [], [0])
            broadcast = {lanes: vector.bitcast(vec([g * lanes], element), vector.broadcast(vec([lanes], i32), word))
                         for lanes in {lanes for _, lanes, _ in parts}}
            sums = vector.extract(acc, [], [row, 0])  # vector<NR x f32 or i32>
            row_result = sums
            for offset, lanes, pairs in parts:
                part_sums = vector.extract_strided_slice(vec([lanes], accumulator), sums, [offset], [lanes], [1])
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
