"""Matmuls whose row count is known only at run time (tokens): B packed into panels once, as for a static product,
and read by two products that leave no register tile of a size known only at run time.

A ``linalg.matmul`` of A [?, K] by B [K, N] (K and N static, f32; B read as it is or transposed, a linear
layer's W) becomes, per range of columns, one packed product
(:func:`~graphfuse.lowering.contraction.panels._packed_product`) over the rows in whole register tiles, whose
count is known at run time (the schedule's tasks and tiles over it: every tile whole, the peeled rest of the
tile loop never runs), and one over the rows left, fewer than a tile, copied into a tile padded with zero rows:
a static product whose first rows are kept.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, bufferization, linalg, scf, tensor

from graphfuse.dialect.matching import producer
from graphfuse.lowering.common import padded_rows
from graphfuse.lowering.contraction.layout import (
    _DEFAULT_MAPS,
    _map_dims,
    _materialize_transposes,
    _reads_b_transposed,
    _static_tensor,
    matmul_b_transposed,
)
from graphfuse.lowering.contraction.panels import (
    _erase_unused_producers,
    _fill_of,
    _packed_panels,
    _packed_product,
    _transposed_source,
)
from graphfuse.lowering.contraction.sizes import ROW_DOT_ROWS, ROW_DOT_TILE_ROWS, SERIAL, _powers_of_two
from graphfuse.lowering.fast_math import fadd, fmul

__all__ = [
    "FewRowProduct",
    "dynamic_row_parts",
    "dynamic_row_products",
    "few_static_rows_products",
    "rest_tiles",
    "rows_alone_dynamic",
    "split_few_dynamic_rows",
]

_DYNAMIC = ir.ShapedType.get_dynamic_size()
_DYNAMIC_OFFSET = ir.ShapedType.get_dynamic_stride_or_offset()


def dynamic_row_products(module: ir.Module) -> list[ir.Operation]:
    """The plain f32 ``linalg.matmul`` ops of ``module`` whose rows alone are dynamic; those reading B transposed
    (a linear layer's x @ W^T) made plain first, B an explicit ``linalg.transpose`` that the packing reads W
    through."""
    transposed: list[ir.Operation] = []
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.matmul" and SERIAL not in op.attributes and _rows_alone_dynamic(op):
            if _plain(op):
                found.append(op)
            elif _reads_b_transposed(op):
                transposed.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if transposed:
        for op in transposed:
            _materialize_transposes(op)
        return dynamic_row_products(module)
    return found


def _plain(op: ir.Operation) -> bool:
    """Whether the matmul reads A [M, K] and B [K, N] as they are (its maps, when written out, the default ones)."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = tuple(_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"]))
    return maps == _DEFAULT_MAPS["linalg.matmul"]


def _rows_alone_dynamic(op: ir.Operation) -> bool:
    """An f32 matmul whose rows alone are counted at run time (:func:`rows_alone_dynamic`)."""
    return rows_alone_dynamic(*op.operands) and all(
        isinstance(ir.RankedTensorType(v.type).element_type, ir.F32Type) for v in op.operands)


def rows_alone_dynamic(a: ir.Value, b: ir.Value, c: ir.Value) -> bool:
    """Whether a matmul's A [rows, K], B and C [rows, N] have only the rows counted at run time (a prompt's tokens
    through a linear layer): the products this module computes, when in f32."""
    types = [v.type for v in (a, b, c)]
    if not all(isinstance(t, ir.RankedTensorType) for t in types) or _static_tensor(b) is None:
        return False
    ta, tc = ir.RankedTensorType(types[0]), ir.RankedTensorType(types[2])
    return ta.shape[0] == _DYNAMIC and tc.shape[0] == _DYNAMIC and ta.shape[1] != _DYNAMIC and tc.shape[1] != _DYNAMIC


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _rows_of(value: ir.Value, first: ir.Value | int, rows: ir.Value, column: int, width: int) -> ir.Value:
    """Rows [first, first + rows) and columns [column, column + width) of the 2-D tensor ``value``."""
    element = ir.RankedTensorType(value.type).element_type
    dynamic_first = isinstance(first, ir.Value)
    return tensor.extract_slice(ir.RankedTensorType.get([_DYNAMIC, width], element), value,
                                [first] if dynamic_first else [], [rows], [],
                                [_DYNAMIC_OFFSET if dynamic_first else first, column], [_DYNAMIC, width], [1, 1])


