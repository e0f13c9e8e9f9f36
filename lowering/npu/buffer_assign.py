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
- tiling: the kernel's outer parallel loop (its results' first dim above 1,
  "rows"; when no tile of it fits, the next dim's loop) is tiled when every
  buffer either follows that loop in one of its dims or does not depend on
  it (reduction dims stay whole).  The tile is the largest divisor
  of the row count whose buffers fit every on-chip space, each buffer rounded
  up to the space's alignment; with ``double-buffer`` the transferred tiles
  count twice (two slots, alternating between tiles, so the next tile's
  transfer can overlap the current tile's compute).  Buffers that do not
  depend on the rows (weights, gamma) are loaded once before the loop.
  A kernel that cannot be tiled runs as one tile.
- tile nests: when no single loop's tile fits, two loops (then more) are
  tiled at once, the nest of least GM traffic (a buffer that does not follow
  an outer loop is reloaded per outer tile): attention's heads x query rows.
- cube tiling: a matmul (or batch matmul) kernel no row tile fits is tiled
  over M, N and K (:mod:`graphfuse.lowering.npu.cube_tiling` chooses the
  tiles); a copy kernel (reshape, split, slice) is staged in chunks.
- over capacity: when even the smallest legal tile (one row, or the whole
  kernel when it cannot be tiled) does not fit and neither does cube
  tiling, the pass fails with a located error stating the sizes.

Each kernel is annotated with its tile and its per-space peak (all its
buffers are live for the whole kernel: no reuse inside a kernel):
``npu.tile_rows``, ``npu.tiles``, ``npu.ub_bytes``, ``npu.l1_bytes``,
``npu.l0c_bytes``, and for a nest ``npu.loop_tiles``.  Outside kernels, a result computed into a buffer and then
copied into the caller's output buffer is computed in place instead.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, linalg, scf

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.dialect.npu_target import NpuTarget, load_target
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.npu.cube_tiling import (
    ConvShape,
    ConvTiles,
    CubeTiles,
    choose_conv_tiles,
    choose_tiles,
    fractal_tile_sizes,
)
from graphfuse.lowering.npu.dialect import is_gm, load_npu_dialect, mem_space, with_space
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["CUBE_OPS", "VIEW_OPS", "NpuBufferAssign", "is_cube_op", "loop_access"]

VIEW_OPS = frozenset({"memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.cast",
                      "memref.reinterpret_cast", "memref.transpose"})
CUBE_OPS = frozenset({"linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_a",
                      "linalg.matmul_transpose_b", "linalg.batch_matmul_transpose_a",
                      "linalg.batch_matmul_transpose_b", "linalg.conv_2d_nchw_fchw"})


def is_cube_op(op: ir.Operation) -> bool:
    """A matmul or convolution: a named one, or a ``linalg.generic`` contraction (two inputs multiplied and
    summed over a reduction dim both read), as matmuls with transposed operands lower."""
    if op.name in CUBE_OPS:
        return True
    if op.name not in ("linalg.generic", "linalg.contract") or _n_inputs(op) != 2 or len(op.operands) != 3:
        return False
    if op.name == "linalg.contract":  # a contraction by construction: a cube op when it reduces over some dim
        return "reduction" in _iterators(op)
    iterators = _iterators(op)
    reductions = {d for d, kind in enumerate(iterators) if kind == "reduction"}
    if not reductions:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if not all(reductions & frozenset().union(*maps[k]) for k in (0, 1)):
        return False
    body = {o.operation.name for o in op.regions[0].blocks[0].operations}
    return bool(body & {"arith.mulf", "arith.muli"}) and bool(body & {"arith.addf", "arith.addi"})


#: On-chip spaces the pass allocates in (L0A/L0B hold the cube's fractal blocks streamed from L1; not allocated).
PLACED_SPACES = ("ub", "l1", "l0c")

# Loop-dim sets of each operand's indexing results: (operands' results, iterator kinds); loop dims are ints.
Access = tuple[list[tuple[ir.Value, list[frozenset[int]], bool]], list[str]]


def _dims_of(expr: ir.AffineExpr, n_dims: int) -> frozenset[int]:
    """The loop dims an affine expression uses."""
    text = str(expr)
    return frozenset(d for d in range(n_dims) if re.search(rf"\bd{d}\b", text))


def _map_dims(attr: ir.Attribute) -> list[frozenset[int]]:
    amap = ir.AffineMapAttr(attr).value
    return [_dims_of(e, amap.n_dims) for e in amap.results]


def _iterators(op: ir.Operation) -> list[str]:
    """The loop kinds of a linalg op with indexing maps: its ``iterator_types``, or, for ops without them
    (``linalg.contract``, named ops given explicit maps), a loop dim the output map does not use is a
    reduction."""
    if "iterator_types" in op.attributes:
        return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    out = frozenset().union(*_map_dims(ir.AffineMapAttr.get(maps[-1])))
    return ["parallel" if d in out else "reduction" for d in range(maps[-1].n_dims)]


def _rank(value: ir.Value) -> int:
    return ir.MemRefType(value.type).rank


def _identity(value: ir.Value, first: int = 0) -> list[frozenset[int]]:
    return [frozenset({first + i}) for i in range(_rank(value))]


def _named_access(op: ir.Operation) -> list[list[frozenset[int]]] | None:
    """Indexing of a named linalg op's memref operands (ins then outs), or None when unknown."""
    name = op.name
    one = frozenset
    if "indexing_maps" in op.attributes:
        return [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    m, n, k = one({0}), one({1}), one({2})
    if name == "linalg.matmul":
        return [[m, k], [k, n], [m, n]]
    if name == "linalg.matmul_transpose_b":
        return [[m, k], [n, k], [m, n]]
    if name == "linalg.matmul_transpose_a":
        return [[k, m], [k, n], [m, n]]
    b, m, n, k = one({0}), one({1}), one({2}), one({3})
    if name == "linalg.batch_matmul":
        return [[b, m, k], [b, k, n], [b, m, n]]
    if name == "linalg.batch_matmul_transpose_b":
        return [[b, m, k], [b, n, k], [b, m, n]]
    if name == "linalg.batch_matmul_transpose_a":
        return [[b, k, m], [b, k, n], [b, m, n]]
    if name == "linalg.conv_2d_nchw_fchw":  # (n, f, oh, ow, c, kh, kw)
        return [[one({0}), one({4}), one({2, 5}), one({3, 6})], [one({1}), one({4}), one({5}), one({6})],
                [one({0}), one({1}), one({2}), one({3})]]
    return None


_NAMED_ITERATORS = {
    "linalg.matmul": 3, "linalg.matmul_transpose_a": 3, "linalg.matmul_transpose_b": 3,
    "linalg.batch_matmul": 4, "linalg.batch_matmul_transpose_a": 4, "linalg.batch_matmul_transpose_b": 4,
    "linalg.conv_2d_nchw_fchw": 7,
}
_NAMED_PARALLEL = {"linalg.matmul": 2, "linalg.matmul_transpose_a": 2, "linalg.matmul_transpose_b": 2,
                   "linalg.batch_matmul": 3, "linalg.batch_matmul_transpose_a": 3,
                   "linalg.batch_matmul_transpose_b": 3, "linalg.conv_2d_nchw_fchw": 4}


def loop_access(op: ir.Operation) -> Access | None:
    """How ``op`` indexes its memref operands, or None when the op is not understood (then it is not tiled)."""
    memrefs = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
    if not memrefs:
        return [], []
    name = op.name
    if name == "memref.copy":
        src, dst = op.operands[0], op.operands[1]
        return [(src, _identity(src), False), (dst, _identity(dst), True)], ["parallel"] * _rank(dst)
    if name in ("linalg.fill", "linalg.map"):
        n_out = 1
        outs = memrefs[-n_out:]
        accesses = [(v, _identity(v), False) for v in memrefs[:-n_out]] + [(v, _identity(v), True) for v in outs]
        return accesses, ["parallel"] * _rank(outs[0])
    if name == "linalg.transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        src, dst = memrefs
        return ([(src, _identity(src), False), (dst, [frozenset({p}) for p in perm], True)],
                ["parallel"] * _rank(dst))
    if name == "linalg.generic":
        maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        n_out = len(op.operands) - _n_inputs(op)
        accesses = []
        for index, (value, dims) in enumerate(zip(op.operands, maps, strict=True)):
            if isinstance(value.type, ir.MemRefType):
                accesses.append((value, dims, index >= len(op.operands) - n_out))
        return accesses, _iterators(op)
    if name.startswith("linalg.") and "indexing_maps" in op.attributes and "operandSegmentSizes" in op.attributes:
        # linalg.contract, or a named op given explicit maps: the maps say it all, the segments which are outs.
        maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        if len(maps) != len(op.operands):
            return None
        n_in = _n_inputs(op)
        accesses = [(v, dims, k >= n_in) for k, (v, dims) in enumerate(zip(op.operands, maps, strict=True))
                    if isinstance(v.type, ir.MemRefType)]
        return accesses, _iterators(op)
    named = _named_access(op)
    if named is not None and len(named) == len(memrefs):
        total = _NAMED_ITERATORS.get(name)
        parallel = _NAMED_PARALLEL.get(name)
        if total is None:
            return None
        iterators = ["parallel"] * parallel + ["reduction"] * (total - parallel)
        return [(v, d, k == len(memrefs) - 1) for k, (v, d) in enumerate(zip(memrefs, named, strict=True))], iterators
    return None


def _n_inputs(op: ir.Operation) -> int:
    segments = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
    return segments[0]


# --------------------------------------------------------------------------- buffers of a kernel


@dataclass
class _Buffer:
    """A root buffer of a kernel: a GM argument, a constant global, or an allocation."""

    value: ir.Value
    kind: str  # "gm_in", "gm_out", "local"
    read: bool = False
    written: bool = False
    cube_read: bool = False
    cube_written: bool = False
    has_views: bool = False
    #: touched by an op the pass does not understand: a GM argument is then both loaded and stored
    unknown_access: bool = False
    #: "rows" (dim ``axis`` follows the tiled loop) or "whole"; None: not accessed by a loop op
    tiling: str | None = None
    #: the dim that follows the tiled loop (0 unless leading dims are 1 or a transpose moves it)
    axis: int = 0
    #: static memref.subview ops that are the only uses of a GM input: each slice is staged on its own
    slices: list[ir.Operation] = field(default_factory=list)
    #: a static slice of a GM input read as it is: a GM input of its own (the parent is then unused)
    slice_of: bool = False

    @property
    def type(self) -> ir.MemRefType:
        return ir.MemRefType(self.value.type)

    @property
    def space(self) -> str:
        if self.cube_read:
            return "l1"
        if self.cube_written:
            return "l0c"
        return "ub"

    @property
    def transferred(self) -> bool:
        return self.kind != "local"

    def tile_shape(self, tiled: dict[int, int]) -> list[int]:
        """The buffer's shape in one tile: each dim in ``tiled`` (dim -> tile size) cut to its tile."""
        return [tiled.get(d, n) for d, n in enumerate(self.type.shape)]

    def sizes_at(self, tiled: dict[int, int]) -> list[int]:
        """The byte size of each staging buffer in one tile (one, or one per staged slice)."""
        element = _element_bytes(self.type.element_type)
        if self.slices:
            return [math.prod(ir.MemRefType(op.results[0].type).shape) * element for op in self.slices]
        return [math.prod(self.tile_shape(tiled)) * element]

    def describe(self, tiled: dict[int, int]) -> str:
        role = {"gm_in": "in", "gm_out": "out", "local": "local"}[self.kind]
        if self.slices:
            shapes = [list(ir.MemRefType(op.results[0].type).shape) for op in self.slices]
            return ", ".join(f"{'x'.join(str(d) for d in sh)}x{self.type.element_type} in (slice)" for sh in shapes)
        return f"{''.join(f'{d}x' for d in self.tile_shape(tiled))}{self.type.element_type} {role}"


def _element_bytes(element: ir.Type) -> int:
    text = str(element)
    if text == "i1":
        return 1
    if text in ("bf16", "f16"):
        return 2
    width = int("".join(c for c in text if c.isdigit()) or 32)
    return max(1, width // 8)


def _root(value: ir.Value) -> ir.Value:
    while not isinstance(value.owner, ir.Block) and as_operation(value.owner).name in VIEW_OPS:
        value = as_operation(value.owner).operands[0]
    return value


@dataclass(frozen=True)
class _TiledLoop:
    """A loop of a kernel's tile nest: the loop an output dim follows, cut into tiles of ``tile``."""

    extent: int
    tile: int
    #: a buffer's position in the kernel's buffer list -> its dim that follows the loop (absent: whole along it)
    dims: dict[int, int]

    @property
    def count(self) -> int:
        return self.extent // self.tile


@dataclass
class _Plan:
    buffers: list[_Buffer]
    #: the tile nest, outermost loop first ([]: the kernel whole, one tile)
    loops: list[_TiledLoop]
    peaks: dict[str, int] = field(default_factory=dict)
    double: bool = False

    @property
    def tiles(self) -> int:
        return math.prod(loop.count for loop in self.loops)


def _tiled_dims(loops: list[_TiledLoop], index: int) -> dict[int, int]:
    """Buffer ``index``'s tiled dims in the nest ``loops``: dim -> tile size."""
    return {loop.dims[index]: loop.tile for loop in loops if index in loop.dims}


def _moves_per_tile(buf: _Buffer, index: int, loops: list[_TiledLoop]) -> bool:
    """Whether the buffer is transferred tile by tile (it follows a loop of more than one tile)."""
    return buf.transferred and not buf.slices and any(index in loop.dims and loop.count > 1 for loop in loops)


class NpuAssignError(GraphfuseError):
    pass


def _collect(kernel: ir.Operation) -> tuple[list[_Buffer], list[ir.Operation], bool]:
    """The kernel's root buffers, its top-level ops, and whether row tiling is possible so far."""
    block = kernel.regions[0].blocks[0]
    ops = [as_operation(o) for o in block.operations]
    buffers: dict[int, _Buffer] = {}
    by_value: list[tuple[ir.Value, _Buffer]] = []

    def find(value: ir.Value) -> _Buffer | None:
        for v, b in by_value:
            if v == value:
                return b
        return None

    for arg in block.arguments:
        if isinstance(arg.type, ir.MemRefType):
            buf = _Buffer(arg, "gm_in")
            by_value.append((arg, buf))
            buffers[len(buffers)] = buf
    tileable = True
    for op in ops:
        if op.name == "memref.alloc" or op.name == "memref.get_global":
            buf = _Buffer(op.results[0], "local" if op.name == "memref.alloc" else "gm_in")
            by_value.append((op.results[0], buf))
            buffers[len(buffers)] = buf
        elif op.name in VIEW_OPS:
            root = find(_root(op.results[0]))
            if root is not None:
                root.has_views = True
        elif len(op.regions) and not op.name.startswith("linalg."):
            tileable = False  # nested control flow: not analysed, run as one tile
    for op in ops:
        access = loop_access(op) if op.name not in VIEW_OPS else ([], [])
        memref_operands = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
        if access is None:
            tileable = False
            # Unknown op: it may read and write any of its memref operands.
            for v in memref_operands:
                buf = find(_root(v))
                if buf is not None:
                    buf.read = buf.written = buf.unknown_access = True
            continue
        for value, _dims, is_write in access[0]:
            buf = find(_root(value))
            if buf is None:
                continue
            if is_write:
                buf.written = True
                buf.cube_written |= is_cube_op(op)
            else:
                buf.read = True
                buf.cube_read |= is_cube_op(op)
    for buf in buffers.values():
        if buf.kind == "gm_in" and buf.written and isinstance(buf.value.owner, ir.Block):
            buf.kind = "gm_out"
        if buf.kind == "gm_in":
            buf.slices = _static_slices(buf.value)
    found = list(buffers.values())
    for buf in list(found):
        if buf.slices and all(_read_directly(view.results[0]) for view in buf.slices):
            # each slice read as it is is a GM input of its own, tiled like any other; the parent is not used
            for view in buf.slices:
                found.append(_Buffer(view.results[0], "gm_in", read=True, cube_read=buf.cube_read, slice_of=True))
            buf.read, buf.slices = False, []
    return found, ops, tileable


def _read_directly(value: ir.Value) -> bool:
    """Whether ``value`` is only an operand of non-view ops (a slice read as it is, not reshaped)."""
    return all(as_operation(use.owner).name not in VIEW_OPS for use in value.uses)


#: Views that keep a contiguous identity-layout buffer contiguous: a staged slice may be reshaped by them.
RESHAPE_VIEWS = frozenset({"memref.expand_shape", "memref.collapse_shape"})


def _reshaped_only(value: ir.Value) -> bool:
    """Whether every view derived from ``value`` is a reshape (expand/collapse_shape), recursively."""
    for use in value.uses:
        owner = as_operation(use.owner)
        if owner.name in VIEW_OPS and (owner.name not in RESHAPE_VIEWS or not _reshaped_only(owner.results[0])):
            return False
    return True


def _static_slices(value: ir.Value) -> list[ir.Operation]:
    """The subviews of ``value`` when they are all its uses, static, and read by non-view ops, directly or
    through reshapes (a reshaped split piece: the reshape of a staged slice is a reshape of its UB copy); else []."""
    slices = []
    for use in value.uses:
        owner = as_operation(use.owner)
        if owner.name != "memref.subview" or len(owner.operands) != 1:
            return []
        if not _reshaped_only(owner.results[0]):
            return []
        slices.append(owner)
    return slices


def _groups(view: ir.Operation) -> list[list[int]]:
    """The reassociation groups of an expand_shape / collapse_shape."""
    return [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(view.attributes["reassociation"])]


def _root_axis(value: ir.Value, dim: int) -> tuple[ir.Value, int] | None:
    """The root buffer of ``value`` and the dim of it that ``value``'s ``dim`` is, through reshapes that keep
    that dim whole (its group holds no other dim larger than 1); None through any other view."""
    while not isinstance(value.owner, ir.Block) and as_operation(value.owner).name in VIEW_OPS:
        view = as_operation(value.owner)
        if view.name not in RESHAPE_VIEWS:
            return None
        groups = _groups(view)
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


def _row_analysis(buffers: list[_Buffer], ops: list[ir.Operation], choice: int = 0) -> tuple[int, bool] | None:
    """Mark each buffer rows / whole for tiling the outer parallel loop; (the row count, whether the loop is
    the M or N loop of a cube op: its tiles are then fractal-aligned), or None if not tileable.

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

    def find(value: ir.Value) -> _Buffer | None:
        exact = next((b for b in buffers if b.value == value and b.slice_of), None)
        root = _root(value)
        return exact or next((b for b in buffers if b.value == root), None)

    for b in outputs:
        b.tiling = "rows"
    fractal = False
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
            if value != _root(value) or buf is None or not dims:
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
            fractal |= sum(1 for _, dims, w in operands if not w and any(loop in d for d in dims)) == 1
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
    if any(b.tiling == "rows" and b.has_views and not _reshaped_only(b.value) for b in buffers):
        return None
    for b in buffers:
        if b.tiling is None:
            b.tiling = "whole"
    return rows, fractal


def _peaks(buffers: list[_Buffer], target: NpuTarget, loops: list[_TiledLoop], double: bool) -> dict[str, int]:
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


def _nest_traffic(buffers: list[_Buffer], loops: list[_TiledLoop]) -> int:
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


def _fits(peaks: dict[str, int], target: NpuTarget) -> str | None:
    """The first space over capacity, or None."""
    return next((s for s in PLACED_SPACES if peaks[s] > target.buffer(s).bytes), None)


def plan_kernel(kernel: ir.Operation, target: NpuTarget, double_buffer: bool
                ) -> tuple[_Plan | _CopyPlan | _CubePlan | _ConvPlan | _KeyBlockPlan, _CubeKernel | None]:
    """Choose the tiles of ``kernel``, the first that fits of:

    1. one loop (:func:`_plan_loops`, depth 1): every GM byte moves once;
    2. the kernel whole (when it has no loop to tile);
    3. a copy kernel's chunks;
    4. a matmul kernel's M x N x K tiles (:mod:`graphfuse.lowering.npu.cube_tiling`), which split K, as a
       nest of parallel loops cannot; a convolution kernel's batch x filter x output-row x channel tiles;
    5. a nest of two or more loops (heads x query rows of attention scores);
    6. attention in blocks of keys, one pass over them per reduction over the keys.

    Raises NpuAssignError when none fits.  Also returns the kernel as a matmul kernel (None when it is not
    one), whose shape the report's traffic bound needs, whichever plan is chosen."""
    buffers, ops, tileable = _collect(kernel)
    cube = _cube_analysis(buffers, ops)
    choices = _loop_choices(buffers, ops) if tileable else []
    plan = _plan_loops(buffers, choices, target, double_buffer, [1])
    if plan is None:
        for b in buffers:
            b.tiling, b.axis = "whole", 0
        peaks = _peaks(buffers, target, [], False)
        plan = _Plan(buffers, [], peaks) if _fits(peaks, target) is None else None
    if plan is not None:
        return plan, cube
    copy = _copy_plan(buffers, ops, target, double_buffer)
    if copy is not None:
        return copy, cube
    cube_error = None
    if cube is not None and tileable:
        tiles = choose_tiles(cube.m, cube.n, cube.k, _element_bytes(cube.a.type.element_type),
                             _element_bytes(cube.c.type.element_type), target, double_buffer, cube.epilogue_buffers())
        if not isinstance(tiles, str):
            return _CubePlan(cube, tiles, double_buffer), cube
        cube_error = f"tiled over M, N and K, {tiles}"
    conv = _conv_analysis(buffers, ops) if cube is None and tileable else None
    if conv is not None:
        tiles = choose_conv_tiles(conv.shape, _element_bytes(conv.window.type.element_type),
                                  _element_bytes(conv.acc.type.element_type), target, double_buffer,
                                  conv.epilogue_buffers())
        if not isinstance(tiles, str):
            return _ConvPlan(conv, tiles, double_buffer), cube
        cube_error = f"tiled over batch, filters, output rows and channels, {tiles}"
    plan = _plan_loops(buffers, choices, target, double_buffer, range(2, len(choices) + 1))
    if plan is not None:
        return plan, cube
    if tileable and cube is None and conv is None:  # attention whose scores' rows do not fit: key blocks
        _split_live_ranges(kernel)
        key_buffers, key_ops, _ = _collect(kernel)
        attention = _key_block_analysis(key_buffers, key_ops)
        if attention is not None:
            key_plan = _plan_key_blocks(attention, target, double_buffer)
            if not isinstance(key_plan, str):
                return key_plan, cube
            cube_error = f"in blocks of keys, {key_plan}"
    smallest: list[_TiledLoop] = []
    for choice in choices:  # every loop at its smallest tile (those a nest can hold together)
        if _distinct_dims([*(loop.dims for loop in smallest), choice.dims]):
            smallest.append(choice.loop(min(choice.tile_sizes())))
    message = _over_capacity(kernel, buffers, smallest, target, double_buffer)
    raise NpuAssignError(message + (f"; {cube_error}" if cube_error else ""))


@dataclass(frozen=True)
class _LoopChoice:
    """A loop a kernel can be tiled along: an output dim's loop that every buffer follows or does not use."""

    extent: int
    #: a buffer's position in the kernel's buffer list -> its dim that follows the loop
    dims: dict[int, int]
    #: the M or N loop of a cube op: tiles are multiples of the cube's fractal, or the whole loop
    fractal: bool

    def tile_sizes(self) -> list[int]:
        """The loop's legal tile sizes, largest first."""
        sizes = fractal_tile_sizes(self.extent) if self.fractal else \
            [d for d in range(1, self.extent + 1) if self.extent % d == 0]
        return sorted(sizes, reverse=True)

    def loop(self, tile: int) -> _TiledLoop:
        return _TiledLoop(self.extent, tile, self.dims)


def _loop_choices(buffers: list[_Buffer], ops: list[ir.Operation]) -> list[_LoopChoice]:
    """The loops the kernel can be tiled along, one per output dim above 1 that every buffer follows or does
    not depend on, outermost first."""
    choices = []
    for choice in range(max((b.type.rank for b in buffers if b.kind == "gm_out"), default=0)):
        for b in buffers:
            b.tiling, b.axis = None, 0
        found = _row_analysis(buffers, ops, choice)
        if found is not None:
            dims = {i: b.axis for i, b in enumerate(buffers) if b.tiling == "rows"}
            choices.append(_LoopChoice(found[0], dims, found[1]))
    return choices


def _distinct_dims(loop_dims: list[dict[int, int]]) -> bool:
    """Whether no buffer follows two loops of a nest in the same dim."""
    for index in set().union(*loop_dims):
        dims = [d[index] for d in loop_dims if index in d]
        if len(set(dims)) != len(dims):
            return False
    return True


def _plan_loops(buffers: list[_Buffer], choices: list[_LoopChoice], target: NpuTarget,
                double_buffer: bool, depths: Iterable[int]) -> _Plan | None:
    """The best tile nest of ``depths`` loops (from ``choices``, :func:`_loop_choices`) that fits, or None.

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
                        peaks = _peaks(buffers, target, loops, double)
                        if _fits(peaks, target) is None:
                            return _Plan(buffers, loops, peaks, double and tile < choice.extent)
            continue
        best: tuple[tuple[int, bool, int], _Plan] | None = None
        for order in itertools.permutations(choices, depth):
            if not _distinct_dims([choice.dims for choice in order]):
                continue
            # each loop of a nest has more than one tile (else it is a smaller nest, already tried)
            for tiles in itertools.product(*([t for t in c.tile_sizes() if t < c.extent] for c in order)):
                loops = [choice.loop(tile) for choice, tile in zip(order, tiles, strict=True)]
                for double in slot_counts:
                    peaks = _peaks(buffers, target, loops, double)
                    if _fits(peaks, target) is None:
                        key = (_nest_traffic(buffers, loops), not double, math.prod(loop.count for loop in loops))
                        if best is None or key < best[0]:
                            best = (key, _Plan(buffers, loops, peaks, double))
                        break
        if best is not None:
            return best[1]
    return None


def _over_capacity(kernel: ir.Operation, buffers: list[_Buffer], loops: list[_TiledLoop], target: NpuTarget,
                   double_buffer: bool) -> str:
    """The message for a kernel whose smallest tile (the nest ``loops`` at its smallest tiles) fits nowhere."""
    peaks = _peaks(buffers, target, loops, double_buffer)
    space = _fits(peaks, target)
    if space is None:  # fits with one slot only, yet was refused: report the single-slot need
        peaks, double_buffer = _peaks(buffers, target, loops, False), False
        space = _fits(peaks, target) or max(PLACED_SPACES, key=lambda s: peaks[s] / target.buffer(s).bytes)
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    what = "its smallest tile" if loops else "its only tile (it cannot be tiled)"
    parts = []
    for index, b in enumerate(buffers):
        if b.space == space and (b.read or b.written):
            slots = 2 if double_buffer and _moves_per_tile(b, index, loops) else 1
            parts.append(b.describe(_tiled_dims(loops, index)) + (" x2" if slots == 2 else ""))
    return (f"kernel '{name}' needs {peaks[space]} bytes of {space.upper()} for {what} ({', '.join(parts)}) "
            f"but the target '{target.name}' has {target.buffer(space).bytes}")


# --------------------------------------------------------------------------- copy kernels


@dataclass
class _CopyPart:
    """One memref.copy of a copy kernel, staged through UB in chunks of ``chunk`` along ``dim``."""

    copy: ir.Operation
    #: copy between whole contiguous buffers (through reshapes only): chunked over the flat element range
    flat: bool
    shape: list[int]
    dim: int
    chunk: int
    element_bytes: int

    def chunk_bytes(self) -> int:
        """A chunk: one index of each dim before ``dim``, ``chunk`` of ``dim``, every dim after it whole."""
        return math.prod(self.shape[self.dim + 1:]) * self.chunk * self.element_bytes

    @property
    def count(self) -> int:
        """Chunks of the copy."""
        return math.prod(self.shape[:self.dim]) * (self.shape[self.dim] // self.chunk)

    def candidates(self) -> list[int]:
        size = self.shape[self.dim]
        return [d for d in range(size, 0, -1) if size % d == 0]

    def shrink(self) -> bool:
        """The next smaller chunk: the next divisor of ``dim``, or, below one index of it, the whole next dim
        above 1 (the dims before it then taken one index at a time).  False when a chunk is one element."""
        if self.chunk > 1:
            self.chunk = next(c for c in self.candidates() if c < self.chunk)
            return True
        following = [d for d in range(self.dim + 1, len(self.shape)) if self.shape[d] > 1]
        if not following:
            return False
        self.dim = following[0]
        self.chunk = next(c for c in self.candidates() if c < self.shape[self.dim]) if self.shape[self.dim] > 1 \
            else 1
        return True


@dataclass
class _CopyPlan:
    """A kernel that only copies GM inputs (whole, reshaped or static slices of them: a reshape, split or
    slice kernel) to GM outputs: each copy staged through UB in chunks."""

    parts: list[_CopyPart]
    peaks: dict[str, int]
    double: bool

    @property
    def tiles(self) -> int:
        return sum(p.count for p in self.parts)


def _copy_plan(buffers: list[_Buffer], ops: list[ir.Operation], target: NpuTarget, double_buffer: bool
               ) -> _CopyPlan | None:
    """Chunks for every copy of a copy kernel that does not fit UB whole, or None when it is not one."""
    compute = [op for op in ops if op.name not in ("func.return", "arith.constant") and op.name not in VIEW_OPS]
    if not compute or any(op.name != "memref.copy" for op in compute):
        return None
    parts = []
    for copy in compute:
        source = next((b for b in buffers if b.value == _root(copy.operands[0])), None)
        dest = next((b for b in buffers if b.value == _root(copy.operands[1])), None)
        if source is None or dest is None or source.kind != "gm_in" or dest.kind != "gm_out":
            return None
        shape = list(ir.MemRefType(copy.operands[0].type).shape)
        if not all(ir.MemRefType(v.type).has_static_shape for v in copy.operands):
            return None
        size = _element_bytes(source.type.element_type)
        if _reshaped_only(source.value) and _reshaped_only(dest.value) and not source.slices:
            total = math.prod(shape)
            parts.append(_CopyPart(copy, True, [total], 0, total, size))
            continue
        views = [as_operation(v.owner) for v in copy.operands if not isinstance(v.owner, ir.Block)]
        if any(v.name != "memref.subview" for v in views):
            return None  # a slice read or written directly: chunk its outer dim
        dim = next((d for d, n in enumerate(shape) if n > 1), 0)
        parts.append(_CopyPart(copy, False, shape, dim, shape[dim], size))
    ub = target.buffer("ub")

    def need() -> int:
        return sum((2 if double_buffer and p.count > 1 else 1) * ub.footprint(p.chunk_bytes()) for p in parts)

    while need() > ub.bytes:  # the largest staging buffers shrink together (next smaller chunk) until all fit
        top = max(p.chunk_bytes() for p in parts)
        shrunk = [part.shrink() for part in parts if part.chunk_bytes() == top]
        if not any(shrunk):
            return None
    return _CopyPlan(parts, {"ub": need(), "l1": 0, "l0c": 0}, double_buffer)


def _flat(value: ir.Value) -> ir.Value:
    """A 1-D view of an identity-layout memref."""
    t = ir.MemRefType(value.type)
    if t.rank == 1:
        return value
    flat = ir.MemRefType.get([math.prod(t.shape)], t.element_type, None, t.memory_space)
    i64 = ir.IntegerType.get_signless(64)
    reassociation = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in range(t.rank)])])
    return ir.Operation.create("memref.collapse_shape", results=[flat], operands=[value],
                               attributes={"reassociation": reassociation}).results[0]


def _tile_view(source: ir.Value, offsets: list[ir.Value | None], sizes: list[int]) -> ir.Value:
    """``source`` (any strided layout) restricted to ``[offsets, offsets + sizes)`` (None: offset 0, the
    whole dim when its size is the source's)."""
    t = ir.MemRefType(source.type)
    strides, _ = t.get_strides_and_offset()
    dims = "x".join(str(d) for d in sizes)
    result = ir.Type.parse(f"memref<{dims}x{t.element_type}, strided<[{', '.join(map(str, strides))}], offset: ?>>")
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    values = [o for o in offsets if o is not None]
    op = ir.Operation.create(
        "memref.subview",
        results=[result],
        operands=[source, *values],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get([0 if o is None else dynamic for o in offsets]),
            "static_sizes": ir.DenseI64ArrayAttr.get(sizes),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(sizes)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(values), 0, 0]),
        },
    )
    return op.results[0]


def _chunk_view(source: ir.Value, dim: int, offset: ir.Value, chunk: int) -> ir.Value:
    """``source`` restricted to ``[offset, offset + chunk)`` along ``dim``."""
    sizes = list(ir.MemRefType(source.type).shape)
    sizes[dim] = chunk
    return _tile_view(source, [offset if d == dim else None for d in range(len(sizes))], sizes)


def rewrite_copies(kernel: ir.Operation, plan: _CopyPlan) -> int:
    """Each copy as chunks GM -> UB -> GM; returns the number of npu.dma ops."""
    transfers = 0
    with kernel.location:
        for part in plan.parts:
            copy = part.copy
            with ir.InsertionPoint(copy):
                if part.flat:
                    source, dest = _flat(_root(copy.operands[0])), _flat(_root(copy.operands[1]))
                else:
                    source, dest = copy.operands[0], copy.operands[1]
                element = ir.MemRefType(source.type).element_type
                tile = [1] * part.dim + [part.chunk] + part.shape[part.dim + 1:]
                slots = 2 if plan.double and part.count > 1 else 1
                buffer = _alloc(ir.MemRefType.get([2, *tile] if slots == 2 else tile, element, None,
                                                  mem_space("ub")))
            # one index at a time of each dim before the chunked one, then the chunks
            offsets: list[ir.Value | None] = [None] * len(part.shape)
            point, index = copy, None
            for d in range(part.dim + 1):
                step = part.chunk if d == part.dim else 1
                if d < part.dim and part.shape[d] == 1:
                    continue
                with ir.InsertionPoint(point):
                    loop = scf.ForOp(_index(0), _index(part.shape[d]), _index(step))
                with ir.InsertionPoint(loop.body):
                    point = scf.YieldOp([]).operation
                with ir.InsertionPoint(point):  # the running number of the chunk, for its slot
                    number = arith.divui(loop.induction_variable, _index(step)) if step > 1 else \
                        loop.induction_variable
                    index = number if index is None else \
                        arith.addi(arith.muli(index, _index(part.shape[d] // step)), number)
                offsets[d] = loop.induction_variable
            with ir.InsertionPoint(point):
                slot = arith.remui(index, _index(2)) if slots == 2 else None
                staged = _slot_subview(buffer, slot, "ub") if slot is not None else buffer
                _dma(_tile_view(source, offsets, tile), staged)
                _dma(staged, _tile_view(dest, offsets, tile))
            transfers += 2
            views = [as_operation(v.owner) for v in copy.operands if not isinstance(v.owner, ir.Block)]
            copy.erase()
            for view in views:  # the views the copy read or wrote through, now unused
                if not list(view.results[0].uses):
                    view.erase()
    return transfers


# --------------------------------------------------------------------------- cube tiling (analysis)


#: What a dim of a buffer follows in a cube-tiled kernel: the M, N or K loop, or nothing (kept whole).
Follows = tuple[str | None, ...]


@dataclass
class _CubeKernel:
    """A kernel ``C[M, N] = A x B`` (one cube op), C filled before it and read by elementwise ops after it."""

    cube: ir.Operation
    fill: ir.Operation | None
    epilogue: list[ir.Operation]
    a: _Buffer
    b: _Buffer
    c: _Buffer
    m: int
    n: int
    k: int
    #: every used buffer (by position in the kernel's buffer list) -> what each of its dims follows
    follows: list[tuple[_Buffer, Follows]]
    #: a batch matmul's batch dims ("b0", "b1"...) -> their sizes (one index of each per tile)
    batch: dict[str, int] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int, int, int]:
        """(batch, M, N, K, element bytes): what the report's traffic lower bound is computed from."""
        return math.prod(self.batch.values()), self.m, self.n, self.k, _element_bytes(self.a.type.element_type)

    def epilogue_buffers(self) -> list[tuple[str, int, bool]]:
        """The UB buffers for choose_tiles: (the loops they follow, element bytes, transferred)."""
        out = []
        for buf, follows in self.follows:
            if buf is self.a or buf is self.b or buf is self.c:
                continue
            out.append(("".join(f for f in follows if f in ("m", "n")), _element_bytes(buf.type.element_type),
                        buf.transferred))
        return out


def _single_dims(dims: list[frozenset[int]]) -> list[int | None] | None:
    """Each indexing result's one loop dim (None for a constant index), or None when one mixes loops."""
    out: list[int | None] = []
    for d in dims:
        if len(d) > 1:
            return None
        out.append(next(iter(d)) if d else None)
    return out


def _cube_analysis(buffers: list[_Buffer], ops: list[ir.Operation]) -> _CubeKernel | None:
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
    writes = [(v, _single_dims(d)) for v, d, w in operands if w]
    reads = [(v, _single_dims(d)) for v, d, w in operands if not w]
    if len(writes) != 1 or len(reads) != 2 or any(d is None or None in d for _, d in writes + reads):
        return None
    (k_loop,) = [d for d, kind in enumerate(iterators) if kind == "reduction"]
    c_value, c_dims = writes[0]
    batch = len(iterators) - 3  # a batch matmul's leading loops, one index of each per tile
    if len(c_dims) != batch + 2:
        return None
    roles = {loop: f"b{i}" for i, loop in enumerate(c_dims[:batch])} | {c_dims[-2]: "m", c_dims[-1]: "n", k_loop: "k"}

    def find(value: ir.Value) -> _Buffer | None:
        return next((b for b in buffers if b.value == value), None)

    tags: dict[int, tuple[_Buffer, Follows]] = {}

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
        access = loop_access(op)
        if access is None:
            return None
        operands, iterators = access
        out = [(v, _single_dims(d)) for v, d, w in operands if w]
        if not out or len(iterators) != batch + 2 or "reduction" in iterators:
            return None
        first, written = out[0][1], find(out[0][0])
        if first is None or None in first or written is None or tuple(written.type.shape) != tuple(c.type.shape):
            return None
        loop_roles = dict(zip(first, c_follows, strict=True))
        for value, dims, _ in operands:
            single = _single_dims(dims)
            if single is None or not tag(value, tuple(None if d is None else loop_roles[d] for d in single)):
                return None
    follows = list(tags.values())
    sizes = {"m": m, "n": n, "k": k, **batch_sizes}
    for buf, dims in follows:
        if any(f is not None and buf.type.shape[i] != sizes[f] for i, f in enumerate(dims)):
            return None
    return _CubeKernel(cube, fill, epilogue, a, b, c, m, n, k, follows, batch_sizes)


@dataclass
class _CubePlan:
    kernel: _CubeKernel
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


# --------------------------------------------------------------------------- convolution tiling (analysis)


#: What each dim of a convolution's result follows: the batch, filter and output-row loops; columns stay whole.
CONV_ROLES = ("n", "f", "o", "w")


@dataclass
class _ConvKernel:
    """A kernel holding one ``linalg.conv_2d_nchw_fchw``: its input zero-padded into a local buffer (or read
    as it is), its accumulator initialised by elementwise ops before it (a fill, a bias) and read by
    elementwise ops after it (an activation, a residual)."""

    conv: ir.Operation
    shape: ConvShape
    #: the GM input the convolution reads, unpadded
    x: _Buffer
    #: the buffer the convolution reads: the padded local, or ``x`` itself
    window: _Buffer
    #: the zero fill, the copy of ``x`` into the padded local and its subview: replaced by padding each window
    pad_ops: list[ir.Operation]
    w: _Buffer
    acc: _Buffer
    init: list[ir.Operation]
    epilogue: list[ir.Operation]
    #: the accumulator and every buffer of ``init`` and ``epilogue`` -> what each of its dims follows
    follows: list[tuple[_Buffer, Follows]]

    def epilogue_buffers(self) -> list[tuple[str, int, bool]]:
        """The UB buffers for choose_conv_tiles: (the loops they follow, element bytes, transferred)."""
        return [("".join(f for f in follows if f), _element_bytes(buf.type.element_type), buf.transferred)
                for buf, follows in self.follows if buf is not self.acc]


def _is_zero(value: ir.Value) -> bool:
    """Whether ``value`` is an ``arith.constant`` zero scalar."""
    if isinstance(value.owner, ir.Block) or as_operation(value.owner).name != "arith.constant":
        return False
    attr = as_operation(value.owner).attributes["value"]
    if isinstance(attr, ir.FloatAttr) or ir.FloatAttr.isinstance(attr):
        return ir.FloatAttr(attr).value == 0.0
    return ir.IntegerAttr.isinstance(attr) and ir.IntegerAttr(attr).value == 0


def _zero_fill(op: ir.Operation, target: ir.Value) -> bool:
    """Whether ``op`` sets every element of ``target`` to zero (a linalg.fill, or a linalg.map of no input
    yielding a zero constant)."""
    if not op.operands[len(op.operands) - 1] == target:
        return False
    if op.name == "linalg.fill":
        return _is_zero(op.operands[0])
    if op.name == "linalg.map" and len(op.operands) == 1:
        body = [as_operation(o) for o in op.regions[0].blocks[0].operations]
        return len(body) == 1 and _is_zero(body[0].operands[0])
    return False


def _static_offsets(view: ir.Operation) -> list[int] | None:
    """A memref.subview's offsets when they are static and its strides are 1, else None."""
    if view.name != "memref.subview" or len(view.operands) != 1:
        return None
    if any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])):
        return None
    return list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))


