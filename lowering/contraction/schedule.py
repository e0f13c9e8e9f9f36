"""Choosing each contraction's schedule and applying it: register tiles with packed panels, the row-dot
form of short products, direct convolutions, batched products shared out by batches."""


import math
import re
from typing import NamedTuple

from mlir import ir
from mlir.dialects import linalg, tensor

from graphfuse.dialect.matching import producer
from graphfuse.lowering.contraction.layout import (
    _DEFAULT_MAPS,
    _as_named_matmul,
    _map_dims,
    _materialize_transposes,
    _static_tensor,
)
from graphfuse.lowering.contraction.marks import (
    _clear_marks,
    _elementwise_epilogues,
    _erase_fused_products,
    _erase_unread,
    _erase_unused_fills,
    _mark_static_tiles,
)
from graphfuse.lowering.contraction.panels import (
    _fill_of,
    _fusable_epilogue,
    _insert,
    _mark_pack_tasks,
    _register_tile_parts,
    _shared_by_panels,
    _slice,
    _sole_elementwise_reader,
    _static_blocks_of_c,
    _unfilled,
)
from graphfuse.lowering.contraction.scripts import (
    _BATCH_SCRIPT,
    _DIRECT_CONV_EPILOGUE_SCRIPT,
    _DIRECT_CONV_SCRIPT,
    _EPILOGUE_SCRIPT,
    _OUTER_BLOCKS,
    _PACK_SCRIPT,
    _PACKED_TILE_SCRIPT,
    _ROW_DOT_SCRIPT,
    _SERIAL_PACK_SCRIPT,
    _TILE_SCRIPT,
    _VECTORIZE_SCRIPT,
    _apply,
    _batch_tasks_script,
    _column_ladder,
    _epilogue_tile_script,
    _serial_tasks,
    _sized,
    _tasks,
    _with_peels,
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
    PACK_TASKS,
    PANEL_TASK,
    ROW_DOT_ROWS,
    ROW_DOT_TILE_ROWS,
    SERIAL,
    _depth,
    _pack_sizes,
    outer_panels,
    panel_task,
    register_tile,
    row_block,
    row_dot_tile,
)
from graphfuse.lowering.fast_math import fadd, fmul
from graphfuse.lowering.host import vector_bits
from graphfuse.lowering.isolation import isolated


class _Schedule(NamedTuple):
    """What the schedule of a group of products depends on (:func:`block_contractions`)."""

    rows_per_block: int
    depth: int  # K
    packed: bool  # B packed into panels (the generic of _packed_product), else a plain linalg.matmul
    by_panels: bool  # the cores share panels of B (too few row blocks), else row blocks
    outer: bool  # B takes several outer blocks (outer_panels)
    filled: bool  # C's init is a fill, fused into the tasks
    #: when each block of C gets an elementwise epilogue (_EPILOGUE_TILE_SCRIPT): the epilogue's operand that is C
    epilogue_operand: int | None
    serial: bool  # the product is a task's own (a batch of a batched matmul): its blocks one after the other
    panel_task: int  # panels of B per task when the cores share panels (panel_task)