def _put_rows(part: ir.Value, into: ir.Value, first: ir.Value | int, rows: ir.Value, column: int) -> ir.Value:
    width = ir.RankedTensorType(part.type).shape[1]
    dynamic_first = isinstance(first, ir.Value)
    return tensor.insert_slice(part, into, [first] if dynamic_first else [], [rows], [],
                               [_DYNAMIC_OFFSET if dynamic_first else first, column], [_DYNAMIC, width], [1, 1])


def _split(value: ir.Value, rows: ir.Value | None, columns: int) -> ir.Value:
    """[M, W] viewed as [M, W / columns, columns] (``rows``: M when dynamic)."""
    t = ir.RankedTensorType(value.type)
    shape = [t.shape[0], t.shape[1] // columns, columns]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), value, [[0], [1, 2]],
                               [rows] if rows is not None else [], shape)


def dynamic_row_parts(op: ir.Operation, panel: int, tile_rows: int) -> tuple[list[ir.Operation], list[ir.Operation]]:
    """Replace ``op`` (:func:`dynamic_row_products`) by packed products, per range of columns (whole panels of
    ``panel`` columns, then narrower panels of powers of two): one over the rows in whole register tiles of
    ``tile_rows`` (a count known at run time), and the rows left (fewer than a tile) in one product of the
    fewest rows of :func:`rest_tiles` that hold them, padded with zero rows: each of static shape.  Returns
    (the first kind, the second kind).

    Each tile of the first product is then a whole register tile (its tile loop's peeled rest never runs), and the
    second is a static product: no tile is of a size known only at run time.  C's fill, when it has one, is
    computed by each product's tasks (the ``_filled`` schedules)."""
    a, b, c = op.operands
    k = ir.RankedTensorType(a.type).shape[1]
    n = ir.RankedTensorType(c.type).shape[1]
    element = ir.RankedTensorType(c.type).element_type
    whole = n - n % panel
    ranges = [(0, whole)] if whole else []
    start = whole
    for width in _powers_of_two(n - whole):
        ranges.append((start, width))
        start += width
    tiled: list[ir.Operation] = []
    rests: list[ir.Operation] = []
    with op.location, ir.InsertionPoint(op):
        rows = tensor.dim(a, _index(0))
        main = arith.muli(arith.divui(rows, _index(tile_rows)), _index(tile_rows))
        rest = arith.subi(rows, main)
        fill = _fill_of(c)
        fill_value, result = (None, c) if fill is None else fill.operands
        if fill is not None and producer(result, "tensor.empty") is not None:
            result = bufferization.alloc_tensor(c.type, [rows])  # one buffer the parts are computed in
        a_main = _rows_of(a, 0, main, 0, k)
        parts: list[tuple[int, int, ir.Value]] = []
        for column, width in ranges:
            columns = panel if width % panel == 0 else width
            panels = _packed_panels(b, column, width, columns)
            parts.append((column, width, panels))
            dest = _split(_rows_of(result, 0, main, column, width), main, columns)
            if fill_value is not None:
                dest = linalg.fill(fill_value, outs=[dest])
            product = _packed_product(a_main, panels, dest)
            tiled.append(product.owner)
            product = tensor.collapse_shape(ir.RankedTensorType.get([_DYNAMIC, width], element), product,
                                            [[0], [1, 2]])
            result = _put_rows(product, result, 0, main, column)
        result = _RestRows(a, main, rest, parts, fill_value).computed(result, (*rest_tiles(tile_rows), 0), rests)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    _erase_unused_producers(b)  # the panels were copied from B's source (a linear layer's W)
    return tiled, rests


def rest_tiles(tile_rows: int) -> tuple[int, ...]:
    """The row counts of the products over the rows short of a register tile of ``tile_rows``, most first: the
    tile, then the powers of two below it (8: 8, 4, 2, 1).  Padding the 2 rows left of 66 to a tile of 8 was
    a tenth more work than the product needs."""
    return (tile_rows, *(1 << p for p in range(tile_rows.bit_length() - 1, -1, -1) if 1 << p < tile_rows))