def _conv_analysis(buffers: list[_Buffer], ops: list[ir.Operation]) -> _ConvKernel | None:
    """The kernel as a convolution kernel, or None when it is not one."""
    skip = ("memref.alloc", "memref.get_global", "arith.constant", "func.return")
    compute = [op for op in ops if op.name not in skip and op.name not in VIEW_OPS]
    convs = [op for op in compute if is_cube_op(op)]
    if len(convs) != 1 or convs[0].name != "linalg.conv_2d_nchw_fchw" or len(convs[0].operands) != 3:
        return None
    conv = convs[0]

    def find(value: ir.Value) -> _Buffer | None:
        return next((b for b in buffers if b.value == value), None)

    window, w, acc = (find(v) for v in conv.operands)
    if window is None or w is None or acc is None or w.kind != "gm_in" or w.written or w.has_views:
        return None
    position = next(i for i, op in enumerate(compute) if op_id(op) == op_id(conv))
    before = compute[:position]
    pad_ops: list[ir.Operation] = []
    pad_top = pad_left = 0
    x = window
    if window.kind == "local":  # the padded input: zero-filled, then x copied into its interior
        writers = [op for op in before if any(_root(v) == window.value for v in op.operands)]
        if len(writers) != 2 or not _zero_fill(writers[0], window.value) or writers[1].name != "memref.copy":
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
    tags: dict[int, tuple[_Buffer, Follows]] = {id(acc): (acc, CONV_ROLES)}

    def tag(value: ir.Value, follows: Follows) -> bool:
        buf = find(value)
        if buf is None or buf in (x, window, w):
            return False
        return tags.setdefault(id(buf), (buf, follows))[1] == follows

    initial = {op_id(op) for op in before}
    for op in [*before, *compute[position + 1:]]:  # elementwise over the result's [N, F, OH, OW]
        access = loop_access(op)
        if access is None:
            return None
        operands, iterators = access
        out = [(v, _single_dims(d)) for v, d, is_write in operands if is_write]
        if not out or len(iterators) != 4 or "reduction" in iterators:
            return None
        first, written = out[0][1], find(out[0][0])
        if first is None or None in first or written is None or written.type.shape != acc.type.shape:
            return None
        if op_id(op) in initial and written is not acc:  # before the convolution: the accumulator's start
            return None
        loop_roles = dict(zip(first, CONV_ROLES, strict=True))
        for value, dims, _ in operands:
            single = _single_dims(dims)
            if single is None or not tag(value, tuple(None if d is None else loop_roles[d] for d in single)):
                return None
    follows = list(tags.values())
    used = {id(b) for b in buffers if b.read or b.written}
    if used - {id(x), id(window), id(w)} - set(tags):
        return None
    n, c, h, width = x.type.shape
    f, c_w, kh, kw = w.type.shape
    _, _, padded_h, padded_w = window.type.shape
    n_out, f_out, oh, ow = acc.type.shape
    strides = tuple(ir.DenseIntElementsAttr(conv.attributes["strides"])[i] for i in range(2))
    dilations = tuple(ir.DenseIntElementsAttr(conv.attributes["dilations"])[i] for i in range(2))
    shape = ConvShape(n, c, h, width, f, kh, kw, oh, ow, strides, dilations, pad_top, pad_left, padded_w)
    if (c_w, n_out, f_out) != (c, n, f) or shape.window_rows(oh) > padded_h:
        return None
    sizes = {"n": n, "f": f, "o": oh, "w": ow}
    for buf, dims in follows:
        if any(role is not None and buf.type.shape[i] != sizes[role] for i, role in enumerate(dims)):
            return None
    return _ConvKernel(conv, shape, x, window, pad_ops, w, acc, before, compute[position + 1:], follows)


