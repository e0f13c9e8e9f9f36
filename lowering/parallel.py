"""parallelize-kernels: spread each large kernel's outermost loop over the cores, through upstream MLIR.

The threading model (docs/lowering.md):

- At the tensor level a large kernel's loop over its outermost parallel
  dimension becomes an ``scf.forall``: row kernels get it from
  tile-kernel-rows (the row loop itself), the other kernels from this pass,
  which tiles the ops producing the kernel's results into at most
  ``max-tasks`` chunks with ``transform.structured.fuse {use_forall}`` and
  fuses their producers into the chunk.  The loops inside a chunk keep their
  full length, so LLVM still vectorizes them.
- After bufferization the runtime lowers every ``scf.forall`` with
  ``scf-forall-to-parallel`` and ``convert-scf-to-openmp{num-threads=N}`` to
  an OpenMP parallel loop with a static schedule (each thread one contiguous
  block of chunks), run by the Intel OpenMP runtime (``libiomp5.so``, from the
  ``intel-openmp`` package: it exports the ``__kmpc_*`` entry points the MLIR
  OpenMP lowering calls).  With one thread, or without that library, the
  foralls become plain loops (``scf-forall-to-for``).  In a process where
  PyTorch's GNU runtime (libgomp) is loaded, JIT code runs on that runtime's
  threads instead, through a small library implementing those entry points
  on it (``lowering/native/kmpc_gomp.c``, :func:`jit_openmp_libraries`): two
  runtimes' threads spinning on the same cores slow each other down.
- Ops with no schedule of their own (pooling, strided depthwise and grouped
  convolutions, the im2col gather before a strided convolution's
  contraction), in a kernel or outside any, are tiled alone into tasks over
  their leading parallel loops (:func:`leading_tiles`).
- Kernels smaller than ``min-elements`` stay serial: starting the threads
  costs a few microseconds, which only pays off on larger outputs.

The thread count is :func:`graphfuse.lowering.host.default_threads`: ``GRAPHFUSE_NUM_THREADS`` when
set, else the cores this process may run on.
"""

from __future__ import annotations

import importlib.metadata
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import structured

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation, nested_ops
from graphfuse.lowering.contraction import DIRECT_CONV
from graphfuse.lowering.contraction.widenings import cast_chain
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.schedules.library import loaded, run_transforms
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option

__all__ = [
    "ParallelizeKernels",
    "gomp_shim_library",
    "jit_openmp_libraries",
    "openmp_library",
]

#: Result elements below which a kernel stays serial (measured: see docs/lowering.md).
DEFAULT_MIN_ELEMENTS = 1 << 14

_ROOT = "graph.parallel_root"
#: Ops that tile and fuse as elementwise or row work; kernels holding others (contractions, convolutions,
#: pooling) are left to their own schedules, or tile their window ops alone (_WINDOW_OPS).
_TILEABLE = frozenset({"linalg.generic", "linalg.fill", "linalg.transpose", "linalg.broadcast", "linalg.copy"})
#: Ops that only reshape a kernel's result.
_RESHAPES = frozenset({"tensor.collapse_shape", "tensor.expand_shape"})
#: Sliding-window ops with no schedule of their own (pooling, strided depthwise and grouped convolutions): each
#: is tiled into tasks over its leading parallel dims, its accumulator's fill fused (_tile_alone_with_fill).
_WINDOW_OPS = frozenset({
    "linalg.pooling_nchw_max", "linalg.pooling_nchw_sum", "linalg.depthwise_conv_2d_nchw_chw",
    "linalg.conv_2d_ngchw_gfchw", "linalg.conv_2d_nchw_fchw",
})
#: Contractions whose operand an im2col gather computes (structured_ops._conv_as_matmul).
_CONTRACTIONS = frozenset({"linalg.contract", "linalg.matmul", "linalg.batch_matmul"})
#: Views between an im2col gather and its contraction.
_RESHAPES = frozenset({"tensor.collapse_shape", "tensor.expand_shape"})

@cache
def openmp_library() -> str | None:
    """The path of the Intel OpenMP runtime installed with graphfuse, or None where there is none."""
    try:
        distribution = importlib.metadata.distribution("intel-openmp")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.name == "libiomp5.so":
            path = Path(distribution.locate_file(file)).resolve()
            if path.is_file():
                return str(path)
    return None


