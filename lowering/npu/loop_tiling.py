"""Vector kernels tiled along their parallel loops: one loop, or a nest of several.

:func:`loop_choices` finds the loops a kernel can be tiled along (an output
dim's loop that every buffer follows in one dim or does not use),
:func:`plan_loops` picks the tiles (one loop: the outermost with a tile that
fits, its largest; a nest: the least GM traffic) and :func:`rewrite_loops`
builds the ``scf.for`` nest with its staging buffers and transfers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import scf

from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.cube_tiling import FRACTAL
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    PLACED_SPACES,
    RESHAPE_VIEWS,
    VIEW_OPS,
    KernelBuffer,
    alloc,
    dma,
    has_indices,
    index_constant,
    is_cube_op,
    loop_access,
    reassociation,
    reshaped_only,
    retype_views,
    root_buffer,
    row_major_strides,
    shift_indices,
    slot_view,
    space_over_capacity,
    tile_slot,
    window_view,
)

__all__ = [
    "LoopChoice", "LoopPlan", "TiledLoop", "distinct_dims", "loop_choices", "over_capacity_message", "plan_loops",
    "rewrite_loops", "tile_peaks",
]


@dataclass(frozen=True)
class TiledLoop:
    """A loop of a kernel's tile nest: the loop an output dim follows, cut into tiles of ``tile``."""

    extent: int
    tile: int
    #: a buffer's position in the kernel's buffer list -> its dim that follows the loop (absent: whole along it)
    dims: dict[int, int]

    @property
    def count(self) -> int:
        return self.extent // self.tile


@dataclass
class LoopPlan:
    buffers: list[KernelBuffer]
    #: the tile nest, outermost loop first ([]: the kernel whole, one tile)
    loops: list[TiledLoop]
    peaks: dict[str, int] = field(default_factory=dict)
    double: bool = False

    @property
    def tiles(self) -> int:
        return math.prod(loop.count for loop in self.loops)


def _tiled_dims(loops: list[TiledLoop], index: int) -> dict[int, int]:
    """Buffer ``index``'s tiled dims in the nest ``loops``: dim -> tile size."""
    return {loop.dims[index]: loop.tile for loop in loops if index in loop.dims}


def _moves_per_tile(buf: KernelBuffer, index: int, loops: list[TiledLoop]) -> bool:
    """Whether the buffer is transferred tile by tile (it follows a loop of more than one tile)."""
    return buf.transferred and not buf.slices and any(index in loop.dims and loop.count > 1 for loop in loops)


def _root_axis(value: ir.Value, dim: int) -> tuple[ir.Value, int] | None:
    """The root buffer of ``value`` and the dim of it that ``value``'s ``dim`` is, through reshapes that keep
    that dim whole (its group holds no other dim larger than 1); None through any other view."""
    while not isinstance(value.owner, ir.Block) and as_operation(value.owner).name in VIEW_OPS:
        view = as_operation(value.owner)
        if view.name not in RESHAPE_VIEWS:
            return None
        groups = reassociation(view)
        result_shape = list(ir.MemRefType(view.results[0].type).shape)
        source_shape = list(ir.MemRefType(view.operands[0].type).shape)
        if view.name == "memref.expand_shape":  # groups: per source dim, its result dims
            group = next(g for g, members in enumerate(groups) if dim in members)
            if any(result_shape[d] != 1 for d in groups[group] if d != dim):
                return None
            dim = group
        else:  # collapse_shape: per result dim, its source dims
            large = [d for d in groups[dim] if source_shape[d] != 1]
            if len(large) != 1:
                return None
            dim = large[0]
        value = view.operands[0]
    return value, dim


def _fractal_rows(operands: list[tuple[ir.Value, list[frozenset[int]], bool]], loop: int) -> int:
    """For a cube op's loop that indexes one of its inputs (an M or N loop): how many rows (or columns) of
    the cube one index of it stands for, the product of that input's later dims no other input uses (a batch
    loop before 16 rows of M: 16); 0 when the loop is not an M or N loop."""
    inputs = [(value, dims) for value, dims, written in operands if not written]
    indexed = [(value, dims) for value, dims in inputs if any(loop in d for d in dims)]
    if len(indexed) != 1:
        return 0
    value, dims = indexed[0]
    others = frozenset().union(*(d for v, ds in inputs if v != value for d in ds))
    position = next(p for p, d in enumerate(dims) if loop in d)
    shape = ir.MemRefType(value.type).shape
    return math.prod(shape[p] for p in range(position + 1, len(dims)) if dims[p] and not dims[p] & others)


