"""Kernels whose reduced dim does not fit, cut into blocks of it: one pass over the blocks per reduction.

Attention over 1024 keys (one head's keys and values over L1 at any tile of
the queries), a softmax over a row longer than UB, a sum of everything: the
dim a reduction runs over ("k") is cut into blocks. Each reduction over k
(a row max, a row sum, the product with V, a total) gets a pass over the
blocks of its own, which recomputes the blocked buffers (the scores' block,
``exp(x - max)``...) from the inputs and then accumulates the reduction;
the ops between passes run once per tile of the other dims, on complete
rows. When ops after the last reduction write blocked buffers (a softmax's
normalised output), a final pass recomputes the blocks once more and
stores them.  The reductions accumulate block after block in the same
order as unblocked, so the results are the unblocked ones.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import scf

from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.cube_tiling import fractal_tile_sizes
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    PLACED_SPACES,
    VIEW_OPS,
    Follows,
    KernelBuffer,
    alloc,
    dma,
    element_bytes,
    has_indices,
    index_constant,
    index_shifts,
    is_cube_op,
    loop_access,
    shift_indices,
    single_dims,
    slot_view,
    space_over_capacity,
    tile_slot,
    window_view,
)

__all__ = ["BlockPlan", "BlockedKernel", "blocked_kernels", "plan_blocks", "rewrite_blocks", "split_live_ranges"]

#: The blocked dim's role; the other roles are "p<i>" (the seed buffer's dim i) and "x<n>" (loops found later).
BLOCKED = "k"


@dataclass
class BlockPass:
    """One pass over the blocks of k."""

    #: the reduction over k the pass completes; None for the final pass, which stores the blocked results
    reduction: ir.Operation | None
    #: ops run once per tile before the pass's loop over the blocks (the reduction's start, ops on rows)
    setup: list[ir.Operation]
    #: ops run per block: every op writing a blocked buffer before the reduction, then the reduction
    body: list[ir.Operation]


@dataclass
class BlockedKernel:
    passes: list[BlockPass]
    #: ops after the last pass (on complete rows)
    epilogue: list[ir.Operation]
    #: every used buffer -> the role of each of its dims (None: a broadcast dim)
    follows: list[tuple[KernelBuffer, Follows]]
    #: role -> extent
    sizes: dict[str, int]
    #: the roles of the tile loops, outermost first (the seed buffer's other dims)
    outer: list[str]
    #: roles a tile loop cannot cut: reduced by some op (other than k)
    reduced: set[str] = field(default_factory=set)
    #: roles that are the M, N or K of a cube op: tiles of at least a fractal
    aligned: set[str] = field(default_factory=set)

    def tile_sizes(self, role: str) -> list[int]:
        """The legal tiles of ``role``, largest first."""
        size = self.sizes[role]
        if role != BLOCKED and role in self.reduced:
            return [size]
        sizes = fractal_tile_sizes(size) if role in self.aligned else [d for d in range(1, size + 1) if size % d == 0]
        return sorted(sizes, reverse=True)


def split_live_ranges(kernel: ir.Operation) -> None:
    """A local buffer filled again after being read (a row max's buffer reused for the row sum) gets a new
    allocation from that fill on, so that each value has a buffer of its own."""
    block = kernel.regions[0].blocks[0]
    ops = [as_operation(o) for o in block.operations]
    for allocation in [op for op in ops if op.name == "memref.alloc"]:
        value = allocation.results[0]
        if any(as_operation(use.owner).name in VIEW_OPS for use in value.uses):
            continue
        users = [op for op in ops if any(v == value for v in op.operands)]
        for position, op in enumerate(users):
            if position and op.name == "linalg.fill" and op.operands[len(op.operands) - 1] == value:
                with ir.InsertionPoint(allocation), allocation.location:
                    fresh = alloc(value.type)
                for later in users[position:]:
                    for index, operand in enumerate(later.operands):
                        if operand == value:
                            later.operands[index] = fresh
                break


def blocked_kernels(buffers: list[KernelBuffer], ops: list[ir.Operation]) -> Iterator[BlockedKernel]:
    """The kernel blocked along each dim some op reduces (the reduction's input dim), in program order (the
    plan of least GM traffic among them is the one to use).  Nothing when the kernel has views or an op the
    pass cannot read."""
    skip = ("memref.alloc", "memref.get_global", "arith.constant", "func.return")
    compute = [op for op in ops if op.name not in skip and op.name not in VIEW_OPS]
    used = [b for b in buffers if b.read or b.written]
    if any(b.has_views or b.slices or b.slice_of for b in used):
        return

    def find(value: ir.Value) -> KernelBuffer | None:
        return next((b for b in used if b.value == value), None)

    accesses = {}
    for op in compute:
        access = loop_access(op)
        if access is None or any(find(v) is None for v, _, _ in access[0]):
            return
        accesses[op_id(op)] = access
    seeds = set()
    for op in compute:
        operands, iterators = accesses[op_id(op)]
        for loop in (loop for loop, kind in enumerate(iterators) if kind == "reduction"):
            for value, dims, written in operands:
                single = single_dims(dims)
                if written or single is None or loop not in single:
                    continue
                seed = (id(find(value)), single.index(loop))
                if seed not in seeds:
                    seeds.add(seed)
                    kernel = _blocked_along(find(value), seed[1], compute, accesses, find, used)
                    if kernel is not None:
                        yield kernel


def _same_follows(known: Follows, found: Follows, shape: list[int]) -> bool:
    """Whether two readings of what a buffer's dims follow agree; a dim of size 1 agrees with anything (one
    op indexes it by a loop of one iteration, another by 0)."""
    return all(a == b or (n == 1 and (a is None or b is None)) for a, b, n in zip(known, found, shape, strict=True))


def _blocked_along(seed: KernelBuffer, blocked_dim: int, compute: list[ir.Operation], accesses: dict,
                   find: Callable[[ir.Value], KernelBuffer | None], used: list[KernelBuffer]) -> BlockedKernel | None:
    """The kernel blocked along ``seed``'s dim ``blocked_dim``, or None when that does not work."""
    seed_roles = tuple(BLOCKED if d == blocked_dim else f"p{d}" for d in range(seed.type.rank))
    tags: dict[int, tuple[KernelBuffer, Follows]] = {id(seed): (seed, seed_roles)}
    fresh = itertools.count()
    reductions: list[ir.Operation] = []
    reduced: set[str] = set()
    aligned: set[str] = set()
    pending = list(compute)
    while pending:  # each op's loops get the roles of its tagged operands' dims; then its operands are tagged
        progress = False
        for allow_new in (False, True):  # an op with loops no operand names yet: one at a time
            for op in list(pending):
                operands, iterators = accesses[op_id(op)]
                roles: dict[int, str] = {}
                for value, dims, _ in operands:
                    single = single_dims(dims)
                    known = tags.get(id(find(value)))
                    if known is None or single is None:
                        continue
                    for loop, role in zip(single, known[1], strict=True):
                        if loop is not None and role is not None and roles.setdefault(loop, role) != role:
                            return None
                unnamed = [loop for loop in range(len(iterators)) if loop not in roles]
                # an op whose loops no tagged operand names waits (a scalar's fill has none to wait for)
                tagged = all(id(find(v)) in tags for v, _, _ in operands)
                if unnamed and not tagged and (not roles or not allow_new):
                    continue
                roles |= {loop: f"x{next(fresh)}" for loop in unnamed}
                for value, dims, _ in operands:
                    single = single_dims(dims)
                    if single is None:
                        return None
                    buf = find(value)
                    follows = tuple(None if loop is None else roles[loop] for loop in single)
                    if not _same_follows(tags.setdefault(id(buf), (buf, follows))[1], follows, buf.type.shape):
                        return None
                for loop, kind in enumerate(iterators):
                    if kind == "reduction" and roles[loop] == BLOCKED:
                        reductions.append(op)
                    elif kind == "reduction":
                        reduced.add(roles[loop])
                if is_cube_op(op):  # its M, N and K: the loops not in all three operands
                    for loop, role in roles.items():
                        if sum(1 for _, dims, _ in operands if any(loop in d for d in dims)) < 3:
                            aligned.add(role)
                pending.remove(op)
                progress = True
                if allow_new:
                    break
            if progress:
                break
        if not progress:
            return None
    if {id(b) for b in used} != set(tags) or not reductions:
        return None
    order = {op_id(op): i for i, op in enumerate(compute)}
    reductions.sort(key=lambda op: order[op_id(op)])
    # the blocked buffers: locals and results with the blocked dim, recomputed block by block in every pass
    family = {id(b) for b, follows in tags.values() if BLOCKED in follows and b.kind != "gm_in"}

    def touches_family(op: ir.Operation) -> bool:
        return any(id(find(v)) in family for v, _, _ in accesses[op_id(op)][0])

    def writes_of(op: ir.Operation) -> list[KernelBuffer]:
        return [find(v) for v, _, w in accesses[op_id(op)][0] if w]

    reduction_ids = {op_id(op) for op in reductions}
    writers = []
    for position, op in enumerate(compute):
        if op_id(op) in reduction_ids or not touches_family(op):
            continue
        if any(id(b) not in family for b in writes_of(op)):
            return None
        # recomputed in later passes, it must read what it read the first time
        read = {id(find(v)) for v, _, w in accesses[op_id(op)][0] if not w} - family
        if any(id(b) in read for later in compute[position + 1:] for b in writes_of(later)):
            return None
        writers.append(op)
    passes, previous = [], -1
    for reduction in reductions:
        position = order[op_id(reduction)]
        if any(id(b) in family for b in writes_of(reduction)):
            return None
        setup = [op for op in compute[previous + 1:position]
                 if op_id(op) not in reduction_ids and not touches_family(op)]
        passes.append(BlockPass(reduction, setup, [op for op in writers if order[op_id(op)] < position] + [reduction]))
        previous = position
    rest = compute[previous + 1:]
    epilogue = [op for op in rest if not touches_family(op)]
    if any(touches_family(op) for op in rest):  # blocked results: a final pass stores them
        passes.append(BlockPass(None, epilogue, list(writers)))
        epilogue = []
    elif any(b.kind == "gm_out" and id(b) in family for b, _ in tags.values()):
        return None
    sizes: dict[str, int] = {}
    for buf, follows in tags.values():
        for dim, role in enumerate(follows):
            if role is not None and sizes.setdefault(role, buf.type.shape[dim]) != buf.type.shape[dim]:
                return None
    outer = [role for role in seed_roles if role != BLOCKED]
    return BlockedKernel(passes, epilogue, list(tags.values()), sizes, outer, reduced, aligned)