@dataclass
class _ConvPlan:
    kernel: _ConvKernel
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


# --------------------------------------------------------------------------- key-blocked attention


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
class _KeyBlockKernel:
    """Attention whose scores ``S[..., q, k]`` do not fit: recomputed block by block of keys in one pass per
    reduction over the keys (a softmax's max and sum, then the product with V), each pass reading complete
    rows of the earlier ones."""

    scores: _Buffer
    passes: list[_KeyPass]
    #: ops after the last reduction (on the result rows)
    epilogue: list[ir.Operation]
    #: every used buffer -> the role of each dim: "b0".. (batch), "q", "k", "d" (the scores' reduction), "e"
    #: (V's columns), None (a broadcast or whole dim)
    follows: list[tuple[_Buffer, Follows]]
    #: role -> extent
    sizes: dict[str, int]

    @property
    def batch(self) -> list[str]:
        return [r for r in self.sizes if r.startswith("b")]


def _split_live_ranges(kernel: ir.Operation) -> None:
    """A local buffer filled again after being read (a row max's buffer reused for the row sum) gets a new
    allocation from that fill on, so that each value has a buffer of its own."""
    block = kernel.regions[0].blocks[0]
    ops = [as_operation(o) for o in block.operations]
    for alloc in [op for op in ops if op.name == "memref.alloc"]:
        value = alloc.results[0]
        if any(as_operation(use.owner).name in VIEW_OPS for use in value.uses):
            continue
        users = [op for op in ops if any(v == value for v in op.operands)]
        for position, op in enumerate(users):
            if position and op.name == "linalg.fill" and op.operands[len(op.operands) - 1] == value:
                with ir.InsertionPoint(alloc), alloc.location:
                    fresh = _alloc(value.type)
                for later in users[position:]:
                    for index, operand in enumerate(later.operands):
                        if operand == value:
                            later.operands[index] = fresh
                break