def _row_analysis(buffers: list[KernelBuffer], ops: list[ir.Operation], choice: int = 0) -> tuple[int, int] | None:
    """Mark each buffer rows / whole for tiling the outer parallel loop; (the row count, and
    the cube rows one index of it stands for when it is the M or N loop of a cube op, 0 otherwise: its tiles
    are then fractal-aligned), or None if not tileable.

    The loop is the one each output's first dim larger than 1 follows (dim 0, or the first after leading
    1s: a [1, 256, 512] activation is tiled over its 256 rows), or with ``choice`` = i its (i+1)-th dim
    larger than 1 (the dims before it then stay whole in every tile); every other buffer follows it in one
    dim, whichever (a transpose moves it), or does not depend on it.
    """
    outputs = [b for b in buffers if b.kind == "gm_out"]
    if not outputs or any(b.type.rank == 0 for b in outputs):
        return None
    for b in outputs:
        above_one = [d for d, n in enumerate(b.type.shape) if n > 1]
        if choice >= max(len(above_one), 1):
            return None
        b.axis = above_one[choice] if above_one else 0
    rows = outputs[0].type.shape[outputs[0].axis]
    if any(b.type.shape[b.axis] != rows for b in outputs) or rows <= 1:
        return None

    def find(value: ir.Value) -> KernelBuffer | None:
        exact = next((b for b in buffers if b.value == value and b.slice_of), None)
        root = root_buffer(value)
        return exact or next((b for b in buffers if b.value == root), None)

    for b in outputs:
        b.tiling = "rows"
    fractal = 0
    # consumers first: each op's written buffers were tagged by the ops reading them (the outputs by the caller)
    for op in reversed(ops):
        if op.name in VIEW_OPS:
            continue
        access = loop_access(op)
        if access is None:
            return None
        operands, iterators = access
        if not operands:
            continue
        writes = [(v, d) for v, d, w in operands if w]
        loop = None
        for value, dims in writes:
            buf = find(value)
            if value != root_buffer(value) or buf is None or not dims:
                return None
            # a buffer already tiled names its loop; an untagged one (read by no later op) its first dim above 1
            axis = buf.axis if buf.tiling == "rows" else next((d for d, n in enumerate(buf.type.shape) if n > 1), 0)
            if len(dims[axis]) != 1:
                return None
            (candidate,) = dims[axis]
            if loop is None:
                loop = candidate
            elif loop != candidate:
                return None
        if loop is None or iterators[loop] != "parallel":
            return None
        if is_cube_op(op):  # M (or N): the loop indexes one cube operand; a batch loop indexes both
            inner = _fractal_rows(operands, loop)
            if inner:
                fractal = min(fractal, inner) if fractal else inner
        for value, dims, _ in operands:
            buf = find(value)
            if buf is None:
                return None
            positions = [p for p, d in enumerate(dims) if loop in d]
            if len(positions) == 1 and dims[positions[0]] == frozenset({loop}):
                wanted, axis = "rows", positions[0]
                if value != buf.value:  # through reshapes: the dim of the buffer itself
                    mapped = _root_axis(value, axis)
                    if mapped is None or mapped[0] != buf.value:
                        return None
                    axis = mapped[1]
                if buf.type.shape[axis] != rows:
                    return None
            elif not positions:
                wanted, axis = "whole", 0
            else:
                return None
            if buf.tiling is None:
                buf.tiling, buf.axis = wanted, axis
            elif buf.tiling != wanted or (wanted == "rows" and buf.axis != axis):
                return None
    if any(b.tiling == "rows" and b.has_views and not reshaped_only(b.value) for b in buffers):
        return None
    for b in buffers:
        if b.tiling is None:
            b.tiling = "whole"
    return rows, fractal