@dataclass
class BlockPlan:
    kernel: BlockedKernel
    #: role -> tile (the outer roles' and k's; the other roles whole)
    tiles: dict[str, int]
    peaks: dict[str, int]
    double: bool
    #: the GM bytes the plan moves (the cost model's count)
    gm_bytes: int = 0

    @property
    def outer_tiles(self) -> int:
        return math.prod(self.kernel.sizes[r] // self.tiles[r] for r in self.kernel.outer)


def _passes_reading(kernel: BlockedKernel, buf: KernelBuffer) -> int:
    """How many passes load ``buf`` block by block."""
    return sum(1 for p in kernel.passes if any(v == buf.value for op in p.body for v in op.operands))


def _cost(kernel: BlockedKernel, tiles: dict[str, int], target: NpuTarget, double_buffer: bool
          ) -> tuple[dict[str, int], int]:
    """(bytes per on-chip space, GM bytes) of ``tiles``: a GM input read block by block moves once per pass
    that reads it and per tile of the outer loops it does not follow."""
    sizes = kernel.sizes
    counts = {r: sizes[r] // tiles[r] for r in tiles}
    peaks = dict.fromkeys(PLACED_SPACES, 0)
    gm = 0
    for buf, follows in kernel.follows:
        shape = [tiles.get(r, sizes[r]) if r else n for r, n in zip(follows, buf.type.shape, strict=True)]
        size = math.prod(shape) * element_bytes(buf.type.element_type)
        per_block = BLOCKED in follows and buf.kind == "gm_in"
        slots = 2 if double_buffer and per_block and counts[BLOCKED] > 1 else 1
        peaks[buf.space] += slots * target.buffer(buf.space).footprint(size)
        if buf.transferred:
            whole = math.prod(buf.type.shape) * element_bytes(buf.type.element_type)
            repeats = math.prod(counts[r] for r in kernel.outer if r not in follows) if any(follows) else 1
            gm += whole * repeats * (max(_passes_reading(kernel, buf), 1) if per_block else 1)
    return peaks, gm


def plan_blocks(kernel: BlockedKernel, target: NpuTarget, double_buffer: bool) -> BlockPlan | str:
    """The tiles of least GM traffic that fit (the last two outer roles and k searched, the outer roles
    before them one index a tile); ties: larger blocks, then larger tiles.  Else why none fits."""
    searched = kernel.outer[-2:]
    best: tuple | None = None
    for choice in itertools.product(*(kernel.tile_sizes(r) for r in [*searched, BLOCKED])):
        tiles = dict.fromkeys(kernel.outer, 1) | dict(zip([*searched, BLOCKED], choice, strict=True))
        peaks, gm = _cost(kernel, tiles, target, double_buffer)
        if space_over_capacity(peaks, target) is not None:
            continue
        key = (gm, -tiles[BLOCKED], -math.prod(tiles[r] for r in searched))
        if best is None or key < best[0]:
            double = double_buffer and kernel.sizes[BLOCKED] > tiles[BLOCKED]
            best = (key, BlockPlan(kernel, tiles, peaks, double, gm))
    if best is None:
        smallest = dict.fromkeys(kernel.outer, 1) | {r: min(kernel.tile_sizes(r)) for r in [*searched, BLOCKED]}
        peaks, _ = _cost(kernel, smallest, target, double_buffer)
        need = ", ".join(f"{s.upper()} {b}" for s, b in peaks.items() if b)
        return f"no tiling of the blocks fits: the smallest tiles need {need} bytes"
    return best[1]


def rewrite_blocks(kernel: ir.Operation, plan: BlockPlan) -> int:
    """Apply a block plan: loops over the outer tiles; in each, per pass, its setup ops, then a loop over the
    blocks loading the inputs the pass reads, recomputing the blocked buffers and accumulating the
    reduction (the final pass stores the blocked results); then the epilogue and the stores.  Returns the
    number of npu.dma ops."""
    kb, tiles = plan.kernel, plan.tiles
    sizes = kb.sizes
    block = kernel.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    for op in [as_operation(o) for o in block.operations]:  # globals first: the loops read them
        if op.name == "memref.get_global":
            op.move_before(as_operation(block.operations[0]))
    originals = [op for p in kb.passes for op in (*p.setup, *p.body)] + kb.epilogue
    originals = list({op_id(op): op for op in originals}.values())
    counts = {r: sizes[r] // tiles[r] for r in tiles}
    transfers = 0

    def tile_shape(buf: KernelBuffer, follows: Follows) -> list[int]:
        return [tiles.get(r, sizes[r]) if r else n for r, n in zip(follows, buf.type.shape, strict=True)]

    with kernel.location:
        with ir.InsertionPoint(ret):
            zero = index_constant(0)
        ivs: dict[str, ir.Value] = {}
        staged: dict[int, ir.Value] = {}  # each GM buffer's on-chip tile (both slots when it has two)
        slots = 2 if plan.double else 1
        for buf, follows in kb.follows:
            shape = tile_shape(buf, follows)
            space = mem_space(buf.space)
            if buf.kind == "local":  # on chip, tile-shaped
                buf.value.set_type(ir.MemRefType.get(shape, buf.type.element_type, None, space))
                continue
            two = BLOCKED in follows and buf.kind == "gm_in" and slots == 2
            with ir.InsertionPoint(ret):
                staged[id(buf)] = alloc(ir.MemRefType.get([2, *shape] if two else shape, buf.type.element_type,
                                                          None, space))
        for buf, follows in kb.follows:  # follows no loop: moved once, before everything
            if buf.kind == "gm_in" and not any(follows):
                with ir.InsertionPoint(ret):
                    dma(buf.value, staged[id(buf)])
                transfers += 1
        tile_end = ret  # the outer loops (of more than one tile)
        for role in kb.outer:
            if counts[role] == 1:
                continue
            with ir.InsertionPoint(tile_end):
                loop = scf.ForOp(zero, index_constant(sizes[role]), index_constant(tiles[role]))
            with ir.InsertionPoint(loop.body):
                tile_end = scf.YieldOp([]).operation
            ivs[role] = loop.induction_variable

        def gm_tile(buf: KernelBuffer, follows: Follows) -> ir.Value:
            """The GM window of ``buf`` at the current loop indices."""
            return window_view(buf.value, [ivs.get(r, 0) if r else 0 for r in follows], tile_shape(buf, follows))

        for buf, follows in kb.follows:  # inputs that follow only outer loops: once per tile
            if buf.kind == "gm_in" and any(follows) and BLOCKED not in follows:
                with ir.InsertionPoint(tile_end):
                    dma(gm_tile(buf, follows), staged[id(buf)])
                transfers += 1
        point = tile_end

        def clone(op: ir.Operation, views: dict[int, ir.Value]) -> None:
            shifts = index_shifts(op, kb.follows, ivs) if has_indices(op) else {}
            copy = op.clone(ip=ir.InsertionPoint(point))
            shift_indices(copy, shifts)
            for index, operand in enumerate(copy.operands):
                for buf, _ in kb.follows:
                    if buf.kind != "local" and operand == buf.value:
                        copy.operands[index] = views.get(id(buf), staged[id(buf)])

        for block_pass in kb.passes:
            point = tile_end
            for op in block_pass.setup:
                clone(op, {})
            with ir.InsertionPoint(tile_end):
                blocks = scf.ForOp(zero, index_constant(sizes[BLOCKED]), index_constant(tiles[BLOCKED]))
            with ir.InsertionPoint(blocks.body):
                point = scf.YieldOp([]).operation
            ivs[BLOCKED] = blocks.induction_variable
            views: dict[int, ir.Value] = {}
            with ir.InsertionPoint(point):
                slot = None
                if slots == 2:
                    slot = tile_slot([(ivs[BLOCKED], tiles[BLOCKED], counts[BLOCKED])])
            for buf, follows in kb.follows:  # this pass's blocked inputs, block by block
                if buf.kind != "gm_in" or BLOCKED not in follows or \
                        not any(v == buf.value for op in block_pass.body for v in op.operands):
                    continue
                with ir.InsertionPoint(point):
                    view = slot_view(staged[id(buf)], slot, buf.space) if slot is not None else staged[id(buf)]
                    dma(gm_tile(buf, follows), view)
                views[id(buf)] = view
                transfers += 1
            for op in block_pass.body:
                clone(op, views)
            if block_pass.reduction is None:  # the final pass: the blocked results, block by block
                for buf, follows in kb.follows:
                    if buf.kind == "gm_out" and BLOCKED in follows:
                        with ir.InsertionPoint(point):
                            dma(staged[id(buf)], gm_tile(buf, follows))
                        transfers += 1
            del ivs[BLOCKED]
        point = tile_end
        for op in kb.epilogue:
            clone(op, {})
        for buf, follows in kb.follows:  # the other results: per tile, or once at the end
            if buf.kind == "gm_out" and BLOCKED not in follows:
                with ir.InsertionPoint(tile_end if any(follows) else ret):
                    dma(staged[id(buf)], gm_tile(buf, follows) if any(follows) else buf.value)
                transfers += 1
        for op in reversed(originals):
            op.erase()
    return transfers