def _key_block_analysis(buffers: list[_Buffer], ops: list[ir.Operation]) -> _KeyBlockKernel | None:
    """The kernel as key-blocked attention, or None when it is not: two cube ops, the first writing the
    scores S (a local), the last reducing S's key dim; between them only elementwise ops on S, reductions of
    S over its keys, and ops on other buffers; no views."""
    skip = ("memref.alloc", "memref.get_global", "arith.constant", "func.return")
    compute = [op for op in ops if op.name not in skip and op.name not in VIEW_OPS]
    cubes = [op for op in compute if is_cube_op(op)]
    used = [b for b in buffers if b.read or b.written]
    if len(cubes) != 2 or any(b.has_views or b.slices or b.slice_of for b in used):
        return None

    def find(value: ir.Value) -> _Buffer | None:
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
    tags: dict[int, tuple[_Buffer, Follows]] = {id(scores): (scores, roles_of_scores)}
    reductions = []
    # roles of every op's loops, from the operands already tagged, until nothing changes
    pending = list(compute)
    while pending:
        progress = False
        for op in list(pending):
            operands, iterators = accesses[op_id(op)]
            roles: dict[int, str] = {}
            for value, dims, _ in operands:
                single = _single_dims(dims)
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
                single = _single_dims(dims)
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

    def writes_of(op: ir.Operation) -> list[_Buffer]:
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
    return _KeyBlockKernel(scores, passes, epilogue, list(tags.values()), sizes)


