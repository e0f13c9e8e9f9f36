"""Matmul and convolution kernels tiled over the cube's loops.

The analyses recognise a kernel as one cube op with elementwise ops before
(its accumulator's start) and after it (the epilogue); the tile sizes come
from :mod:`graphfuse.lowering.npu.cube_tiling`; the rewrites build the tile
loops, the operand tiles in L1, the accumulator tile in L0C and the
epilogue's tiles in UB.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, linalg, scf

from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.lowering.npu.cube_tiling import (
    ConvShape,
    ConvTiles,
    CubeTiles,
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
    fill_constant,
    index_constant,
    index_shifts,
    is_cube_op,
    loop_access,
    root_buffer,
    shift_indices,
    single_dims,
    slot_view,
    tile_slot,
    window_view,
)

__all__ = [
    "CONVOLUTIONS", "CONV_ROLES", "POOLINGS", "ConvKernel", "ConvPlan", "CubeKernel", "CubePlan", "conv_analysis",
    "conv_loops", "cube_analysis", "rewrite_conv", "rewrite_cube",
]


@dataclass
class CubeKernel:
    """A kernel ``C[M, N] = A x B`` (one cube op), C filled before it and read by elementwise ops after it."""

    cube: ir.Operation
    fill: ir.Operation | None
    epilogue: list[ir.Operation]
    a: KernelBuffer
    b: KernelBuffer
    c: KernelBuffer
    m: int
    n: int
    k: int
    #: every used buffer (by position in the kernel's buffer list) -> what each of its dims follows
    follows: list[tuple[KernelBuffer, Follows]]
    #: a batch matmul's batch dims ("b0", "b1"...) -> their sizes (one index of each per tile)
    batch: dict[str, int] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int, int, int]:
        """(batch, M, N, K, element bytes): what the report's traffic lower bound is computed from."""
        return math.prod(self.batch.values()), self.m, self.n, self.k, element_bytes(self.a.type.element_type)

    def epilogue_buffers(self) -> list[tuple[str, int, bool]]:
        """The UB buffers for choose_tiles: (the loops they follow, element bytes, transferred)."""
        out = []
        for buf, follows in self.follows:
            if buf is self.a or buf is self.b or buf is self.c:
                continue
            out.append(("".join(f for f in follows if f in ("m", "n")), element_bytes(buf.type.element_type),
                        buf.transferred))
        return out


