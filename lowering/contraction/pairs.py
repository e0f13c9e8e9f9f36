"""Products on the host's dot-product instructions: B packed into panels of groups of K steps, the product a
generic over those groups that :mod:`.dot_tiles` turns into dot instructions.

- bf16 (AVX512_BF16's ``vdpbf16ps``): the instruction multiplies the two bf16 of each 32-bit lane of one register
  by the two of the other and adds both products to the lane's f32 sum: groups of two K steps (pairs).
- int8 (AVX512_VNNI's ``vpdpbusd``): the four unsigned bytes of each lane of one register by the four signed
  bytes of the other, the four products added to the lane's i32 sum: groups of four (quads).

A register tile reads, per group of K steps, one 32-bit group of A's row broadcast to every lane, and a row of
the panel whose lanes each hold the group of B's column: the panels are ``Bp[N / NR, K / g, NR, g]``, B's ``g``
rows ``g k0 .. g k0 + g - 1`` interleaved column by column.  Products of bf16 are exact in f32, so the sums
differ from an f32 product of the widened operands by the order of the additions alone (and by subnormals,
which the instruction flushes to zero).  Integer sums are exact (modulo 2^32, as i32 products wrap).

``vpdpbusd`` reads A unsigned: the product reads A + 128 (A's bytes with the sign bit flipped,
:func:`unsigned_rows`), which adds 128 times the sum of each column of B to C; C starts from minus that
(:func:`column_compensation`), computed when compiling for a constant B.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import producer
from graphfuse.lowering.common import PARALLEL, REDUCTION, build_generic
from graphfuse.lowering.contraction.sizes import SERIAL

#: (rows, columns) of a register tile of a product of pairs: 24 accumulators of 16 lanes, 4 panel vectors and a
#: broadcast of A.  Per pair of K steps 10 loads feed 24 dot instructions, where 8 rows by 32 columns make 10 for
#: 16 (bf16 asks twice the f32 FMA's bytes per operation of the caches).  512x2048 by a [2048, 2048] weight read
#: transposed, in one process, the tiles in turn: 11.2 ms against 11.8 for 8 x 32 (7 x 64: 11.5, 4 x 64: 11.9,
#: 12 x 32: 16.8); 1024x1024x4096: 22.8 against 23.8.
PAIR_REGISTER_TILE = (6, 64)
#: Marks the copies of B into panels of pairs (``pack.mlir``): from B [K, N], and from a transposed Bt [N, K].
PACK_PAIRS, PACK_TRANSPOSED_PAIRS = "graph.pack_pairs", "graph.pack_transposed_pairs"
#: Marks the init of an int8 product's C, its start plus the columns' compensation (:func:`compensated_init`).
COMPENSATED_INIT = "graph.compensated_init"
#: Mark the reduction of B's columns into the compensation (:func:`column_compensation`) and A's bytes made
#: unsigned (:func:`unsigned_rows`), which the strategy shares out across the cores.
COLUMN_SUMS, UNSIGNED_ROWS = "graph.column_sums", "graph.unsigned_rows"


def _element(value: ir.Value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def _is_int(element: ir.Type, width: int) -> bool:
    return isinstance(element, ir.IntegerType) and ir.IntegerType(element).width == width


def group_of(element: ir.Type) -> int:
    """K steps per 32-bit group of a panel of ``element`` values: 2 for bf16, 4 for int8."""
    return 4 if _is_int(element, 8) else 2


def product_group(op: ir.Operation, dots: frozenset[str]) -> int:
    """The K steps of a group when a static ``linalg.matmul`` (A [M, K], B [K, N], C [M, N]) runs on dot products,
    else 0: 2 for A and B bf16 into f32 C, K even, ``bf16`` in ``dots``; 4 for A and B int8 into i32 C, K a
    multiple of 4, ``int8`` in ``dots`` (:func:`graphfuse.lowering.host.dot_products`).  Never for a task's own
    product (a batch of a batched matmul, whose schedules copy B into f32 panels)."""
    if SERIAL in op.attributes:
        return 0
    group = dot_group(*(_element(v) for v in op.operands))
    if not group or _DOT_PRODUCTS[group] not in dots:
        return 0
    return group if contraction_depth(op) % group == 0 else 0


#: The dot products (graphfuse.lowering.host.dot_products) computing groups of each size.
_DOT_PRODUCTS = {2: "bf16", 4: "int8"}


def dot_group(a: ir.Type, b: ir.Type, c: ir.Type) -> int:
    """K steps per group of a dot instruction for A, B and C of these element types: 2 for bf16, bf16 into f32; 4
    for int8, int8 into i32; else 0."""
    if isinstance(a, ir.BF16Type) and isinstance(b, ir.BF16Type) and isinstance(c, ir.F32Type):
        return 2
    if _is_int(a, 8) and _is_int(b, 8) and _is_int(c, 32):
        return 4
    return 0


def pair_product_applies(op: ir.Operation, dots: frozenset[str]) -> bool:
    """Whether a static ``linalg.matmul`` runs on dot products (:func:`product_group`)."""
    return product_group(op, dots) > 0


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
    """Columns ``column`` to ``column + width`` of bf16 or int8 B [K, N] as panels of groups (:func:`group_of`)
    [width / columns, K / g, columns, g]: a constant packed now when B (or the Bt [N, K] it transposes,
    ``transposed_source``) is one, else a copy marked for its schedule (``pack_pairs`` /
    ``pack_transposed_pairs``)."""
    source = b if transposed_source is None else transposed_source
    k = ir.RankedTensorType(b.type).shape[0]
    panels = width // columns
    element = ir.RankedTensorType(b.type).element_type
    g = group_of(element)
    panels_type = ir.RankedTensorType.get([panels, k // g, columns, g], element)
    constant = producer(source, "arith.constant")
    if constant is not None:
        attr = ir.DenseElementsAttr(constant.attributes["value"])
        if attr.is_splat:
            return arith.constant(panels_type, ir.DenseElementsAttr.get_splat(panels_type, attr.get_splat_value()))
        groups = _b_columns(attr_to_array(attr), transposed_source is not None, column, width)
        groups = groups.reshape(k // g, g, panels, columns).transpose(2, 0, 3, 1)  # [panels, K/g, columns, g]
        dtype = np.int8 if g == 4 else ml_dtypes.bfloat16
        return arith.constant(panels_type, array_to_attr(np.ascontiguousarray(groups).astype(dtype)))
    init = tensor.empty([panels, k // g, columns, g], element)
    if transposed_source is None:
        part = b if width == ir.RankedTensorType(b.type).shape[1] else _columns(b, column, width)
        split = _pairs(part, [[0, 1], [2, 3]], [k // g, g, panels, columns])
        copy = linalg.transpose(split, outs=[init], permutation=[2, 0, 3, 1])
        copy.attributes[PACK_PAIRS] = ir.UnitAttr.get()
    else:
        rows = source if width == ir.RankedTensorType(source.type).shape[0] else _rows(source, column, width)
        split = _pairs(rows, [[0, 1], [2, 3]], [panels, columns, k // g, g])
        copy = linalg.transpose(split, outs=[init], permutation=[0, 2, 1, 3])
        copy.attributes[PACK_TRANSPOSED_PAIRS] = ir.UnitAttr.get()
    return copy.results[0]


def _b_columns(array: np.ndarray, transposed: bool, column: int, width: int) -> np.ndarray:
    """Columns ``column`` to ``column + width`` of B [K, N], from B or from the Bt [N, K] it transposes."""
    return array[column:column + width].T if transposed else array[:, column:column + width]


def column_compensation(b: ir.Value, transposed_source: ir.Value | None, column: int, width: int,
                        columns: int) -> ir.Value:
    """Minus 128 times the sum of each of columns ``column`` to ``column + width`` of int8 B [K, N], as
    [width / columns, columns] i32 (wrapping, as the sums of C do): what C starts from when the product reads A +
    128 (:func:`unsigned_rows`).  A constant when B (or the Bt [N, K] it transposes) is one, else a reduction of
    B's columns, K outermost so that each step reads a run of B's row."""
    source = b if transposed_source is None else transposed_source
    i32 = ir.IntegerType.get_signless(32)
    shape = [width // columns, columns]
    result_type = ir.RankedTensorType.get(shape, i32)
    constant = producer(source, "arith.constant")
    if constant is not None:
        attr = ir.DenseElementsAttr(constant.attributes["value"])
        if attr.is_splat:
            k = ir.RankedTensorType(b.type).shape[0]
            array = np.full((k, width), ir.IntegerAttr(attr.get_splat_value()).value, np.int64)
        else:
            array = _b_columns(attr_to_array(attr), transposed_source is not None, column, width)
        sums = (-128 * array.astype(np.int64).sum(axis=0)).astype(np.uint32).view(np.int32)  # wraps as i32 sums
        return arith.constant(result_type, array_to_attr(np.ascontiguousarray(sums.reshape(shape))))
    k = ir.RankedTensorType(b.type).shape[0]
    d = [ir.AffineDimExpr.get(n) for n in range(3)]
    if transposed_source is None:  # loops (k, panel, column): each step of K a run of B's row
        part = b if width == ir.RankedTensorType(b.type).shape[1] else _columns(b, column, width)
        view = _pairs(part, [[0], [1, 2]], [k, *shape])
        maps, iterators = [d, d[1:]], [REDUCTION, PARALLEL, PARALLEL]
    else:  # loops (panel, column, k): each column a run of Bt's row
        part = source if width == ir.RankedTensorType(source.type).shape[0] else _rows(source, column, width)
        view = _pairs(part, [[0, 1], [2]], [*shape, k])
        maps, iterators = [d, d[:2]], [PARALLEL, PARALLEL, REDUCTION]
    init = linalg.fill(arith.constant(i32, 0), outs=[tensor.empty(shape, i32)])

    def add_scaled(args: list[ir.Value]) -> list[ir.Value]:
        return [arith.addi(args[1], arith.muli(arith.extsi(i32, args[0]), arith.constant(i32, -128)))]

    generic = build_generic([result_type], [view], [init], [ir.AffineMap.get(3, 0, m) for m in maps], iterators,
                            add_scaled)
    generic.operation.attributes[COLUMN_SUMS] = ir.UnitAttr.get()
    return generic.results[0]


def unsigned_rows(a: ir.Value) -> ir.Value:
    """int8 A with each byte's sign bit flipped: A + 128 read as unsigned bytes, what ``vpdpbusd`` multiplies."""
    t = ir.RankedTensorType(a.type)
    identity = ir.AffineMap.get_identity(t.rank)
    generic = build_generic([a.type], [a], [tensor.empty(list(t.shape), t.element_type)], [identity, identity],
                            [PARALLEL] * t.rank,
                            lambda args: [arith.xori(args[0], arith.constant(t.element_type, -128))])
    generic.operation.attributes[UNSIGNED_ROWS] = ir.UnitAttr.get()
    return generic.results[0]