@dataclass
class _KeyBlockPlan:
    kernel: _KeyBlockKernel
    #: role -> tile size ("b0".. 1 but the innermost batch role's, "q", "k"; "d" and "e" whole)
    tiles: dict[str, int]
    peaks: dict[str, int]
    double: bool

    @property
    def outer_tiles(self) -> int:
        return math.prod(self.kernel.sizes[r] // self.tiles[r] for r in [*self.kernel.batch, "q"])


def _key_block_reads(kernel: _KeyBlockKernel, buf: _Buffer) -> int:
    """How many passes load ``buf`` per key block (0: it is loaded once per tile)."""
    return sum(1 for p in kernel.passes if any(v == buf.value for op in p.body for v in op.operands))


def _plan_key_blocks(kernel: _KeyBlockKernel, target: NpuTarget, double_buffer: bool) -> _KeyBlockPlan | str:
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
                    size = math.prod(shape) * _element_bytes(buf.type.element_type)
                    per_block = "k" in follows and buf.transferred
                    slots = 2 if double_buffer and per_block and counts["k"] > 1 else 1
                    peaks[buf.space] += slots * target.buffer(buf.space).footprint(size)
                    if buf.transferred:
                        whole = math.prod(buf.type.shape) * _element_bytes(buf.type.element_type)
                        repeats = math.prod(counts[r] for r in [*batch, "q"] if r not in follows)
                        passes = _key_block_reads(kernel, buf) if per_block else 1
                        gm += whole * repeats * max(passes, 1) if follows != (None,) * len(follows) else whole
                if smallest is None or peaks["l1"] < smallest["l1"]:
                    smallest = peaks
                if _fits(peaks, target) is not None:
                    continue
                key = (gm, -tk, -th * tq)
                if best is None or key < best[0]:
                    best = (key, _KeyBlockPlan(kernel, tiles, peaks, double_buffer and counts["k"] > 1))
    if best is None:
        need = ", ".join(f"{s.upper()} {b}" for s, b in (smallest or {}).items() if b)
        return f"no tiling of the key blocks fits: the smallest tiles need {need} bytes"
    return best[1]


def rewrite_key_blocks(kernel: ir.Operation, plan: _KeyBlockPlan) -> int:
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

    def tile_shape(buf: _Buffer, follows: Follows) -> list[int]:
        return [tiles.get(r, sizes[r]) if r else n for r, n in zip(follows, buf.type.shape, strict=True)]

    with kernel.location:
        with ir.InsertionPoint(ret):
            zero = _index(0)
        ivs: dict[str, ir.Value] = {r: zero for r in tiles}
        # staging: locals become tiles; GM buffers get tile buffers
        staged: dict[int, ir.Value] = {}
        per_block: list[tuple[_Buffer, Follows]] = []
        slots = 2 if plan.double else 1
        for buf, follows in kb.follows:
            shape = tile_shape(buf, follows)
            space = mem_space(buf.space)
            if buf.kind == "local":
                buf.value.set_type(ir.MemRefType.get(shape, buf.type.element_type, None, space))
                continue
            moves_per_block = "k" in follows and buf.kind == "gm_in"
            with ir.InsertionPoint(ret):
                staged[id(buf)] = _alloc(ir.MemRefType.get([2, *shape] if moves_per_block and slots == 2 else shape,
                                                           buf.type.element_type, None, space))
            if moves_per_block:
                per_block.append((buf, follows))
        whole = [(buf, f) for buf, f in kb.follows if buf.kind != "local" and not any(f)]
        for buf, _ in whole:  # follows no loop: moved once, before (in) or after (out) everything
            if buf.kind == "gm_in":
                with ir.InsertionPoint(ret):
                    _dma(buf.value, staged[id(buf)])
                transfers += 1
        # the outer loops: batch and query tiles of more than one
        tile_end = ret
        for role in [*kb.batch, "q"]:
            if counts[role] == 1:
                continue
            with ir.InsertionPoint(tile_end):
                loop = scf.ForOp(zero, _index(sizes[role]), _index(tiles[role]))
            with ir.InsertionPoint(loop.body):
                tile_end = scf.YieldOp([]).operation
            ivs[role] = loop.induction_variable

        def view_of(buf: _Buffer, follows: Follows) -> ir.Value:
            """The GM tile of ``buf`` at the current loop indices."""
            return _view(buf.value, [ivs[r] if r in ivs else 0 for r in follows], tile_shape(buf, follows))

        for buf, follows in kb.follows:  # inputs that follow only the outer loops: once per tile
            if buf.kind == "gm_in" and any(follows) and "k" not in follows:
                with ir.InsertionPoint(tile_end):
                    _dma(view_of(buf, follows), staged[id(buf)])
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
                key_loop = scf.ForOp(zero, _index(sizes["k"]), _index(tiles["k"]))
            with ir.InsertionPoint(key_loop.body):
                point = scf.YieldOp([]).operation
            ivs["k"] = key_loop.induction_variable
            extra: dict[int, ir.Value] = {}
            with ir.InsertionPoint(point):
                slot = arith.remui(arith.divui(ivs["k"], _index(tiles["k"])), _index(2)) if slots == 2 else None
            for buf, follows in per_block:
                if not any(v == buf.value for op in key_pass.body for v in op.operands):
                    continue
                with ir.InsertionPoint(point):
                    view = _slot_subview(staged[id(buf)], slot, buf.space) if slot is not None else staged[id(buf)]
                    _dma(view_of(buf, follows), view)
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
                    _dma(staged[id(buf)], view_of(buf, follows) if any(follows) else buf.value)
                transfers += 1
        for op in reversed(originals):
            op.erase()
    return transfers


# --------------------------------------------------------------------------- rewriting


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _strides(shape: list[int]) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(reversed(strides))


def _space_suffix(space: str | None) -> str:
    return f', #npu.mem<"{space}">' if space else ""


def _slot_subview(source: ir.Value, slot: ir.Value, space: str) -> ir.Value:
    """Slot ``slot`` of a two-slot buffer ``memref<2x...>``, rank-reduced to the slot's shape."""
    t = ir.MemRefType(source.type)
    shape = list(t.shape)
    inner = shape[1:]
    strides = _strides(shape)[1:]
    dims = "x".join(str(d) for d in inner)
    result = ir.Type.parse(
        f"memref<{dims}x{t.element_type}, strided<[{', '.join(map(str, strides))}], offset: ?>{_space_suffix(space)}>"
    )
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    return _subview(source, slot, result, [dynamic] + [0] * len(inner), [1, *inner], [1] * len(shape))


def _subview(source: ir.Value, offset: ir.Value, result: ir.Type, offsets: list[int], sizes: list[int],
             strides: list[int]) -> ir.Value:
    op = ir.Operation.create(
        "memref.subview",
        results=[result],
        operands=[source, offset],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
            "static_sizes": ir.DenseI64ArrayAttr.get(sizes),
            "static_strides": ir.DenseI64ArrayAttr.get(strides),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0]),
        },
    )
    return op.results[0]


