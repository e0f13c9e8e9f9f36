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

from mlir import ir
from mlir.dialects import arith, bufferization, linalg, scf, tensor

from graphfuse.dialect.matching import producer
from graphfuse.lowering.contraction.layout import _DEFAULT_MAPS, _map_dims, _materialize_transposes, _static_tensor
from graphfuse.lowering.contraction.panels import _erase_unused_producers, _fill_of, _packed_panels, _packed_product
from graphfuse.lowering.contraction.sizes import ROW_DOT_ROWS, ROW_DOT_TILE_ROWS, SERIAL, _powers_of_two
from graphfuse.lowering.fast_math import fadd, fmul

__all__ = ["dynamic_row_parts", "dynamic_row_products", "split_few_dynamic_rows"]

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


def _reads_b_transposed(op: ir.Operation) -> bool:
    if "indexing_maps" not in op.attributes:
        return False
    maps = tuple(_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"]))
    return maps == ((0, 2), (1, 2), (0, 1))


def _plain(op: ir.Operation) -> bool:
    """Whether the matmul reads A [M, K] and B [K, N] as they are (its maps, when written out, the default ones)."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = tuple(_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"]))
    return maps == _DEFAULT_MAPS["linalg.matmul"]


def _rows_alone_dynamic(op: ir.Operation) -> bool:
    a, b, c = (v.type for v in op.operands)
    if not all(isinstance(t, ir.RankedTensorType) for t in (a, b, c)):
        return False
    a, b, c = (ir.RankedTensorType(t) for t in (a, b, c))
    if not all(isinstance(t.element_type, ir.F32Type) for t in (a, b, c)) or _static_tensor(op.operands[1]) is None:
        return False
    return a.shape[0] == _DYNAMIC and c.shape[0] == _DYNAMIC and a.shape[1] != _DYNAMIC and c.shape[1] != _DYNAMIC


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


def _padded_rows(value: ir.Value, rows: ir.Value, tile_rows: int) -> ir.Value:
    """The [rows, W] tensor ``value`` (rows < ``tile_rows``) padded with zero rows to a static [tile_rows, W]."""
    t = ir.RankedTensorType(value.type)
    missing = arith.subi(_index(tile_rows), rows)
    padded = tensor.PadOp(ir.RankedTensorType.get([tile_rows, t.shape[1]], t.element_type), value, [], [missing],
                          [0, 0], [_DYNAMIC, 0])
    block = padded.regions[0].blocks.append(ir.IndexType.get(), ir.IndexType.get())
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.ConstantOp(t.element_type, 0.0).result)
    return padded.result


def dynamic_row_parts(op: ir.Operation, panel: int, tile_rows: int) -> tuple[list[ir.Operation], list[ir.Operation]]:
    """Replace ``op`` (:func:`dynamic_row_products`) by packed products, per range of columns (whole panels of
    ``panel`` columns, then narrower panels of powers of two): one over the rows in whole register tiles of
    ``tile_rows`` (a count known at run time), one over the rows left (fewer than a tile) padded with zero rows to
    a whole tile, of static shape.  Returns (the first kind, the second kind).

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
        a_rest = _padded_rows(_rows_of(a, main, rest, 0, k), rest, tile_rows)
        for column, width in ranges:
            columns = panel if width % panel == 0 else width
            panels = _packed_panels(b, column, width, columns)
            dest = _split(_rows_of(result, 0, main, column, width), main, columns)
            rest_dest = tensor.empty([tile_rows, width // columns, columns], element) if fill_value is not None \
                else _split(_padded_rows(_rows_of(result, main, rest, column, width), rest, tile_rows), None, columns)
            if fill_value is not None:
                dest = linalg.fill(fill_value, outs=[dest])
                rest_dest = linalg.fill(fill_value, outs=[rest_dest])
            product = _packed_product(a_main, panels, dest)
            tiled.append(product.owner)
            product = tensor.collapse_shape(ir.RankedTensorType.get([_DYNAMIC, width], element), product,
                                            [[0], [1, 2]])
            result = _put_rows(product, result, 0, main, column)
            # the rows left, when there are any (a whole tile's work otherwise spent on padding)
            left = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, rest, _index(0)), [result.type], has_else=True)
            with ir.InsertionPoint(left.then_block):
                rest_product = _packed_product(a_rest, panels, rest_dest)
                rests.append(rest_product.owner)
                rest_product = tensor.collapse_shape(ir.RankedTensorType.get([tile_rows, width], element),
                                                     rest_product, [[0], [1, 2]])
                scf.YieldOp([_put_rows(_rows_of(rest_product, 0, rest, 0, width), result, main, rest, column)])
            with ir.InsertionPoint(left.else_block):
                scf.YieldOp([result])
            result = left.results[0]
    op.results[0].replace_all_uses_with(result)
    op.erase()
    _erase_unused_producers(b)  # the panels were copied from B's source (a linear layer's W)
    return tiled, rests


def split_few_dynamic_rows(module: ir.Module, column_tile: int) -> list[tuple[ir.Operation, int]]:
    """Give each linear layer of dynamic rows reading its weight at run time (x @ W^T, W not a constant, f32) a
    path for few rows: ``scf.if rows <= ROW_DOT_ROWS``, then the row-tile dot products (:func:`_row_tile_dots`),
    which read W as it is; else the product as it was, packed.  Packing W would copy all of it at every call
    for a token's few rows (a generated token's step), which static products of few rows avoid the same way.
    Returns the row-tile products with the columns of their tasks (``column_tile`` for whole tiles of columns,
    the rest's width for the columns short of one)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (op.name == "linalg.matmul" and SERIAL not in op.attributes and _rows_alone_dynamic(op)
                and _reads_b_transposed(op) and producer(op.operands[1], "arith.constant") is None):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return [part for op in found for part in _split_few_rows(op, column_tile)]


def _split_few_rows(op: ir.Operation, column_tile: int) -> list[tuple[ir.Operation, int]]:
    a, bt, c = op.operands
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
        few = arith.cmpi(arith.CmpIPredicate.ule, rows, _index(ROW_DOT_ROWS))
        branch = scf.IfOp(few, [result_type], has_else=True)
    op.results[0].replace_all_uses_with(branch.results[0])
    with op.location, ir.InsertionPoint(branch.then_block):
        # one row (a generated token): the static one-row product, which the row-dot schedule tiles for one row
        one = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, rows, _index(1)), [result_type], has_else=True)
        with ir.InsertionPoint(one.then_block):
            k, n = ir.RankedTensorType(a.type).shape[1], result_type.shape[1]
            row_type = ir.RankedTensorType.get([1, n], result_type.element_type)
            dest = linalg.fill(fill_value, outs=[tensor.empty([1, n], result_type.element_type)]) \
                if fill_value is not None else tensor.cast(row_type, _rows_of(result, 0, rows, 0, n))
            maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
            row = linalg.matmul(tensor.cast(ir.RankedTensorType.get([1, k], result_type.element_type), a), bt,
                                outs=[dest], indexing_maps=maps)
            scf.YieldOp([_put_rows(tensor.cast(ir.RankedTensorType.get([_DYNAMIC, n], result_type.element_type),
                                               row), result, 0, rows, 0)])
        with ir.InsertionPoint(one.else_block):
            value, parts = _row_tile_dots(a, bt, result, rows, fill_value, column_tile)
            scf.YieldOp([value])
        scf.YieldOp(one.results)
    with ir.InsertionPoint(branch.else_block):
        packed = scf.YieldOp([op.results[0]])
    op.move_before(packed)
    return parts


def _in_tiles(value: ir.Value, rows: ir.Value, zero: ir.Value | None) -> ir.Value:
    """The [rows, W] tensor ``value`` (rows <= ROW_DOT_ROWS) as [tiles, ROW_DOT_TILE_ROWS, W] (:func:`_tiles_of`)
    in a static buffer of ROW_DOT_ROWS rows; the rows padded onto the last tile hold ``zero`` (None: whatever
    the buffer held)."""
    t = ir.RankedTensorType(value.type)
    width = t.shape[1]
    buffer = _put_rows(value, tensor.empty([ROW_DOT_ROWS, width], t.element_type), 0, rows, 0)
    if zero is not None:
        extra = arith.subi(_padded_count(rows), rows)
        buffer = _put_rows(linalg.fill(zero, outs=[_rows_of(buffer, rows, extra, 0, width)]), buffer, rows, extra, 0)
    return _tiles_of(buffer, rows)


def _padded_count(rows: ir.Value) -> ir.Value:
    return arith.muli(arith.ceildivui(rows, _index(ROW_DOT_TILE_ROWS)), _index(ROW_DOT_TILE_ROWS))


def _tiles_of(buffer: ir.Value, rows: ir.Value) -> ir.Value:
    """The first ``rows`` rows of the static [ROW_DOT_ROWS, W] ``buffer``, with those after them up to a whole
    tile, as [tiles, ROW_DOT_TILE_ROWS, W]."""
    t = ir.RankedTensorType(buffer.type)
    shape = [_DYNAMIC, ROW_DOT_TILE_ROWS, t.shape[1]]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type),
                               _rows_of(buffer, 0, _padded_count(rows), 0, t.shape[1]), [[0, 1], [2]],
                               [arith.ceildivui(rows, _index(ROW_DOT_TILE_ROWS))], shape)


def _row_tile_dots(a: ir.Value, bt: ir.Value, c: ir.Value, rows: ir.Value, fill_value: ir.Value | None,
                   column_tile: int) -> tuple[ir.Value, list[tuple[ir.Operation, int]]]:
    """C's first ``rows`` rows (at most ROW_DOT_ROWS) = A @ Bt^T (+ C when ``fill_value`` is None, else C filled
    with it) as generics over (t, i, j, k) on A and C in tiles of ROW_DOT_TILE_ROWS rows (:func:`_in_tiles`):
    one per range of columns (the whole tiles of ``column_tile`` columns, then the rest).  Returns (C with the
    rows written, [(generic, columns of its tasks)])."""
    k, n = ir.RankedTensorType(a.type).shape[1], ir.RankedTensorType(c.type).shape[1]
    element = ir.RankedTensorType(c.type).element_type
    zero = arith.ConstantOp(element, 0.0).result
    a_tiles = _in_tiles(a, rows, zero)
    if fill_value is None:
        c_tiles = _in_tiles(_rows_of(c, 0, rows, 0, n), rows, None)
    else:
        c_tiles = _tiles_of(linalg.fill(fill_value, outs=[tensor.empty([ROW_DOT_ROWS, n], element)]), rows)
    tiles = tensor.dim(a_tiles, _index(0))
    whole = n - n % column_tile
    maps = [ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(d) for d in dims]) for dims in ((0, 1, 3), (2, 3), (0, 1, 2))]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    parts: list[tuple[ir.Operation, int]] = []
    for column, width in ((0, whole), (whole, n - whole)):
        if not width:
            continue
        rhs = bt if width == n else tensor.extract_slice(
            ir.RankedTensorType.get([width, k], element), bt, [], [], [], [column, 0], [width, k], [1, 1])
        part_type = ir.RankedTensorType.get([_DYNAMIC, ROW_DOT_TILE_ROWS, width], element)
        dest = c_tiles if width == n else tensor.extract_slice(
            part_type, c_tiles, [], [tiles], [], [0, 0, column], [_DYNAMIC, ROW_DOT_TILE_ROWS, width], [1, 1, 1])
        generic = linalg.GenericOp([part_type], [a_tiles, rhs], [dest],
                                   ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                   ir.ArrayAttr.get([parallel, parallel, parallel, reduction]))
        body = generic.regions[0].blocks.append(element, element, element)
        with ir.InsertionPoint(body):
            linalg.YieldOp([fadd(body.arguments[2], fmul(body.arguments[0], body.arguments[1]))])
        parts.append((generic.operation, min(width, column_tile)))
        c_tiles = generic.results[0] if width == n else tensor.insert_slice(
            generic.results[0], c_tiles, [tiles], [], [], [0, 0, column], [_DYNAMIC, ROW_DOT_TILE_ROWS, width],
            [1, 1, 1])
    padded = tensor.collapse_shape(ir.RankedTensorType.get([_DYNAMIC, n], element), c_tiles, [[0, 1], [2]])
    return _put_rows(_rows_of(padded, 0, rows, 0, n), c, 0, rows, 0), parts