def block_contractions(module: ir.Module, threads: int = 1) -> None:
    """Tile and reorder every statically shaped matmul of ``module``, other contractions made matmuls first;
    the row blocks are sized for ``threads`` threads (:func:`row_block`)."""
    schedule_direct_convs(module)
    general: list[ir.Operation] = []

    def collect_general(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("linalg.contract", "linalg.generic"):
            general.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect_general)
    for op in general:
        _as_named_matmul(op)
    row_dots = [part for op in _static_ops(module, ("linalg.matmul",)) if _row_dot(op) for part in _as_row_dot(op)]
    for op in _static_ops(module, tuple(_DEFAULT_MAPS)):
        _materialize_transposes(op)
    mr, nr = register_tile(vector_bits())
    batched = _static_ops(module, ("linalg.batch_matmul",))  # again: the transposes replaced some
    tasks = [op for op in batched if _batch_tasks(op, threads, nr)]
    for op in batched:
        if op not in tasks:
            _unroll_batches(op)
    if tasks:
        _share_out_batches(module, tasks)
    named = [op for op in _static_ops(module, tuple(_DEFAULT_MAPS)) if "indexing_maps" not in op.attributes]
    if row_dots:
        _schedule_row_dots(module, row_dots, threads)
    if not named:  # dynamic shapes keep the plain loops: blocking would need dynamically sized buffers
        if row_dots:
            _vectorize_tiles(module)
        return
    for op in named:
        op.attributes["graph.block"] = ir.UnitAttr.get()
    matmuls = [op for op in named if op.name == "linalg.matmul"]
    parts = []
    for op in matmuls:
        serial = SERIAL in op.attributes  # a product inside a task of its own: no epilogue of its own
        epilogue = _fusable_epilogue(op) if not serial and _static_blocks_of_c(op, mr, nr, threads) else None
        if epilogue is None:
            for user in _elementwise_epilogues(op):
                user.attributes["graph.epilogue"] = ir.UnitAttr.get()
        parts += _register_tile_parts(op, mr, nr, threads, epilogue)
    groups: dict[_Schedule, list[tuple[ir.Operation, ir.Operation | None]]] = {}
    for op, packed, epilogue in parts:
        serial = SERIAL in op.attributes
        rows_per_block = _rows(op) if serial else row_block(_rows(op), mr, threads)
        by_panels = packed and not serial and _shared_by_panels(_rows(op), _panels(op), mr)
        outer = packed and not serial and not by_panels and _panels(op) > outer_panels(_depth(op), nr)
        filled = packed and not serial and _fill_of(op.operands[2]) is not None
        operand = None if epilogue is None else [v.owner for v in epilogue.operands].index(op)
        tasks_of = panel_task(_panels(op), threads) if by_panels else PANEL_TASK
        schedule = _Schedule(rows_per_block, _depth(op), packed, by_panels, outer, filled, operand, serial, tasks_of)
        groups.setdefault(schedule, []).append((op, epilogue))
    # Each product is marked with its group's number before any schedule runs: a schedule replaces the ops
    # it tiles, and the Python handles of those would then point at erased operations.
    i64 = ir.IntegerType.get_signless(64)
    for group, ops in enumerate(groups.values()):
        for op, epilogue in ops:
            op.attributes["graph.block"] = ir.IntegerAttr.get(i64, group)
            if epilogue is not None:
                epilogue.attributes["graph.epilogue_block"] = ir.IntegerAttr.get(i64, group)
    schedule_of_group = list(groups)
    for group, (rows_per_block, depth, packed, by_panels, outer, filled, operand, serial, tasks_of) in \
            enumerate(groups):
        if operand is not None:
            script = _epilogue_tile_script(by_panels, outer, filled)
        else:
            script = _PACKED_TILE_SCRIPT if packed else _TILE_SCRIPT  # one schedule per group
            if serial:
                tasks = _serial_tasks("[0, MC, 0, 0]")
            elif by_panels:
                tasks = _tasks("[PT, 0, 0, 0]", filled)
            else:
                tasks = _OUTER_BLOCKS if outer else _tasks("[0, MC, 0, 0]", filled)
            script = script.replace("TASKS", tasks)
        sizes = {"GROUP": group, "MC": rows_per_block, "OP": outer_panels(depth, nr), "PT": tasks_of,
                 "NC": BLOCK, "PC": BLOCK // nr, "KC": BLOCK, "MR": mr, "NR": nr, "PACK_PANELS": PACK_PANELS,
                 "C_OPERAND": operand}
        # each product with its fill and epilogue in a function of its own while its fusions run (isolation.py)
        clusters = [[op for op in (_fill_of(product.operands[2]), product, epilogue) if op is not None]
                    for product, epilogue in groups[schedule_of_group[group]]]
        with isolated(module, clusters):
            _apply(module, _sized(script, sizes), "tiling matmuls")
    if any(schedule.packed for schedule in groups):
        pack_sizes = _pack_sizes(vector_bits() // 32, nr)
        for panels in _mark_pack_tasks(module, threads):
            marked = _PACK_SCRIPT
            for mark in ("graph.block", "graph.pack_transposed"):
                marked = marked.replace(f"attributes{{{mark}}}", f"attributes{{{mark}, {PACK_TASKS} = {panels} : i64}}")
            _apply(module, _sized(marked, {"PACK_PANELS": panels, **pack_sizes}),
                   "tiling the copies of B into panels")
        _apply(module, _sized(_SERIAL_PACK_SCRIPT, pack_sizes), "tiling the copies of B into panels")
    _erase_fused_products(module)
    _erase_unused_fills(module)
    epilogues = re.sub(r"\bEC\b", str(nr), re.sub(r"\bER\b", str(EPILOGUE_ROWS), _EPILOGUE_SCRIPT))
    _apply(module, _with_peels(epilogues), "tiling matmul epilogues")
    _vectorize_tiles(module)
    _apply(module, _BATCH_SCRIPT.replace(" B, B]", f" {BLOCK}, {BLOCK}]"), "blocking batched matmuls")
    _clear_marks(module)


def _vectorize_tiles(module: ir.Module) -> None:
    if _mark_static_tiles(module):
        _apply(module, _VECTORIZE_SCRIPT, "vectorizing matmul tiles")


def _row_dot(op: ir.Operation) -> bool:
    """Whether ``op`` (a static f32 ``linalg.matmul``) is A[M, K] @ Bt[N, K]^T with few rows and Bt read at run
    time: the row-dot schedule's case (:data:`_ROW_DOT_SCRIPT`).  A constant Bt is packed once when compiling
    instead, which the register-tiled schedule then reads faster."""
    if "indexing_maps" not in op.attributes or producer(op.operands[1], "arith.constant") is not None:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != [(0, 2), (1, 2), (0, 1)]:
        return False
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if not all(isinstance(t.element_type, ir.F32Type) for t in types):
        return False
    (m, k), n = types[0].shape, types[1].shape[0]
    return m <= ROW_DOT_ROWS and n >= 2 and k >= 2


def _as_row_dot(op: ir.Operation) -> list[ir.Operation]:
    """``op`` as the generics the row-dot schedule tiles: C in whole tiles of ROW_DOT_TILE_ROWS rows and
    :func:`row_dot_tile` columns, the rows and the columns short of a tile as products of their own, so that
    every tile has a size known when compiling; the product and sum contractible into one FMA (a named
    matmul's body has no fast-math flags)."""
    a, bt, c = op.operands
    (m, k), n = ir.RankedTensorType(a.type).shape, ir.RankedTensorType(bt.type).shape[0]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    i64 = ir.IntegerType.get_signless(64)
    tile_rows = min(m, ROW_DOT_TILE_ROWS)
    tile = row_dot_tile(tile_rows, vector_bits())
    whole, whole_rows = n - n % tile, m - m % tile_rows
    parts, result = [], c
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
                body = generic.regions[0].blocks.append(element, element, element)
                with ir.InsertionPoint(body):
                    linalg.YieldOp([fadd(body.arguments[2], fmul(body.arguments[0], body.arguments[1]))])
                generic.attributes["graph.row_dot"] = ir.IntegerAttr.get(i64, min(width, tile))
                generic.attributes["graph.row_dot_rows"] = ir.IntegerAttr.get(i64, min(height, tile_rows))
                parts.append(generic.operation)
                result = generic.results[0] if full else _insert(generic.results[0], result, [row, column])
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return parts


def _schedule_row_dots(module: ir.Module, ops: list[ir.Operation], threads: int) -> None:
    """Tile the products marked ``graph.row_dot = R`` (:data:`_ROW_DOT_SCRIPT`): one task per tile of R
    columns (the cores share them out), V-lane partial sums."""
    lanes = max(1, vector_bits() // 32)
    tiles = {(ir.IntegerAttr(op.attributes["graph.row_dot"]).value,
              ir.IntegerAttr(op.attributes["graph.row_dot_rows"]).value) for op in ops}
    for width, height in sorted(tiles):
        marks = f"attributes{{graph.row_dot = {width} : i64, graph.row_dot_rows = {height} : i64}}"
        script = _ROW_DOT_SCRIPT.replace("attributes{graph.row_dot}", marks)
        _apply(module, _sized(script, {"R": width, "MT": height, "V": lanes}), "tiling row-dot products")
    # the tiles' fills and sums of lanes; the partial products are marked with every matmul tile
    _mark_static_tiles(module, ("linalg.fill", "linalg.reduce"), "graph.row_dot_tiles")


#: Per mapping of a direct convolution's vector lanes: its mark, its epilogue's mark, its tasks (CR output rows
#: of one image), its register tiles (MR rows of one output row and one (c, kh, kw) step) and which of their
#: loops holds the rows (peeled).
_CONV_MAPPINGS = {
    "columns": {"CONV_MARK": DIRECT_CONV, "EPILOGUE_MARK": "graph.conv_epilogue",
                "TASK_TILES": "[1, 0, CR, 0, 0, 0, 0]", "REG_TILES": "[0, MR, 1, 0, 1, 1, 1]", "ROW_LOOP": "0"},
    "filters": {"CONV_MARK": FILTER_LANES, "EPILOGUE_MARK": "graph.filter_lanes_epilogue",
                "TASK_TILES": "[1, CR, 0, 0, 0, 0, 0]", "REG_TILES": "[0, 1, MR, 0, 1, 1, 1]", "ROW_LOOP": "1"},
}


def schedule_direct_convs(module: ir.Module) -> None:
    """Tile and vectorize the direct convolutions of ``module``: with their elementwise epilogue where one alone
    reads them (:data:`_DIRECT_CONV_EPILOGUE_SCRIPT`), else on their own (:data:`_DIRECT_CONV_SCRIPT`), each
    with the tiles of its lanes' mapping (:data:`_CONV_MAPPINGS`)."""
    convs: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if DIRECT_CONV in op.attributes:
            convs.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not convs:
        return
    mr, nr = register_tile(vector_bits())
    i64 = ir.IntegerType.get_signless(64)
    # per mapping: the epilogues' operands that are the convolution (one script each), and whether some
    # convolution has no epilogue
    operands: dict[str, set[int]] = {"columns": set(), "filters": set()}
    #: per (mapping, operand): each convolution with its fill and epilogue, outlined while its script runs
    clusters: dict[tuple[str, int], list[list[ir.Operation]]] = {}
    alone: set[str] = set()
    for conv in convs:
        mapping = "filters" if FILTER_LANES in conv.attributes else "columns"
        if mapping == "filters":
            del conv.attributes[DIRECT_CONV]  # matched by FILTER_LANES alone
        epilogue = _conv_epilogue(conv)
        if epilogue is None:
            alone.add(mapping)
            continue
        operand = [v.owner for v in epilogue.operands].index(conv)
        epilogue.attributes[_CONV_MAPPINGS[mapping]["EPILOGUE_MARK"]] = ir.IntegerAttr.get(i64, operand)
        for mark in (DIRECT_CONV, FILTER_LANES):  # scheduled with its epilogue
            if mark in conv.attributes:
                del conv.attributes[mark]
        conv.attributes["graph.fused_conv"] = ir.UnitAttr.get()
        operands[mapping].add(operand)
        fill = _fill_of(conv.operands[2])  # the operand the script fuses as the fill
        clusters.setdefault((mapping, operand), []).append([op for op in (fill, conv, epilogue) if op is not None])
    ladder = _column_ladder("%columns", nr // 2).rstrip("\n")

    def script(template: str, sizes: dict[str, object]) -> str:
        return _sized(template, sizes).replace("      COLUMN_LADDER %columns", ladder)

    for mapping, marks in _CONV_MAPPINGS.items():
        sizes = {**marks, "CR": CONV_TASK_ROWS, "MR": mr, "NR": nr}  # the marks first: their tiles hold MR, CR
        for operand in sorted(operands[mapping]):
            with isolated(module, clusters[mapping, operand]):  # fusions cost as their function (isolation.py)
                _apply(module, script(_DIRECT_CONV_EPILOGUE_SCRIPT, {**sizes, "OPERAND": operand}),
                       "tiling direct convolutions with their epilogues")
        if mapping in alone:
            _apply(module, script(_DIRECT_CONV_SCRIPT, sizes), "tiling direct convolutions")
    _erase_fused_products(module)
    _erase_unused_fills(module)


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
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name in names and all(_static_tensor(v) for v in op.operands):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    return found


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
    """Whether a static f32 ``linalg.batch_matmul`` is shared out by batches (:func:`_batch_tasks_script`): at
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


def _share_out_batches(module: ir.Module, ops: list[ir.Operation]) -> None:
    """One task per batch for ``ops`` (:func:`_batch_tasks_script`), C's fill and B's transpose computed in the
    tasks; the tasks' products are then marked SERIAL."""
    # per kind, each product with the fill and transpose its tasks compute: outlined while its script runs,
    # fusions costing in proportion to their function (isolation.py)
    kinds: dict[int, list[list[ir.Operation]]] = {}
    for op in ops:
        _collapse_first(op, 1)
        _collapse_first(op, 2)
        fill, transposed = _fill_of(op.operands[2]), producer(op.operands[1], "linalg.transpose")
        kind = int(fill is not None) | 2 * int(transposed is not None)
        op.attributes["graph.batch_tasks"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), kind)
        kinds.setdefault(kind, []).append([p for p in (fill, transposed, op) if p is not None])
    for kind, clusters in sorted(kinds.items()):
        with isolated(module, clusters):
            _apply(module, _batch_tasks_script(kind), "sharing batched matmuls out by batches")
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
    collapsed by :func:`_as_named_matmul`), the fill or transpose of the collapsed value instead, so that the
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