def _dma(source: ir.Value, target: ir.Value) -> None:
    ir.Operation.create("npu.dma", operands=[source, target])


def _alloc(t: ir.Type) -> ir.Value:
    return ir.Operation.create("memref.alloc", results=[t], operands=[],
                               attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).results[0]


def _retype_views(value: ir.Value, space: str) -> None:
    """Give the views derived from ``value`` (now in ``space``) the same memory space."""
    for use in list(value.uses):
        owner = as_operation(use.owner)
        if owner.name in VIEW_OPS and use.operand_number == 0:
            for result in owner.results:
                result.set_type(with_space(result.type, space))
                _retype_views(result, space)


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
        groups = _groups(view)
        if view.name == "memref.expand_shape":
            members = groups[axis]
            new_axis = next((d for d in members if shape[d] != 1), members[0])
        else:
            new_axis = next(g for g, members in enumerate(groups) if axis in members)
        shape[new_axis] = tile
        dims = "".join(f"{d}x" for d in shape)
        layout = f", strided<[{', '.join(map(str, _strides(shape)))}], offset: ?>" if dynamic_offset else ""
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


def _tile_type(buf: _Buffer, tiled: dict[int, int], slots: int) -> ir.Type:
    shape = buf.tile_shape(tiled)
    if slots == 2:
        shape = [2, *shape]
    return ir.MemRefType.get(shape, buf.type.element_type, None, mem_space(buf.space))