def cube_analysis(buffers: list[KernelBuffer], ops: list[ir.Operation]) -> CubeKernel | None:
    """The kernel as a cube kernel, or None when it is not one (then only row tiling applies)."""
    skip = ("memref.alloc", "memref.get_global", "arith.constant", "func.return")
    compute = [op for op in ops if op.name not in skip and op.name not in VIEW_OPS]
    cubes = [op for op in compute if is_cube_op(op)]
    if len(cubes) != 1 or any(b.has_views for b in buffers if b.read or b.written):
        return None
    cube = cubes[0]
    access = loop_access(cube)
    if access is None:
        return None
    operands, iterators = access
    if len(iterators) < 3 or iterators.count("reduction") != 1:
        return None
    writes = [(v, single_dims(d)) for v, d, w in operands if w]
    reads = [(v, single_dims(d)) for v, d, w in operands if not w]
    if len(writes) != 1 or len(reads) != 2 or any(d is None or None in d for _, d in writes + reads):
        return None
    (k_loop,) = [d for d, kind in enumerate(iterators) if kind == "reduction"]
    c_value, c_dims = writes[0]
    batch = len(iterators) - 3  # a batch matmul's leading loops, one index of each per tile
    if len(c_dims) != batch + 2:
        return None
    roles = {loop: f"b{i}" for i, loop in enumerate(c_dims[:batch])} | {c_dims[-2]: "m", c_dims[-1]: "n", k_loop: "k"}

    def find(value: ir.Value) -> KernelBuffer | None:
        return next((b for b in buffers if b.value == value), None)

    tags: dict[int, tuple[KernelBuffer, Follows]] = {}

    def tag(value: ir.Value, follows: Follows) -> bool:
        buf = find(value)  # tiled operands are whole root buffers, never views
        if buf is None:
            return False
        seen = tags.setdefault(id(buf), (buf, follows))[1]
        return seen == follows

    c_follows = tuple(roles[d] for d in c_dims)
    a_value, a_dims = reads[0]
    b_value, b_dims = reads[1]
    a_follows = tuple(roles[d] for d in a_dims)
    b_follows = tuple(roles[d] for d in b_dims)
    if sorted(f for f in a_follows if f in "mnk") != ["k", "m"] or \
            sorted(f for f in b_follows if f in "mnk") != ["k", "n"]:
        return None
    if not (tag(c_value, c_follows) and tag(a_value, a_follows) and tag(b_value, b_follows)):
        return None
    a, b, c = find(a_value), find(b_value), find(c_value)
    if a.kind == "local" or b.kind == "local" or a.written or b.written:
        return None
    m, n = c.type.shape[-2:]
    k = a.type.shape[a_follows.index("k")]
    batch_sizes = {f"b{i}": size for i, size in enumerate(c.type.shape[:batch])}
    position = next(i for i, op in enumerate(compute) if op_id(op) == op_id(cube))
    fill = None
    for op in compute[:position]:  # before the cube: at most the fill of its accumulator
        if op.name != "linalg.fill" or fill is not None or find(op.operands[-1]) is not c:
            return None
        fill = op
    epilogue = compute[position + 1:]
    for op in epilogue:  # after it: elementwise over [M, N]
        if _elementwise_over(op, c, c_follows, find, tag) is None:
            return None
    follows = list(tags.values())
    sizes = {"m": m, "n": n, "k": k, **batch_sizes}
    for buf, dims in follows:
        if any(f is not None and buf.type.shape[i] != sizes[f] for i, f in enumerate(dims)):
            return None
    return CubeKernel(cube, fill, epilogue, a, b, c, m, n, k, follows, batch_sizes)


def _elementwise_over(op: ir.Operation, result: KernelBuffer, roles: Follows,
                      find: Callable[[ir.Value], KernelBuffer | None],
                      tag: Callable[[ir.Value, Follows], bool]) -> KernelBuffer | None:
    """When ``op`` is elementwise over ``result``'s shape (no reduction, its first output of that shape,
    indexed by single loops), tag each operand with the roles its dims follow (``roles``: those of
    ``result``'s dims) and return the buffer it writes; else None."""
    access = loop_access(op)
    if access is None:
        return None
    operands, iterators = access
    out = [(v, single_dims(d)) for v, d, is_write in operands if is_write]
    if not out or len(iterators) != result.type.rank or "reduction" in iterators:
        return None
    first, written = out[0][1], find(out[0][0])
    if first is None or None in first or written is None or written.type.shape != result.type.shape:
        return None
    loop_roles = dict(zip(first, roles, strict=True))
    for value, dims, _ in operands:
        single = single_dims(dims)
        if single is None or not tag(value, tuple(None if d is None else loop_roles[d] for d in single)):
            return None
    return written


