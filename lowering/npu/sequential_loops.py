"""Kernels holding a sequential loop (a scan, a scatter): the loop's slices streamed through UB.

graph-to-linalg lowers ``graph.cumsum`` and ``graph.scatter_update`` to an
``scf.for`` inside the kernel whose body reads and writes one slice of its
buffers per iteration (``x[:, i]``, ``out[:, index[i], :]``).  No parallel
loop of such a kernel can be cut into tiles; instead its GM buffers stay in
GM and the loop streams their slices through UB:

- an access at the loop's index (``x[:, i]``, ``index[i]``) is staged in
  chunks of C iterations: the window of C slices moves GM -> UB before the
  chunk's iterations and back after them (two slots when room allows);
- any other access (``out[:, index[i], :]``, whose place depends on data)
  is staged per iteration: its slice moves in before its first use and out
  after its last;
- local buffers (a scan's running sum) stay in UB;
- a dim every access spans whole, that the ops use elementwise (the rows
  of a scan along columns), may be cut into tiles of T: the kernel then
  runs once per tile on T of it.

Every GM byte the loop touches moves once; C and T only bound what is on
chip at a time (the largest window that fits is chosen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, memref, scf

from graphfuse.dialect.matching import as_operation, nested_ops, op_id
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    PLACED_SPACES,
    alloc,
    dma,
    element_bytes,
    has_indices,
    index_constant,
    loop_access,
    memref_accesses,
    retype_views,
    shift_indices,
    slot_view,
    space_over_capacity,
    tile_slot,
    window_view,
)

__all__ = ["SequentialLoop", "StreamPlan", "plan_stream", "rewrite_stream", "sequential_loop"]

#: Ops whose memref operands all have the same shape and are indexed alike, element by element.
_ELEMENTWISE = frozenset({"memref.copy", "linalg.copy", "linalg.fill", "linalg.map"})
#: Top-level ops that are not compute: kept where they are (before any tile loop).
_SETUP = frozenset({"memref.alloc", "memref.get_global", "arith.constant", "func.return"})


@dataclass
class _Access:
    """One access of a GM buffer inside the loop: a static-size window of it (a subview, or one element)."""

    op: ir.Operation  # memref.subview, memref.load or memref.store
    root: ir.Value
    offsets: list[int | ir.Value]
    sizes: list[int]
    reads: bool
    writes: bool

    @property
    def type(self) -> ir.MemRefType:
        return ir.MemRefType(self.root.type)


@dataclass
class _Streamed:
    """A GM buffer the loop accesses, with how it is staged."""

    root: ir.Value
    accesses: list[_Access]
    #: the dim every access is at the loop's index in (staged in chunks of iterations); None: per iteration
    chunk_dim: int | None
    #: a chunk is loaded before its iterations (some access reads, or writes only part of the window)
    loaded: bool
    written: bool

    @property
    def type(self) -> ir.MemRefType:
        return ir.MemRefType(self.root.type)


@dataclass
class SequentialLoop:
    """A kernel whose one top-level ``scf.for`` accesses GM through slices; its other ops use local buffers."""

    kernel: ir.Operation
    loop: ir.Operation
    lower: int
    step: int
    trips: int
    streamed: list[_Streamed]
    locals: list[ir.Value]
    #: the local buffers' subviews inside the loop (rebuilt when a tile cuts their dim)
    local_views: list[ir.Operation]
    #: dims that may be cut into tiles: (each buffer that follows -> its dim, the dim's extent)
    free_dims: list[tuple[dict[int, int], int]] = field(default_factory=list)

    def buffer_index(self, value: ir.Value) -> int:
        """A buffer's key in ``free_dims``: streamed buffers first, then locals."""
        for k, s in enumerate(self.streamed):
            if s.root == value:
                return k
        return len(self.streamed) + next(k for k, v in enumerate(self.locals) if v == value)


