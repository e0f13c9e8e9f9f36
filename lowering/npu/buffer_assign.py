"""npu-buffer-assign: place each kernel's buffers in UB / L1 / L0C, tile it to capacity, make GM transfers explicit.

Runs on bufferized IR in which every kernel is a ``graph.kernel`` function in
destination-passing style (its results are trailing ``memref`` arguments).
Everything a kernel reads from its arguments (or from a constant global) and
writes to its result arguments lives in GM; everything else it touches lives
on chip:

- placement: a buffer read by a cube op (matmul, batch matmul, convolution)
  lives in L1; a buffer written by a cube op (the accumulator) in L0C; every
  other buffer in UB.  GM arguments get an on-chip staging buffer, filled by
  ``npu.dma`` GM -> UB/L1 before use and drained by ``npu.dma`` UB/L0C -> GM.
  A GM input read only through static slices (the pieces of a no-task split),
  reshaped or not, is staged slice by slice.  A GM argument touched by an op
  the pass does not understand is both loaded and stored.
- tiling (:func:`plan_kernel` tries them in this order; the first that fits is used):

  - one loop (:mod:`~graphfuse.lowering.npu.loop_tiling`): the kernel's outer
    parallel loop (its results' first dim above 1, "rows"; when no tile of it
    fits, the next dim's loop), when every buffer either follows it in one of
    its dims or does not depend on it; the largest tile that fits, each
    buffer rounded up to its space's alignment, the transferred ones in two
    slots with ``double-buffer``.  Buffers that do not depend on the rows
    (weights, gamma) are loaded once before the loop;
  - the kernel whole, when it has no loop to tile;
  - a copy kernel (reshape, split, slice, concat) staged in chunks
    (:mod:`~graphfuse.lowering.npu.copy_tiling`);
  - a matmul kernel tiled over M, N and K, a convolution (depthwise, pooling)
    kernel over batch, filters, output rows and channels
    (:mod:`~graphfuse.lowering.npu.cube_kernels`, grouped ones
    :mod:`~graphfuse.lowering.npu.grouped_convolution`;
    :mod:`~graphfuse.lowering.npu.cube_tiling` chooses the tiles);
  - a nest of two loops or more, the nest of least GM traffic (a buffer that
    does not follow an outer loop is reloaded per outer tile): attention's
    heads x query rows;
  - blocks of a reduced dim, one pass per reduction
    (:mod:`~graphfuse.lowering.npu.reduction_blocks`): attention over many
    keys, a softmax over a row longer than UB, a total;
  - a kernel's sequential loop (a cumsum, a scatter) streaming its slices
    through UB (:mod:`~graphfuse.lowering.npu.sequential_loops`).

  When none fits, the kernel's buffers are simplified and the plans tried
  again; when still none fits a kernel holding a loop, it is split at the
  loop into kernels launched in turn, each planned on its own
  (:mod:`~graphfuse.lowering.npu.kernel_split`).
- over capacity: when none fits, the pass fails with a located error stating
  the sizes of the smallest tile, and of the other tilings' smallest tiles.

Each kernel is annotated with its tiles and its per-space peak (all its
buffers are live for the whole kernel: no reuse inside a kernel):
``npu.tile_rows``, ``npu.tiles``, ``npu.ub_bytes``, ``npu.l1_bytes``,
``npu.l0c_bytes``; ``npu.loop_tiles`` (a nest), ``npu.cube_tile`` (a matmul),
``npu.conv_tile`` (a convolution), ``npu.block_tiles`` (blocks of a reduced
dim), ``npu.stream_tiles`` (a streamed loop).  Outside kernels, a result
computed into a buffer and then copied into the caller's output buffer is
computed in place instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.npu_target import NpuTarget, load_target
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.npu.copy_tiling import (
    CopyPlan,
    plan_copies,
    rewrite_copies,
)
from graphfuse.lowering.npu.cube_kernels import (
    ConvPlan,
    CubeKernel,
    CubePlan,
    conv_analysis,
    cube_analysis,
    rewrite_conv,
    rewrite_cube,
)
from graphfuse.lowering.npu.cube_tiling import (
    choose_conv_tiles,
    choose_tiles,
)
from graphfuse.lowering.npu.dialect import is_gm, load_npu_dialect
from graphfuse.lowering.npu.grouped_convolution import GroupedConvPlan, grouped_conv_analysis, rewrite_grouped_conv
from graphfuse.lowering.npu.kernel_buffers import (
    CUBE_OPS,
    PLACED_SPACES,
    VIEW_OPS,
    NpuAssignError,
    collect_buffers,
    element_bytes,
    is_cube_op,
    loop_access,
    space_over_capacity,
)
from graphfuse.lowering.npu.kernel_split import split_at_loops, split_independent
from graphfuse.lowering.npu.loop_tiling import (
    LoopPlan,
    TiledLoop,
    distinct_dims,
    loop_choices,
    over_capacity_message,
    plan_loops,
    rewrite_loops,
    tile_peaks,
)
from graphfuse.lowering.npu.reduction_blocks import (
    BlockPlan,
    blocked_kernels,
    plan_blocks,
    rewrite_blocks,
    split_live_ranges,
)
from graphfuse.lowering.npu.sequential_loops import StreamPlan, plan_stream, sequential_loop
from graphfuse.lowering.npu.sequential_streaming import rewrite_stream
from graphfuse.lowering.npu.simplify_buffers import forward_result_copies, simplify_buffers
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["CUBE_OPS", "PLACED_SPACES", "VIEW_OPS", "NpuBufferAssign", "is_cube_op", "loop_access"]


def plan_kernel(kernel: ir.Operation, target: NpuTarget, double_buffer: bool, normalize: bool = True
                ) -> tuple[LoopPlan | CopyPlan | CubePlan | ConvPlan | GroupedConvPlan | BlockPlan | StreamPlan,
                           CubeKernel | None]:
    """Choose the tiles of ``kernel``, the first that fits of:

    1. one loop (:func:`plan_loops`, depth 1): every GM byte moves once;
    2. the kernel whole (when it has no loop to tile);
    3. a copy kernel's chunks;
    4. a matmul kernel's M x N x K tiles (:mod:`graphfuse.lowering.npu.cube_tiling`), which split K, as a
       nest of parallel loops cannot; a convolution kernel's batch x filter x output-row x channel tiles;
    5. a nest of two or more loops (heads x query rows of attention scores);
    6. blocks of a reduced dim, one pass over them per reduction (:mod:`graphfuse.lowering.npu.reduction_blocks`:
       attention over many keys, a softmax over a row longer than UB, a total);
    7. a sequential loop's slices streamed through UB (:mod:`graphfuse.lowering.npu.sequential_loops`).

    When none fits, the kernel's buffers are simplified (:func:`simplify_buffers`) and the plans tried again
    once.  Raises NpuAssignError when none fits.  Also returns the kernel as a matmul kernel (None when it is not
    one), whose shape the report's traffic bound needs, whichever plan is chosen."""
    buffers, ops, tileable = collect_buffers(kernel)
    cube = cube_analysis(buffers, ops)
    choices = loop_choices(buffers, ops) if tileable else []
    plan = plan_loops(buffers, choices, target, double_buffer, [1])
    if plan is None:
        for b in buffers:
            b.tiling, b.axis = "whole", 0
        peaks = tile_peaks(buffers, target, [], False)
        plan = LoopPlan(buffers, [], peaks) if space_over_capacity(peaks, target) is None else None
    if plan is not None:
        return plan, cube
    copy = plan_copies(buffers, ops, target, double_buffer)
    if copy is not None:
        return copy, cube
    cube_error = None
    if cube is not None and tileable:
        tiles = choose_tiles(cube.m, cube.n, cube.k, element_bytes(cube.a.type.element_type),
                             element_bytes(cube.c.type.element_type), target, double_buffer, cube.epilogue_buffers())
        if not isinstance(tiles, str):
            return CubePlan(cube, tiles, double_buffer), cube
        cube_error = f"tiled over M, N and K, {tiles}"
    conv = conv_analysis(buffers, ops) if cube is None and tileable else None
    if conv is not None:
        tiles = choose_conv_tiles(conv.shape, element_bytes(conv.window.type.element_type),
                                  element_bytes(conv.acc.type.element_type), target, double_buffer,
                                  conv.epilogue_buffers())
        if not isinstance(tiles, str):
            return ConvPlan(conv, tiles, double_buffer), cube
        cube_error = f"tiled over batch, filters, output rows and channels, {tiles}"
    grouped = grouped_conv_analysis(buffers, ops) if cube is None and conv is None else None
    if grouped is not None:
        tiles = choose_conv_tiles(grouped.shape, element_bytes(grouped.x.type.element_type),
                                  element_bytes(grouped.out.type.element_type), target, double_buffer,
                                  [("f", element_bytes(grouped.bias.type.element_type), True)] if grouped.bias else [])
        if not isinstance(tiles, str):
            return GroupedConvPlan(grouped, tiles, double_buffer), cube
        cube_error = f"tiled over batch, filters, output rows and a group's channels, {tiles}"
    plan = plan_loops(buffers, choices, target, double_buffer, range(2, len(choices) + 1))
    if plan is not None:
        return plan, cube
    if tileable and cube is None and conv is None:  # a reduced dim too long for any tile: blocks of it
        split_live_ranges(kernel)
        candidates = blocked_kernels(*collect_buffers(kernel)[:2])
        plans = [plan_blocks(blocked, target, double_buffer) for blocked in candidates]
        fitting = [p for p in plans if not isinstance(p, str)]
        if fitting:
            return min(fitting, key=lambda p: p.gm_bytes), cube
        cube_error = cube_error or (f"in blocks of a reduced dim, {plans[0]}" if plans else None)
    if any(op.name == "scf.for" for op in ops):  # a scan or a scatter: its loop streams slices through UB
        found = sequential_loop(kernel)
        if found is not None:
            stream = plan_stream(found, target, double_buffer)
            if not isinstance(stream, str):
                return stream, cube
            cube_error = stream
    if normalize and simplify_buffers(kernel):
        return plan_kernel(kernel, target, double_buffer, normalize=False)
    smallest: list[TiledLoop] = []
    for choice in choices:  # every loop at its smallest tile (those a nest can hold together)
        if distinct_dims([*(loop.dims for loop in smallest), choice.dims]):
            smallest.append(choice.loop(min(choice.tile_sizes())))
    message = over_capacity_message(kernel, buffers, smallest, target, double_buffer)
    raise NpuAssignError(message + (f"; {cube_error}" if cube_error else ""))