@dataclass
class CubePlan:
    kernel: CubeKernel
    tiles: CubeTiles
    double: bool

    @property
    def peaks(self) -> dict[str, int]:
        return {space: self.tiles.peaks.get(space, 0) for space in PLACED_SPACES}

    @property
    def tile_counts(self) -> tuple[int, int, int]:
        """(M tiles times the batch, N tiles, K steps)."""
        t = self.tiles
        return (math.prod(self.kernel.batch.values()) * self.kernel.m // t.tm, self.kernel.n // t.tn,
                self.kernel.k // t.tk)


def rewrite_cube(kernel: ir.Operation, plan: CubePlan) -> int:
    """Apply a cube plan: loops over M and N tiles, the fill and the epilogue per tile, the cube op in a loop
    over K tiles; operand tiles moved GM -> L1 inside it, epilogue operands GM -> UB per tile, results back
    to GM per tile.  Returns the number of npu.dma ops."""
    ck, t = plan.kernel, plan.tiles
    sizes = {"m": t.tm, "n": t.tn, "k": t.tk, **dict.fromkeys(ck.batch, 1)}
    block = kernel.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    for op in [as_operation(o) for o in block.operations]:  # globals first: the tile loops read them
        if op.name == "memref.get_global":
            op.move_before(as_operation(block.operations[0]))
    first = ck.fill if ck.fill is not None else ck.cube
    k_steps = plan.tile_counts[2]
    transfers = 0
    with kernel.location:
        with ir.InsertionPoint(first):  # the loop bounds first, outside the loops
            zero, one = index_constant(0), index_constant(1)
            bounds = [(index_constant(size), index_constant(step))
                      for size, step in ((ck.m, t.tm), (ck.n, t.tn), (ck.k, t.tk))]
            batch_bounds = [index_constant(size) for size in ck.batch.values()]
        outer, batch_loops = first, []
        for upper in batch_bounds:  # a batch matmul's batch loops, outermost, one index per iteration
            with ir.InsertionPoint(outer):
                loop = scf.ForOp(zero, upper, one)
            with ir.InsertionPoint(loop.body):
                outer = scf.YieldOp([]).operation  # the next loop goes before this terminator
            batch_loops.append(loop)
        with ir.InsertionPoint(outer):
            m_loop = scf.ForOp(zero, *bounds[0])
        with ir.InsertionPoint(m_loop.body):
            n_loop = scf.ForOp(zero, *bounds[1])
            scf.YieldOp([])
        with ir.InsertionPoint(n_loop.body):
            k_loop = scf.ForOp(zero, *bounds[2])
            n_yield = scf.YieldOp([])
        with ir.InsertionPoint(k_loop.body):
            k_yield = scf.YieldOp([])
        if ck.fill is not None:
            ck.fill.move_before(k_loop.operation)
        ck.cube.move_before(k_yield.operation)
        for op in ck.epilogue:
            op.move_before(n_yield.operation)
        ivs = {"m": m_loop.induction_variable, "n": n_loop.induction_variable, "k": k_loop.induction_variable,
               **{tag: loop.induction_variable for tag, loop in zip(ck.batch, batch_loops, strict=True)}}
        for op in ck.epilogue:  # per M x N tile: indices read in the epilogue start at the tile
            shift_indices(op, index_shifts(op, ck.follows, {r: ivs[r] for r in ("m", "n", *ck.batch)}))
        outermost = batch_loops[0] if batch_loops else m_loop
        with ir.InsertionPoint(as_operation(k_loop.body.operations[0])):
            slot = None
            if plan.double and k_steps > 1:
                slot = tile_slot([(ivs["k"], t.tk, k_steps)])
        for buf, follows in ck.follows:
            shape = [sizes[f] if f else d for f, d in zip(follows, buf.type.shape, strict=True)]
            offsets = [ivs[f] if f else 0 for f in follows]
            space = buf.space
            tiled = any(follows)
            if buf.kind == "local":
                buf.value.set_type(ir.MemRefType.get(shape, buf.type.element_type, None, mem_space(space)))
                continue
            operand = buf is ck.a or buf is ck.b
            slots = 2 if operand and slot is not None else 1
            alloc_shape = [2, *shape] if slots == 2 else shape
            with ir.InsertionPoint(outermost.operation):
                buffer = alloc(ir.MemRefType.get(alloc_shape, buf.type.element_type, None, mem_space(space)))
            if not tiled:  # kept whole: loaded once before the loops, stored once after them
                buf.value.replace_all_uses_with(buffer)
                if buf.kind == "gm_in":
                    with ir.InsertionPoint(outermost.operation):
                        dma(buf.value, buffer)
                else:
                    with ir.InsertionPoint(ret):
                        dma(buffer, buf.value)
                transfers += 1
                continue
            # operand tiles are loaded right before the cube op, the epilogue's before the fill (or the K loop)
            head = ck.cube if operand else ck.fill if ck.fill is not None else k_loop.operation
            with ir.InsertionPoint(head):
                view = slot_view(buffer, slot, space) if slots == 2 else buffer
            buf.value.replace_all_uses_with(view)
            if buf.kind == "gm_in":
                with ir.InsertionPoint(head):
                    dma(window_view(buf.value, offsets, shape), view)
            else:
                with ir.InsertionPoint(n_yield):
                    dma(view, window_view(buf.value, offsets, shape))
            transfers += 1
    return transfers


#: What each dim of a convolution's result follows: the batch, filter and output-row loops; columns stay whole.
CONV_ROLES = ("n", "f", "o", "w")
#: Poolings: windows over each channel like a depthwise convolution's, without weights.
POOLINGS = frozenset({"linalg.pooling_nchw_max", "linalg.pooling_nchw_sum"})
#: The ops a convolution kernel may hold: a convolution on the cube, or a depthwise one or a pooling on the
#: vector unit.
CONVOLUTIONS = frozenset({"linalg.conv_2d_nchw_fchw", "linalg.depthwise_conv_2d_nchw_chw"}) | POOLINGS


@dataclass
class ConvKernel:
    """A kernel holding one ``linalg.conv_2d_nchw_fchw``: its input zero-padded into a local buffer (or read
    as it is), its accumulator initialised by elementwise ops before it (a fill, a bias) and read by
    elementwise ops after it (an activation, a residual)."""

    conv: ir.Operation
    shape: ConvShape
    #: the GM input the convolution reads, unpadded
    x: KernelBuffer
    #: the buffer the convolution reads: the padded local, or ``x`` itself
    window: KernelBuffer
    #: the zero fill, the copy of ``x`` into the padded local and its subview: replaced by padding each window
    pad_ops: list[ir.Operation]
    w: KernelBuffer
    acc: KernelBuffer
    init: list[ir.Operation]
    epilogue: list[ir.Operation]
    #: the accumulator and every buffer of ``init`` and ``epilogue`` -> what each of its dims follows
    follows: list[tuple[KernelBuffer, Follows]]
    #: what the padding holds (0, or -inf around a max pool's windows)
    pad_value: float = 0.0

    def epilogue_buffers(self) -> list[tuple[str, int, bool]]:
        """The UB buffers for choose_conv_tiles: (the loops they follow, element bytes, transferred)."""
        return [("".join(f for f in follows if f), element_bytes(buf.type.element_type), buf.transferred)
                for buf, follows in self.follows if buf is not self.acc]


def _static_offsets(view: ir.Operation) -> list[int] | None:
    """A memref.subview's offsets when they are static and its strides are 1, else None."""
    if view.name != "memref.subview" or len(view.operands) != 1:
        return None
    if any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])):
        return None
    return list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))


