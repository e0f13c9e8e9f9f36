"""Grouped convolutions over capacity: each filter tile is an ordinary convolution of its group's channels.

``graph-to-linalg`` lowers a convolution of G groups to ``linalg.conv_2d_ngchw_gfchw`` on reshaped views
(x as ``[N, G, C/G, H, W]``, the weights as ``[G, F/G, C/G, KH, KW]``, the result computed as ``[N, G,
F/G, OH, OW]`` and copied out through a reshape), optionally zero-padded into a local buffer and started
from a bias.  A tile of filters inside one group (the filter tile divides F/G) reads only that group's
channels, so each tile is computed as a plain ``linalg.conv_2d_nchw_fchw`` of a window of those channels
and a tile of the ``[F, C/G, KH, KW]`` weights into an L0C accumulator, with the loops and transfers of a
convolution kernel (:func:`graphfuse.lowering.npu.cube_tiling.choose_conv_tiles`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg

from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.lowering.npu.cube_kernels import ConvPlan, conv_loops
from graphfuse.lowering.npu.cube_tiling import ConvShape
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    VIEW_OPS,
    KernelBuffer,
    alloc,
    collapse_view,
    dma,
    fill_constant,
    index_constant,
    reassociation,
    slot_view,
    tile_slot,
    window_view,
)

__all__ = ["GroupedConvKernel", "GroupedConvPlan", "grouped_conv_analysis", "rewrite_grouped_conv"]

GROUPED = "linalg.conv_2d_ngchw_gfchw"


@dataclass
class GroupedConvKernel:
    conv: ir.Operation
    shape: ConvShape
    x: KernelBuffer
    w: KernelBuffer
    #: the bias the accumulator starts from (None: zero)
    bias: KernelBuffer | None
    out: KernelBuffer
    #: what the padding holds
    pad_value: float
    #: every op of the kernel but the allocations and constants: replaced by the tiles' ops
    ops: list[ir.Operation]


def _reshape_of(value: ir.Value, name: str, groups: list[list[int]]) -> ir.Operation | None:
    """The single use of ``value``, when it is a ``name`` reshape with these reassociation groups."""
    uses = [as_operation(use.owner) for use in value.uses]
    if len(uses) != 1 or uses[0].name != name:
        return None
    return uses[0] if reassociation(uses[0]) == groups else None


def grouped_conv_analysis(buffers: list[KernelBuffer], ops: list[ir.Operation]) -> GroupedConvKernel | None:
    """The kernel as a grouped convolution in the form graph-to-linalg makes, or None."""
    body = [op for op in ops if op.name not in ("memref.alloc", "memref.get_global", "arith.constant", "func.return")]
    convs = [op for op in body if op.name == GROUPED]
    if len(convs) != 1 or len(convs[0].operands) != 3:
        return None
    conv = convs[0]

    def argument(value: ir.Value) -> KernelBuffer | None:
        """The GM buffer (an argument, or a constant's global) ``value`` is."""
        return next((b for b in buffers if b.kind != "local" and b.value == value), None)

    padded, weights5, acc5 = conv.operands
    w_view = as_operation(weights5.owner) if not isinstance(weights5.owner, ir.Block) else None
    if w_view is not None and w_view.name == "memref.get_global":  # constant weights, already [G, F/G, ...]
        w, w_view = argument(weights5), None
    elif w_view is not None and w_view.name == "memref.expand_shape":
        w = argument(w_view.operands[0])
        if w is not None and _reshape_of(w.value, "memref.expand_shape", [[0, 1], [2], [3], [4]]) is None:
            return None
    else:
        return None
    if w is None:
        return None
    # the input: x reshaped, zero- (or constant-) padded into a local, or read as it is
    pad_value, pad_top, pad_left = 0.0, 0, 0
    pad_ops: list[ir.Operation] = []
    if not isinstance(padded.owner, ir.Block) and as_operation(padded.owner).name == "memref.alloc":
        users = [as_operation(use.owner) for use in padded.uses]
        fills = [op for op in users if op.name in ("linalg.map", "linalg.fill")]
        views = [op for op in users if op.name == "memref.subview"]
        if len(fills) != 1 or len(views) != 1 or len(users) != 3 or fill_constant(fills[0]) is None:
            return None
        pad_value = fill_constant(fills[0])
        pad_ops = [fills[0], views[0]]
        offsets = list(ir.DenseI64ArrayAttr(views[0].attributes["static_offsets"]))
        copies = [as_operation(use.owner) for use in views[0].results[0].uses]
        if len(copies) != 1 or copies[0].name != "memref.copy" or offsets[:3] != [0, 0, 0]:
            return None
        x_view = copies[0].operands[0]
        pad_ops.append(copies[0])
        pad_top, pad_left = offsets[3], offsets[4]
    else:
        x_view = padded
    if isinstance(x_view.owner, ir.Block) or as_operation(x_view.owner).name != "memref.expand_shape":
        return None
    x = argument(as_operation(x_view.owner).operands[0])
    if x is None or _reshape_of(x.value, "memref.expand_shape", [[0], [1, 2], [3], [4]]) is None:
        return None
    # the accumulator: started by a fill or a bias, copied to the result through a reshape
    uses = [as_operation(use.owner) for use in acc5.uses]
    starts = [op for op in uses if op_id(op) != op_id(conv) and op.name not in VIEW_OPS]
    collapses = [op for op in uses if op.name == "memref.collapse_shape"]
    if len(starts) != 1 or len(collapses) != 1 or len(uses) != 3:
        return None
    collapse = collapses[0]
    if reassociation(collapse) != [[0], [1, 2], [3], [4]]:
        return None
    stores = [as_operation(use.owner) for use in collapse.results[0].uses]
    if len(stores) != 1 or stores[0].name != "memref.copy" or argument(stores[0].operands[1]) is None:
        return None
    out = argument(stores[0].operands[1])
    bias = None
    start = starts[0]
    if start.name == "linalg.fill":
        if fill_constant(start) != 0.0:
            return None
    elif start.name == "linalg.generic" and len(start.operands) == 2:
        bias_view = start.operands[0]
        maps = [str(a) for a in ir.ArrayAttr(start.attributes["indexing_maps"])]
        body_ops = [as_operation(o) for o in start.regions[0].blocks[0].operations]
        source = None if isinstance(bias_view.owner, ir.Block) else as_operation(bias_view.owner)
        if source is None or source.name not in ("memref.expand_shape", "memref.get_global") \
                or "-> (d1, d2)>" not in maps[0] or len(body_ops) != 1 \
                or not body_ops[0].operands[0] == start.regions[0].blocks[0].arguments[0]:
            return None
        # the bias as [F] (an argument) or, a constant, already [G, F/G]
        bias = argument(source.operands[0] if source.name == "memref.expand_shape" else bias_view)
        if bias is None:
            return None
    else:
        return None
    # nothing else in the kernel: the rewrite replaces all of it
    known = [conv, as_operation(x_view.owner), *pad_ops, start, collapse, stores[0]]
    known += [w_view] if w_view is not None else []
    if bias is not None and as_operation(start.operands[0].owner).name == "memref.expand_shape":
        known.append(as_operation(start.operands[0].owner))
    if {op_id(op) for op in body} != {op_id(op) for op in known}:
        return None
    n, c, h, width = x.type.shape
    _, groups, fg, oh, ow = ir.MemRefType(acc5.type).shape
    f, cg, kh, kw = groups * fg, *ir.MemRefType(weights5.type).shape[2:]
    strides = tuple(ir.DenseIntElementsAttr(conv.attributes["strides"])[i] for i in range(2))
    dilations = tuple(ir.DenseIntElementsAttr(conv.attributes["dilations"])[i] for i in range(2))
    padded_w = ir.MemRefType(padded.type).shape[4]
    if groups * cg != c or groups * fg != f or list(out.type.shape) != [n, f, oh, ow]:
        return None
    shape = ConvShape(n, cg, h, width, f, kh, kw, oh, ow, strides, dilations, pad_top, pad_left, padded_w,
                      groups=groups)
    return GroupedConvKernel(conv, shape, x, w, bias, out, pad_value, body)


@dataclass
class GroupedConvPlan(ConvPlan):
    """A convolution plan whose kernel is grouped (``counts``' channels are a group's)."""

    kernel: GroupedConvKernel


def rewrite_grouped_conv(kernel: ir.Operation, plan: GroupedConvPlan) -> int:
    """Replace the kernel's ops by the tile loops: per (batch, filter, row) tile an L0C accumulator started
    from zero or the bias tile, then per step of the group's channels the window of those channels (padded
    on chip) and the weight tile into L1 and a plain convolution; then the tile to the result.  Returns the
    number of npu.dma ops."""
    gk, t, s = plan.kernel, plan.tiles, plan.kernel.shape
    counts = plan.counts
    per_group = s.f // s.groups
    rows = s.window_rows(t.toh)
    block = kernel.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    element = gk.x.type.element_type
    transfers = 0
    with kernel.location:
        with ir.InsertionPoint(ret):
            zero = index_constant(0)
            bounds = {loop: (index_constant(extent), index_constant(step)) for loop, extent, step in
                      (("n", s.n, t.tn), ("f", s.f, t.tf), ("o", s.oh, t.toh), ("c", s.c, t.tc))}
            slots = 2 if plan.double and any(count > 1 for count in counts.values()) else 1
            window_shape, weight_shape = [t.tn, t.tc, rows, s.padded_w], [t.tf, t.tc, s.kh, s.kw]
            buffers = [alloc(ir.MemRefType.get([2, *shape] if slots == 2 else shape, element, None, mem_space("l1")))
                       for shape in (window_shape, weight_shape)]
            acc = alloc(ir.MemRefType.get([t.tn, t.tf, t.toh, s.ow], element, None, mem_space("l0c")))
            bias = alloc(ir.MemRefType.get([t.tf], element, None, mem_space("ub"))) if gk.bias else None
            # constants come grouped ([G, F/G, C/G, KH, KW], [G, F/G]): read them as [F, ...]
            weight_gm = gk.w.value if gk.w.type.rank == 4 else collapse_view(gk.w.value, [[0, 1], [2], [3], [4]])
            bias_gm = None
            if gk.bias is not None:
                bias_gm = gk.bias.value if gk.bias.type.rank == 1 else collapse_view(gk.bias.value, [[0, 1]])
        ivs, loops, tile_end, channel_end = conv_loops(ret, bounds, counts, zero)
        channel_loop = next((loop.operation for name, loop in loops if name == "c"), None)
        start_point = channel_loop or channel_end
        with ir.InsertionPoint(start_point):  # the accumulator's start, per tile
            if bias is not None:
                dma(window_view(bias_gm, [ivs["f"]], [t.tf]), bias)
                transfers += 1
                maps = [ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(1)]), ir.AffineMap.get_identity(4)]
                start = linalg.GenericOp([], [bias], [acc], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                         ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * 4))
                body = start.regions[0].blocks.append(element, element)
                with ir.InsertionPoint(body):  # each filter's accumulator starts at its bias
                    linalg.YieldOp([body.arguments[0]])
            else:
                linalg.fill(arith.ConstantOp(element, 0.0).result, outs=[acc])
        with ir.InsertionPoint(channel_end):
            steps = {"n": t.tn, "f": t.tf, "o": t.toh, "c": t.tc}
            slot = tile_slot([(loop.induction_variable, steps[name], counts[name]) for name, loop in loops]) \
                if slots == 2 else None
            window, weights = (slot_view(b, slot, "l1") if slot is not None else b for b in buffers)
            # the group's channels: those of the filter tile's group, then the step's
            channel = arith.addi(arith.muli(arith.divui(ivs["f"], index_constant(per_group)), index_constant(s.c)),
                                 ivs["c"])
            start = arith.subi(arith.muli(ivs["o"], index_constant(s.strides[0])), index_constant(s.pad_top))
            linalg.fill(arith.ConstantOp(element, gk.pad_value).result, outs=[window])
            low = arith.maxsi(start, zero)
            high = arith.minsi(arith.addi(start, index_constant(rows)), index_constant(s.h))
            count = arith.subi(high, low)
            dma(window_view(gk.x.value, [ivs["n"], channel, low, 0], [t.tn, t.tc, count, s.w]),
                window_view(window, [0, 0, arith.subi(low, start), s.pad_left], [t.tn, t.tc, count, s.w]))
            dma(window_view(weight_gm, [ivs["f"], ivs["c"], 0, 0], weight_shape), weights)
            linalg.conv_2d_nchw_fchw(window, weights, outs=[acc], strides=list(s.strides),
                                     dilations=list(s.dilations))
        transfers += 2
        with ir.InsertionPoint(tile_end):
            dma(acc, window_view(gk.out.value, [ivs["n"], ivs["f"], ivs["o"], 0], [t.tn, t.tf, t.toh, s.ow]))
        transfers += 1
        # the kernel's own ops (and the reshapes and buffers only they used) go
        for op in reversed(gk.ops):
            op.erase()
        for op in reversed([as_operation(o) for o in block.operations]):
            if op.name in ("memref.alloc", *VIEW_OPS) and all(False for _ in op.results[0].uses):
                op.erase()
    return transfers