@dataclass(frozen=True)
class NpuBufferAssign(GraphPass):
    name: ClassVar[str] = "npu-buffer-assign"
    summary: ClassVar[str] = (
        "Place kernel buffers in UB/L1/L0C, tile kernels to the target's capacity, make GM transfers explicit"
    )
    statistics: ClassVar[dict[str, str]] = {
        "num-kernels": "Number of kernels assigned",
        "num-tiled": "Number of kernels tiled into more than one tile",
        "num-transfers": "Number of npu.dma transfers created",
        "num-forwarded": "Number of result copies outside kernels removed",
        "num-split": "Number of kernels split (at their loops, or into independent groups) into kernels run in turn",
    }
    target: str = option("910b", "target description: a bundled name or a .json path")
    double_buffer: bool = option(True, "two slots per transferred tile (transfers overlap compute)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        try:
            target = load_target(self.target)
        except GraphfuseError as error:
            context.fail(f"npu-buffer-assign: {error.diagnostics[0].message}"
                         if len(error.diagnostics) == 1 and error.diagnostics[0].location is None
                         else str(error))
        load_npu_dialect(module.context)
        pending = list(functions(module).items())
        while pending:
            name, func_op = pending.pop(0)
            if not func_op.regions[0].blocks:
                continue
            if not is_kernel(func_op):
                context.count("num-forwarded", forward_result_copies(func_op))
                continue
            if any(isinstance(t, ir.RankedTensorType) for t in
                   ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value).inputs):
                context.fail(f"npu-buffer-assign: kernel '{name}' is not bufferized; run one-shot-bufferize first",
                             func_op.location)
            if any(not is_gm(a.type) for a in func_op.regions[0].blocks[0].arguments
                   if isinstance(a.type, ir.MemRefType)) or "npu.ub_bytes" in func_op.attributes:
                continue  # already assigned
            try:
                plan, cube = plan_kernel(func_op, target, self.double_buffer)
            except NpuAssignError as error:
                location = func_op.location
                parts = split_at_loops(module, func_op) or split_independent(module, func_op)
                if parts is None:
                    context.fail(error.diagnostics[0].message, location)
                context.count("num-split")
                log.debug(f"npu-buffer-assign: @{name} split into {len(parts)} kernels")
                pending[:0] = [(ir.StringAttr(part.attributes["sym_name"]).value, part) for part in parts]
                continue
            i64 = ir.IntegerType.get_signless(64, module.context)
            if cube is not None:
                func_op.attributes["npu.matmul"] = ir.DenseI64ArrayAttr.get(list(cube.shape))
            # copy and cube plans are only chosen when the kernel does not fit whole: tiled, whatever their count
            if isinstance(plan, CopyPlan):
                transfers, tiles, tiled = rewrite_copies(func_op, plan), plan.tiles, True
                double = False  # (its slots are per copy; the kernel is not marked)
                what = f"{tiles} chunk(s)"
            elif isinstance(plan, StreamPlan):
                transfers, tiles, tiled, double = rewrite_stream(func_op, plan), plan.tiles, True, plan.double
                func_op.attributes["npu.stream_tiles"] = ir.DenseI64ArrayAttr.get([plan.tile, plan.chunk])
                what = (f"{tiles} window(s) of {plan.tile} x {plan.chunk} iteration(s) of its loop, "
                        f"{len(plan.loop.streamed)} buffer(s) streamed")
            elif isinstance(plan, BlockPlan):
                transfers, tiled, double = rewrite_blocks(func_op, plan), True, plan.double
                tiles = plan.outer_tiles
                shape = [plan.tiles[r] for r in plan.kernel.outer] + [plan.tiles["k"]]
                func_op.attributes["npu.block_tiles"] = ir.DenseI64ArrayAttr.get(shape)
                what = (f"{tiles} tile(s) of {'x'.join(map(str, shape[:-1]))}, blocks of {shape[-1]} along the "
                        f"reduced dim, {len(plan.kernel.passes)} pass(es)")
            elif isinstance(plan, ConvPlan):  # (a GroupedConvPlan is one)
                rewrite = rewrite_grouped_conv if isinstance(plan, GroupedConvPlan) else rewrite_conv
                transfers, tiled, double = rewrite(func_op, plan), True, plan.double
                counts = plan.counts
                tiles = counts["n"] * counts["f"] * counts["o"]
                t = plan.tiles
                func_op.attributes["npu.conv_tile"] = ir.DenseI64ArrayAttr.get([t.tn, t.tf, t.toh, t.tc])
                what = f"convolution tiles {t.tn}x{t.tf}x{t.toh}x{t.tc} (batch, filters, output rows, channels)"
            elif isinstance(plan, CubePlan):
                transfers, tiles, tiled = rewrite_cube(func_op, plan), math.prod(plan.tile_counts[:2]), True
                double = plan.double
                t = plan.tiles
                func_op.attributes["npu.cube_tile"] = ir.DenseI64ArrayAttr.get([t.tm, t.tn, t.tk])
                what = f"cube tiles {t.tm}x{t.tn}x{t.tk} over {plan.kernel.m}x{plan.kernel.n}x{plan.kernel.k}"
            else:
                transfers, tiles = rewrite_loops(func_op, plan), plan.tiles
                tiled, double = tiles > 1, plan.double
                outer = plan.loops[0].tile if plan.loops else 0
                func_op.attributes["npu.tile_rows"] = ir.IntegerAttr.get(i64, outer)
                if len(plan.loops) > 1:  # a nest: each loop's tile, outermost first
                    func_op.attributes["npu.loop_tiles"] = ir.DenseI64ArrayAttr.get([lp.tile for lp in plan.loops])
                what = f"{tiles} tile(s) of {' x '.join(str(lp.tile) for lp in plan.loops) or 'all'} row(s)"
            func_op.attributes["npu.tiles"] = ir.IntegerAttr.get(i64, tiles)
            for space in PLACED_SPACES:
                func_op.attributes[f"npu.{space}_bytes"] = ir.IntegerAttr.get(i64, plan.peaks[space])
            if double:
                func_op.attributes["npu.double_buffered"] = ir.UnitAttr.get()
            context.count("num-kernels")
            context.count("num-tiled", int(tiled))
            context.count("num-transfers", transfers)
            log.debug(f"npu-buffer-assign: @{name}: {what}; "
                      + ", ".join(f"{s.upper()} {plan.peaks[s]} B" for s in PLACED_SPACES))