def conv_analysis(buffers: list[KernelBuffer], ops: list[ir.Operation]) -> ConvKernel | None:
    """The kernel as a convolution kernel, or None when it is not one."""
    skip = ("memref.alloc", "memref.get_global", "arith.constant", "func.return")
    compute = [op for op in ops if op.name not in skip and op.name not in VIEW_OPS]
    convs = [op for op in compute if op.name in CONVOLUTIONS or is_cube_op(op)]
    if len(convs) != 1 or convs[0].name not in CONVOLUTIONS or len(convs[0].operands) != 3:
        return None
    conv = convs[0]
    pooling = conv.name in POOLINGS  # its second operand only gives the window's shape
    depthwise = conv.name == "linalg.depthwise_conv_2d_nchw_chw" or pooling

    def find(value: ir.Value) -> KernelBuffer | None:
        return next((b for b in buffers if b.value == value), None)

    window, w, acc = (find(v) for v in conv.operands)
    weights = conv.operands[1]
    if pooling:
        if w is None or w.kind != "local" or w.written:
            return None
    elif depthwise and w is None:  # [C, 1, KH, KW] weights read as [C, KH, KW] through a collapse_shape
        view = None if isinstance(weights.owner, ir.Block) else as_operation(weights.owner)
        w = find(view.operands[0]) if view is not None and view.name == "memref.collapse_shape" else None
        if w is None or sum(1 for _ in w.value.uses) != 1:
            return None
    elif w is None or w.has_views:
        return None
    if window is None or acc is None or (w.kind != "gm_in" and not pooling) or w.written:
        return None
    position = next(i for i, op in enumerate(compute) if op_id(op) == op_id(conv))
    before = compute[:position]
    pad_ops: list[ir.Operation] = []
    pad_top = pad_left = 0
    pad_value = 0.0
    x = window
    if window.kind == "local":  # the padded input: zero-filled, then x copied into its interior
        writers = [op for op in before if any(root_buffer(v) == window.value for v in op.operands)]
        # the first writer fills the padded buffer whole with a constant
        pad_value = fill_constant(writers[0]) if len(writers) == 2 and writers[0].operands[-1] == window.value else None
        if pad_value is None or writers[1].name != "memref.copy" or (pad_value != 0.0 and not pooling):
            return None
        copy = writers[1]
        source, interior = copy.operands
        x = find(source)
        view = None if isinstance(interior.owner, ir.Block) else as_operation(interior.owner)
        offsets = None if view is None else _static_offsets(view)
        if x is None or x.kind != "gm_in" or x.has_views or offsets is None or not view.operands[0] == window.value:
            return None
        if offsets[:2] != [0, 0] or list(ir.MemRefType(interior.type).shape) != list(x.type.shape):
            return None
        pad_top, pad_left = offsets[2], offsets[3]
        pad_ops = [copy, view, writers[0]]
        before = [op for op in before if op_id(op) not in {op_id(o) for o in writers}]
    elif window.kind != "gm_in" or window.has_views or window.written:
        return None
    tags: dict[int, tuple[KernelBuffer, Follows]] = {id(acc): (acc, CONV_ROLES)}

    def tag(value: ir.Value, follows: Follows) -> bool:
        buf = find(value)
        if buf is None or buf in (x, window, w):
            return False
        return tags.setdefault(id(buf), (buf, follows))[1] == follows

    initial = {op_id(op) for op in before}
    for op in [*before, *compute[position + 1:]]:  # elementwise over the result's [N, F, OH, OW]
        written = _elementwise_over(op, acc, CONV_ROLES, find, tag)
        if written is None or (op_id(op) in initial and written is not acc):  # before: the accumulator's start
            return None
    follows = list(tags.values())
    used = {id(b) for b in buffers if b.read or b.written}
    if used - {id(x), id(window), id(w)} - set(tags):
        return None
    n, c, h, width = x.type.shape
    if pooling:
        (kh, kw), f, c_w = w.type.shape, c, c
    else:
        f, c_w, kh, kw = w.type.shape
    if depthwise:
        c_w = c  # one channel per filter
    _, _, padded_h, padded_w = window.type.shape
    n_out, f_out, oh, ow = acc.type.shape
    strides = tuple(ir.DenseIntElementsAttr(conv.attributes["strides"])[i] for i in range(2))
    dilations = tuple(ir.DenseIntElementsAttr(conv.attributes["dilations"])[i] for i in range(2))
    shape = ConvShape(n, c, h, width, f, kh, kw, oh, ow, strides, dilations, pad_top, pad_left, padded_w,
                      depthwise, not pooling)
    if (c_w, n_out, f_out) != (c, n, f) or shape.window_rows(oh) > padded_h:
        return None
    sizes = {"n": n, "f": f, "o": oh, "w": ow}
    for buf, dims in follows:
        if any(role is not None and buf.type.shape[i] != sizes[role] for i, role in enumerate(dims)):
            return None
    return ConvKernel(conv, shape, x, window, pad_ops, w, acc, before, compute[position + 1:], follows, pad_value)