@dataclass
class StreamPlan:
    loop: SequentialLoop
    #: the dims cut into tiles (buffer key -> dim; empty: none) and their extent and tile
    free: dict[int, int]
    extent: int
    tile: int
    chunk: int
    double: bool
    peaks: dict[str, int]

    @property
    def tiles(self) -> int:
        return (self.extent // self.tile) * (self.loop.trips // self.chunk)


def _constant_int(value: ir.Value) -> int | None:
    if isinstance(value.owner, ir.Block) or as_operation(value.owner).name != "arith.constant":
        return None
    attr = as_operation(value.owner).attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _subview_window(view: ir.Operation) -> tuple[list[int | ir.Value], list[int]]:
    """A subview's offsets (each an int or the SSA value of a dynamic one) and its static sizes."""
    segments = list(ir.DenseI32ArrayAttr(view.attributes["operandSegmentSizes"]))
    values = iter(list(view.operands)[1:1 + segments[1]])
    marker = ir.ShapedType.get_dynamic_stride_or_offset()
    offsets = [next(values) if v == marker else v for v in ir.DenseI64ArrayAttr(view.attributes["static_offsets"])]
    return offsets, [int(n) for n in ir.DenseI64ArrayAttr(view.attributes["static_sizes"])]


def _local_shape(found: SequentialLoop, k: int, free: dict[int, int], tile: int) -> list[int]:
    """Local buffer ``k``'s shape on chip: cut to the tile along the free dim when it follows it."""
    shape = list(ir.MemRefType(found.locals[k].type).shape)
    key = len(found.streamed) + k
    if key in free:
        shape[free[key]] = tile
    return shape


def _is_root(value: ir.Value, kernel_block: ir.Block) -> bool:
    if isinstance(value.owner, ir.Block):
        return value.owner == kernel_block
    return as_operation(value.owner).name in ("memref.alloc", "memref.get_global")


def _is_gm(value: ir.Value) -> bool:
    return isinstance(value.owner, ir.Block) or as_operation(value.owner).name == "memref.get_global"


def _reads_writes(user: ir.Operation, value: ir.Value) -> tuple[bool, bool] | None:
    """Whether ``user`` reads and whether it writes its operand ``value``; None when the op is not understood."""
    if user.name not in ("memref.load", "memref.store") and loop_access(user) is None:
        return None
    found = [(reads, writes) for operand, reads, writes in memref_accesses(user) if operand == value]
    return any(r for r, _ in found), any(w for _, w in found)


def _subview_access(view: ir.Operation) -> _Access | None:
    """A GM subview inside the loop as an access: rank-kept, static sizes, unit strides, used in its block."""
    source = view.operands[0]
    if ir.MemRefType(view.results[0].type).rank != ir.MemRefType(source.type).rank:
        return None
    if any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])):
        return None
    segments = list(ir.DenseI32ArrayAttr(view.attributes["operandSegmentSizes"]))
    if segments[2] or segments[3]:
        return None  # dynamic sizes or strides
    offsets, sizes = _subview_window(view)
    reads = writes = False
    for use in view.results[0].uses:
        user = as_operation(use.owner)
        if user.block != view.block:
            return None
        found = _reads_writes(user, view.results[0])
        if found is None:
            return None
        reads, writes = reads or found[0], writes or found[1]
    return _Access(view, source, offsets, sizes, reads, writes)


def _element_access(op: ir.Operation) -> _Access:
    """A memref.load / memref.store as a one-element window."""
    is_store = op.name == "memref.store"
    buffer = op.operands[1] if is_store else op.operands[0]
    indices = list(op.operands)[2 if is_store else 1:]
    offsets: list[int | ir.Value] = [_constant_int(v) if _constant_int(v) is not None else v for v in indices]
    return _Access(op, buffer, offsets, [1] * len(indices), not is_store, is_store)


def _chunk_dim(accesses: list[_Access], iv: ir.Value, step: int, body: ir.Block) -> int | None:
    """The dim at which every access of one buffer is the loop's index, the same window otherwise."""
    if step != 1:
        return None
    first = accesses[0]
    dims = [d for d, o in enumerate(first.offsets) if isinstance(o, ir.Value) and o == iv]
    if len(dims) != 1 or first.sizes[dims[0]] != 1:
        return None
    dim = dims[0]
    for a in accesses:
        if a.sizes != first.sizes or a.op.block != body:
            return None
        for d, (o, o0) in enumerate(zip(a.offsets, first.offsets, strict=True)):
            if d == dim:
                if not (isinstance(o, ir.Value) and o == iv):
                    return None
            elif not isinstance(o, int) or o != o0:
                return None
    return dim