def tile_peaks(buffers: list[KernelBuffer], target: NpuTarget, loops: list[TiledLoop], double: bool) -> dict[str, int]:
    """Bytes per on-chip space of one tile of the nest ``loops``; with ``double``, two slots per buffer moved
    tile by tile."""
    peaks = dict.fromkeys(PLACED_SPACES, 0)
    for index, b in enumerate(buffers):
        if not (b.read or b.written):
            continue
        slots = 2 if double and _moves_per_tile(b, index, loops) else 1
        space = target.buffer(b.space)
        peaks[b.space] += slots * sum(space.footprint(size) for size in b.sizes_at(_tiled_dims(loops, index)))
    return peaks


def _nest_traffic(buffers: list[KernelBuffer], loops: list[TiledLoop]) -> int:
    """The GM bytes the nest moves.  A buffer is transferred in the body of the innermost loop it follows, so
    it moves once per iteration of each loop around that transfer it does not follow: a [1, 1, S, S] mask
    inside a loop over heads is loaded once per head."""
    total = 0
    for index, b in enumerate(buffers):
        if not b.transferred or not (b.read or b.written):
            continue
        followed = [level for level, loop in enumerate(loops) if index in loop.dims and loop.count > 1]
        repeats = 1
        if followed and not b.slices:
            repeats = math.prod(loop.count for level, loop in enumerate(loops[:max(followed)])
                                if level not in followed)
        total += repeats * sum(b.sizes_at({}))
    return total


@dataclass(frozen=True)
class LoopChoice:
    """A loop a kernel can be tiled along: an output dim's loop that every buffer follows or does not use."""

    extent: int
    #: a buffer's position in the kernel's buffer list -> its dim that follows the loop
    dims: dict[int, int]
    #: the M or N loop of a cube op: the cube rows one index of it stands for (a tile then covers at least a
    #: fractal of them, or is the whole loop); 0 for any other loop
    fractal: int

    def tile_sizes(self) -> list[int]:
        """The loop's legal tile sizes, largest first."""
        sizes = [d for d in range(1, self.extent + 1) if self.extent % d == 0]
        if self.fractal:
            sizes = [d for d in sizes if d * self.fractal >= FRACTAL or d == self.extent]
        return sorted(sizes, reverse=True)

    def loop(self, tile: int) -> TiledLoop:
        return TiledLoop(self.extent, tile, self.dims)


def loop_choices(buffers: list[KernelBuffer], ops: list[ir.Operation]) -> list[LoopChoice]:
    """The loops the kernel can be tiled along, one per output dim above 1 that every buffer follows or does
    not depend on, outermost first."""
    choices = []
    for choice in range(max((b.type.rank for b in buffers if b.kind == "gm_out"), default=0)):
        for b in buffers:
            b.tiling, b.axis = None, 0
        found = _row_analysis(buffers, ops, choice)
        if found is not None:
            dims = {i: b.axis for i, b in enumerate(buffers) if b.tiling == "rows"}
            choices.append(LoopChoice(found[0], dims, found[1]))
    return choices


def distinct_dims(loop_dims: list[dict[int, int]]) -> bool:
    """Whether no buffer follows two loops of a nest in the same dim."""
    for index in set().union(*loop_dims):
        dims = [d[index] for d in loop_dims if index in d]
        if len(set(dims)) != len(dims):
            return False
    return True


def plan_loops(buffers: list[KernelBuffer], choices: list[LoopChoice], target: NpuTarget,
                double_buffer: bool, depths: Iterable[int]) -> LoopPlan | None:
    """The best tile nest of ``depths`` loops (from ``choices``, :func:`loop_choices`) that fits, or None.

    One loop: the outermost that some tile of fits, its largest such tile (every GM byte moves once).
    Two loops or more: of every order and every combination of tiles that fits, the nest moving the fewest
    GM bytes (:func:`_nest_traffic`), then double-buffered, then of the fewest tiles: the heads x query rows
    of attention scores whose [S, S] mask and [heads, S, D] keys fit along neither loop alone.
    Double buffering where capacity allows, else one slot.
    """
    slot_counts = dict.fromkeys((double_buffer, False))
    for depth in depths:
        if depth == 1:
            for choice in choices:
                for double in slot_counts:
                    for tile in choice.tile_sizes():
                        loops = [choice.loop(tile)]
                        peaks = tile_peaks(buffers, target, loops, double)
                        if space_over_capacity(peaks, target) is None:
                            return LoopPlan(buffers, loops, peaks, double and tile < choice.extent)
            continue
        best: tuple[tuple[int, bool, int], LoopPlan] | None = None
        for order in itertools.permutations(choices, depth):
            if not distinct_dims([choice.dims for choice in order]):
                continue
            # each loop of a nest has more than one tile (else it is a smaller nest, already tried)
            for tiles in itertools.product(*([t for t in c.tile_sizes() if t < c.extent] for c in order)):
                loops = [choice.loop(tile) for choice, tile in zip(order, tiles, strict=True)]
                for double in slot_counts:
                    peaks = tile_peaks(buffers, target, loops, double)
                    if space_over_capacity(peaks, target) is None:
                        key = (_nest_traffic(buffers, loops), not double, math.prod(loop.count for loop in loops))
                        if best is None or key < best[0]:
                            best = (key, LoopPlan(buffers, loops, peaks, double))
                        break
        if best is not None:
            return best[1]
    return None