@cache
def gomp_shim_library() -> str | None:
    """The ``__kmpc_*``-on-libgomp library built with graphfuse, when libgomp is loaded in this process and the
    library bound to it; else None."""
    import ctypes
    import importlib.util

    try:
        ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    except OSError:
        return None  # no GNU OpenMP runtime here (PyTorch not imported): nothing to share
    spec = importlib.util.find_spec("graphfuse.lowering._kmpc_gomp")
    if spec is None or spec.origin is None:
        log.info("the OpenMP shim on libgomp was not built (reinstall graphfuse); parallel loops use libiomp5")
        return None
    try:
        shim = ctypes.CDLL(spec.origin)
    except OSError as error:
        log.info(f"the OpenMP shim on libgomp does not load ({error}); parallel loops use libiomp5")
        return None
    return spec.origin if shim.graphfuse_kmpc_gomp_ready() else None


def jit_openmp_libraries(libraries: list[str]) -> list[str]:
    """The runtime libraries JIT code loads: libiomp5 replaced by :func:`gomp_shim_library` while libgomp (PyTorch's)
    is in the process, so that compiled code and PyTorch's kernels share one pool of threads.

    Decided when the first parallel graph is JIT-compiled: once a library exporting the ``__kmpc_*`` symbols is
    loaded, the JIT resolves them there for the rest of the process.
    """
    iomp = openmp_library()
    if iomp is None or iomp not in libraries:
        return libraries
    shim = _first_openmp_choice()
    return [shim if library == iomp else library for library in libraries]


@cache
def _first_openmp_choice() -> str:
    return gomp_shim_library() or openmp_library()