@dataclass
class ConvPlan:
    kernel: ConvKernel
    tiles: ConvTiles
    double: bool

    @property
    def peaks(self) -> dict[str, int]:
        return {space: self.tiles.peaks.get(space, 0) for space in PLACED_SPACES}

    @property
    def counts(self) -> dict[str, int]:
        """Tiles per loop: batch, filters, output rows, input channels."""
        s, t = self.kernel.shape, self.tiles
        return {"n": s.n // t.tn, "f": s.f // t.tf, "o": s.oh // t.toh, "c": s.c // t.tc}


ConvLoops = tuple[dict[str, ir.Value], list[tuple[str, scf.ForOp]], ir.Operation, ir.Operation]


def conv_loops(point: ir.Operation, bounds: dict[str, tuple[ir.Value, ir.Value]], counts: dict[str, int],
               zero: ir.Value) -> ConvLoops:
    """The loops over batch, filter and output-row tiles and, inside, over channel steps, built before
    ``point``; a loop of one tile is no loop (its index is 0).  Returns the indices, the loops, the
    terminator of the tile's body (the epilogue and the store go before it) and that of the channel step's
    (the convolution goes before it)."""
    ivs: dict[str, ir.Value] = {}
    loops: list[tuple[str, scf.ForOp]] = []
    tile_end = channel_end = point
    for name in ("n", "f", "o", "c"):
        if counts[name] == 1:
            ivs[name] = zero
            continue
        with ir.InsertionPoint(channel_end):
            loop = scf.ForOp(zero, *bounds[name])
        with ir.InsertionPoint(loop.body):
            channel_end = scf.YieldOp([]).operation
        if name != "c":
            tile_end = channel_end
        ivs[name] = loop.induction_variable
        loops.append((name, loop))
    return ivs, loops, tile_end, channel_end


def rewrite_conv(kernel: ir.Operation, plan: ConvPlan) -> int:
    """Apply a convolution plan: loops over batch, filter and output-row tiles, the accumulator tile in L0C;
    the init ops, then a loop over input-channel tiles moving the (zero-padded) input window and the weight
    tile GM -> L1 before the convolution, then the epilogue and the store.  Returns the number of npu.dma ops."""
    ck, t, s = plan.kernel, plan.tiles, plan.kernel.shape
    sizes = {"n": t.tn, "f": t.tf, "o": t.toh, "w": s.ow}
    counts = plan.counts
    rows = s.window_rows(t.toh)
    block = kernel.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    for op in [as_operation(o) for o in block.operations]:  # globals first: the tile loops read them
        if op.name == "memref.get_global":
            op.move_before(as_operation(block.operations[0]))
    for op in ck.pad_ops:  # each window is padded on chip instead
        op.erase()
    first = ck.init[0] if ck.init else ck.conv
    transfers = 0
    element = ck.window.type.element_type
    with kernel.location:
        with ir.InsertionPoint(first):  # the loop bounds first, outside the loops
            zero = index_constant(0)
            bounds = {loop: (index_constant(extent), index_constant(step)) for loop, extent, step in
                      (("n", s.n, t.tn), ("f", s.f, t.tf), ("o", s.oh, t.toh), ("c", s.c, t.tc))}
        ivs, loops, tile_end, channel_end = conv_loops(ret, bounds, counts, zero)
        ck.conv.move_before(channel_end)
        channel_loop = next((loop.operation for name, loop in loops if name == "c"), None)
        for op in ck.init:
            op.move_before(channel_loop or ck.conv)
        for op in ck.epilogue:
            op.move_before(tile_end)
        for op in [*ck.init, *ck.epilogue]:  # per tile: indices read in them start at the tile
            shift_indices(op, index_shifts(op, ck.follows, {r: v for r, v in ivs.items() if r != "c"}))
        # the allocations go before the tile loops (or before the init ops, when only the channel loop exists)
        outer = [loop.operation for name, loop in loops if name != "c"]
        outermost = outer[0] if outer else ck.init[0] if ck.init else channel_loop or ck.conv
        slots = 2 if plan.double and loops else 1
        with ir.InsertionPoint(ck.conv):
            steps = {"n": t.tn, "f": t.tf, "o": t.toh, "c": t.tc}
            slot = tile_slot([(loop.induction_variable, steps[name], counts[name]) for name, loop in loops]) \
                if slots == 2 else None
        # the input window and the weight tile: in L1 for the cube; a depthwise one's in UB, its window holding
        # the filter tile's own channels and its weights read [C, KH, KW] through the kernel's view
        space = "ub" if s.depthwise else "l1"
        channels = t.tf if s.depthwise else t.tc
        channel = ivs["f"] if s.depthwise else ivs["c"]
        window_shape = [t.tn, channels, rows, s.padded_w]
        weight_shape = [t.tf, s.kh, s.kw] if s.depthwise else [t.tf, t.tc, s.kh, s.kw]
        weight_source = ck.conv.operands[1] if s.depthwise else ck.w.value
        staged = []
        for shape in (window_shape, weight_shape) if s.gm_weights else (window_shape,):
            with ir.InsertionPoint(outermost):
                buffer = alloc(ir.MemRefType.get([2, *shape] if slots == 2 else shape, element, None,
                                                  mem_space(space)))
            with ir.InsertionPoint(ck.conv):
                staged.append(slot_view(buffer, slot, space) if slots == 2 else buffer)
        window = staged[0]
        if not s.gm_weights:  # a pooling's window-shape buffer: on chip as it is, never transferred
            ck.w.value.set_type(ir.MemRefType.get(list(ck.w.type.shape), element, None, mem_space(space)))
        padded = ck.window is not ck.x
        with ir.InsertionPoint(ck.conv):
            start = arith.subi(arith.muli(ivs["o"], index_constant(s.strides[0])), index_constant(s.pad_top))
            if padded:
                linalg.fill(arith.ConstantOp(element, ck.pad_value).result, outs=[window])
                # the rows of x the window holds (none above row 0 or below row H - 1): zero padding around them
                low = arith.maxsi(start, zero)
                high = arith.minsi(arith.addi(start, index_constant(rows)), index_constant(s.h))
                count = arith.subi(high, low)
                source = window_view(ck.x.value, [ivs["n"], channel, low, 0], [t.tn, channels, count, s.w])
                dest = window_view(window, [0, 0, arith.subi(low, start), s.pad_left], [t.tn, channels, count, s.w])
                dma(source, dest)
            else:
                dma(window_view(ck.x.value, [ivs["n"], channel, start, 0], [t.tn, channels, rows, s.w]), window)
            if s.gm_weights:
                weight_offsets = [ivs["f"], 0, 0] if s.depthwise else [ivs["f"], ivs["c"], 0, 0]
                dma(window_view(weight_source, weight_offsets, weight_shape), staged[1])
                ck.conv.operands[1] = staged[1]
        transfers += 1 + int(s.gm_weights)
        ck.conv.operands[0] = window
        if ck.window is not ck.x:  # the padded input, no longer used
            as_operation(ck.window.value.owner).erase()
        # the accumulator and the init / epilogue buffers, per (n, f, o) tile
        tile_head = ck.init[0] if ck.init else channel_loop or ck.conv
        for buf, follows in ck.follows:
            shape = [sizes[f] if f else d for f, d in zip(follows, buf.type.shape, strict=True)]
            tile_type = ir.MemRefType.get(shape, buf.type.element_type, None, mem_space(buf.space))
            if buf.kind == "local":
                buf.value.set_type(tile_type)
                continue
            with ir.InsertionPoint(outermost):
                buffer = alloc(tile_type)
            buf.value.replace_all_uses_with(buffer)
            if not any(follows):  # a scalar or broadcast operand: loaded once before the loops
                with ir.InsertionPoint(outermost if buf.kind == "gm_in" else ret):
                    dma(buf.value, buffer) if buf.kind == "gm_in" else dma(buffer, buf.value)
                transfers += 1
                continue
            offsets = [ivs[f] if f in ivs else 0 for f in follows]
            if buf.kind == "gm_in":
                with ir.InsertionPoint(tile_head):
                    dma(window_view(buf.value, offsets, shape), buffer)
            else:
                with ir.InsertionPoint(tile_end):
                    dma(buffer, window_view(buf.value, offsets, shape))
            transfers += 1
    return transfers