def over_capacity_message(kernel: ir.Operation, buffers: list[KernelBuffer], loops: list[TiledLoop], target: NpuTarget,
                   double_buffer: bool) -> str:
    """The message for a kernel whose smallest tile (the nest ``loops`` at its smallest tiles) fits nowhere."""
    peaks = tile_peaks(buffers, target, loops, double_buffer)
    space = space_over_capacity(peaks, target)
    if space is None:  # fits with one slot only, yet was refused: report the single-slot need
        peaks, double_buffer = tile_peaks(buffers, target, loops, False), False
        space = space_over_capacity(peaks, target) or \
            max(PLACED_SPACES, key=lambda s: peaks[s] / target.buffer(s).bytes)
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    what = "its smallest tile" if loops else "its only tile (it cannot be tiled)"
    parts = []
    for index, b in enumerate(buffers):
        if b.space == space and (b.read or b.written):
            slots = 2 if double_buffer and _moves_per_tile(b, index, loops) else 1
            parts.append(b.describe(_tiled_dims(loops, index)) + (" x2" if slots == 2 else ""))
    return (f"kernel '{name}' needs {peaks[space]} bytes of {space.upper()} for {what} ({', '.join(parts)}) "
            f"but the target '{target.name}' has {target.buffer(space).bytes}")


def _retile_views(value: ir.Value, axis: int, tile: int, space: str) -> None:
    """The reshapes of ``value`` (now a tile of ``tile`` along ``axis`` in ``space``) reshape the tile: their
    dim that follows ``axis`` becomes ``tile`` (row analysis checked it is whole in its group)."""
    dynamic_offset = "offset: ?" in str(value.type)
    for use in list(value.uses):
        view = as_operation(use.owner)
        if view.name not in RESHAPE_VIEWS or use.operand_number != 0:
            continue
        result = view.results[0]
        result_type = ir.MemRefType(result.type)
        shape = list(result_type.shape)
        groups = reassociation(view)
        if view.name == "memref.expand_shape":
            members = groups[axis]
            new_axis = next((d for d in members if shape[d] != 1), members[0])
        else:
            new_axis = next(g for g, members in enumerate(groups) if axis in members)
        shape[new_axis] = tile
        dims = "".join(f"{d}x" for d in shape)
        layout = f", strided<[{', '.join(map(str, row_major_strides(shape)))}], offset: ?>" if dynamic_offset else ""
        result.set_type(ir.Type.parse(f'memref<{dims}{result_type.element_type}{layout}, #npu.mem<"{space}">>'))
        if view.name == "memref.expand_shape":
            view.attributes["static_output_shape"] = ir.DenseI64ArrayAttr.get(shape)
        _retile_views(result, new_axis, tile, space)


def _relayout_reshapes(value: ir.Value, space: str) -> None:
    """Reshapes of ``value``, now an identity-layout staging buffer in ``space`` instead of a strided slice of
    GM, get identity layouts in ``space`` too (a reshape of a contiguous identity buffer is one)."""
    for use in list(value.uses):
        owner = as_operation(use.owner)
        if owner.name in RESHAPE_VIEWS and use.operand_number == 0:
            result = owner.results[0]
            t = ir.MemRefType(result.type)
            result.set_type(ir.MemRefType.get(list(t.shape), t.element_type, None, mem_space(space)))
            _relayout_reshapes(result, space)


