"""Attention in blocks of keys, when one head's keys and values do not fit at any tile of the queries.

Each reduction over the keys (a softmax's row max, its row sum, the product
with V) gets a pass over the key blocks of its own, recomputing the scores'
block and the ops on it; the ops between passes run once per tile, on
complete rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.cube_tiling import (
    fractal_tile_sizes,
)
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    PLACED_SPACES,
    VIEW_OPS,
    Follows,
    KernelBuffer,
    alloc,
    dma,
    element_bytes,
    index_constant,
    is_cube_op,
    loop_access,
    single_dims,
    slot_view,
    space_over_capacity,
    window_view,
)

__all__ = [
    "KeyBlockKernel", "KeyBlockPlan", "key_block_analysis", "plan_key_blocks", "rewrite_key_blocks",
    "split_live_ranges",
]


@dataclass
class _KeyPass:
    """One pass over the key blocks of an attention tile."""

    #: the reduction over the keys the pass completes (a row max, a row sum, the product with V)
    reduction: ir.Operation
    #: ops run once per tile before the pass's key loop: the reduction's start value, ops on finished rows
    setup: list[ir.Operation]
    #: ops run per key block: the scores' block and every op on it before the reduction, then the reduction
    body: list[ir.Operation]


@dataclass
class KeyBlockKernel:
    """Attention whose scores ``S[..., q, k]`` do not fit: recomputed block by block of keys in one pass per
    reduction over the keys (a softmax's max and sum, then the product with V), each pass reading complete
    rows of the earlier ones."""

    scores: KernelBuffer
    passes: list[_KeyPass]
    #: ops after the last reduction (on the result rows)
    epilogue: list[ir.Operation]
    #: every used buffer -> the role of each dim: "b0".. (batch), "q", "k", "d" (the scores' reduction), "e"
    #: (V's columns), None (a broadcast or whole dim)
    follows: list[tuple[KernelBuffer, Follows]]
    #: role -> extent
    sizes: dict[str, int]

    @property
    def batch(self) -> list[str]:
        return [r for r in self.sizes if r.startswith("b")]


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


def key_block_analysis(buffers: list[KernelBuffer], ops: list[ir.Operation]) -> KeyBlockKernel | None:
    """The kernel as key-blocked attention, or None when it is not: two cube ops, the first writing the
    scores S (a local), the last reducing S's key dim; between them only elementwise ops on S, reductions of
    S over its keys, and ops on other buffers; no views."""
    skip = ("memref.alloc", "memref.get_global", "arith.constant", "func.return")
    compute = [op for op in ops if op.name not in skip and op.name not in VIEW_OPS]
    cubes = [op for op in compute if is_cube_op(op)]
    used = [b for b in buffers if b.read or b.written]
    if len(cubes) != 2 or any(b.has_views or b.slices or b.slice_of for b in used):
        return None

    def find(value: ir.Value) -> KernelBuffer | None:
        return next((b for b in used if b.value == value), None)

    accesses = {}
    for op in compute:
        access = loop_access(op)
        if access is None or any(find(v) is None for v, _, _ in access[0]):
            return None
        accesses[op_id(op)] = access
    first, last = cubes
    writes = [(v, d) for v, d, w in accesses[op_id(first)][0] if w]
    if len(writes) != 1 or find(writes[0][0]).kind != "local":
        return None
    scores = find(writes[0][0])
    rank = scores.type.rank
    if rank < 2:
        return None
    roles_of_scores = tuple([f"b{i}" for i in range(rank - 2)] + ["q", "k"])
    tags: dict[int, tuple[KernelBuffer, Follows]] = {id(scores): (scores, roles_of_scores)}
    reductions = []
    # roles of every op's loops, from the operands already tagged, until nothing changes
    pending = list(compute)
    while pending:
        progress = False
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
            if not roles:
                continue
            free = [loop for loop in range(len(iterators)) if loop not in roles]
            if op_id(op) == op_id(first) and len(free) == 1 and iterators[free[0]] == "reduction":
                roles[free[0]] = "d"
            elif op_id(op) == op_id(last) and len(free) == 1 and iterators[free[0]] == "parallel":
                roles[free[0]] = "e"
            elif free:
                continue
            for value, dims, _ in operands:
                single = single_dims(dims)
                if single is None:
                    return None
                buf = find(value)
                follows = tuple(None if loop is None else roles[loop] for loop in single)
                if tags.setdefault(id(buf), (buf, follows))[1] != follows:
                    return None
            if any(kind == "reduction" and roles[loop] == "k" for loop, kind in enumerate(iterators)):
                reductions.append(op)
            pending.remove(op)
            progress = True
        if not progress:
            return None
    if {id(b) for b in used} != set(tags) or not reductions or op_id(reductions[-1]) != op_id(last):
        return None
    order = {op_id(op): i for i, op in enumerate(compute)}
    reductions.sort(key=lambda op: order[op_id(op)])

    # the scores and the locals derived from them elementwise (scaled, masked): recomputed per key block
    family = {id(b) for b, follows in tags.values() if b.kind == "local" and follows == roles_of_scores}

    def touches_scores(op: ir.Operation) -> bool:
        return any(id(find(v)) in family for v, _, _ in accesses[op_id(op)][0])

    def writes_of(op: ir.Operation) -> list[KernelBuffer]:
        return [find(v) for v, _, w in accesses[op_id(op)][0] if w]

    reduction_ids = {op_id(op) for op in reductions}
    writers = []  # the ops recomputed per key block: they write S (a fill, the first cube op, elementwise)
    for position, op in enumerate(compute):
        if op_id(op) in reduction_ids or not touches_scores(op):
            continue
        _, iterators = accesses[op_id(op)]
        if any(id(b) not in family for b in writes_of(op)) or \
                ("reduction" in iterators and op_id(op) != op_id(first)):
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
                 if op_id(op) not in reduction_ids and not touches_scores(op)]
        body = [op for op in writers if order[op_id(op)] < position] + [reduction]
        passes.append(_KeyPass(reduction, setup, body))
        previous = position
    epilogue = compute[previous + 1:]
    if any(touches_scores(op) for op in epilogue):
        return None
    sizes: dict[str, int] = {}
    for buf, follows in tags.values():
        for dim, role in enumerate(follows):
            if role is not None and sizes.setdefault(role, buf.type.shape[dim]) != buf.type.shape[dim]:
                return None
    return KeyBlockKernel(scores, passes, epilogue, list(tags.values()), sizes)


@dataclass
class KeyBlockPlan:
    kernel: KeyBlockKernel
    #: role -> tile size ("b0".. 1 but the innermost batch role's, "q", "k"; "d" and "e" whole)
    tiles: dict[str, int]
    peaks: dict[str, int]
    double: bool

    @property
    def outer_tiles(self) -> int:
        return math.prod(self.kernel.sizes[r] // self.tiles[r] for r in [*self.kernel.batch, "q"])


def _key_block_reads(kernel: KeyBlockKernel, buf: KernelBuffer) -> int:
    """How many passes load ``buf`` per key block (0: it is loaded once per tile)."""
    return sum(1 for p in kernel.passes if any(v == buf.value for op in p.body for v in op.operands))


def plan_key_blocks(kernel: KeyBlockKernel, target: NpuTarget, double_buffer: bool) -> KeyBlockPlan | str:
    """The tiles of least GM traffic that fit: a GM input read per key block moves once per pass that reads
    it, per tile of the outer loops it does not follow; ties: more keys per block, then larger tiles."""
    sizes = kernel.sizes
    batch = kernel.batch
    heads = batch[-1] if batch else None
    best: tuple | None = None
    smallest = None
    for th in ([d for d in range(1, sizes[heads] + 1) if sizes[heads] % d == 0] if heads else [1]):
        for tq in fractal_tile_sizes(sizes["q"]):
            for tk in fractal_tile_sizes(sizes["k"]):
                tiles = {r: 1 for r in batch} | {"q": tq, "k": tk}
                if heads:
                    tiles[heads] = th
                counts = {r: sizes[r] // tiles[r] for r in tiles}
                peaks = dict.fromkeys(PLACED_SPACES, 0)
                gm = 0
                for buf, follows in kernel.follows:
                    shape = [tiles.get(r, sizes.get(r, 0)) if r else n for r, n in zip(follows, buf.type.shape,
                                                                                          strict=True)]
                    size = math.prod(shape) * element_bytes(buf.type.element_type)
                    per_block = "k" in follows and buf.transferred
                    slots = 2 if double_buffer and per_block and counts["k"] > 1 else 1
                    peaks[buf.space] += slots * target.buffer(buf.space).footprint(size)
                    if buf.transferred:
                        whole = math.prod(buf.type.shape) * element_bytes(buf.type.element_type)
                        repeats = math.prod(counts[r] for r in [*batch, "q"] if r not in follows)
                        passes = _key_block_reads(kernel, buf) if per_block else 1
                        gm += whole * repeats * max(passes, 1) if follows != (None,) * len(follows) else whole
                if smallest is None or peaks["l1"] < smallest["l1"]:
                    smallest = peaks
                if space_over_capacity(peaks, target) is not None:
                    continue
                key = (gm, -tk, -th * tq)
                if best is None or key < best[0]:
                    best = (key, KeyBlockPlan(kernel, tiles, peaks, double_buffer and counts["k"] > 1))
    if best is None:
        need = ", ".join(f"{s.upper()} {b}" for s, b in (smallest or {}).items() if b)
        return f"no tiling of the key blocks fits: the smallest tiles need {need} bytes"
    return best[1]


def rewrite_key_blocks(kernel: ir.Operation, plan: KeyBlockPlan) -> int:
    """Apply a key-block plan: loops over the batch and query tiles; in each, one loop over the key blocks per
    pass, recomputing the scores' block and the ops on it, then the pass's reduction; the ops between passes
    once per tile.  Returns the number of npu.dma ops."""
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
        ivs: dict[str, ir.Value] = {r: zero for r in tiles}
        # staging: locals become tiles; GM buffers get tile buffers
        staged: dict[int, ir.Value] = {}
        per_block: list[tuple[KernelBuffer, Follows]] = []
        slots = 2 if plan.double else 1
        for buf, follows in kb.follows:
            shape = tile_shape(buf, follows)
            space = mem_space(buf.space)
            if buf.kind == "local":
                buf.value.set_type(ir.MemRefType.get(shape, buf.type.element_type, None, space))
                continue
            moves_per_block = "k" in follows and buf.kind == "gm_in"
            with ir.InsertionPoint(ret):
                staged[id(buf)] = alloc(ir.MemRefType.get([2, *shape] if moves_per_block and slots == 2 else shape,
                                                           buf.type.element_type, None, space))
            if moves_per_block:
                per_block.append((buf, follows))
        whole = [(buf, f) for buf, f in kb.follows if buf.kind != "local" and not any(f)]
        for buf, _ in whole:  # follows no loop: moved once, before (in) or after (out) everything
            if buf.kind == "gm_in":
                with ir.InsertionPoint(ret):
                    dma(buf.value, staged[id(buf)])
                transfers += 1
        # the outer loops: batch and query tiles of more than one
        tile_end = ret
        for role in [*kb.batch, "q"]:
            if counts[role] == 1:
                continue
            with ir.InsertionPoint(tile_end):
                loop = scf.ForOp(zero, index_constant(sizes[role]), index_constant(tiles[role]))
            with ir.InsertionPoint(loop.body):
                tile_end = scf.YieldOp([]).operation
            ivs[role] = loop.induction_variable

        def view_of(buf: KernelBuffer, follows: Follows) -> ir.Value:
            """The GM tile of ``buf`` at the current loop indices."""
            return window_view(buf.value, [ivs[r] if r in ivs else 0 for r in follows], tile_shape(buf, follows))

        for buf, follows in kb.follows:  # inputs that follow only the outer loops: once per tile
            if buf.kind == "gm_in" and any(follows) and "k" not in follows:
                with ir.InsertionPoint(tile_end):
                    dma(view_of(buf, follows), staged[id(buf)])
                transfers += 1
        replacements = {id(buf): staged[id(buf)] for buf, f in kb.follows if id(buf) in staged
                        and (buf, f) not in per_block}

        def clone(op: ir.Operation, extra: dict[int, ir.Value]) -> None:
            copy = op.clone(ip=ir.InsertionPoint(point))
            for index, operand in enumerate(copy.operands):
                for buf, _ in kb.follows:
                    if operand == buf.value and buf.kind != "local":
                        copy.operands[index] = extra.get(id(buf), replacements.get(id(buf), operand))

        for key_pass in kb.passes:
            point = tile_end
            for op in key_pass.setup:
                clone(op, {})
            with ir.InsertionPoint(tile_end):
                key_loop = scf.ForOp(zero, index_constant(sizes["k"]), index_constant(tiles["k"]))
            with ir.InsertionPoint(key_loop.body):
                point = scf.YieldOp([]).operation
            ivs["k"] = key_loop.induction_variable
            extra: dict[int, ir.Value] = {}
            with ir.InsertionPoint(point):
                slot = None
                if slots == 2:
                    slot = arith.remui(arith.divui(ivs["k"], index_constant(tiles["k"])), index_constant(2))
            for buf, follows in per_block:
                if not any(v == buf.value for op in key_pass.body for v in op.operands):
                    continue
                with ir.InsertionPoint(point):
                    view = slot_view(staged[id(buf)], slot, buf.space) if slot is not None else staged[id(buf)]
                    dma(view_of(buf, follows), view)
                extra[id(buf)] = view
                transfers += 1
            for op in key_pass.body:
                clone(op, extra)
            ivs["k"] = zero
        point = tile_end
        for op in kb.epilogue:
            clone(op, {})
        for buf, follows in kb.follows:  # results: per tile, or once at the end
            if buf.kind == "gm_out":
                with ir.InsertionPoint(tile_end if any(follows) else ret):
                    dma(staged[id(buf)], view_of(buf, follows) if any(follows) else buf.value)
                transfers += 1
        for op in reversed(originals):
            op.erase()
    return transfers
