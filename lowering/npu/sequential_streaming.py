"""A sequential loop's slices streamed through UB: the kernel rewritten to a :class:`StreamPlan` of
:mod:`graphfuse.lowering.npu.sequential_loops` (UB buffers per streamed access, each slice staged in
and out of GM around the loop body, double-buffered where the plan says so).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf

from graphfuse.dialect.matching import as_operation, nested_ops, op_id
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    alloc,
    dma,
    has_indices,
    index_constant,
    retype_views,
    shift_indices,
    slot_view,
    tile_slot,
    window_view,
)
from graphfuse.lowering.npu.sequential_loops import (
    _SETUP,
    SequentialLoop,
    StreamPlan,
    _Access,
    _ancestor_in,
    _chunk_window,
    _group_window,
    _is_value,
    _last_in_block,
    _local_shape,
    _reduce_rank,
    _Streamed,
    _subview_window,
    _window,
)

__all__ = ["rewrite_stream"]


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
            if key not in free:
                continue  # (its type takes the UB space below)
            offsets, sizes = _subview_window(view)
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
                    window = _chunk_window(s, free, key, tile, plan.chunk)
                    shape = [2, *window] if plan.double else window
                    staging[op_id(s.accesses[0].op)] = alloc(ir.MemRefType.get(shape, element, None, mem_space("ub")))
                    continue
                for group in s.groups:  # one buffer per group; each access stages in its corner of it
                    shape = _group_window(s, group, free, key, tile)
                    shared = alloc(ir.MemRefType.get(shape, element, None, mem_space("ub")))
                    for k in group:
                        window = _window(s.accesses[k], free, key, tile)
                        staging[op_id(s.accesses[k].op)] = shared if window == shape else \
                            window_view(shared, [0] * len(window), window)
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
            carried = list(loop.operands)[3:]  # values the loop carries: from chunk to chunk too
            with ir.InsertionPoint(loop):
                chunks = scf.ForOp(index_constant(0), index_constant(found.trips), index_constant(plan.chunk), carried)
            for result, outer in zip(loop.results, chunks.results, strict=True):
                result.replace_all_uses_with(outer)
            with ir.InsertionPoint(chunks.body):
                end = scf.YieldOp(list(loop.results)).operation
            loop.move_before(end)
            for k, value in enumerate(chunks.inner_iter_args):
                loop.operands[3 + k] = value
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
                    a.offsets = [index if _is_value(o, iv) else o for o in a.offsets]
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
        if access.loaded:
            dma(window, buffer)
            transfers += 1
    if op.name != "memref.subview":
        with ir.InsertionPoint(op):
            zeros = [index_constant(0) for _ in sizes]
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
    last = _last_in_block([_ancestor_in(as_operation(u.owner), op.block) for u in op.results[0].uses])
    shape = list(ir.MemRefType(op.results[0].type).shape)
    if len(shape) != len(sizes):  # a rank-reducing view: the buffer seen without the dropped unit dims
        with ir.InsertionPoint(op):
            buffer = window_view(buffer, [0] * len(sizes), sizes)
        _reduce_rank(buffer, shape)
    op.results[0].replace_all_uses_with(buffer)
    if access.writes:
        with ir.InsertionPoint.after(last):
            dma(buffer, window)
        transfers += 1
    op.erase()
    return transfers


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
        for d in s.whole:
            offsets[d], sizes[d] = 0, s.type.shape[d]
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
        for d in s.whole:  # the dims spanned whole: the access's own offset (the original loop index for its own)
            inner[d] = index if _is_value(a.offsets[d], iv) else a.offsets[d]
        with ir.InsertionPoint(op):
            if op.name == "memref.subview":
                view_sizes = [tile if d == free_dim else n for d, n in enumerate(a.sizes)]
                view = window_view(staged, inner, view_sizes)
                _reduce_rank(view, list(ir.MemRefType(op.results[0].type).shape))
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
