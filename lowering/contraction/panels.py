"""Register-tile parts of a product: B copied into panels (or read as constant panels), the product on
each part, its elementwise epilogue applied per part."""



import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, tensor

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import producer
from graphfuse.lowering.contraction.layout import _map_dims
from graphfuse.lowering.contraction.marks import _elementwise_epilogues
from graphfuse.lowering.contraction.pairs import (
    COMPENSATED_INIT,
    column_compensation,
    compensated_init,
    packed_pair_panels,
    pair_product,
    product_group,
    unsigned_rows,
)
from graphfuse.lowering.contraction.sizes import (
    BLOCK,
    MIN_ROW_TASKS,
    PANEL_TASK,
    ROW_BLOCK_TILES,
    SERIAL,
    _powers_of_two,
    outer_panels,
    panel_task,
    row_block,
)


def _unfilled(c: ir.Value) -> tuple[ir.Value | None, ir.Value]:
    """(the value ``c`` is filled with, the tensor to compute parts of C in) for a filled ``c``, else (None, c).

    The tensor is the fill's destination, or a new allocation where that is an empty tensor: the runtime
    gives each use of an empty tensor a buffer of its own, and the parts, slices of it inserted back,
    would be computed apart and copied.
    """
    fill = _fill_of(c)
    if fill is None:
        return None, c
    value, dest = fill.operands
    if producer(dest, "tensor.empty") is not None:
        dest = bufferization.alloc_tensor(c.type, [])
    return value, dest


def _shared_by_panels(rows: int, panels: int, tile_rows: int) -> bool:
    """Whether a packed product's tasks are panels of B rather than row blocks: too few row blocks to share.

    A convolution's product has as many rows as filters (64 against 3136 columns at 56x56), a token's
    linear layer one.  The rows of a task are then all the rows, with a peeled rest: no second product.
    Counted in blocks of the default size (``ROW_BLOCK_TILES`` tiles), whatever size :func:`row_block` picks.
    """
    return rows < MIN_ROW_TASKS * tile_rows * ROW_BLOCK_TILES and panels >= 2 * PANEL_TASK


def _fill_of(value: ir.Value) -> ir.Operation | None:
    """The ``linalg.fill`` producing ``value``, if one does."""
    return producer(value, "linalg.fill")


def filled_init(value: ir.Value) -> ir.Operation | None:
    """The op computing a packed product's C (``value``) that its schedule computes per block: a ``linalg.fill``,
    or an int8 product's start plus compensation (:func:`graphfuse.lowering.contraction.pairs.compensated_init`)
    when that starts from a fill's value rather than C's own."""
    fill = _fill_of(value)
    if fill is not None:
        return fill
    init = producer(value, "linalg.generic")
    if init is None or COMPENSATED_INIT not in init.attributes:
        return None
    reads_c = any(True for _ in init.regions[0].blocks[0].arguments[1].uses)
    return None if reads_c else init