def _tile_type(buf: KernelBuffer, tiled: dict[int, int], slots: int) -> ir.Type:
    shape = buf.tile_shape(tiled)
    if slots == 2:
        shape = [2, *shape]
    return ir.MemRefType.get(shape, buf.type.element_type, None, mem_space(buf.space))


def _retile(value: ir.Value, tiled: dict[int, int], space: str) -> None:
    """The reshapes of ``value``, now a tile in ``space`` (``tiled``: dim -> tile size), reshape the tile."""
    for dim, size in tiled.items():
        _retile_views(value, dim, size, space)


def _build_nest(block: ir.Block, loops: list[TiledLoop], staged_slices: set) -> list[scf.ForOp]:
    """The tile loops, outermost first, with every compute op of ``block`` moved into the innermost one."""
    movable = [as_operation(o) for o in block.operations
               if as_operation(o).name not in ("memref.alloc", "memref.get_global", "arith.constant", "npu.dma",
                                               "func.return") and op_id(o) not in staged_slices]
    with ir.InsertionPoint(movable[0]):
        bounds = [(index_constant(0), index_constant(loop.extent), index_constant(loop.tile)) for loop in loops]
    nest: list[scf.ForOp] = []
    point = movable[0]
    for lower, upper, step in bounds:
        with ir.InsertionPoint(point):
            loop = scf.ForOp(lower, upper, step)
        with ir.InsertionPoint(loop.body):
            point = scf.YieldOp([]).operation  # the next loop (or the compute ops) goes before this terminator
        nest.append(loop)
    for op in movable:
        op.move_before(point)
    # Allocations and constants that followed the first compute op are needed inside: hoist them.
    outer = nest[0].operation
    after_loop = False
    for op in [as_operation(o) for o in block.operations]:
        if op_id(op) == op_id(outer):
            after_loop = True
        elif after_loop and op.name not in ("func.return", "npu.dma") and op_id(op) not in staged_slices:
            op.move_before(outer)
    return nest


def _index_levels(op: ir.Operation, buffers: list[KernelBuffer], loops: list[TiledLoop]) -> dict[int, int]:
    """For an op reading its loop indices: each of its loop dims that a tile loop cuts -> that loop's level
    (found from an operand that follows the loop)."""
    access = loop_access(op)
    levels: dict[int, int] = {}
    if access is None:
        return levels
    for level, loop in enumerate(loops):
        for value, dims, _ in access[0]:
            root = root_buffer(value)
            index = next((i for i, b in enumerate(buffers) if b.value == value and b.slice_of), None)
            if index is None:
                index = next((i for i, b in enumerate(buffers) if b.value == root), None)
            if index is None or index not in loop.dims:
                continue
            for position, op_dims in enumerate(dims):
                mapped = (root, position) if value == root or buffers[index].slice_of else _root_axis(value, position)
                if mapped is not None and mapped[1] == loop.dims[index] and len(op_dims) == 1:
                    levels[next(iter(op_dims))] = level
    return levels