class _RestRows:
    """The rows [main, main + rest) of a product: A's rows, the columns of C as (first column, width, the panels
    of B they read), the value C is filled with (None: C's rows are added to)."""

    def __init__(self, a: ir.Value, main: ir.Value, rest: ir.Value, parts: list[tuple[int, int, ir.Value]],
                 fill_value: ir.Value | None) -> None:
        self.a, self.main, self.rest, self.parts, self.fill_value = a, main, rest, parts, fill_value

    def computed(self, result: ir.Value, counts: tuple[int, ...], products: list[ir.Operation]) -> ir.Value:
        """``result`` with the rows written by products of ``counts[0]`` rows when more than ``counts[1]`` are
        left, else by the narrower ones (nothing written when none is left: ``counts`` ends in 0)."""
        count, bound = counts[0], counts[1]
        choice = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, self.rest, _index(bound)), [result.type],
                          has_else=True)
        with ir.InsertionPoint(choice.then_block):
            scf.YieldOp([self._products(result, count, products)])
        with ir.InsertionPoint(choice.else_block):
            scf.YieldOp([self.computed(result, counts[1:], products) if bound else result])
        return choice.results[0]

    def _products(self, result: ir.Value, count: int, products: list[ir.Operation]) -> ir.Value:
        """``result`` with the rows written by a product of ``count`` rows per range of columns, A's rows padded
        to them once, C's for each range."""
        k = ir.RankedTensorType(self.a.type).shape[1]
        element = ir.RankedTensorType(result.type).element_type
        a_rows = padded_rows(_rows_of(self.a, self.main, self.rest, 0, k), self.rest, count)
        for column, width, panels in self.parts:
            columns = ir.RankedTensorType(panels.type).shape[2]
            if self.fill_value is not None:
                dest = linalg.fill(self.fill_value, outs=[tensor.empty([count, width // columns, columns], element)])
            else:
                dest = _split(padded_rows(_rows_of(result, self.main, self.rest, column, width), self.rest, count),
                              None, columns)
            product = _packed_product(a_rows, panels, dest)
            products.append(product.owner)
            product = tensor.collapse_shape(ir.RankedTensorType.get([count, width], element), product,
                                            [[0], [1, 2]])
            result = _put_rows(_rows_of(product, 0, self.rest, 0, width), result, self.main, self.rest, column)
        return result


#: A product of few rows (:func:`split_few_dynamic_rows`) to schedule: (the generic over (t, i, j, k), whether it
#: reads B transposed (x @ W^T: the row-dot schedule) or as it is (x @ W: register tiles of columns), the columns
#: of its tasks, the columns of its register tiles).
FewRowProduct = tuple[ir.Operation, bool, int, int]


def split_few_dynamic_rows(module: ir.Module, dot_columns: Callable[[int], int],
                           tile_columns: int) -> list[FewRowProduct]:
    """Give each f32 product of dynamic rows whose B is read at run time (a linear layer's W, not a constant) a
    path for few rows: ``scf.if rows <= ROW_DOT_ROWS`` (x @ W: ROW_DOT_TILE_ROWS), then products over A and C in
    tiles of rows (:func:`_row_tiles`) that read B as it is, one row (a generated token) in tiles of one row;
    else the product as it was, packed.  Packing W would copy all of it at every call for a token's few rows.
    x @ W^T takes the row-dot products (tasks of ``dot_columns(tile rows)`` columns), x @ W register tiles of
    ``tile_columns`` columns (four times as many for a tile of one row).  Returns the products to schedule."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (op.name == "linalg.matmul" and SERIAL not in op.attributes and _rows_alone_dynamic(op)
                and (_reads_b_transposed(op) or _plain(op)) and producer(op.operands[1], "arith.constant") is None):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return [part for op in found for part in _split_few_rows(_through_transpose(op), dot_columns, tile_columns)]


def _through_transpose(op: ir.Operation) -> ir.Operation:
    """A plain matmul whose B is ``linalg.transpose(Bt)`` (a graph's own transpose of a weight stored [out, in])
    as the matmul reading Bt transposed through its maps, the form of a linear layer's x @ W^T: the few-row
    products then read W as stored instead of a transposed copy of all of it made at every call."""
    a, b, c = op.operands
    source = _transposed_source(b) if _plain(op) else None
    if source is None:
        return op
    with op.location, ir.InsertionPoint(op):
        product = matmul_b_transposed(a, source, c).owner
    op.results[0].replace_all_uses_with(product.results[0])
    op.erase()
    _erase_unused_producers(b)
    return product


def _split_few_rows(op: ir.Operation, dot_columns: Callable[[int], int], tile_columns: int) -> list[FewRowProduct]:
    a, b, c = op.operands
    transposed = _reads_b_transposed(op)
    result_type = ir.RankedTensorType(c.type)
    with op.location, ir.InsertionPoint(op):
        rows = tensor.dim(a, _index(0))
        fill = _fill_of(c)
        fill_value, result = (None, c) if fill is None else fill.operands
        if fill is not None and producer(result, "tensor.empty") is not None:
            # one buffer for either path, allocated here, before the branch: the packed path would allocate its
            # own inside it, which the runtime cannot take as workspace
            result = bufferization.alloc_tensor(result_type, [rows])
            op.operands[2] = linalg.fill(fill_value, outs=[result])
            if not list(fill.results[0].uses):
                fill.erase()
        # x @ W: register tiles reading W's rows as stored beat packing W for one tile of rows, not beyond (a
        # 2048-column W: 1 row 34 against 108 us packed, 2 rows 78 against 125, 17 rows 355 against 192)
        few = arith.cmpi(arith.CmpIPredicate.ule, rows, _index(ROW_DOT_ROWS if transposed else ROW_DOT_TILE_ROWS))
        branch = scf.IfOp(few, [result_type], has_else=True)
    op.results[0].replace_all_uses_with(branch.results[0])
    parts: list[FewRowProduct] = []
    with op.location, ir.InsertionPoint(branch.then_block):
        one = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, rows, _index(1)), [result_type], has_else=True)
        for block, tile_rows in ((one.then_block, 1), (one.else_block, ROW_DOT_TILE_ROWS)):
            with ir.InsertionPoint(block):
                columns = dot_columns(tile_rows) if transposed else tile_columns * (ROW_DOT_TILE_ROWS // tile_rows)
                value, products = _row_tiles(a, b, result, rows, fill_value, tile_rows, transposed, columns)
                parts += [(product, transposed, width, min(width, columns)) for product, width in products]
                scf.YieldOp([value])
        scf.YieldOp(one.results)
    with ir.InsertionPoint(branch.else_block):
        packed = scf.YieldOp([op.results[0]])
    op.move_before(packed)
    return parts


def _in_tiles(value: ir.Value, rows: ir.Value, tile: int, zero: ir.Value | None) -> ir.Value:
    """The [rows, W] tensor ``value`` (rows <= ROW_DOT_ROWS) as [tiles, ``tile``, W] (:func:`_tiles_of`) in a
    static buffer of ROW_DOT_ROWS rows; the rows padded onto the last tile hold ``zero`` (None: whatever the
    buffer held)."""
    t = ir.RankedTensorType(value.type)
    width = t.shape[1]
    buffer = _put_rows(value, tensor.empty([ROW_DOT_ROWS, width], t.element_type), 0, rows, 0)
    if zero is not None and tile > 1:
        extra = arith.subi(_padded_count(rows, tile), rows)
        buffer = _put_rows(linalg.fill(zero, outs=[_rows_of(buffer, rows, extra, 0, width)]), buffer, rows, extra, 0)
    return _tiles_of(buffer, rows, tile)


def _padded_count(rows: ir.Value, tile: int) -> ir.Value:
    return arith.muli(arith.ceildivui(rows, _index(tile)), _index(tile))


def _tiles_of(buffer: ir.Value, rows: ir.Value, tile: int) -> ir.Value:
    """The first ``rows`` rows of the static [ROW_DOT_ROWS, W] ``buffer``, with those after them up to a whole
    tile, as [tiles, ``tile``, W]."""
    t = ir.RankedTensorType(buffer.type)
    shape = [_DYNAMIC, tile, t.shape[1]]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type),
                               _rows_of(buffer, 0, _padded_count(rows, tile), 0, t.shape[1]), [[0, 1], [2]],
                               [arith.ceildivui(rows, _index(tile))], shape)


def _row_tiles(a: ir.Value, b: ir.Value, c: ir.Value, rows: ir.Value, fill_value: ir.Value | None, tile: int,
               transposed: bool, column_tile: int) -> tuple[ir.Value, list[tuple[ir.Operation, int]]]:
    """C's first ``rows`` rows (at most ROW_DOT_ROWS) = A @ B (B [N, K] read ``transposed``, else [K, N]) (+ C
    when ``fill_value`` is None, else C filled with it) as generics over (t, i, j, k) on A and C in tiles of
    ``tile`` rows (:func:`_in_tiles`): one per range of columns (the whole tiles of ``column_tile`` columns, then
    the rest).  Returns (C with the rows written, [(generic, its columns)])."""
    n = ir.RankedTensorType(c.type).shape[1]
    element = ir.RankedTensorType(c.type).element_type
    zero = arith.ConstantOp(element, 0.0).result
    a_tiles = _in_tiles(a, rows, tile, zero)
    if fill_value is None:
        c_tiles = _in_tiles(_rows_of(c, 0, rows, 0, n), rows, tile, None)
    else:
        c_tiles = _tiles_of(linalg.fill(fill_value, outs=[tensor.empty([ROW_DOT_ROWS, n], element)]), rows, tile)
    c_tiles, parts = _tile_products(a_tiles, b, c_tiles, transposed, column_tile)
    padded = tensor.collapse_shape(ir.RankedTensorType.get([_DYNAMIC, n], element), c_tiles, [[0, 1], [2]])
    return _put_rows(_rows_of(padded, 0, rows, 0, n), c, 0, rows, 0), parts


def _tile_products(a_tiles: ir.Value, b: ir.Value, c_tiles: ir.Value, transposed: bool,
                   column_tile: int) -> tuple[ir.Value, list[tuple[ir.Operation, int]]]:
    """C [T, R, N] += A [T, R, K] @ B (B [N, K] read ``transposed``, else [K, N]) as generics over (t, i, j, k),
    one per range of columns (the whole tiles of ``column_tile`` columns, then the rest).  Returns (C, [(generic,
    its columns)])."""
    (count, tile, k), n = ir.RankedTensorType(a_tiles.type).shape, ir.RankedTensorType(c_tiles.type).shape[2]
    element = ir.RankedTensorType(c_tiles.type).element_type
    tiles = [tensor.dim(a_tiles, _index(0))] if count == _DYNAMIC else []
    whole = n - n % column_tile
    b_dims = (2, 3) if transposed else (3, 2)
    maps = [ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(d) for d in dims]) for dims in ((0, 1, 3), b_dims, (0, 1, 2))]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    parts: list[tuple[ir.Operation, int]] = []
    for column, width in ((0, whole), (whole, n - whole)):
        if not width:
            continue
        if width == n:
            rhs = b
        else:
            shape, offsets = ([width, k], [column, 0]) if transposed else ([k, width], [0, column])
            rhs = tensor.extract_slice(ir.RankedTensorType.get(shape, element), b, [], [], [], offsets, shape, [1, 1])
        part_type = ir.RankedTensorType.get([count, tile, width], element)
        dest = c_tiles if width == n else tensor.extract_slice(
            part_type, c_tiles, [], tiles, [], [0, 0, column], [count, tile, width], [1, 1, 1])
        generic = linalg.GenericOp([part_type], [a_tiles, rhs], [dest],
                                   ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                   ir.ArrayAttr.get([parallel, parallel, parallel, reduction]))
        body = generic.regions[0].blocks.append(element, element, element)
        with ir.InsertionPoint(body):
            linalg.YieldOp([fadd(body.arguments[2], fmul(body.arguments[0], body.arguments[1]))])
        parts.append((generic.operation, width))
        c_tiles = generic.results[0] if width == n else tensor.insert_slice(
            generic.results[0], c_tiles, [], tiles, [], [0, 0, column], [count, tile, width], [1, 1, 1])
    return c_tiles, parts


def few_static_rows_products(module: ir.Module, tile_columns: int) -> list[FewRowProduct]:
    """Static f32 products x @ W of at most ROW_DOT_TILE_ROWS rows whose W [K, N] is read at run time (a generated
    token's step through GPT-2's Conv1D once the step's shapes are specialized) as one tile of rows, the generic
    over (t, i, j, k) the few-row path of :func:`split_few_dynamic_rows` takes: register tiles of the rows by
    ``tile_columns`` columns (four times as many for one row) reading W as it is stored, where the packed product
    would copy all of W at every call.  Returns the products to schedule."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (op.name == "linalg.matmul" and SERIAL not in op.attributes and _plain(op)
                and producer(op.operands[1], "arith.constant") is None and all(_static_tensor(v) for v in op.operands)):
            a = ir.RankedTensorType(op.operands[0].type)
            if isinstance(a.element_type, ir.F32Type) and a.shape[0] <= ROW_DOT_TILE_ROWS \
                    and all(isinstance(ir.RankedTensorType(v.type).element_type, ir.F32Type) for v in op.operands):
                found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    parts: list[FewRowProduct] = []
    for op in found:
        a, b, c = op.operands
        (m, k), n = ir.RankedTensorType(a.type).shape, ir.RankedTensorType(c.type).shape[1]
        element = ir.RankedTensorType(c.type).element_type
        columns = tile_columns * (ROW_DOT_TILE_ROWS // m) if ROW_DOT_TILE_ROWS % m == 0 else tile_columns
        with op.location, ir.InsertionPoint(op):
            lhs = tensor.expand_shape(ir.RankedTensorType.get([1, m, k], element), a, [[0, 1], [2]], [], [1, m, k])
            result = tensor.expand_shape(ir.RankedTensorType.get([1, m, n], element), c, [[0, 1], [2]], [], [1, m, n])
            result, products = _tile_products(lhs, b, result, False, columns)
            parts += [(product, False, width, min(width, columns)) for product, width in products]
            value = tensor.collapse_shape(ir.RankedTensorType(c.type), result, [[0, 1], [2]])
        op.results[0].replace_all_uses_with(value)
        op.erase()
    return parts