def compensated_init(dest: ir.Value, start: ir.Value | None, compensation: ir.Value) -> ir.Value:
    """C viewed as [rows, panels, columns] starting from ``start`` (a scalar: a fill's value) or, when None, from
    ``dest``'s own values, plus ``compensation`` [panels, columns] (:func:`column_compensation`)."""
    d = [ir.AffineDimExpr.get(k) for k in range(3)]
    maps = [ir.AffineMap.get(3, 0, d[1:]), ir.AffineMap.get(3, 0, d)]
    generic = build_generic([dest.type], [compensation], [dest], maps, [PARALLEL] * 3,
                            lambda args: [arith.addi(args[1] if start is None else start, args[0])])
    generic.operation.attributes[COMPENSATED_INIT] = ir.UnitAttr.get()
    return generic.results[0]


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
    """C[i, j0, j1] += A[i, k0, k1] * Bp[j0, k0, j1, k1] (A [M, K] viewed as [M, K / g, g]), a generic over (j0,
    i, j1, k0, k1): for bf16 the products of the values widened to f32; for int8 of A's bytes read unsigned (A
    is :func:`unsigned_rows`'s) by B's signed, in i32."""
    m, k = ir.RankedTensorType(a.type).shape
    element = ir.RankedTensorType(a.type).element_type
    g = group_of(element)
    a_pairs = _pairs(a, [[0], [1, 2]], [m, k // g, g])
    maps = [ir.AffineMap.get(5, 0, [ir.AffineDimExpr.get(d) for d in dims])
            for dims in ((1, 3, 4), (0, 3, 2, 4), (1, 0, 2))]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    generic = linalg.GenericOp([c_view.type], [a_pairs, panels], [c_view],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(amap) for amap in maps]),
                               ir.ArrayAttr.get([parallel, parallel, parallel, reduction, reduction]))
    accumulator = ir.RankedTensorType(c_view.type).element_type
    body = generic.regions[0].blocks.append(element, element, accumulator)
    with ir.InsertionPoint(body):
        if g == 4:
            x, y = arith.extui(accumulator, body.arguments[0]), arith.extsi(accumulator, body.arguments[1])
            linalg.YieldOp([arith.addi(body.arguments[2], arith.muli(x, y))])
        else:
            x, y = (arith.extf(accumulator, v) for v in body.arguments[:2])
            linalg.YieldOp([arith.addf(body.arguments[2], arith.mulf(x, y))])
    return generic.results[0]