def _register_tile_parts(op: ir.Operation, tile_rows: int, panel: int, threads: int,
                         epilogue: ir.Operation | None = None, dots: frozenset[str] = frozenset(),
                         ) -> list[tuple[ir.Operation, bool, ir.Operation | None]]:
    """Replace ``op`` (a static ``linalg.matmul``) by the ops the schedules tile: [(op, whether B is packed, the
    part's epilogue or None)].

    - B is packed into panels of ``panel`` columns when it is f32: a register tile reads one row of B per
      step of K, and in B as it is those rows are N floats apart, so the K rows of a block fall on the same
      few cache sets and each on its own page (a 1024x1024x4096 matmul's rows of B are 16 KB apart) and
      are read from L3 again for every tile.  Packed, a panel ``Bp[j0]`` is K rows of ``panel`` floats one
      after the other; the product is a generic over (j0, i, j1, k) reading A[i, k] and Bp[j0, k, j1] into
      C viewed as [M, N / panel, panel] (a reshape of the same buffer).  Columns that do not fill a last
      panel are products of their own, one narrower panel each, of powers of two (24 columns are 16 + 8:
      LLVM splits a loop-carried vector<8x24xf32> accumulator lane by lane through the stack, and the 24
      columns of 1000x1000x3000 took a sixth of its time).  A bf16 or int8 product on dot products
      (:func:`graphfuse.lowering.contraction.pairs.product_group`, ``dots``) is packed the same way, into
      panels of groups of K (:mod:`.pairs`); an int8 one reads A + 128 and its C starts from the columns'
      compensation.
    - The rows are cut in two when the row blocks (:func:`row_block`) do not divide them: the blocks'
      rows, then the rest as one block of its own, so that every block and every register tile of
      either has a size known when compiling (a block of the rest's size in a loop of full blocks would
      make every tile's size dynamic, and its last tile scalar code).
    - ``epilogue`` (:func:`_fusable_epilogue`, packed products only) is applied to each part
      (:func:`_epilogue_on_part`), whose C is then a tensor of its own (a scratch block once tiled), and
      replaced by the parts' results; the parts are then built where it was, after every value it reads.
    """
    a, b, c = op.operands
    types = [ir.RankedTensorType(v.type) for v in (a, b, c)]
    (m, k), n = types[0].shape, types[2].shape[1]
    group = product_group(op, dots)
    pairs = group > 0
    packed = pairs or all(isinstance(t.element_type, ir.F32Type) for t in types)
    serial = SERIAL in op.attributes  # a task's product: all its rows one block, no second product
    whole = n - n % panel if packed else n
    column_ranges = [(0, whole)] if whole else []
    start = whole
    for width in _powers_of_two(n - whole):
        column_ranges.append((start, width))
        start += width
    parts: list[tuple[ir.Operation, bool, ir.Operation | None]] = []
    element = types[2].element_type
    epilogue = epilogue if packed else None
    with op.location, ir.InsertionPoint(epilogue or op):
        # a filled C: each product fills its own part, in its row blocks where the part is in cache, instead
        # of one pass over all of C before
        fill_value, result = _unfilled(c) if packed else (None, c)
        filled = fill_value is not None
        if group == 4:  # vpdpbusd reads A's bytes unsigned
            a = unsigned_rows(a)
        if epilogue is not None:  # the parts' epilogues write the epilogue's result; each product a C of its own
            result = epilogue.operands[len(epilogue.operands) - 1]
            if producer(result, "tensor.empty") is not None:  # one buffer for the parts (see _unfilled)
                result = bufferization.alloc_tensor(result.type, [])
        bt = _transposed_source(b) if pairs else None  # the Bt [N, K] B transposes, read by the panels of groups
        for column, width in column_ranges:
            columns = panel if width % panel == 0 else width
            compensation = None
            if packed:
                with ir.InsertionPoint(_loop_invariant_point(op, b) if serial else epilogue or op):
                    rhs = packed_pair_panels(b, bt, column, width, columns) if pairs \
                        else _packed_panels(b, column, width, columns, serial)
                    if group == 4:
                        compensation = column_compensation(b, bt, column, width, columns)
            else:
                rhs = b if width == n else _slice(b, [0, column], [k, width])
            row_ranges = [(0, m)] if serial else _row_ranges(m, width // columns, tile_rows, threads, packed)
            for row, size in row_ranges:
                lhs = a if size == m else _slice(a, [row, 0], [size, k])
                dest = _slice(result, [row, column], [size, width]) if (size, width) != (m, n) else result
                if packed:
                    dest = _split_columns(dest, columns)
                out = dest
                if epilogue is not None:  # C is a scratch tensor; each block of it is filled, used and dropped
                    dest = tensor.empty([size, width // columns, columns], element)
                if compensation is not None:
                    dest = compensated_init(dest, fill_value, compensation)
                elif filled:
                    dest = linalg.fill(fill_value, outs=[dest])
                if pairs:
                    product = pair_product(lhs, rhs, dest)
                elif packed:
                    product = _packed_product(lhs, rhs, dest)
                else:
                    product = linalg.matmul(lhs, rhs, outs=[dest])
                product_op, part_epilogue = product.owner, None
                if serial:
                    product_op.attributes[SERIAL] = ir.UnitAttr.get()
                if epilogue is not None:
                    product = _epilogue_on_part(epilogue, op.results[0], product, out, (row, size),
                                                (column, width), columns)
                    part_epilogue = product.owner
                parts.append((product_op, packed, part_epilogue))
                if packed:
                    rounded = ir.RankedTensorType(product.type).element_type  # an epilogue's: f32, bf16 or f16
                    product = tensor.collapse_shape(ir.RankedTensorType.get([size, width], rounded), product,
                                                    [[0], [1, 2]])
                result = product if (size, width) == (m, n) else _insert(product, result, [row, column])
    if epilogue is not None:
        epilogue.results[0].replace_all_uses_with(result)
        epilogue.erase()
    else:
        op.results[0].replace_all_uses_with(result)
    op.erase()
    if packed:
        _erase_unused_producers(b)  # the panels were copied from B's source, or are a constant of their own
    return parts


def _loop_invariant_point(op: ir.Operation, value: ir.Value) -> ir.Operation:
    """The op before which a copy of ``value`` read by ``op`` is made once: the outermost of the ``scf.for``
    loops around ``op`` that ``value`` is defined outside of (a task's product per tile of rows, all reading
    one block of keys: attention's), else ``op``."""
    point = op
    while point.parent is not None and point.parent.name == "scf.for" and not _defined_in(value, point.parent):
        point = point.parent
    return point


def _defined_in(value: ir.Value, region_op: ir.Operation) -> bool:
    """Whether ``value`` is defined inside ``region_op``'s regions (a result of an op nested in them, or a
    block argument of one of their blocks)."""
    owner = value.owner
    # a block argument is the op holding its block's; a result is that of the ops around its producer
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation.parent
    while op is not None:
        if op == region_op:
            return True
        op = op.parent
    return False


def _erase_unused_producers(value: ir.Value, erasable: frozenset[str] | None = None) -> None:
    """Erase ``value``'s producer when nothing reads it, then the producers of its operands left unread; only
    ops named in ``erasable`` (default :data:`_PURE_PRODUCERS`).

    Bufferization would still compute them (a transpose of B) or keep them (a weight constant).
    """
    erasable = _PURE_PRODUCERS if erasable is None else erasable
    op = producer(value)
    if op is None or op.name not in erasable:
        return
    if any(True for result in op.results for _ in result.uses):
        return
    operands = list(op.operands)
    op.erase()
    for operand in operands:
        _erase_unused_producers(operand, erasable)


def _split_columns(value: ir.Value, columns: int) -> ir.Value:
    """[rows, N] viewed as [rows, N / columns, columns]."""
    t = ir.RankedTensorType(value.type)
    rows, n = t.shape
    shape = [rows, n // columns, columns]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), value, [[0], [1, 2]], [], shape)


#: Ops without side effects that :func:`_erase_unused_producers` may erase.
_PURE_PRODUCERS = frozenset({"linalg.transpose", "tensor.empty", "arith.constant"})


def _transposed_source(b: ir.Value) -> ir.Value | None:
    """Bt [N, K] when ``b`` is ``linalg.transpose(Bt)`` (a linear layer's weight, stored [out, in]), else None."""
    transpose = producer(b, "linalg.transpose")
    if transpose is None or list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"])) != [1, 0]:
        return None
    return transpose.operands[0]


def _constant_panels(b: ir.Value, transposed: bool, column: int, width: int, columns: int) -> ir.Value | None:
    """The panels of :func:`_packed_panels` as a constant when B (``transposed``: Bt [N, K]) is one (a
    model's weight imported as a constant): packed once when compiling, not on every call."""
    constant = producer(b, "arith.constant")
    if constant is None:
        return None
    attr = ir.DenseElementsAttr(constant.attributes["value"])
    element = ir.RankedTensorType(b.type).element_type
    k = ir.RankedTensorType(b.type).shape[1 if transposed else 0]
    panels_type = ir.RankedTensorType.get([width // columns, k, columns], element)
    if attr.is_splat:
        return arith.constant(panels_type, ir.DenseElementsAttr.get_splat(panels_type, attr.get_splat_value()))
    array = attr_to_array(attr)
    if transposed:  # Bt rows [column, column + width): [panels, columns, K] -> [panels, K, columns]
        panels = array[column:column + width].reshape(width // columns, columns, k).transpose(0, 2, 1)
    else:  # B columns [column, column + width): [K, panels, columns] -> [panels, K, columns]
        panels = array[:, column:column + width].reshape(k, width // columns, columns).transpose(1, 0, 2)
    return arith.constant(panels_type, array_to_attr(np.ascontiguousarray(panels)))


def _packed_panels(b: ir.Value, column: int, width: int, columns: int, serial: bool = False) -> ir.Value:
    """Columns ``column`` to ``column + width`` of B [K, N] copied into panels [width / columns, K, columns],
    the copy marked for the schedule.

    This is what lowering ``linalg.pack`` makes, without the copy of B into a padded buffer it adds.  When
    B is the transpose of Bt [N, K], the panels are copied from Bt: panel j0 is the transpose of the
    ``columns`` rows of Bt from j0 * columns, one copy where transposing first would make two (and the
    transpose alone, rows of B written N floats apart, cost more than the packing).
    """
    t = ir.RankedTensorType(b.type)
    k, n = t.shape
    source = _transposed_source(b)
    constant = _constant_panels(b if source is None else source, source is not None, column, width, columns)
    if constant is not None:
        return constant
    panels = tensor.empty([width // columns, k, columns], t.element_type)
    if source is None:
        part = b if width == n else _slice(b, [0, column], [k, width])
        copy = linalg.transpose(_split_columns(part, columns), outs=[panels], permutation=[1, 0, 2])
        copy.attributes["graph.serial_pack" if serial else "graph.block"] = ir.UnitAttr.get()
        return copy.results[0]
    rows = source if width == n else _slice(source, [column, 0], [width, k])
    shape = [width // columns, columns, k]
    split = tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), rows, [[0, 1], [2]], [], shape)
    copy = linalg.transpose(split, outs=[panels], permutation=[0, 2, 1])
    copy.attributes["graph.serial_pack_transposed" if serial else "graph.pack_transposed"] = ir.UnitAttr.get()
    return copy.results[0]


def _slice(value: ir.Value, offsets: list[int], sizes: list[int]) -> ir.Value:
    """The static slice of ``value`` at ``offsets`` of ``sizes``, unit strides."""
    element = ir.RankedTensorType(value.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), value, [], [], [], offsets, sizes,
                                [1] * len(sizes))


def _insert(part: ir.Value, into: ir.Value, offsets: list[int]) -> ir.Value:
    shape = ir.RankedTensorType(part.type).shape
    return tensor.insert_slice(part, into, [], [], [], offsets, list(shape), [1] * len(shape))


def _packed_product(a: ir.Value, packed_b: ir.Value, c_view: ir.Value) -> ir.Value:
    """C[i, j0, j1] += A[i, k] * Bp[j0, k, j1], a generic over (j0, i, j1, k)."""
    f32 = ir.RankedTensorType(c_view.type).element_type
    maps = [ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(d) for d in dims]) for dims in ((1, 3), (0, 3, 2), (1, 0, 2))]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    generic = linalg.GenericOp([c_view.type], [a, packed_b], [c_view],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(amap) for amap in maps]),
                               ir.ArrayAttr.get([parallel, parallel, parallel, reduction]))
    body = generic.regions[0].blocks.append(f32, f32, f32)
    with ir.InsertionPoint(body):
        linalg.YieldOp([arith.addf(body.arguments[2], arith.mulf(body.arguments[0], body.arguments[1]))])
    return generic.results[0]


def _sole_elementwise_reader(product: ir.Operation, rounded: bool = False) -> ir.Operation | None:
    """The all-parallel generic beside ``product`` (same block) that is the only user of its result, reads it
    once through an identity map and writes one f32 result (``rounded``: or bf16/f16, the f32 sums rounded once
    at the end) without reading its init; else None.

    Such a generic can be computed on each block of the product as soon as the block is (an epilogue).
    """
    uses = list(product.results[0].uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner
    if user.name != "linalg.generic" or user.parent != product.parent or len(user.results) != 1:
        return None
    iterators = [str(t) for t in ir.ArrayAttr(user.attributes["iterator_types"])]
    result = ir.RankedTensorType(user.results[0].type)
    results = (ir.F32Type, ir.BF16Type, ir.F16Type) if rounded else (ir.F32Type,)
    if not isinstance(result.element_type, results) or not all("parallel" in t for t in iterators):
        return None
    body = user.regions[0].blocks[0]
    if any(True for _ in body.arguments[len(body.arguments) - 1].uses):
        return None
    maps = list(ir.ArrayAttr(user.attributes["indexing_maps"]))
    reads = [k for k, v in enumerate(list(user.operands)[:-1]) if v == product.results[0]]
    if len(reads) != 1 or _map_dims(maps[reads[0]]) != tuple(range(len(iterators))):
        return None
    return user


def _fusable_epilogue(matmul: ir.Operation) -> ir.Operation | None:
    """The sole elementwise reader of f32 ``matmul``'s result (:func:`_sole_elementwise_reader`, its result
    rounded to bf16 or f16 included), when the packed schedule can apply it to each block of C
    (``matmul_epilogue.mlir``), else None: a static 2-D
    generic whose other inputs are tensors read by projections of (i, j): [M, N] (a residual), [N] (a bias),
    [M] or a scalar.
    """
    user = _sole_elementwise_reader(matmul, rounded=True)
    if user is None or user not in _elementwise_epilogues(matmul):
        return None
    inputs = list(user.operands)[:-1]
    if not all(isinstance(v.type, ir.RankedTensorType) for v in inputs):
        return None
    for attr in list(ir.ArrayAttr(user.attributes["indexing_maps"]))[:-1]:
        if _map_dims(attr) not in ((0, 1), (1,), (0,), ()):
            return None
    return user


def _row_ranges(rows: int, panels: int, tile_rows: int, threads: int, packed: bool) -> list[tuple[int, int]]:
    """(first row, rows) of a product's parts (:func:`_register_tile_parts`): whole row blocks, then the rest,
    unless the product is shared out by panels (:func:`_shared_by_panels`), which keeps all rows together."""
    block = row_block(rows, tile_rows, threads)
    rest = rows % block if rows > block and not (packed and _shared_by_panels(rows, panels, tile_rows)) else 0
    return [(0, rows - rest), (rows - rest, rest)] if rest else [(0, rows)]


def _static_blocks_of_c(matmul: ir.Operation, tile_rows: int, panel: int, threads: int) -> bool:
    """Whether every block of C the packed schedules give ``matmul``'s parts (outer blocks, tasks, blocks of PC
    panels) has a size known when compiling: an epilogue applied to each block then computes the block in a
    scratch buffer of its own (a dynamic one could not be allocated in the loop)."""
    (m, k), n = ir.RankedTensorType(matmul.operands[0].type).shape, ir.RankedTensorType(matmul.results[0].type).shape[1]
    if n % panel:
        return False  # a narrower last panel: a part of its own, not worth a schedule here
    panels, cache_panels = n // panel, max(1, BLOCK // panel)

    def even(total: int, tile: int) -> bool:
        return total % tile == 0 or total <= tile

    for _, rows in _row_ranges(m, panels, tile_rows, threads, packed=True):
        if _shared_by_panels(rows, panels, tile_rows):
            task = panel_task(panels, threads)
            ok = even(panels, task) and even(task, cache_panels)
        elif panels > outer_panels(k, panel):
            ok = even(panels, outer_panels(k, panel))
        else:
            ok = even(panels, cache_panels)
        if not ok:
            return False
    return True


def _epilogue_on_part(epilogue: ir.Operation, source: ir.Value, product: ir.Value, out: ir.Value,
                      rows: tuple[int, int], columns: tuple[int, int], panel: int) -> ir.Value:
    """``epilogue`` (reading the product ``source``) applied to ``product``, the part [rows, columns] of C
    viewed as [rows, columns / panel, panel], into ``out`` (the same part of the epilogue's result): a
    generic over (i, j0, j1) reading the product and slices of the epilogue's other inputs."""
    (row, size), (column, width) = rows, columns
    maps = list(ir.ArrayAttr(epilogue.attributes["indexing_maps"]))
    body = epilogue.regions[0].blocks[0]
    inputs: list[ir.Value] = []
    input_maps: list[ir.AffineMap] = []
    split = [width // panel, panel]
    d = [ir.AffineDimExpr.get(k) for k in range(3)]
    arguments: list[int] = []  # the body argument each new input stands for (the output's is unused)
    for k, (value, attr) in enumerate(zip(list(epilogue.operands)[:-1], maps[:-1], strict=True)):
        dims = _map_dims(attr)
        element = ir.RankedTensorType(value.type).element_type
        if value == source:
            value, exprs = product, d
        elif dims == (0, 1):
            part = _slice(value, [row, column], [size, width])
            value = tensor.expand_shape(ir.RankedTensorType.get([size, *split], element), part, [[0], [1, 2]], [],
                                        [size, *split])
            exprs = d
        elif dims == (1,):
            part = _slice(value, [column], [width])
            value = tensor.expand_shape(ir.RankedTensorType.get(split, element), part, [[0, 1]], [], split)
            exprs = d[1:]
        elif dims == (0,):
            value, exprs = _slice(value, [row], [size]), d[:1]
        else:
            exprs = []
        inputs.append(value)
        input_maps.append(ir.AffineMap.get(3, 0, exprs))
        arguments.append(k)
    identity = ir.AffineMap.get(3, 0, d)
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    generic = linalg.GenericOp([out.type], inputs, [out],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [*input_maps, identity]]),
                               ir.ArrayAttr.get([parallel] * 3))
    new_body = generic.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in [*inputs, out]])
    values = {body.arguments[k]: new_body.arguments[n] for n, k in enumerate(arguments)}
    values[body.arguments[len(arguments)]] = new_body.arguments[len(arguments)]
    for op in body.operations:
        copy = op.operation.clone(ip=ir.InsertionPoint(new_body))
        for k, operand in enumerate(op.operands):
            if operand in values:
                copy.operands[k] = values[operand]
        values.update(zip(op.results, copy.results, strict=True))
    return generic.results[0]
