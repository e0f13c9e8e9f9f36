"""The strategy of the contraction schedules: each contraction's schedule chosen and recorded on it as a
``graph.schedule`` attribute (:mod:`.library`), after the rewrites the schedules read (other contractions as
named matmuls, batched matmuls unrolled or shared out by batches, short products as row-dot parts, B packed
into panels).  :mod:`.application` then applies them.
"""


import math

from mlir import ir
from mlir.dialects import linalg, tensor

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import ops_named, producer
from graphfuse.lowering.contraction.dynamic_rows import (
    dynamic_row_parts,
    dynamic_row_products,
    few_static_rows_products,
    split_few_dynamic_rows,
)
from graphfuse.lowering.contraction.layout import (
    _DEFAULT_MAPS,
    _map_dims,
    _materialize_transposes,
    _reads_b_transposed,
    _rows_collapsed_matmul,
    _static_tensor,
    as_named_matmul,
)
from graphfuse.lowering.contraction.marks import (
    _elementwise_epilogues,
    _erase_unread,
)
from graphfuse.lowering.contraction.pairs import (
    COLUMN_SUMS,
    PACK_PAIRS,
    PACK_TRANSPOSED_PAIRS,
    PAIR_REGISTER_TILE,
    UNSIGNED_ROWS,
    pair_product_applies,
)
from graphfuse.lowering.contraction.panels import (
    _erase_unused_producers,
    _fill_of,
    _fusable_epilogue,
    _insert,
    _register_tile_parts,
    _shared_by_panels,
    _slice,
    _sole_elementwise_reader,
    _static_blocks_of_c,
    _unfilled,
    filled_init,
)
from graphfuse.lowering.contraction.sizes import (
    BATCH_TASKS_PER_THREAD,
    BLOCK,
    CONV_TASK_ROWS,
    DIRECT_CONV,
    EPILOGUE_ROWS,
    FILTER_LANES,
    MAX_UNROLLED_BATCHES,
    PACK_PANELS,
    PAIR_PACK_BLOCK,
    ROW_BLOCK_TILES,
    ROW_DOT_ROWS,
    ROW_DOT_TILE_ROWS,
    ROW_TILE_DEPTH,
    SERIAL,
    _depth,
    even_tasks,
    outer_panels,
    pack_tile,
    panel_task,
    register_tile,
    row_block,
    row_dot_tile,
)
from graphfuse.lowering.contraction.widenings import Widening, widen, widening
from graphfuse.lowering.fast_math import fadd, fmul
from graphfuse.lowering.host import dot_products, vector_bits
from graphfuse.lowering.isolation import isolated
from graphfuse.lowering.schedules.library import (
    SCHEDULE,
    apply_schedule,
    loaded,
    schedule_attribute,
)


def select_schedules(module: ir.Module, threads: int = 1, dots: frozenset[str] | None = None) -> None:
    """Record a schedule on every statically shaped contraction of ``module``, other contractions made matmuls
    first; the row blocks are sized for ``threads`` threads (:func:`row_block`), bf16 products computed on the
    dot products ``dots`` (None: the host's).  Batched matmuls shared out by batches are shared out now (a
    rewrite the schedules of their products read)."""
    with loaded(module.context):
        _select_schedules(module, threads, dot_products() if dots is None else dots)