def sequential_loop(kernel: ir.Operation) -> SequentialLoop | None:
    """The kernel as a sequential loop to stream, or None when it is not one (see the module's docstring)."""
    block = kernel.regions[0].blocks[0]
    top = [as_operation(o) for o in block.operations]
    loops = [op for op in top if op.name == "scf.for"]
    if len(loops) != 1 or len(loops[0].results):
        return None
    loop = loops[0]
    bounds = [_constant_int(v) for v in list(loop.operands)[:3]]
    if any(b is None for b in bounds) or bounds[2] <= 0:
        return None
    lower, upper, step = bounds
    locals_ = [op.results[0] for op in top if op.name == "memref.alloc"]
    for op in top:
        if op.name in _SETUP or op.name == "scf.for":
            continue
        if op.regions and not op.name.startswith("linalg."):
            return None
        for v in op.operands:  # outside the loop: local buffers only, used directly
            if isinstance(v.type, ir.MemRefType) and not any(v == local for local in locals_):
                return None
    body = loop.regions[0].blocks[0]
    iv = body.arguments[0]
    accesses: list[_Access] = []
    local_views = []
    for op in nested_ops(loop):
        if op.parent.name.startswith("linalg."):
            continue  # a linalg payload
        if op.regions and op.name != "scf.if" and not op.name.startswith("linalg."):
            return None
        if op.name == "memref.subview":
            if not _is_root(op.operands[0], block):
                return None
            if not _is_gm(op.operands[0]):
                local_views.append(op)
                continue
            access = _subview_access(op)
            if access is None:
                return None
            accesses.append(access)
            continue
        if op.name in ("memref.load", "memref.store") and \
                _is_gm(op.operands[1] if op.name == "memref.store" else op.operands[0]):
            accesses.append(_element_access(op))
            continue
        for v in op.operands:  # anything else touches local buffers or the loop's subviews only
            if not isinstance(v.type, ir.MemRefType):
                continue
            if any(v == local for local in locals_):
                continue
            if isinstance(v.owner, ir.Block) or as_operation(v.owner).name != "memref.subview":
                return None
            if op.name not in ("memref.load", "memref.store") and _reads_writes(op, v) is None:
                return None
    streamed: list[_Streamed] = []
    for a in accesses:
        group = next((s for s in streamed if s.root == a.root), None)
        if group is None:
            streamed.append(_Streamed(a.root, [a], None, False, False))
        else:
            group.accesses.append(a)
    for s in streamed:
        s.chunk_dim = _chunk_dim(s.accesses, iv, step, body)
        s.written = any(a.writes for a in s.accesses)
        s.loaded = any(a.reads for a in s.accesses) or (
            s.chunk_dim is not None and not all(_overwrites(a) for a in s.accesses))
    found = SequentialLoop(kernel, loop, lower, step, max(0, -(-(upper - lower) // step)), streamed, locals_,
                           local_views)
    found.free_dims = _free_dims(found, top)
    return found


def _overwrites(access: _Access) -> bool:
    """Whether the access's window is written whole (by copies, fills and elementwise ops that do not read
    it) and nothing reads it."""
    if access.op.name == "memref.store":
        return True
    users = [as_operation(u.owner) for u in access.op.results[0].uses]
    return not access.reads and all(_elementwise(u) for u in users)


def _elementwise(op: ir.Operation) -> bool:
    if op.name in _ELEMENTWISE:
        return True
    if op.name != "linalg.generic":
        return False
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    return all(m.is_permutation and m == ir.AffineMap.get_identity(m.n_dims) for m in maps) and \
        all("parallel" in it for it in iterators)


def _free_dims(found: SequentialLoop, top: list[ir.Operation]) -> list[tuple[dict[int, int], int]]:
    """Each dim position the ops use elementwise and every access spans whole: the buffers that follow it."""
    ops = [op for op in top if op.name not in _SETUP and op.name != "scf.for"]
    ops += [op for op in nested_ops(found.loop) if not op.parent.name.startswith("linalg.")]
    roots = {op_id(a.op): a for s in found.streamed for a in s.accesses}

    def root_window(value: ir.Value) -> tuple[int, list[int | ir.Value], list[int]] | None:
        """A memref operand's buffer key and window (offsets, sizes)."""
        if not isinstance(value.owner, ir.Block) and as_operation(value.owner).name == "memref.subview":
            view = as_operation(value.owner)
            access = roots.get(op_id(view))
            if access is not None:
                return found.buffer_index(access.root), access.offsets, access.sizes
            return (found.buffer_index(view.operands[0]), *_subview_window(view))
        shape = list(ir.MemRefType(value.type).shape)
        return found.buffer_index(value), [0] * len(shape), shape

    shapes = [list(s.type.shape) for s in found.streamed] + [list(ir.MemRefType(v.type).shape) for v in found.locals]
    candidates = []
    for dim in range(max((len(s) for s in shapes), default=0)):
        follows: dict[int, int] = {}
        barred: set[int] = set()
        for op in ops:
            if op.name in ("memref.subview", "scf.if", "scf.yield") or op.name.startswith("arith."):
                continue
            operands = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
            windows = [root_window(v) for v in operands]
            if op.name in ("memref.load", "memref.store") or not _elementwise(op):
                barred |= {w[0] for w in windows if w is not None}
                continue
            ranks = {ir.MemRefType(v.type).rank for v in operands}
            if len(ranks) != 1 or dim >= next(iter(ranks)):
                barred |= {w[0] for w in windows if w is not None}
                continue
            for key, offsets, sizes in windows:
                if offsets[dim] != 0 or sizes[dim] != shapes[key][dim]:
                    barred.add(key)
                follows[key] = dim
        for s in found.streamed:  # element accesses (loads, stores) bar their buffer
            if any(a.op.name != "memref.subview" for a in s.accesses):
                barred.add(found.buffer_index(s.root))
        extents = {shapes[key][dim] for key in follows}
        if follows and not (barred & follows.keys()) and len(extents) == 1 and next(iter(extents)) > 1:
            candidates.append((follows, next(iter(extents))))
    return candidates


def _divisors(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def _window(access: _Access, free: dict[int, int], key: int, tile: int, chunk_dim: int | None, chunk: int) -> list[int]:
    sizes = list(access.sizes)
    if key in free:
        sizes[free[key]] = tile
    if chunk_dim is not None:
        sizes[chunk_dim] = chunk
    return sizes


def _peaks(found: SequentialLoop, free: dict[int, int], tile: int, chunk: int, double: bool,
           target: NpuTarget) -> dict[str, int]:
    ub = target.buffer("ub")
    total = 0
    for k, local in enumerate(found.locals):
        shape = _local_shape(found, k, free, tile)
        total += ub.footprint(math.prod(shape) * element_bytes(ir.MemRefType(local.type).element_type))
    for key, s in enumerate(found.streamed):
        size = element_bytes(s.type.element_type)
        if s.chunk_dim is not None:
            slots = 2 if double else 1
            total += slots * ub.footprint(math.prod(_window(s.accesses[0], free, key, tile, s.chunk_dim, chunk)) * size)
        else:
            total += sum(ub.footprint(math.prod(_window(a, free, key, tile, None, 1)) * size) for a in s.accesses)
    return {"ub": total, **dict.fromkeys((s for s in PLACED_SPACES if s != "ub"), 0)}


def plan_stream(found: SequentialLoop, target: NpuTarget, double_buffer: bool) -> StreamPlan | str:
    """The largest window (tile x chunk) that fits UB double-buffered, else the largest that fits with one slot;
    or why none fits."""
    best: tuple[tuple[bool, int, int], StreamPlan] | None = None
    smallest: dict[str, int] | None = None
    trips = max(found.trips, 1)
    for free, extent in [({}, 1), *found.free_dims]:
        for tile in _divisors(extent):
            for double in dict.fromkeys((double_buffer, False)):
                for chunk in _divisors(trips):  # the largest chunk that fits
                    if double and (extent // tile) * (trips // chunk) == 1:
                        continue  # one window: nothing to overlap
                    peaks = _peaks(found, free, tile, chunk, double, target)
                    if smallest is None or peaks["ub"] < smallest["ub"]:
                        smallest = peaks
                    if space_over_capacity(peaks, target) is None:
                        key = (double, tile * chunk, tile)
                        if best is None or key > best[0]:
                            best = (key, StreamPlan(found, free, extent, tile, chunk, double, peaks))
                        break
    if best is not None:
        return best[1]
    need = smallest["ub"] if smallest else 0
    return f"streaming its loop through UB, no window fits: the smallest (one iteration) needs {need} bytes of UB"


def rewrite_stream(kernel: ir.Operation, plan: StreamPlan) -> int:
    """Apply ``plan``: UB locals and staging buffers, the tile and chunk loops, the transfers.  Returns the
    number of npu.dma ops."""
    found = plan.loop
    block = kernel.regions[0].blocks[0]
    loop = found.loop
    body = loop.regions[0].blocks[0]
    iv = body.arguments[0]
    free, tile = plan.free, plan.tile
    first = next(as_operation(o) for o in block.operations if as_operation(o).name not in _SETUP)
    indexed = _tiled_index_readers(found, free)
    transfers = 0
    with kernel.location:
        # Locals live in UB, cut to the tile along the free dim.
        for k, local in enumerate(found.locals):
            element = ir.MemRefType(local.type).element_type
            local.set_type(ir.MemRefType.get(_local_shape(found, k, free, tile), element, None, mem_space("ub")))
        for view in found.local_views:
            key = found.buffer_index(view.operands[0])
            offsets, sizes = _subview_window(view)
            if key in free:
                sizes[free[key]] = tile
            with ir.InsertionPoint(view):
                rebuilt = window_view(view.operands[0], offsets, sizes)
            view.results[0].replace_all_uses_with(rebuilt)
            view.erase()
        for local in found.locals:
            retype_views(local, "ub")
        # Staging buffers, allocated once before everything.
        staging: dict[int, ir.Value] = {}
        with ir.InsertionPoint(first):
            for key, s in enumerate(found.streamed):
                element = s.type.element_type
                if s.chunk_dim is not None:
                    window = _window(s.accesses[0], free, key, tile, s.chunk_dim, plan.chunk)
                    shape = [2, *window] if plan.double else window
                    staging[op_id(s.accesses[0].op)] = alloc(ir.MemRefType.get(shape, element, None, mem_space("ub")))
                else:
                    for a in s.accesses:
                        window = _window(a, free, key, tile, None, 1)
                        staging[op_id(a.op)] = alloc(ir.MemRefType.get(window, element, None, mem_space("ub")))
        # The tile loop around every compute op.
        nest: list[tuple[ir.Value, int, int]] = []
        row: ir.Value | None = None
        if tile < plan.extent:
            with ir.InsertionPoint(first):
                tiles = scf.ForOp(index_constant(0), index_constant(plan.extent), index_constant(tile))
            with ir.InsertionPoint(tiles.body):
                end = scf.YieldOp([]).operation
            after = False
            for op in [as_operation(o) for o in block.operations]:
                if op_id(op) == op_id(tiles.operation):
                    after = True
                elif after and op.name != "func.return":  # compute ops into the loop, set-up ops before it
                    op.move_before(end if op.name not in _SETUP else tiles.operation)
            row = tiles.induction_variable
            nest.append((row, tile, plan.extent // tile))
            for op, dim in indexed:
                shift_indices(op, {dim: row})
        # The chunk loop around the sequential loop, which then runs over one chunk's iterations.
        start: ir.Value | None = None  # the chunk's first iteration index (None: 0)
        if plan.chunk < found.trips:
            with ir.InsertionPoint(loop):
                chunks = scf.ForOp(index_constant(0), index_constant(found.trips), index_constant(plan.chunk))
            with ir.InsertionPoint(chunks.body):
                end = scf.YieldOp([]).operation
            loop.move_before(end)
            start = chunks.induction_variable
            nest.append((start, plan.chunk, found.trips // plan.chunk))
        with ir.InsertionPoint(loop):
            loop.operands[0] = index_constant(0)
            loop.operands[1] = index_constant(plan.chunk if found.step == 1 else found.trips)
            loop.operands[2] = index_constant(1)
        # The original index from the chunk's: lower + (chunk start + j) * step; the body's uses get it.
        head = as_operation(body.operations[0])
        with ir.InsertionPoint(head):
            index = iv if start is None else arith.addi(start, iv)
            if found.step != 1:
                index = arith.muli(index, index_constant(found.step))
            if found.lower:
                index = arith.addi(index, index_constant(found.lower))
        computing = set()  # the ops computing the index keep the loop's own
        for o in body.operations:
            if op_id(o) == op_id(head):
                break
            computing.add(op_id(o))
        for use in list(iv.uses):
            owner = as_operation(use.owner)
            if op_id(owner) not in computing:
                owner.operands[use.operand_number] = index
        slot = None
        if plan.double:
            with ir.InsertionPoint(loop):
                slot = tile_slot(nest)
        for key, s in enumerate(found.streamed):
            if s.chunk_dim is None:
                for a in s.accesses:
                    a.offsets = [index if isinstance(o, ir.Value) and o == iv else o for o in a.offsets]
                    transfers += _stage_slice(a, staging[op_id(a.op)], free.get(key), tile, row)
                continue
            transfers += _stage_chunk(s, staging[op_id(s.accesses[0].op)], slot, free.get(key), tile, row, start,
                                      found.lower, plan.chunk, loop, iv, index)
    return transfers


def _tiled_index_readers(found: SequentialLoop, free: dict[int, int]) -> list[tuple[ir.Operation, int]]:
    """The ops reading their loop indices whose operands follow the free dim, with that dim (their ops are
    elementwise: the loop dim is the buffer dim)."""
    block = found.kernel.regions[0].blocks[0]
    readers = []
    for op in [as_operation(o) for o in block.operations] + nested_ops(found.loop):
        if not has_indices(op):
            continue
        for v in op.operands:
            root = as_operation(v.owner).operands[0] if not isinstance(v.owner, ir.Block) and \
                as_operation(v.owner).name == "memref.subview" else v
            known = any(s.root == root for s in found.streamed) or any(local == root for local in found.locals)
            if known and found.buffer_index(root) in free:
                readers.append((op, free[found.buffer_index(root)]))
                break
    return readers


def _gm_offsets(offsets: list[int | ir.Value], free_dim: int | None, row: ir.Value | None) -> list[int | ir.Value]:
    out = list(offsets)
    if free_dim is not None and row is not None:
        out[free_dim] = row
    return out


def _stage_slice(access: _Access, buffer: ir.Value, free_dim: int | None, tile: int, row: ir.Value | None) -> int:
    """One access staged per iteration: its window moved in before the op using it, out after its last use."""
    op = access.op
    sizes = list(ir.MemRefType(buffer.type).shape)
    transfers = 0
    with ir.InsertionPoint(op):
        window = window_view(access.root, _gm_offsets(access.offsets, free_dim, row), sizes)
        if access.reads:
            dma(window, buffer)
            transfers += 1
    zeros = [index_constant(0) for _ in sizes] if op.name != "memref.subview" else []
    if op.name == "memref.load":
        with ir.InsertionPoint(op):
            value = memref.LoadOp(buffer, zeros).result
        op.results[0].replace_all_uses_with(value)
        op.erase()
        return transfers
    if op.name == "memref.store":
        with ir.InsertionPoint(op):
            memref.StoreOp(op.operands[0], buffer, zeros)
            dma(buffer, window)
        op.erase()
        return transfers + 1
    last = _last_in_block([as_operation(u.owner) for u in op.results[0].uses])
    op.results[0].replace_all_uses_with(buffer)
    if access.writes:
        with ir.InsertionPoint.after(last):
            dma(buffer, window)
        transfers += 1
    op.erase()
    return transfers


def _last_in_block(ops: list[ir.Operation]) -> ir.Operation:
    last = ops[0]
    for op in ops[1:]:
        if last.is_before_in_block(op):
            last = op
    return last


def _stage_chunk(s: _Streamed, buffer: ir.Value, slot: ir.Value | None, free_dim: int | None, tile: int,
                 row: ir.Value | None, start: ir.Value | None, lower: int, chunk: int, loop: ir.Operation,
                 iv: ir.Value, index: ir.Value) -> int:
    """A buffer at the loop's index staged per chunk: the chunk's window before the loop, back after it."""
    first = s.accesses[0]
    dim = s.chunk_dim
    transfers = 0
    with ir.InsertionPoint(loop):
        staged = slot_view(buffer, slot, "ub") if slot is not None else buffer
        offsets = _gm_offsets(first.offsets, free_dim, row)
        begin: ir.Value | int = lower
        if start is not None:
            begin = arith.addi(start, index_constant(lower)) if lower else start
        offsets[dim] = begin
        sizes = [tile if d == free_dim else n for d, n in enumerate(first.sizes)]
        sizes[dim] = chunk
        window = window_view(s.root, offsets, sizes)
        if s.loaded:
            dma(window, staged)
            transfers += 1
    if s.written:
        with ir.InsertionPoint.after(loop):
            dma(staged, window)
        transfers += 1
    for a in s.accesses:
        op = a.op
        inner: list[ir.Value | int] = [0] * len(a.sizes)
        inner[dim] = iv
        with ir.InsertionPoint(op):
            if op.name == "memref.subview":
                view_sizes = [tile if d == free_dim else n for d, n in enumerate(a.sizes)]
                view = window_view(staged, inner, view_sizes)
                op.results[0].replace_all_uses_with(view)
            else:
                indices = [v if isinstance(v, ir.Value) else index_constant(v) for v in inner]
                if op.name == "memref.load":
                    value = memref.LoadOp(staged, indices).result
                    op.results[0].replace_all_uses_with(value)
                else:
                    memref.StoreOp(op.operands[0], staged, indices)
        op.erase()
    return transfers