def rewrite_loops(kernel: ir.Operation, plan: LoopPlan) -> int:
    """Apply ``plan``: staging buffers, explicit transfers, the tile nest.  Returns the number of npu.dma ops.

    A buffer that follows loops of the nest moves in the body of the innermost of them: inputs at its start
    (before any inner loop), outputs before its end; a buffer that follows none moves once, before (inputs)
    or after (outputs) the nest."""
    block = kernel.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    used = [(index, b) for index, b in enumerate(plan.buffers) if b.read or b.written]
    # globals and slices read as they are first: their staging is filled at the top (a slice of a constant
    # global after the global it views)
    hoisted: dict[int, ir.Operation] = {}
    for _, b in used:
        if isinstance(b.value.owner, ir.Block):
            continue
        owner = as_operation(b.value.owner)
        if b.slice_of:
            source = owner.operands[0]
            if not isinstance(source.owner, ir.Block):
                hoisted.setdefault(op_id(as_operation(source.owner)), as_operation(source.owner))
            hoisted.setdefault(op_id(owner), owner)
        elif owner.name == "memref.get_global":
            hoisted.setdefault(op_id(owner), owner)
    for op in reversed(list(hoisted.values())):  # each moved to the front: the last first keeps their order
        op.move_before(as_operation(block.operations[0]))
    staged_slices = {op_id(view) for _, b in used for view in b.slices} | {
        op_id(as_operation(b.value.owner)) for _, b in used if b.slice_of}
    first = next(as_operation(o) for o in block.operations
                 if as_operation(o).name != "memref.get_global" and op_id(o) not in staged_slices)
    loops = [loop for loop in plan.loops if loop.count > 1]  # a loop of one tile is no loop

    def levels(index: int) -> list[int]:
        return [level for level, loop in enumerate(loops) if index in loop.dims]

    # ops reading their loop indices, with the tile loops that shift them (found before values are replaced)
    indexed = [(op, _index_levels(op, plan.buffers, loops)) for op in map(as_operation, block.operations)
               if has_indices(op)]

    transfers = 0
    with kernel.location:
        # Local buffers move on chip (tile-shaped along the loops they follow).
        for index, b in used:
            if b.kind == "local":
                tiled = _tiled_dims(plan.loops, index)
                b.value.set_type(_tile_type(b, tiled, 1))
                if tiled:
                    _retile(b.value, tiled, b.space)
                else:
                    retype_views(b.value, b.space)
        # Staging for GM buffers that are not tiled: filled before the nest, drained after it.
        for _, b in used:
            for view in b.slices:  # a GM input read only through static slices: stage just the slices
                view.move_before(first)
                result = view.results[0]
                t = ir.MemRefType(result.type)
                with ir.InsertionPoint(first):
                    buffer = alloc(ir.MemRefType.get(list(t.shape), t.element_type, None, mem_space(b.space)))
                    transfer = ir.Operation.create("npu.dma", operands=[result, buffer])
                result.replace_all_uses_except(buffer, transfer)
                _relayout_reshapes(buffer, b.space)
                transfers += 1
        for index, b in used:
            if b.kind == "local" or levels(index) or b.slices:
                continue
            with ir.InsertionPoint(first):
                buffer = alloc(_tile_type(b, {}, 1))
            b.value.replace_all_uses_with(buffer)
            retype_views(buffer, b.space)
            if b.kind == "gm_in" or b.unknown_access:
                with ir.InsertionPoint(first):
                    dma(b.value, buffer)
                transfers += 1
            if b.kind == "gm_out":
                with ir.InsertionPoint(ret):
                    dma(buffer, b.value)
                transfers += 1
        if not loops:
            return transfers
        nest = _build_nest(block, loops, staged_slices)
        for op, op_levels in indexed:
            shift_indices(op, {d: nest[level].induction_variable for d, level in op_levels.items()})
        heads = [as_operation(loop.body.operations[0]) for loop in nest]  # each body's first op, before any transfer
        tails = [as_operation(loop.body.operations[len(loop.body.operations) - 1]) for loop in nest]  # the yields
        slots = 2 if plan.double else 1
        slot_of: dict[int, ir.Value] = {}
        for index, b in used:
            followed = levels(index)
            if b.kind == "local" or not followed or b.slices:
                continue
            level = max(followed)
            if slots == 2 and level not in slot_of:
                with ir.InsertionPoint(heads[level]):
                    outer = zip(nest[:level + 1], loops[:level + 1], strict=True)
                    slot_of[level] = tile_slot([(loop.induction_variable, tiles.tile, tiles.count)
                                                for loop, tiles in outer])
            tiled = _tiled_dims(plan.loops, index)
            with ir.InsertionPoint(nest[0].operation):
                buffer = alloc(_tile_type(b, tiled, slots))
            with ir.InsertionPoint(heads[level]):
                view = slot_view(buffer, slot_of[level], b.space) if slots == 2 else buffer
            b.value.replace_all_uses_with(view)
            _retile(view, tiled, b.space)
            offsets: list[ir.Value | int] = [0] * b.type.rank
            for loop, iteration in zip(loops, nest, strict=True):
                if index in loop.dims:
                    offsets[loop.dims[index]] = iteration.induction_variable
            window = b.tile_shape(tiled)
            if b.kind == "gm_in":
                with ir.InsertionPoint(heads[level]):
                    dma(window_view(b.value, offsets, window), view)
            else:
                with ir.InsertionPoint(tails[level]):
                    dma(view, window_view(b.value, offsets, window))
            transfers += 1
    return transfers