def _retile(value: ir.Value, tiled: dict[int, int], space: str) -> None:
    """The reshapes of ``value``, now a tile in ``space`` (``tiled``: dim -> tile size), reshape the tile."""
    for dim, size in tiled.items():
        _retile_views(value, dim, size, space)


def _build_nest(block: ir.Block, loops: list[_TiledLoop], staged_slices: set) -> list[scf.ForOp]:
    """The tile loops, outermost first, with every compute op of ``block`` moved into the innermost one."""
    movable = [as_operation(o) for o in block.operations
               if as_operation(o).name not in ("memref.alloc", "memref.get_global", "arith.constant", "npu.dma",
                                               "func.return") and op_id(o) not in staged_slices]
    with ir.InsertionPoint(movable[0]):
        bounds = [(_index(0), _index(loop.extent), _index(loop.tile)) for loop in loops]
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


def _tile_index(nest: list[scf.ForOp], loops: list[_TiledLoop], level: int) -> ir.Value:
    """The running number of the current tile of the loops up to ``level`` (outer loops' tiles counted
    first): consecutive transfers at that level alternate slots by it."""
    index = None
    for loop, tiled in zip(nest[:level + 1], loops[:level + 1], strict=True):
        step = arith.divui(loop.induction_variable, _index(tiled.tile))
        index = step if index is None else arith.addi(arith.muli(index, _index(tiled.count)), step)
    return index


def rewrite_kernel(kernel: ir.Operation, plan: _Plan) -> int:
    """Apply ``plan``: staging buffers, explicit transfers, the tile nest.  Returns the number of npu.dma ops.

    A buffer that follows loops of the nest moves in the body of the innermost of them: inputs at its start
    (before any inner loop), outputs before its end; a buffer that follows none moves once, before (inputs)
    or after (outputs) the nest."""
    block = kernel.regions[0].blocks[0]
    ret = as_operation(block.operations[len(block.operations) - 1])
    used = [(index, b) for index, b in enumerate(plan.buffers) if b.read or b.written]
    for _, b in used:  # globals and slices read as they are first: their staging is filled at the top
        if b.slice_of or (not isinstance(b.value.owner, ir.Block)
                          and as_operation(b.value.owner).name == "memref.get_global"):
            as_operation(b.value.owner).move_before(as_operation(block.operations[0]))
    staged_slices = {op_id(view) for _, b in used for view in b.slices} | {
        op_id(as_operation(b.value.owner)) for _, b in used if b.slice_of}
    first = next(as_operation(o) for o in block.operations
                 if as_operation(o).name != "memref.get_global" and op_id(o) not in staged_slices)
    loops = [loop for loop in plan.loops if loop.count > 1]  # a loop of one tile is no loop

    def levels(index: int) -> list[int]:
        return [level for level, loop in enumerate(loops) if index in loop.dims]

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
                    _retype_views(b.value, b.space)
        # Staging for GM buffers that are not tiled: filled before the nest, drained after it.
        for _, b in used:
            for view in b.slices:  # a GM input read only through static slices: stage just the slices
                view.move_before(first)
                result = view.results[0]
                t = ir.MemRefType(result.type)
                with ir.InsertionPoint(first):
                    buffer = _alloc(ir.MemRefType.get(list(t.shape), t.element_type, None,
                                                      mem_space(b.space)))
                    dma = ir.Operation.create("npu.dma", operands=[result, buffer])
                result.replace_all_uses_except(buffer, dma)
                _relayout_reshapes(buffer, b.space)
                transfers += 1
        for index, b in used:
            if b.kind == "local" or levels(index) or b.slices:
                continue
            with ir.InsertionPoint(first):
                buffer = _alloc(_tile_type(b, {}, 1))
            b.value.replace_all_uses_with(buffer)
            _retype_views(buffer, b.space)
            if b.kind == "gm_in" or b.unknown_access:
                with ir.InsertionPoint(first):
                    _dma(b.value, buffer)
                transfers += 1
            if b.kind == "gm_out":
                with ir.InsertionPoint(ret):
                    _dma(buffer, b.value)
                transfers += 1
        if not loops:
            return transfers
        nest = _build_nest(block, loops, staged_slices)
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
                    slot_of[level] = arith.remui(_tile_index(nest, loops, level), _index(2))
            tiled = _tiled_dims(plan.loops, index)
            with ir.InsertionPoint(nest[0].operation):
                buffer = _alloc(_tile_type(b, tiled, slots))
            with ir.InsertionPoint(heads[level]):
                view = _slot_subview(buffer, slot_of[level], b.space) if slots == 2 else buffer
            b.value.replace_all_uses_with(view)
            _retile(view, tiled, b.space)
            offsets = [None] * b.type.rank
            for loop, iteration in zip(loops, nest, strict=True):
                if index in loop.dims:
                    offsets[loop.dims[index]] = iteration.induction_variable
            window = b.tile_shape(tiled)
            if b.kind == "gm_in":
                with ir.InsertionPoint(heads[level]):
                    _dma(_tile_view(b.value, offsets, window), view)
            else:
                with ir.InsertionPoint(tails[level]):
                    _dma(view, _tile_view(b.value, offsets, window))
            transfers += 1
    return transfers


def rewrite_cube(kernel: ir.Operation, plan: _CubePlan) -> int:
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
            zero, one = _index(0), _index(1)
            bounds = [(_index(size), _index(step)) for size, step in ((ck.m, t.tm), (ck.n, t.tn), (ck.k, t.tk))]
            batch_bounds = [_index(size) for size in ck.batch.values()]
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
        outermost = batch_loops[0] if batch_loops else m_loop
        with ir.InsertionPoint(as_operation(k_loop.body.operations[0])):
            slot = arith.remui(arith.divui(ivs["k"], _index(t.tk)), _index(2)) if plan.double and k_steps > 1 \
                else None
        for buf, follows in ck.follows:
            shape = [sizes[f] if f else d for f, d in zip(follows, buf.type.shape, strict=True)]
            offsets = [ivs[f] if f else None for f in follows]
            space = buf.space
            tiled = any(follows)
            if buf.kind == "local":
                buf.value.set_type(ir.MemRefType.get(shape, buf.type.element_type, None, mem_space(space)))
                continue
            operand = buf is ck.a or buf is ck.b
            slots = 2 if operand and slot is not None else 1
            alloc_shape = [2, *shape] if slots == 2 else shape
            with ir.InsertionPoint(outermost.operation):
                buffer = _alloc(ir.MemRefType.get(alloc_shape, buf.type.element_type, None, mem_space(space)))
            if not tiled:  # kept whole: loaded once before the loops, stored once after them
                buf.value.replace_all_uses_with(buffer)
                if buf.kind == "gm_in":
                    with ir.InsertionPoint(outermost.operation):
                        _dma(buf.value, buffer)
                else:
                    with ir.InsertionPoint(ret):
                        _dma(buffer, buf.value)
                transfers += 1
                continue
            # operand tiles are loaded right before the cube op, the epilogue's before the fill (or the K loop)
            head = ck.cube if operand else ck.fill if ck.fill is not None else k_loop.operation
            with ir.InsertionPoint(head):
                view = _slot_subview(buffer, slot, space) if slots == 2 else buffer
            buf.value.replace_all_uses_with(view)
            if buf.kind == "gm_in":
                with ir.InsertionPoint(head):
                    _dma(_tile_view(buf.value, offsets, shape), view)
            else:
                with ir.InsertionPoint(n_yield):
                    _dma(view, _tile_view(buf.value, offsets, shape))
            transfers += 1
    return transfers


