"""bf16 products on the host's pair dot products (AVX512_BF16's ``vdpbf16ps``): B packed into panels of pairs,
the product a generic over pairs of K that :mod:`.dot_tiles` turns into dot instructions.

``vdpbf16ps`` multiplies the two bf16 of each 32-bit lane of one register by the two of the other and adds both
products to the lane's f32 sum.  A register tile then reads, per pair of K steps, one 32-bit pair of A's row
broadcast to every lane, and a row of the panel whose lanes each hold the pair of B's column: the panels are
``Bp[N / NR, K / 2, NR, 2]``, B's two rows ``2 k0`` and ``2 k0 + 1`` interleaved column by column.  Products of
bf16 are exact in f32, so the sums differ from an f32 product of the widened operands by the order of the
additions alone (and by subnormals, which the instruction flushes to zero).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import producer
from graphfuse.lowering.contraction.sizes import SERIAL

#: (rows, columns) of a register tile of a product of pairs: 24 accumulators of 16 lanes, 4 panel vectors and a
#: broadcast of A.  Per pair of K steps 10 loads feed 24 dot instructions, where 8 rows by 32 columns make 10 for
#: 16 (bf16 asks twice the f32 FMA's bytes per operation of the caches).  512x2048 by a [2048, 2048] weight read
#: transposed, in one process, the tiles in turn: 11.2 ms against 11.8 for 8 x 32 (7 x 64: 11.5, 4 x 64: 11.9,
#: 12 x 32: 16.8); 1024x1024x4096: 22.8 against 23.8.
PAIR_REGISTER_TILE = (6, 64)
#: Marks the copies of B into panels of pairs (``pack.mlir``): from B [K, N], and from a transposed Bt [N, K].
PACK_PAIRS, PACK_TRANSPOSED_PAIRS = "graph.pack_pairs", "graph.pack_transposed_pairs"


def _is_bf16(value: ir.Value) -> bool:
    return isinstance(ir.RankedTensorType(value.type).element_type, ir.BF16Type)


def pair_product_applies(op: ir.Operation, dots: frozenset[str]) -> bool:
    """Whether a static ``linalg.matmul`` (A [M, K], B [K, N], C [M, N]) runs on pair dot products: A and B bf16,
    C f32, K even, ``dots`` has them (:func:`graphfuse.lowering.host.dot_products`), and the product is not a
    task's own (a batch of a batched matmul, whose schedules copy B into f32 panels)."""
    if SERIAL in op.attributes:
        return False
    a, b, c = op.operands
    if not (_is_bf16(a) and _is_bf16(b) and isinstance(ir.RankedTensorType(c.type).element_type, ir.F32Type)):
        return False
    return "bf16" in dots and contraction_depth(op) % 2 == 0


def contraction_depth(op: ir.Operation) -> int:
    """K of a ``linalg.matmul``: the dim of A its map gives d2 (A [M, K], or [K, M] read transposed)."""
    a_map = ir.AffineMapAttr(ir.ArrayAttr(op.attributes["indexing_maps"])[0]).value \
        if "indexing_maps" in op.attributes else None
    position = 1 if a_map is None else [str(e) for e in a_map.results].index("d2")
    return ir.RankedTensorType(op.operands[0].type).shape[position]


def _pairs(value: ir.Value, groups: list[list[int]], shape: list[int]) -> ir.Value:
    element = ir.RankedTensorType(value.type).element_type
    return tensor.expand_shape(ir.RankedTensorType.get(shape, element), value, groups, [], shape)