def _select_schedules(module: ir.Module, threads: int, dots: frozenset[str]) -> None:
    if not ops_named(module, "linalg."):
        return  # nothing to schedule (rows vectorized whole): the walks below would each visit every op
    _record_direct_convs(module)
    general: list[ir.Operation] = []

    def collect_general(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("linalg.contract", "linalg.generic"):
            general.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect_general)
    for op in general:
        if not as_named_matmul(op):
            _rows_collapsed_matmul(op)
    lanes = max(1, vector_bits() // 32)
    mr, nr = register_tile(vector_bits())
    few = split_few_dynamic_rows(module, lambda rows: row_dot_tile(rows, vector_bits()), nr)
    for product, transposed, width, columns in few + few_static_rows_products(module, nr):
        if transposed:
            product.attributes[SCHEDULE] = schedule_attribute(f"row_tile_dot_{lanes}_lanes", columns_per_task=columns)
        else:  # tasks of whole register tiles of columns, two per core
            tiles = max(1, width // columns // (2 * threads))
            product.attributes[SCHEDULE] = schedule_attribute("row_tile_columns", columns_per_task=tiles * columns,
                                                              tile_columns=columns,
                                                              block_depth=ROW_TILE_DEPTH)
    for op in _static_ops(module, ("linalg.matmul",)):
        operands = row_dot_operands(op)
        if operands is not None:
            _as_row_dot(op, *operands)
    for op in _static_ops(module, tuple(_DEFAULT_MAPS)):
        _materialize_transposes(op)
    batched = _static_ops(module, ("linalg.batch_matmul",))  # again: the transposes replaced some
    tasks = [op for op in batched if _batch_tasks(op, threads, nr)]
    for op in batched:
        if op not in tasks:
            _unroll_batches(op)
    if tasks:
        _share_out_batches(module, tasks)
    dynamic: list[tuple[ir.Operation, bool, None]] = []
    for op in dynamic_row_products(module):
        tiled, rests = dynamic_row_parts(op, nr, mr)
        for product in tiled:
            product.attributes[SCHEDULE] = _dynamic_rows_schedule(product, mr, nr, threads)
        for product in rests:
            product.attributes[SCHEDULE] = _matmul_schedule(product, True, None, mr, nr, threads)
        dynamic += [(product, True, None) for product in tiled + rests]
    named = [op for op in _static_ops(module, tuple(_DEFAULT_MAPS)) if "indexing_maps" not in op.attributes]
    if not named:  # other dynamic shapes keep the plain loops
        if dynamic:
            _schedule_pack_copies(module, threads, nr)
        return
    batch_blocks = schedule_attribute("batch_matmul_blocks", block=BLOCK)
    epilogue_rows = rows_schedule(nr)
    for op in named:
        if op.name == "linalg.batch_matmul":
            op.attributes[SCHEDULE] = batch_blocks
    matmuls = [op for op in named if op.name == "linalg.matmul"]
    parts = []
    for op in matmuls:
        serial = SERIAL in op.attributes  # a product inside a task of its own: no epilogue of its own
        rows, panel = PAIR_REGISTER_TILE if pair_product_applies(op, dots) else (mr, nr)
        epilogue = _fusable_epilogue(op) if not serial and _static_blocks_of_c(op, rows, panel, threads) else None
        if epilogue is None:
            for user in _elementwise_epilogues(op):
                user.attributes[SCHEDULE] = epilogue_rows
        parts += [(part, packed, epilogue, (rows, panel))
                  for part, packed, epilogue in _register_tile_parts(op, rows, panel, threads, epilogue, dots)]
    for op, packed, epilogue, (rows, panel) in parts:
        op.attributes[SCHEDULE] = _matmul_schedule(op, packed, epilogue, rows, panel, threads)
    if any(packed for _, packed, *_ in parts + dynamic):
        _schedule_pack_copies(module, threads, nr)


def _block_depth(op: ir.Operation) -> int:
    """Steps of K in a cache block of a packed product: BLOCK, in pairs of steps for a product of pairs
    (:func:`graphfuse.lowering.contraction.pairs.pair_product`, five loops), whose panels hold bf16."""
    return BLOCK // 2 if len(ir.ArrayAttr(op.attributes["iterator_types"])) == 5 else BLOCK


def _dynamic_rows_schedule(op: ir.Operation, mr: int, nr: int, threads: int) -> ir.Attribute:
    """The schedule of a packed product whose rows are counted at run time (:mod:`.dynamic_rows`): tasks of
    ``ROW_BLOCK_TILES`` register tiles of rows by :func:`panel_task` panels of B, so that a few row blocks (a
    prompt of 33 to a few hundred tokens) still make a task per core, as a static product of few rows is shared
    out by panels; in outer blocks of B, tasks of rows alone, when B is larger than a share of the last-level
    cache (:func:`outer_panels`)."""
    rows = mr * ROW_BLOCK_TILES
    blocks = {"block_panels": BLOCK // nr, "block_depth": BLOCK, "tile_rows": mr}
    outer = outer_panels(_depth(op), nr)
    if _panels(op) > outer:
        return schedule_attribute("packed_tiles_outer_blocks", outer_panels=outer, rows_per_task=rows, **blocks)
    filled = "_filled" if _fill_of(op.operands[2]) is not None else ""
    return schedule_attribute(f"packed_tiles{filled}", task_panels=panel_task(_panels(op), threads), task_rows=rows,
                              **blocks)


def _matmul_schedule(op: ir.Operation, packed: bool, epilogue: ir.Operation | None, mr: int, nr: int,
                     threads: int) -> ir.Attribute:
    """The schedule of matmul part ``op`` (:func:`_register_tile_parts`) for register tiles of ``mr`` x ``nr``
    and ``threads`` threads: a task of its own (SERIAL) is a serial product; else the cores share out blocks of
    rows, or panels of B when the rows make too few blocks (:func:`_shared_by_panels`), and a B larger than a
    share of the last-level cache is cut into outer blocks (:func:`outer_panels`).  C's fill is computed in
    the tasks, and ``epilogue`` on each block of C."""
    serial = SERIAL in op.attributes
    rows = _rows(op) if serial else row_block(_rows(op), mr, threads)
    if not packed:
        return schedule_attribute("register_tiles", rows_per_task=rows, block_columns=BLOCK, block_depth=BLOCK,
                                  tile_rows=mr, tile_columns=nr)
    by_panels = not serial and _shared_by_panels(_rows(op), _panels(op), mr)
    outer = {} if serial or by_panels or _panels(op) <= outer_panels(_depth(op), nr) \
        else {"outer_panels": outer_panels(_depth(op), nr)}
    filled = "_filled" if not serial and filled_init(op.operands[2]) is not None else ""
    blocks = {"block_panels": BLOCK // nr, "block_depth": _block_depth(op), "tile_rows": mr}
    tasks = {"task_panels": panel_task(_panels(op), threads), "task_rows": 0} if by_panels \
        else {"task_panels": 0, "task_rows": rows}
    if epilogue is not None:
        return schedule_attribute(f"packed_tiles_with_epilogue{'_outer_blocks' if outer else ''}{filled}",
                                  **outer, **tasks, **blocks)
    if serial:
        return schedule_attribute("packed_tiles_serial", rows_per_task=rows, **blocks)
    if outer:
        return schedule_attribute("packed_tiles_outer_blocks", **outer, rows_per_task=rows, **blocks)
    return schedule_attribute(f"packed_tiles{filled}", **tasks, **blocks)


def _schedule_pack_copies(module: ir.Module, threads: int, nr: int) -> None:
    """Record the schedules of the copies of B into panels that the packed products read
    (:func:`_packed_panels`): those of a product across the cores, in tasks of the panels that even out the
    threads (at most PACK_PANELS, :func:`panel_task`'s rule down to one panel); those of a product inside a task
    of its own, serially."""
    steps, lanes = pack_tile(vector_bits() // 32, nr)
    serial = [schedule_attribute("pack_panels_serial"),
              schedule_attribute("pack_transposed_panels_serial", steps=steps, lanes=lanes)]

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic":
            _schedule_int8_operands(op, threads)
        if op.name != "linalg.transpose":
            return ir.WalkResult.ADVANCE
        panels = ir.RankedTensorType(op.results[0].type).shape[0]
        per_task = even_tasks(panels, threads, PACK_PANELS, 1)
        if "graph.block" in op.attributes:
            op.attributes[SCHEDULE] = schedule_attribute("pack_panels", panels_per_task=per_task)
        elif "graph.pack_transposed" in op.attributes:
            op.attributes[SCHEDULE] = schedule_attribute("pack_transposed_panels", panels_per_task=per_task,
                                                         steps=steps, lanes=lanes)
        elif PACK_PAIRS in op.attributes or PACK_TRANSPOSED_PAIRS in op.attributes:
            op.attributes[SCHEDULE] = schedule_attribute("pack_pair_panels", panels_per_task=per_task,
                                                         steps=PAIR_PACK_BLOCK, lanes=PAIR_PACK_BLOCK)
        elif "graph.serial_pack" in op.attributes:
            op.attributes[SCHEDULE] = serial[0]
        elif "graph.serial_pack_transposed" in op.attributes:
            op.attributes[SCHEDULE] = serial[1]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


def rows_schedule(vector_columns: int) -> ir.Attribute:
    """The ``epilogue_rows`` schedule: a 2-D elementwise op shared out across the cores in tasks of EPILOGUE_ROWS
    rows, each row in vectors of ``vector_columns`` elements."""
    return schedule_attribute("epilogue_rows", rows_per_task=EPILOGUE_ROWS, vector_columns=vector_columns)


def _schedule_int8_operands(op: ir.Operation, threads: int) -> None:
    """Share out across the cores what an int8 product on dot products reads besides its panels
    (:mod:`.pairs`): the sums of B's columns, by panels, and A's bytes made unsigned, by rows (as an epilogue's)."""
    if COLUMN_SUMS in op.attributes:
        del op.attributes[COLUMN_SUMS]
        iterators = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
        outer = "reduction" not in iterators[0]  # (panel, column, k) from a transposed B, else (k, panel, column)
        panels = ir.RankedTensorType(op.results[0].type).shape[0]
        per_task = even_tasks(panels, threads, PACK_PANELS, 1)
        op.attributes[SCHEDULE] = schedule_attribute("column_sums", task_outer=per_task if outer else 0,
                                                     task_inner=0 if outer else per_task)
    elif UNSIGNED_ROWS in op.attributes:
        del op.attributes[UNSIGNED_ROWS]
        op.attributes[SCHEDULE] = rows_schedule(vector_bits() // 8)


def row_dot_operands(op: ir.Operation) -> tuple[ir.Value | Widening, ir.Value | Widening] | None:
    """A and Bt as the row-dot schedule reads them when ``op`` (a static ``linalg.matmul`` into f32) is A[M, K] @
    Bt[N, K]^T with few rows and Bt read at run time (``row_dot.mlir``), else None: each an f32 operand, or the
    narrower tensor it is, or is cast from, read as it is stored and widened in registers
    (:func:`graphfuse.lowering.contraction.widenings.widening`: a bf16 weight, an int8 one cast to a bf16
    model's dtype).  A constant Bt is packed once when compiling instead, which the register-tiled schedule
    then reads faster."""
    if not _reads_b_transposed(op) or not isinstance(ir.RankedTensorType(op.operands[2].type).element_type,
                                                     ir.F32Type):
        return None
    read: list[ir.Value | Widening] = []
    for value in op.operands[:2]:
        if not isinstance(value.type, ir.RankedTensorType) or not ir.RankedTensorType(value.type).has_static_shape:
            return None
        element = ir.RankedTensorType(value.type).element_type
        if not isinstance(element, (ir.F32Type, ir.BF16Type, ir.F16Type)):
            return None
        read.append(widening(value, ir.F32Type.get()) or value)  # bf16: a bf16 layer as the importer writes it
    bt = read[1].source if isinstance(read[1], Widening) else read[1]
    if producer(bt, "arith.constant") is not None:
        return None
    (m, k), n = ir.RankedTensorType(op.operands[0].type).shape, ir.RankedTensorType(op.operands[1].type).shape[0]
    return (read[0], read[1]) if m <= ROW_DOT_ROWS and n >= 2 and k >= 2 else None


def _as_row_dot(op: ir.Operation, a_read: ir.Value | Widening, bt_read: ir.Value | Widening) -> None:
    """``op`` as the generics the row-dot schedule tiles: C in whole tiles of ROW_DOT_TILE_ROWS rows and
    :func:`row_dot_tile` columns, the rows and the columns short of a tile as products of their own, so that
    every tile has a size known when compiling; the product and sum contractible into one FMA (a named
    matmul's body has no fast-math flags); an operand widened from a narrower tensor read narrow and widened in
    the body (:func:`row_dot_operands`).  Each is given its row-dot schedule."""
    c = op.operands[2]
    widened = [(r.source, r.casts) if isinstance(r, Widening) else (r, ()) for r in (a_read, bt_read)]
    (a, a_casts), (bt, bt_casts) = widened
    (m, k), n = ir.RankedTensorType(a.type).shape, ir.RankedTensorType(bt.type).shape[0]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    # the lanes of the partial sums: a size the sequence takes as an attribute, so one sequence per width
    sequence = f"row_dot_{max(1, vector_bits() // 32)}_lanes"
    tile_rows = min(m, ROW_DOT_TILE_ROWS)
    tile = row_dot_tile(tile_rows, vector_bits())
    whole, whole_rows = n - n % tile, m - m % tile_rows
    result = c
    with op.location, ir.InsertionPoint(op):
        for row, height in ((0, whole_rows), (whole_rows, m - whole_rows)):
            for column, width in ((0, whole), (whole, n - whole)):
                if not width or not height:
                    continue
                lhs = a if height == m else _slice(a, [row, 0], [height, k])
                rhs = bt if width == n else _slice(bt, [column, 0], [width, k])
                full = (height, width) == (m, n)
                dest = result if full else _slice(result, [row, column], [height, width])
                generic = linalg.GenericOp([dest.type], [lhs, rhs], [dest], op.attributes["indexing_maps"],
                                           ir.ArrayAttr.get([parallel, parallel, reduction]))
                element = ir.RankedTensorType(c.type).element_type
                body = generic.regions[0].blocks.append(*(ir.RankedTensorType(v.type).element_type
                                                          for v in (a, bt)), element)
                with ir.InsertionPoint(body):
                    x, y = widen(body.arguments[0], a_casts), widen(body.arguments[1], bt_casts)
                    linalg.YieldOp([fadd(body.arguments[2], fmul(x, y))])
                generic.attributes[SCHEDULE] = schedule_attribute(
                    sequence, columns_per_task=min(width, tile), rows_per_tile=min(height, tile_rows))
                result = generic.results[0] if full else _insert(generic.results[0], result, [row, column])
    widened_operands = list(op.operands[:2])
    op.results[0].replace_all_uses_with(result)
    op.erase()
    for value in widened_operands:  # a widening read narrow is computed no more
        _erase_unused_producers(value, _WIDENING_OPS)


#: What a widening of a row-dot operand leaves unread once the product reads its source.
_WIDENING_OPS = frozenset({"linalg.generic", "tensor.empty"})


#: The column ladder's levels in ``direct_conv.mlir``: remainders down to one column of the widest tiles (32
#: columns, 512-bit vectors).
_LADDER_LEVELS = 5


def _conv_schedule(filter_lanes: bool, epilogue: bool, mr: int, nr: int) -> ir.Attribute:
    """The schedule of a direct convolution (``direct_conv.mlir``) whose vector lanes are its filters or (else)
    its output columns, with its elementwise epilogue or alone, for register tiles of ``mr`` x ``nr``: tasks of
    CONV_TASK_ROWS output rows of one image; register tiles of ``mr`` filters or output columns (the loops
    (n, f, oh, ow) or (n, oh, ow, f): d1 or d2) by one output row, ``nr`` lanes wide, the remainder of a row
    in tiles of half as many lanes, a quarter, ... one."""
    widths = [max(1, nr // 2 >> level) for level in range(_LADDER_LEVELS)]
    if nr // 2 >> (_LADDER_LEVELS - 1) > 1:
        raise GraphfuseError(f"direct convolutions: tiles of {nr} lanes need more than {_LADDER_LEVELS} ladder levels")
    tiles = {"tile_dim1": 1, "tile_dim2": mr} if filter_lanes else {"tile_dim1": mr, "tile_dim2": 1}
    ladder = {f"remainder_width_{level}": width for level, width in enumerate(widths)}
    if epilogue:
        return schedule_attribute("direct_conv_with_epilogue", task_rows=CONV_TASK_ROWS, vector_columns=nr,
                                  **tiles, **ladder)
    tasks = {"task_dim1": CONV_TASK_ROWS, "task_dim2": 0} if filter_lanes \
        else {"task_dim1": 0, "task_dim2": CONV_TASK_ROWS}
    return schedule_attribute("direct_conv", **tasks, vector_columns=nr, **tiles, **ladder)


def _record_direct_convs(module: ir.Module) -> None:
    """Record the schedules of the direct convolutions of ``module``: with their elementwise epilogue where one
    alone reads them, else on their own, each with the tiles of its lanes' mapping (:func:`_conv_schedule`)."""
    mr, nr = register_tile(vector_bits())

    def visit(op: ir.Operation) -> ir.WalkResult:
        if DIRECT_CONV not in op.attributes:
            return ir.WalkResult.ADVANCE
        filter_lanes = FILTER_LANES in op.attributes
        epilogue = _conv_epilogue(op)
        op.attributes[SCHEDULE] = _conv_schedule(filter_lanes, epilogue is not None, mr, nr)
        # the schedule says it all now (the marks a convolution of each kind kept in the tiles before it did)
        for mark in (DIRECT_CONV, FILTER_LANES) if epilogue is not None else (DIRECT_CONV,) * filter_lanes:
            if mark in op.attributes:
                del op.attributes[mark]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


def _conv_epilogue(conv: ir.Operation) -> ir.Operation | None:
    """The sole elementwise reader of direct convolution ``conv``'s result (:func:`_sole_elementwise_reader`),
    when the tasks of CONV_TASK_ROWS output rows divide the rows; None otherwise."""
    user = _sole_elementwise_reader(conv)
    shape = None if user is None else ir.RankedTensorType(user.results[0].type).shape
    if shape is None or shape != ir.RankedTensorType(conv.results[0].type).shape:
        return None
    rows = shape[2]
    if rows % CONV_TASK_ROWS and rows > CONV_TASK_ROWS:
        return None  # a last task of fewer rows: its block of the output would have no static size
    return user


def _static_ops(module: ir.Module, names: tuple[str, ...]) -> list[ir.Operation]:
    """The ops of ``module`` named one of ``names`` whose operands all have static shapes."""
    return [op for op in ops_named(module, *names) if all(_static_tensor(v) for v in op.operands)]


def _unroll_batches(op: ir.Operation) -> None:
    """A ``linalg.batch_matmul`` of at most ``MAX_UNROLLED_BATCHES`` batches as that many plain matmuls.

    Each batch's product then gets a matmul's register tiles, row blocks across the cores and packed B
    (attention's products: 8 heads of [1024, 64] x [64, 1024]).  More batches keep the blocked batch loops
    (the code would grow with the batch count).
    """
    a, b, c = op.operands
    batches = ir.RankedTensorType(c.type).shape[0]
    if batches > MAX_UNROLLED_BATCHES or "indexing_maps" in op.attributes:
        return
    with op.location, ir.InsertionPoint(op):
        fill_value, result = _unfilled(c)
        for index in range(batches):
            views = [_batch_slice(v, index) for v in (a, b, result)]
            if fill_value is not None:  # each batch fills its own C, where its product's row blocks can
                views[2] = linalg.fill(fill_value, outs=[views[2]])
            product = linalg.matmul(views[0], views[1], outs=[views[2]])
            shape = ir.RankedTensorType(product.type).shape
            result = tensor.insert_slice(product, result, [], [], [], [index, 0, 0], [1, *shape], [1, 1, 1])
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _batch_tasks(op: ir.Operation, threads: int, panel: int) -> bool:
    """Whether a static f32 ``linalg.batch_matmul`` is shared out by batches (``batch_matmul.mlir``): at
    least BATCH_TASKS_PER_THREAD batches per thread, the plain maps, B packable (f32), and each batch's B one
    outer block of panels ``panel`` wide (:func:`outer_panels`): the serial schedule has no outer blocks, and
    a larger B read by each task alone would come from memory."""
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if (types[2].shape[0] < BATCH_TASKS_PER_THREAD * threads or "indexing_maps" in op.attributes
            or not all(isinstance(t.element_type, ir.F32Type) for t in types)):
        return False
    if 1 in types[2].shape[1:]:  # one row or column: folding the unit dims leaves a vecmat the script cannot name
        return False
    _, depth, columns = types[1].shape
    return -(-columns // panel) <= outer_panels(depth, panel)


#: The schedules of batched matmuls shared out by batches (``batch_matmul.mlir``), in the order they run.
_BATCH_TASKS = ("batch_tasks", "batch_tasks_filled", "batch_tasks_transposed", "batch_tasks_filled_transposed")


def _share_out_batches(module: ir.Module, ops: list[ir.Operation]) -> None:
    """One task per batch for ``ops`` (:func:`_batch_tasks_script`), C's fill and B's transpose computed in the
    tasks; the tasks' products are then marked SERIAL."""
    # per kind, each product with the fill and transpose its tasks compute: outlined while its script runs,
    # fusions costing in proportion to their function (isolation.py)
    kinds: dict[str, list[list[ir.Operation]]] = {}
    for op in ops:
        _collapse_first(op, 1)
        _collapse_first(op, 2)
        fill, transposed = _fill_of(op.operands[2]), producer(op.operands[1], "linalg.transpose")
        sequence = f"batch_tasks{'_filled' if fill else ''}{'_transposed' if transposed else ''}"
        op.attributes[SCHEDULE] = schedule_attribute(sequence)
        kinds.setdefault(sequence, []).append([p for p in (fill, transposed, op) if p is not None])
    for sequence in _BATCH_TASKS:
        if sequence in kinds:
            with isolated(module, kinds[sequence]):
                apply_schedule(module, schedule_attribute(sequence), "sharing batched matmuls out by batches")
    applied = {schedule_attribute(sequence) for sequence in kinds}

    def applied_schedules(op: ir.Operation) -> ir.WalkResult:  # the tasks' products carry a copy
        if SCHEDULE in op.attributes and op.attributes[SCHEDULE] in applied:
            del op.attributes[SCHEDULE]
        return ir.WalkResult.ADVANCE

    module.operation.walk(applied_schedules)
    # the transposes of all batches, each task now computing its own (the fills are erased with the others')
    _erase_unread(module, lambda op: op.name == "linalg.transpose")

    def mark(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.matmul":
            op.attributes[SERIAL] = ir.UnitAttr.get()
            # specialize writes the default maps out: dropped, the product reads as the plain form it is
            maps = ir.ArrayAttr(op.attributes["indexing_maps"]) if "indexing_maps" in op.attributes else []
            if tuple(_map_dims(a) for a in maps) == _DEFAULT_MAPS["linalg.matmul"]:
                del op.attributes["indexing_maps"]
        return ir.WalkResult.ADVANCE

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.forall" and "graph.batch_tasks" in op.attributes:
            op.walk(mark)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


def _collapse_first(op: ir.Operation, operand: int) -> None:
    """Make ``op``'s operand, a ``tensor.collapse_shape`` of a fill or of a transpose (a 4-D attention's heads
    collapsed by :func:`as_named_matmul`), the fill or transpose of the collapsed value instead, so that the
    batch tasks compute it in each task (:func:`_batch_tasks_script` fuses direct producers only).  A transpose
    qualifies when it keeps each collapsed group's dims in place."""
    collapse = producer(op.operands[operand], "tensor.collapse_shape")
    if collapse is None or any(use.owner != op for use in collapse.results[0].uses):
        return
    groups = [list(ir.ArrayAttr(g)) for g in ir.ArrayAttr(collapse.attributes["reassociation"])]
    groups = [[ir.IntegerAttr(d).value for d in g] for g in groups]
    source = collapse.operands[0]
    inner = producer(source, "linalg.fill") or producer(source, "linalg.transpose")
    if inner is None or len(list(inner.results[0].uses)) != 1:
        return
    result_type = ir.RankedTensorType(collapse.results[0].type)
    with op.location, ir.InsertionPoint(op):
        if inner.name == "linalg.fill":
            init = tensor.collapse_shape(result_type, inner.operands[1], collapse.attributes["reassociation"])
            value = linalg.fill(inner.operands[0], outs=[init])
        else:
            permutation = list(ir.DenseI64ArrayAttr(inner.attributes["permutation"]))
            if any(permutation[d] != d for g in groups if len(g) > 1 for d in g):
                return
            first = {g[0]: k for k, g in enumerate(groups)}  # a group's first dim -> its collapsed axis
            inner_type = ir.RankedTensorType(inner.operands[0].type)
            sizes = [math.prod(inner_type.shape[d] for d in g) for g in groups]
            collapsed = tensor.collapse_shape(ir.RankedTensorType.get(sizes, inner_type.element_type),
                                              inner.operands[0], collapse.attributes["reassociation"])
            order = [first[permutation[g[0]]] for g in groups]
            init = tensor.empty([sizes[a] for a in order], inner_type.element_type)
            value = linalg.transpose(collapsed, outs=[init], permutation=order).results[0]
    op.operands[operand] = value
    collapse.erase()
    inner.erase()


def _batch_slice(value: ir.Value, index: int) -> ir.Value:
    """``value[index]`` of a [batch, rows, columns] tensor, as a [rows, columns] tensor."""
    t = ir.RankedTensorType(value.type)
    rows, cols = t.shape[1:]
    return tensor.extract_slice(ir.RankedTensorType.get([rows, cols], t.element_type), value, [], [], [],
                                [index, 0, 0], [1, rows, cols], [1, 1, 1])


def _rows(op: ir.Operation) -> int:
    return ir.RankedTensorType(op.operands[0].type).shape[0]


def _panels(op: ir.Operation) -> int:
    """Panels of B a packed product reads (its C viewed as [M, panels, NR])."""
    return ir.RankedTensorType(op.operands[2].type).shape[1]
