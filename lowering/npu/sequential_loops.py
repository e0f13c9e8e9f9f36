"""Kernels holding a sequential loop (a scan, a scatter, a sort): the loop's slices streamed through UB.

graph-to-linalg lowers ``graph.cumsum``, ``graph.scatter_update``,
``graph.sort`` / ``graph.topk`` (a loop over rows) and
``graph.grouped_matmul`` (a loop over groups) to an ``scf.for`` inside the
kernel whose body reads and writes one slice of its buffers per iteration
(``x[:, i]``, ``out[:, index[i], :]``, ``x[i, p]``).  No parallel loop of
such a kernel can be cut into tiles; instead its GM buffers stay in GM and
the loop streams their slices through UB.  The body may nest ``scf.if``,
``scf.for`` and ``scf.while`` (a sort's partitions, a group's row blocks),
and the loop may carry values from one iteration to the next (a group's
start); what they touch must be local buffers or the accesses below.

- an access at the loop's index (``x[:, i]``, ``index[i]``) in the loop's
  body is staged in chunks of C iterations: the window of C slices moves
  GM -> UB before the chunk's iterations and back after them (two slots
  when room allows).  In a dim where an access's offset is not known before
  the iteration (``x[i, p]``, p computed in the body: a sort's comparisons,
  a row's outputs at an inner loop's index), the window spans the dim whole
  and the access keeps its offset inside it; the buffer's accesses may then
  be anywhere in the body's nested blocks (each iteration's row is read
  over and over at places only known then).  Such a window is loaded before
  its chunk even when only written (a scattered store does not write it
  whole);
- any other access (``out[:, index[i], :]``, whose place depends on data;
  ``update[:, i, :]`` used only when a condition holds) is staged per
  iteration: its slice moves in before its first use and out after its
  last.  The accesses of one buffer that are never live together
  (a group's row blocks, each in its own ``scf.if``) share one staging
  buffer;
- local buffers (a scan's running sum, a sort's permutation) stay in UB;
- a dim every access spans whole, that the ops use elementwise (the rows
  of a scan along columns), may be cut into tiles of T: the kernel then
  runs once per tile on T of it.

Every GM byte the loop touches moves once; C and T only bound what is on
chip at a time (the largest window that fits is chosen).

This module finds the loop and plans the streaming (:func:`sequential_loop`, :func:`plan_stream`);
:mod:`graphfuse.lowering.npu.sequential_streaming` rewrites the kernel to that plan (:func:`rewrite_stream`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cmp_to_key

from mlir import ir

from graphfuse.dialect.matching import as_operation, nested_ops, op_id
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.kernel_buffers import (
    PLACED_SPACES,
    element_bytes,
    loop_access,
    memref_accesses,
    space_over_capacity,
)

__all__ = ["SequentialLoop", "StreamPlan", "plan_stream", "sequential_loop"]

#: Ops whose memref operands all have the same shape and are indexed alike, element by element.
_ELEMENTWISE = frozenset({"memref.copy", "linalg.copy", "linalg.fill", "linalg.map"})
#: Top-level ops that are not compute: kept where they are (before any tile loop).
_SETUP = frozenset({"memref.alloc", "memref.get_global", "arith.constant", "func.return"})
#: Region ops the sequential loop's body may nest (their blocks run more of the iteration's work).
_NESTED = frozenset({"scf.if", "scf.for", "scf.while"})
#: Their terminators.
_TERMINATORS = frozenset({"scf.yield", "scf.condition"})


@dataclass
class _Access:
    """One access of a GM buffer inside the loop: a static-size window of it (a subview, or one element)."""

    op: ir.Operation  # memref.subview, memref.load or memref.store
    root: ir.Value
    offsets: list[int | ir.Value]
    #: the window's sizes, in the root's dims (a rank-reducing subview's dropped dims are 1)
    sizes: list[int]
    reads: bool
    writes: bool
    #: written maybe in part (a store into the view, or a write in a nested block): staged, it is loaded first
    partial: bool = False
    #: written whole before anything reads it (its first use fills or copies into it): staged per iteration, it
    #: is not loaded
    fresh: bool = False

    @property
    def loaded(self) -> bool:
        """Staged per iteration: whether its window moves in before its first use."""
        return (self.reads or self.partial) and not self.fresh

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
    #: chunked: the dims some access's offset is not known before the iteration in (its window spans them whole)
    whole: frozenset[int] = frozenset()
    #: per iteration: the accesses sharing a staging buffer (never live together), as indices into ``accesses``
    groups: list[list[int]] = field(default_factory=list)

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


def _ancestor_in(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """``op``, or the op holding it, that is in ``block``; None when ``op`` is not nested in ``block``."""
    while True:
        if op.block == block:
            return op
        parent = op.parent
        if parent is None or parent.name in ("func.func", "builtin.module"):
            return None
        op = as_operation(parent)


def _kept_dims(sizes: list[int], shape: list[int]) -> list[int] | None:
    """The dims of a window of ``sizes`` that a rank-reducing view of ``shape`` keeps (the unit dims it does
    not match are dropped, as MLIR matches them: left to right); None when the shapes do not match."""
    kept: list[int] = []
    for d, n in enumerate(sizes):
        if len(kept) < len(shape) and shape[len(kept)] == n:
            kept.append(d)
        elif n != 1:
            return None
    return kept if len(kept) == len(shape) else None


def _reduce_rank(view: ir.Value, shape: list[int]) -> None:
    """Give a rank-kept subview result the rank-reduced type of ``shape`` (its unit dims dropped)."""
    t = ir.MemRefType(view.type)
    if t.rank == len(shape):
        return
    kept = _kept_dims(list(t.shape), shape)
    assert kept is not None, (t, shape)
    strides, offset = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    dims = "".join(f"{t.shape[d]}x" for d in kept)
    space = f", {t.memory_space}" if t.memory_space is not None else ""
    view.set_type(ir.Type.parse(f"memref<{dims}{t.element_type}, strided<[{', '.join(str(strides[d]) for d in kept)}]"
                                f", offset: {'?' if offset == dynamic else offset}>{space}>"))


def _subview_access(view: ir.Operation) -> _Access | None:
    """A GM subview inside the loop as an access: static sizes, unit strides (rank-reducing or not), used in
    its block or blocks nested in it."""
    source = view.operands[0]
    if any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])):
        return None
    segments = list(ir.DenseI32ArrayAttr(view.attributes["operandSegmentSizes"]))
    if segments[2] or segments[3]:
        return None  # dynamic sizes or strides
    offsets, sizes = _subview_window(view)
    if _kept_dims(sizes, list(ir.MemRefType(view.results[0].type).shape)) is None:
        return None
    reads = writes = partial = False
    users = []
    for use in view.results[0].uses:
        user = as_operation(use.owner)
        if _ancestor_in(user, view.block) is None:
            return None
        found = _reads_writes(user, view.results[0])
        if found is None:
            return None
        reads, writes = reads or found[0], writes or found[1]
        partial |= found[1] and (user.name == "memref.store" or user.block != view.block)
        users.append(user)
    # its first user (all others after it, none nested in it) fills it or copies into it
    first = _first_in_block([_ancestor_in(u, view.block) for u in users]) if users else None
    fresh = first is not None and any(op_id(u) == op_id(first) for u in users) and _elementwise(first) and \
        _reads_writes(first, view.results[0]) == (False, True) and \
        all(op_id(u) == op_id(first) or first.is_before_in_block(_ancestor_in(u, view.block)) for u in users)
    return _Access(view, source, offsets, sizes, reads, writes, partial, fresh)


def _element_access(op: ir.Operation) -> _Access:
    """A memref.load / memref.store as a one-element window."""
    is_store = op.name == "memref.store"
    buffer = op.operands[1] if is_store else op.operands[0]
    indices = list(op.operands)[2 if is_store else 1:]
    offsets: list[int | ir.Value] = [_constant_int(v) if _constant_int(v) is not None else v for v in indices]
    return _Access(op, buffer, offsets, [1] * len(indices), not is_store, is_store)


def _is_value(offset: int | ir.Value, value: ir.Value) -> bool:
    return isinstance(offset, ir.Value) and offset == value


def _chunk_dims(accesses: list[_Access], iv: ir.Value, step: int, body: ir.Block
                ) -> tuple[int, frozenset[int]] | None:
    """The dim at which every access of one buffer is the loop's index (size 1), and the dims some access's
    offset is a value in (known only in the iteration: spanned whole); in the other dims every access has the
    same constant window.  Without such whole dims, every access must be in the loop's body: a slice used
    only in a nested block (maybe not at all) moves per iteration, when it is used.  None when there is no
    such dim."""
    if step != 1:
        return None
    first = accesses[0]
    dims = [d for d, o in enumerate(first.offsets) if _is_value(o, iv)]
    if len(dims) != 1:
        return None
    dim = dims[0]
    whole = frozenset(d for a in accesses for d, o in enumerate(a.offsets) if d != dim and isinstance(o, ir.Value))
    for a in accesses:
        if not _is_value(a.offsets[dim], iv) or a.sizes[dim] != 1 or (not whole and a.op.block != body):
            return None
        for d in range(len(a.offsets)):
            if d != dim and d not in whole and (a.offsets[d], a.sizes[d]) != (first.offsets[d], first.sizes[d]):
                return None
    return dim, whole


def sequential_loop(kernel: ir.Operation) -> SequentialLoop | None:
    """The kernel as a sequential loop to stream, or None when it is not one (see the module's docstring)."""
    block = kernel.regions[0].blocks[0]
    top = [as_operation(o) for o in block.operations]
    loops = [op for op in top if op.name == "scf.for"]
    if len(loops) != 1 or any(isinstance(r.type, ir.MemRefType) for r in loops[0].results):
        return None  # (values carried from one iteration to the next are fine: the chunk loop carries them too)
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
        if op.regions and op.name not in _NESTED and not op.name.startswith("linalg."):
            return None
        if op.name in _NESTED or op.name in _TERMINATORS:  # control flow: over scalars only
            if any(isinstance(v.type, ir.MemRefType) for v in [*op.operands, *op.results]):
                return None
            continue
        if op.name in ("memref.alloc", "memref.alloca"):
            return None  # a buffer per iteration (hoisted before the loop, it is a local)
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
        chunked = _chunk_dims(s.accesses, iv, step, body)
        s.chunk_dim, s.whole = chunked if chunked is not None else (None, frozenset())
        s.written = any(a.writes for a in s.accesses)
        s.loaded = any(a.reads for a in s.accesses) or (
            s.chunk_dim is not None and not all(_overwrites(a, body, s.whole) for a in s.accesses))
        if s.chunk_dim is None:
            s.groups = _sharing(s.accesses)
    found = SequentialLoop(kernel, loop, lower, step, max(0, -(-(upper - lower) // step)), streamed, locals_,
                           local_views)
    found.free_dims = _free_dims(found, top)
    return found


def _overwrites(access: _Access, body: ir.Block, whole: frozenset[int]) -> bool:
    """Whether the access writes its slice of the chunk's window whole in every iteration (in the loop's body,
    by a store, or by copies, fills and elementwise ops in its block that do not read it) and nothing reads
    it.  An access spanning a dim whole writes only part of it."""
    if access.op.block != body or whole or access.partial:
        return False
    if access.op.name == "memref.store":
        return True
    users = [as_operation(u.owner) for u in access.op.results[0].uses]
    return not access.reads and all(_elementwise(u) for u in users)


def _live_ops(access: _Access) -> set[int]:
    """The ops an access staged per iteration is live across (from its op to its last use, the ops nested in
    them included)."""
    op = access.op
    if op.name != "memref.subview":
        return {op_id(op)}
    users = [_ancestor_in(as_operation(u.owner), op.block) for u in op.results[0].uses]
    last = _last_in_block([op, *users])
    live: set[int] = set()
    inside = False
    for o in [as_operation(o) for o in op.block.operations]:
        inside = inside or op_id(o) == op_id(op)
        if inside:
            live |= {op_id(o), *(op_id(n) for n in nested_ops(o))}
        if op_id(o) == op_id(last):
            break
    return live


def _sharing(accesses: list[_Access]) -> list[list[int]]:
    """The accesses of one buffer staged per iteration, in groups that are never live together (each group
    shares one staging buffer): two accesses are when either one's op is among the ops the other is live
    across."""
    live = [_live_ops(a) for a in accesses]
    groups: list[list[int]] = []
    for k, a in enumerate(accesses):
        for group in groups:
            if all(op_id(a.op) not in live[j] and op_id(accesses[j].op) not in live[k] for j in group):
                group.append(k)
                break
        else:
            groups.append([k])
    return groups


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
            if op.name in ("memref.subview", *_NESTED, *_TERMINATORS) or op.name.startswith("arith."):
                continue
            operands = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
            windows = [root_window(v) for v in operands]
            reduced = any(w is not None and len(w[2]) != ir.MemRefType(v.type).rank  # a rank-reducing view
                          for v, w in zip(operands, windows, strict=True))
            if op.name in ("memref.load", "memref.store") or not _elementwise(op) or reduced:
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


def _window(access: _Access, free: dict[int, int], key: int, tile: int) -> list[int]:
    """A per-iteration access's staged window: its own, cut to the tile along the free dim."""
    sizes = list(access.sizes)
    if key in free:
        sizes[free[key]] = tile
    return sizes


def _chunk_window(s: _Streamed, free: dict[int, int], key: int, tile: int, chunk: int) -> list[int]:
    """A chunked buffer's window: the accesses' slice, whole along the dims in ``s.whole``, the chunk's
    iterations along the chunk dim, cut to the tile along the free dim."""
    sizes = _window(s.accesses[0], free, key, tile)
    for d in s.whole:
        sizes[d] = s.type.shape[d]
    sizes[s.chunk_dim] = chunk
    return sizes


def _group_window(s: _Streamed, group: list[int], free: dict[int, int], key: int, tile: int) -> list[int]:
    """The staging buffer a group of per-iteration accesses shares: each dim the largest of theirs."""
    return [max(sizes) for sizes in zip(*(_window(s.accesses[k], free, key, tile) for k in group), strict=True)]


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
            total += slots * ub.footprint(math.prod(_chunk_window(s, free, key, tile, chunk)) * size)
        else:
            total += sum(ub.footprint(math.prod(_group_window(s, g, free, key, tile)) * size) for g in s.groups)
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


def _in_block_order(ops: list[ir.Operation]) -> list[ir.Operation]:
    """``ops`` (all in one block) in the block's order."""
    return sorted(ops, key=cmp_to_key(lambda a, b: -1 if a.is_before_in_block(b) else int(b.is_before_in_block(a))))


def _first_in_block(ops: list[ir.Operation]) -> ir.Operation:
    return _in_block_order(ops)[0]


def _last_in_block(ops: list[ir.Operation]) -> ir.Operation:
    return _in_block_order(ops)[-1]