def packed_pair_panels(b: ir.Value, transposed_source: ir.Value | None, column: int, width: int,
                       columns: int) -> ir.Value:
    """Columns ``column`` to ``column + width`` of bf16 B [K, N] as panels of pairs [width / columns, K / 2,
    columns, 2]: a constant packed now when B (or the Bt [N, K] it transposes, ``transposed_source``) is one,
    else a copy marked for its schedule (``pack_pairs`` / ``pack_transposed_pairs``)."""
    source = b if transposed_source is None else transposed_source
    k = ir.RankedTensorType(b.type).shape[0]
    panels = width // columns
    element = ir.RankedTensorType(b.type).element_type
    panels_type = ir.RankedTensorType.get([panels, k // 2, columns, 2], element)
    constant = producer(source, "arith.constant")
    if constant is not None:
        attr = ir.DenseElementsAttr(constant.attributes["value"])
        if attr.is_splat:
            return arith.constant(panels_type, ir.DenseElementsAttr.get_splat(panels_type, attr.get_splat_value()))
        array = attr_to_array(attr)
        if transposed_source is None:  # [K, N] -> [K/2, 2, panels, columns] -> [panels, K/2, columns, 2]
            pairs = array[:, column:column + width].reshape(k // 2, 2, panels, columns).transpose(2, 0, 3, 1)
        else:  # Bt [N, K] -> [panels, columns, K/2, 2] -> [panels, K/2, columns, 2]
            pairs = array[column:column + width].reshape(panels, columns, k // 2, 2).transpose(0, 2, 1, 3)
        return arith.constant(panels_type, array_to_attr(np.ascontiguousarray(pairs).astype(ml_dtypes.bfloat16)))
    init = tensor.empty([panels, k // 2, columns, 2], element)
    if transposed_source is None:
        part = b if width == ir.RankedTensorType(b.type).shape[1] else _columns(b, column, width)
        split = _pairs(part, [[0, 1], [2, 3]], [k // 2, 2, panels, columns])
        copy = linalg.transpose(split, outs=[init], permutation=[2, 0, 3, 1])
        copy.attributes[PACK_PAIRS] = ir.UnitAttr.get()
    else:
        rows = source if width == ir.RankedTensorType(source.type).shape[0] else _rows(source, column, width)
        split = _pairs(rows, [[0, 1], [2, 3]], [panels, columns, k // 2, 2])
        copy = linalg.transpose(split, outs=[init], permutation=[0, 2, 1, 3])
        copy.attributes[PACK_TRANSPOSED_PAIRS] = ir.UnitAttr.get()
    return copy.results[0]


def _columns(b: ir.Value, column: int, width: int) -> ir.Value:
    t = ir.RankedTensorType(b.type)
    k = t.shape[0]
    return tensor.extract_slice(ir.RankedTensorType.get([k, width], t.element_type), b, [], [], [], [0, column],
                                [k, width], [1, 1])


def _rows(bt: ir.Value, row: int, height: int) -> ir.Value:
    t = ir.RankedTensorType(bt.type)
    k = t.shape[1]
    return tensor.extract_slice(ir.RankedTensorType.get([height, k], t.element_type), bt, [], [], [], [row, 0],
                                [height, k], [1, 1])


def pair_product(a: ir.Value, panels: ir.Value, c_view: ir.Value) -> ir.Value:
    """C[i, j0, j1] += A[i, k0, k1] * Bp[j0, k0, j1, k1] (A [M, K] viewed as [M, K / 2, 2], widened to f32), a
    generic over (j0, i, j1, k0, k1)."""
    m, k = ir.RankedTensorType(a.type).shape
    a_pairs = _pairs(a, [[0], [1, 2]], [m, k // 2, 2])
    f32, bf16 = ir.F32Type.get(), ir.BF16Type.get()
    maps = [ir.AffineMap.get(5, 0, [ir.AffineDimExpr.get(d) for d in dims])
            for dims in ((1, 3, 4), (0, 3, 2, 4), (1, 0, 2))]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    generic = linalg.GenericOp([c_view.type], [a_pairs, panels], [c_view],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(amap) for amap in maps]),
                               ir.ArrayAttr.get([parallel, parallel, parallel, reduction, reduction]))
    body = generic.regions[0].blocks.append(bf16, bf16, f32)
    with ir.InsertionPoint(body):
        x, y = (arith.extf(f32, v) for v in body.arguments[:2])
        linalg.YieldOp([arith.addf(body.arguments[2], arith.mulf(x, y))])
    return generic.results[0]