def _view(source: ir.Value, offsets: list[ir.Value | int], sizes: list[ir.Value | int]) -> ir.Value:
    """``source`` restricted to ``[offsets, offsets + sizes)``, each offset and size static (an int) or not."""
    t = ir.MemRefType(source.type)
    strides, _ = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_size()
    dims = "x".join("?" if isinstance(d, ir.Value) else str(d) for d in sizes)
    space = f", {t.memory_space}" if t.memory_space is not None else ""
    result = ir.Type.parse(f"memref<{dims}x{t.element_type}, strided<[{', '.join(map(str, strides))}], "
                           f"offset: ?>{space}>")
    values = [v for v in offsets if isinstance(v, ir.Value)]
    sized = [v for v in sizes if isinstance(v, ir.Value)]
    marker = ir.ShapedType.get_dynamic_stride_or_offset()
    op = ir.Operation.create(
        "memref.subview",
        results=[result],
        operands=[source, *values, *sized],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get([marker if isinstance(o, ir.Value) else o for o in offsets]),
            "static_sizes": ir.DenseI64ArrayAttr.get([dynamic if isinstance(d, ir.Value) else d for d in sizes]),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(sizes)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(values), len(sized), 0]),
        },
    )
    return op.results[0]


def rewrite_conv(kernel: ir.Operation, plan: _ConvPlan) -> int:
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
            zero = _index(0)
            bounds = {loop: (_index(extent), _index(step)) for loop, extent, step in
                      (("n", s.n, t.tn), ("f", s.f, t.tf), ("o", s.oh, t.toh), ("c", s.c, t.tc))}
        # a loop of one tile is no loop: its index is 0
        ivs: dict[str, ir.Value] = {}
        loops: list[tuple[str, scf.ForOp]] = []
        tile_end = channel_end = ret  # where the epilogue and the store go, and where the convolution goes
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
        ck.conv.move_before(channel_end)
        channel_loop = next((loop.operation for name, loop in loops if name == "c"), None)
        for op in ck.init:
            op.move_before(channel_loop or ck.conv)
        for op in ck.epilogue:
            op.move_before(tile_end)
        # the allocations go before the tile loops (or before the init ops, when only the channel loop exists)
        outer = [loop.operation for name, loop in loops if name != "c"]
        outermost = outer[0] if outer else ck.init[0] if ck.init else channel_loop or ck.conv
        slots = 2 if plan.double and loops else 1
        with ir.InsertionPoint(ck.conv):
            slot = None
            if slots == 2:  # the running number of the (n, f, o, c) tile, odd or even
                index = None
                for name, loop in loops:
                    step = arith.divui(loop.induction_variable, bounds[name][1])
                    index = step if index is None else arith.addi(arith.muli(index, _index(counts[name])), step)
                slot = arith.remui(index, _index(2))
        # the input window and the weight tile, in L1
        window_shape = [t.tn, t.tc, rows, s.padded_w]
        weight_shape = [t.tf, t.tc, s.kh, s.kw]
        staged = []
        for shape in (window_shape, weight_shape):
            with ir.InsertionPoint(outermost):
                buffer = _alloc(ir.MemRefType.get([2, *shape] if slots == 2 else shape, element, None,
                                                  mem_space("l1")))
            with ir.InsertionPoint(ck.conv):
                staged.append(_slot_subview(buffer, slot, "l1") if slots == 2 else buffer)
        window, weights = staged
        padded = ck.window is not ck.x
        with ir.InsertionPoint(ck.conv):
            start = arith.subi(arith.muli(ivs["o"], _index(s.strides[0])), _index(s.pad_top))
            if padded:
                linalg.fill(arith.ConstantOp(element, 0.0).result, outs=[window])
                # the rows of x the window holds (none above row 0 or below row H - 1): zero padding around them
                low = arith.maxsi(start, zero)
                high = arith.minsi(arith.addi(start, _index(rows)), _index(s.h))
                count = arith.subi(high, low)
                source = _view(ck.x.value, [ivs["n"], ivs["c"], low, 0], [t.tn, t.tc, count, s.w])
                dest = _view(window, [0, 0, arith.subi(low, start), s.pad_left], [t.tn, t.tc, count, s.w])
                _dma(source, dest)
            else:
                _dma(_view(ck.x.value, [ivs["n"], ivs["c"], start, 0], [t.tn, t.tc, rows, s.w]), window)
            _dma(_view(ck.w.value, [ivs["f"], ivs["c"], 0, 0], weight_shape), weights)
        transfers += 2
        ck.conv.operands[0] = window
        ck.conv.operands[1] = weights
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
                buffer = _alloc(tile_type)
            buf.value.replace_all_uses_with(buffer)
            if not any(follows):  # a scalar or broadcast operand: loaded once before the loops
                with ir.InsertionPoint(outermost if buf.kind == "gm_in" else ret):
                    _dma(buf.value, buffer) if buf.kind == "gm_in" else _dma(buffer, buf.value)
                transfers += 1
                continue
            offsets = [ivs[f] if f in ivs else 0 for f in follows]
            if buf.kind == "gm_in":
                with ir.InsertionPoint(tile_head):
                    _dma(_view(buf.value, offsets, shape), buffer)
            else:
                with ir.InsertionPoint(tile_end):
                    _dma(buffer, _view(buf.value, offsets, shape))
            transfers += 1
    return transfers


def forward_result_copies(func_op: ir.Operation) -> int:
    """``memref.copy %buf, %out`` where %buf is a fresh allocation and %out is only this copy's target:
    compute into %out directly (no GM -> GM copy).  Returns the number of copies removed."""
    block = func_op.regions[0].blocks[0]
    removed = 0
    for op in [as_operation(o) for o in block.operations]:
        if op.name != "memref.copy":
            continue
        source, dest = op.operands[0], op.operands[1]
        if not isinstance(dest.owner, ir.Block) or isinstance(source.owner, ir.Block):
            continue
        alloc = as_operation(source.owner)
        if alloc.name != "memref.alloc" or source.type != dest.type:
            continue
        if sum(1 for _ in dest.uses) != 1:
            continue
        op.erase()
        source.replace_all_uses_with(dest)
        alloc.erase()
        removed += 1
    return removed


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
        funcs = functions(module)
        for name, func_op in funcs.items():
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
                context.fail(error.diagnostics[0].message, func_op.location)
            i64 = ir.IntegerType.get_signless(64, module.context)
            if cube is not None:
                func_op.attributes["npu.matmul"] = ir.DenseI64ArrayAttr.get(list(cube.shape))
            # copy and cube plans are only chosen when the kernel does not fit whole: tiled, whatever their count
            if isinstance(plan, _CopyPlan):
                transfers, tiles, tiled = rewrite_copies(func_op, plan), plan.tiles, True
                double = False  # (its slots are per copy; the kernel is not marked)
                what = f"{tiles} chunk(s)"
            elif isinstance(plan, _KeyBlockPlan):
                transfers, tiled, double = rewrite_key_blocks(func_op, plan), True, plan.double
                tiles = plan.outer_tiles
                heads = plan.kernel.batch[-1] if plan.kernel.batch else None
                shape = [plan.tiles[heads] if heads else 1, plan.tiles["q"], plan.tiles["k"]]
                func_op.attributes["npu.key_blocks"] = ir.DenseI64ArrayAttr.get(shape)
                what = (f"{tiles} tile(s) of {shape[0]} head(s) x {shape[1]} queries, keys in blocks of {shape[2]}, "
                        f"{len(plan.kernel.passes)} pass(es)")
            elif isinstance(plan, _ConvPlan):
                transfers, tiled, double = rewrite_conv(func_op, plan), True, plan.double
                counts = plan.counts
                tiles = counts["n"] * counts["f"] * counts["o"]
                t = plan.tiles
                func_op.attributes["npu.conv_tile"] = ir.DenseI64ArrayAttr.get([t.tn, t.tf, t.toh, t.tc])
                what = f"convolution tiles {t.tn}x{t.tf}x{t.toh}x{t.tc} (batch, filters, output rows, channels)"
            elif isinstance(plan, _CubePlan):
                transfers, tiles, tiled = rewrite_cube(func_op, plan), math.prod(plan.tile_counts[:2]), True
                double = plan.double
                t = plan.tiles
                func_op.attributes["npu.cube_tile"] = ir.DenseI64ArrayAttr.get([t.tm, t.tn, t.tk])
                what = f"cube tiles {t.tm}x{t.tn}x{t.tk} over {plan.kernel.m}x{plan.kernel.n}x{plan.kernel.k}"
            else:
                transfers, tiles = rewrite_kernel(func_op, plan), plan.tiles
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