def static_elements(value: ir.Value) -> int | None:
    """How many elements a statically shaped tensor value holds (None otherwise)."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return None
    return math.prod(ir.RankedTensorType(t).shape)


def _iterators(op: ir.Operation) -> list[str]:
    if "iterator_types" not in op.attributes:  # named ops other than generic: every loop of a result dim is parallel
        return ["parallel"] * ir.RankedTensorType(op.results[0].type).rank
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _loop_bounds(op: ir.Operation) -> list[int] | None:
    """The static loop extents of a linalg op (from its result for named ops, its operands for generics)."""
    if "indexing_maps" not in op.attributes:
        t = op.results[0].type
        return list(ir.RankedTensorType(t).shape) if ir.RankedTensorType(t).has_static_shape else None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    bounds: list[int | None] = [None] * maps[0].n_dims
    for value, amap in zip(op.operands, maps, strict=False):
        if not isinstance(value.type, ir.RankedTensorType):
            continue
        shape = ir.RankedTensorType(value.type).shape
        for position, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and position < len(shape):  # map results come back downcast
                bounds[expr.position] = shape[position]
    return None if None in bounds or any(b < 0 for b in bounds) else bounds  # type: ignore[operator]


def chunk_tiles(op: ir.Operation, max_tasks: int) -> list[int] | None:
    """Tile sizes splitting ``op``'s outermost loop into at most ``max_tasks`` chunks; None when it cannot be."""
    bounds = _loop_bounds(op)
    iterators = _iterators(op)
    if bounds is None or not bounds or iterators[0] != "parallel" or bounds[0] < 2:
        return None
    chunk = -(-bounds[0] // min(bounds[0], max_tasks))
    return [chunk] + [0] * (len(bounds) - 1)


def leading_tiles(op: ir.Operation, max_tasks: int) -> list[int] | None:
    """Tile sizes splitting ``op``'s leading parallel loops into at most ``max_tasks`` tasks, the outer ones
    into single iterations while the tasks stay within ``max_tasks`` (a batch of 4 images of 32 channels: 4 x
    16 tasks of 2 channels); None when no leading loop has 2 or more iterations."""
    bounds = _loop_bounds(op)
    iterators = _iterators(op)
    if bounds is None:
        return None
    tiles = [0] * len(bounds)
    tasks = 1
    for dim, (extent, iterator) in enumerate(zip(bounds, iterators, strict=True)):
        if iterator != "parallel" or tasks >= max_tasks:
            break
        if extent < 2:
            tiles[dim] = 1
            continue
        if tasks * extent <= max_tasks:
            tiles[dim], tasks = 1, tasks * extent
            continue
        per_task = -(-extent // (max_tasks // tasks))
        tiles[dim], tasks = per_task, tasks * -(-extent // per_task)
        break
    return tiles if tasks > 1 else None


@dataclass(frozen=True)
class ParallelizeKernels(GraphPass):
    name: ClassVar[str] = "parallelize-kernels"
    summary: ClassVar[str] = "Tile each large kernel's outermost parallel loop into scf.forall chunks for the cores"
    statistics: ClassVar[dict[str, str]] = {"num-parallel": "Number of kernels given a parallel loop"}

    min_elements: int = option(DEFAULT_MIN_ELEMENTS, "kernels with fewer result elements stay serial")
    max_tasks: int = option(64, "most chunks a kernel's loop is split into")

    def __post_init__(self) -> None:
        if self.min_elements < 0 or self.max_tasks < 1:
            raise OptionError(f"options 'min-elements' (>= 0) and 'max-tasks' (>= 1) of pass '{self.name}' are "
                              f"out of range: {self.min_elements}, {self.max_tasks}")

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context, ir.Location.unknown(), loaded(module.context):
            for name, func_op in functions(module).items():
                if not func_op.regions[0].blocks:
                    continue
                if not is_kernel(func_op):  # ops lowered outside kernels: a lone pooling or convolution
                    ops = [as_operation(op) for op in func_op.regions[0].blocks[0].operations]
                    if self._parallelize_windows(func_op, ops) is None:
                        context.count("num-parallel")
                    continue
                reason = self._parallelize(func_op)
                if reason is None:
                    context.count("num-parallel")
                    log.debug(f"parallelize-kernels: @{name}: outermost loop split over the cores")
                else:
                    log.debug(f"parallelize-kernels: @{name} stays serial: {reason}")

    def _parallelize(self, func_op: ir.Operation) -> str | None:
        block = func_op.regions[0].blocks[0]
        ops = [as_operation(op) for op in block.operations]
        if any(op.name == "scf.forall" for op in ops):
            return None  # tile-kernel-rows made its row loop parallel already
        for op in ops:
            if DIRECT_CONV in op.attributes:
                return "it holds a direct convolution (the runtime shares it out across the cores)"
        if any(op.name.startswith("linalg.") and op.name not in _TILEABLE for op in ops):
            return self._parallelize_windows(func_op, ops)
        for op in ops:
            if op.name == "scf.for":
                return "its loops are serial ones (rows too small to split)"
        ret = ops[-1]
        roots: list[tuple[ir.Operation, list[int]]] = []
        small = False
        for value in ret.operands:
            owner = value.owner
            # a result reshaped on its way out (attention's heads merged back into [tokens, width]): the op
            # computing it is tiled, the reshape of the tiled result stays after the loop
            while not isinstance(owner, ir.Block) and as_operation(owner).name in _RESHAPES:
                owner = as_operation(owner).operands[0].owner
            if isinstance(owner, ir.Block) or as_operation(owner).name not in _TILEABLE:
                continue
            owner = as_operation(owner)
            if any(owner == r for r, _ in roots):
                continue
            count = static_elements(owner.results[0])
            if count is None:
                return "it has dynamic shapes"
            if count < self.min_elements:  # a small result beside a large one (a table of a few rows) stays serial
                small = True
                continue
            tiles = chunk_tiles(owner, self.max_tasks)
            if tiles is None:
                return "its outermost loop is not a parallel loop of 2 or more iterations"
            roots.append((owner, tiles))
        if not roots:
            return (f"its results hold fewer than {self.min_elements} elements" if small
                    else "no result is computed by a linalg op")
        return _tile_roots(func_op, roots)

    def _parallelize_windows(self, func_op: ir.Operation, ops: list[ir.Operation]) -> str | None:
        """A kernel holding an op with a schedule of its own (a contraction) or none (a window op): its window
        ops and the im2col gathers feeding its contractions, when large, tiled over their leading parallel
        loops, the fill of their accumulator fused into each task (their padding is computed before)."""
        held = next((op.name for op in ops if op.name.startswith("linalg.") and op.name not in _TILEABLE), None)
        roots: list[tuple[ir.Operation, list[int]]] = []
        for op in ops:
            if op.name not in _WINDOW_OPS and not _is_gather(op):
                continue
            count = static_elements(op.results[0])
            tiles = leading_tiles(op, self.max_tasks)
            if count is not None and count * _window_elements(op) >= self.min_elements and tiles is not None:
                roots.append((op, tiles))
        if not roots:
            return f"it holds {held}" if held else "it holds no large window op or im2col gather"
        for root, tiles in roots:
            init = root.operands[len(root.operands) - 1].owner
            fill = None if isinstance(init, ir.Block) or as_operation(init).name != "linalg.fill" else init
            if fill is not None:
                as_operation(fill).attributes[_FILL] = ir.UnitAttr.get()
            reason = _tile_roots(func_op, [(root, tiles)], _tile_alone if fill is None else _tile_alone_with_fill)
            for op in nested_ops(func_op):
                if _FILL in op.attributes:
                    del op.attributes[_FILL]
            if reason is not None:
                return reason
        return None


#: Marks the fill of a window op's accumulator, fused into the window op's tasks.
_FILL = "graph.parallel_fill"


def _is_gather(op: ir.Operation) -> bool:
    """An all-parallel generic whose result a contraction alone reads (through reshapes): an im2col gather.  Not
    a widening of an operand (:func:`_is_widening`), which the CPU pipeline's narrow-contraction-operands looks
    for untiled, to have the product read the narrow values instead."""
    if op.name != "linalg.generic" or any(it != "parallel" for it in _iterators(op)) or len(op.results) != 1:
        return False
    if _is_widening(op):
        return False
    value = op.results[0]
    while True:
        users = [as_operation(use.owner) for use in value.uses]
        if len(users) != 1:
            return False
        if users[0].name in _CONTRACTIONS:
            return True
        if users[0].name not in _RESHAPES:
            return False
        value = users[0].results[0]


def _is_widening(op: ir.Operation) -> bool:
    """A generic of one input through identity maps whose body is one widening cast of it (bf16 -> f32; int8 ->
    i32 of a quantized product, -> f32 of an int8 weight)."""
    return len(cast_chain(op.results[0])[1]) == 1


def _window_elements(op: ir.Operation) -> int:
    """Inputs each result element of a window op reads (a 3x3 max pooling: 9), 1 for a gather: what a window op's
    result elements are weighed by against ``min-elements`` (a 3x3 pooling of 32K results is 295K reads, not a
    serial kernel's worth of work)."""
    if op.name not in _WINDOW_OPS:
        return 1
    window = ir.RankedTensorType(op.operands[1].type)
    if not window.has_static_shape:
        return 1
    kept = {"linalg.pooling_nchw_max": 0, "linalg.pooling_nchw_sum": 0, "linalg.depthwise_conv_2d_nchw_chw": 1,
            "linalg.conv_2d_nchw_fchw": 1, "linalg.conv_2d_ngchw_gfchw": 2}[op.name]  # leading dims not reduced
    return math.prod(window.shape[kept:])


def _fuse_producers(root: ir.Value, tiles: list[int], kernel: ir.Value) -> None:
    """Tile ``root`` into an ``scf.forall`` of ``tiles``, every producer in the kernel fused into each task."""
    foreach = transform.ForeachOp([], [root])
    with ir.InsertionPoint(foreach.body):
        structured.FuseOp(foreach.bodyTargets[0], tile_sizes=tiles, use_forall=True)
        transform.YieldOp([])


def _tile_alone(root: ir.Value, tiles: list[int], kernel: ir.Value) -> ir.Value:
    """Tile ``root`` alone into an ``scf.forall`` of ``tiles`` (a padding fused into a task would have a dynamic
    size, which the runtime refuses); the handle of the forall."""
    return structured.TileUsingForallOp(root, tile_sizes=tiles).results[1]


def _tile_alone_with_fill(root: ir.Value, tiles: list[int], kernel: ir.Value) -> None:
    """:func:`_tile_alone`, the fill of the window op's accumulator fused into each task."""
    tasks = _tile_alone(root, tiles, kernel)
    fill = structured.MatchOp(transform.AnyOpType.get(), kernel, ops=["linalg.fill"],
                              op_attrs=ir.DictAttr.get({_FILL: ir.UnitAttr.get()})).result
    structured.FuseIntoContainingOp(fill, tasks)


def _tile_roots(func_op: ir.Operation, roots: list[tuple[ir.Operation, list[int]]],
                tile: Callable[[ir.Value, list[int], ir.Value], object] = _fuse_producers) -> str | None:
    """Tile each root into an ``scf.forall`` of ``tiles`` by ``tile`` (default: its producers fused); None, or why
    tiling failed."""
    any_op = transform.AnyOpType.get()
    for root, tiles in roots:
        for op in nested_ops(func_op):
            if _ROOT in op.attributes:
                del op.attributes[_ROOT]
        root.attributes[_ROOT] = ir.UnitAttr.get()

        def build(kernel: ir.Value, tiles: list[int] = tiles) -> None:
            matched = structured.MatchOp(any_op, kernel, op_attrs=ir.DictAttr.get({_ROOT: ir.UnitAttr.get()})).result
            tile(matched, tiles, kernel)

        try:
            run_transforms(func_op, "tiling failed", build)
        except GraphfuseError as error:
            return "; ".join(d.message for d in error.diagnostics)
    for op in nested_ops(func_op):
        if _ROOT in op.attributes:
            del op.attributes[_ROOT]
    return None
