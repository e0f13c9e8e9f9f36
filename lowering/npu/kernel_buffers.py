"""What npu-buffer-assign knows of a kernel, shared by its tilings.

How each op indexes its buffers (:func:`loop_access`: the loop dims of each
operand's indices), the kernel's root buffers with where they live and how
they are accessed (:func:`collect_buffers`), and the IR builders the
rewrites share (staging buffers, their slots, GM windows, transfers).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import as_operation, nested_ops, op_id
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.dialect import with_space

__all__ = [
    "CUBE_OPS", "PLACED_SPACES", "RESHAPE_VIEWS", "VIEW_OPS", "Access", "Follows", "KernelBuffer",
    "NpuAssignError", "alloc", "collapse_view", "collect_buffers", "dma", "element_bytes", "fill_constant",
    "has_indices", "index_constant", "index_shifts", "is_cube_op", "loop_access", "map_dims", "memref_accesses",
    "reassociation", "reshaped_only", "retype_views", "root_buffer", "row_major_strides", "shift_indices",
    "single_dims", "slot_view", "space_over_capacity", "tile_slot", "window_view",
]


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
    maps = [map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if not all(reductions & frozenset().union(*maps[k]) for k in (0, 1)):
        return False
    # an M or N: a parallel dim one input has and the other has not (a batch of dot products, a layer norm's
    # column sums of dy * x_hat, has none: the vector unit's)
    a, b = (frozenset().union(*maps[k]) for k in (0, 1))
    if not (a ^ b) - reductions:
        return False
    body = {o.operation.name for o in op.regions[0].blocks[0].operations}
    return bool(body & {"arith.mulf", "arith.muli"}) and bool(body & {"arith.addf", "arith.addi"})


#: On-chip spaces the pass allocates in (L0A/L0B hold the cube's fractal blocks streamed from L1; not allocated).
PLACED_SPACES = ("ub", "l1", "l0c")


Access = tuple[list[tuple[ir.Value, list[frozenset[int]], bool]], list[str]]


def _dims_of(expr: ir.AffineExpr, n_dims: int) -> frozenset[int]:
    """The loop dims an affine expression uses."""
    text = str(expr)
    return frozenset(d for d in range(n_dims) if re.search(rf"\bd{d}\b", text))


def map_dims(attr: ir.Attribute) -> list[frozenset[int]]:
    amap = ir.AffineMapAttr(attr).value
    return [_dims_of(e, amap.n_dims) for e in amap.results]


def _iterators(op: ir.Operation) -> list[str]:
    """The loop kinds of a linalg op with indexing maps: its ``iterator_types``, or, for ops without them
    (``linalg.contract``, named ops given explicit maps), a loop dim the output map does not use is a
    reduction."""
    if "iterator_types" in op.attributes:
        return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    out = frozenset().union(*map_dims(ir.AffineMapAttr.get(maps[-1])))
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
        return [map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
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
    if name == "linalg.depthwise_conv_2d_nchw_chw":  # (n, c, oh, ow, kh, kw): channel c reads channel c
        return [[one({0}), one({1}), one({2, 4}), one({3, 5})], [one({1}), one({4}), one({5})],
                [one({0}), one({1}), one({2}), one({3})]]
    if name == "linalg.matvec":  # (m, k)
        return [[one({0}), one({1})], [one({1})], [one({0})]]
    if name == "linalg.vecmat":  # (n, k)
        return [[one({1})], [one({1}), one({0})], [one({0})]]
    if name == "linalg.dot":  # (k)
        return [[one({0})], [one({0})], []]
    if name in ("linalg.pooling_nchw_max", "linalg.pooling_nchw_sum"):  # (n, c, oh, ow, kh, kw); a window shape
        return [[one({0}), one({1}), one({2, 4}), one({3, 5})], [one({4}), one({5})],
                [one({0}), one({1}), one({2}), one({3})]]
    return None


_NAMED_ITERATORS = {
    "linalg.matmul": 3, "linalg.matmul_transpose_a": 3, "linalg.matmul_transpose_b": 3,
    "linalg.batch_matmul": 4, "linalg.batch_matmul_transpose_a": 4, "linalg.batch_matmul_transpose_b": 4,
    "linalg.conv_2d_nchw_fchw": 7, "linalg.depthwise_conv_2d_nchw_chw": 6, "linalg.pooling_nchw_max": 6,
    "linalg.pooling_nchw_sum": 6, "linalg.matvec": 2, "linalg.vecmat": 2, "linalg.dot": 1,
}


_NAMED_PARALLEL = {"linalg.matmul": 2, "linalg.matmul_transpose_a": 2, "linalg.matmul_transpose_b": 2,
                   "linalg.batch_matmul": 3, "linalg.batch_matmul_transpose_a": 3,
                   "linalg.batch_matmul_transpose_b": 3, "linalg.conv_2d_nchw_fchw": 4,
                   "linalg.depthwise_conv_2d_nchw_chw": 4, "linalg.pooling_nchw_max": 4, "linalg.pooling_nchw_sum": 4,
                   "linalg.matvec": 1, "linalg.vecmat": 1, "linalg.dot": 0}


def loop_access(op: ir.Operation) -> Access | None:
    """How ``op`` indexes its memref operands, or None when the op is not understood (then it is not tiled)."""
    memrefs = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
    if not memrefs:
        return [], []
    name = op.name
    if name in ("memref.copy", "linalg.copy"):
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
        maps = [map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        n_out = len(op.operands) - _n_inputs(op)
        accesses = []
        for index, (value, dims) in enumerate(zip(op.operands, maps, strict=True)):
            if isinstance(value.type, ir.MemRefType):
                accesses.append((value, dims, index >= len(op.operands) - n_out))
        return accesses, _iterators(op)
    if name.startswith("linalg.") and "indexing_maps" in op.attributes and "operandSegmentSizes" in op.attributes:
        # linalg.contract, or a named op given explicit maps: the maps say it all, the segments which are outs.
        maps = [map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
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


@dataclass
class KernelBuffer:
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
        element = element_bytes(self.type.element_type)
        if self.slices:
            return [math.prod(ir.MemRefType(op.results[0].type).shape) * element for op in self.slices]
        return [math.prod(self.tile_shape(tiled)) * element]

    def describe(self, tiled: dict[int, int]) -> str:
        role = {"gm_in": "in", "gm_out": "out", "local": "local"}[self.kind]
        if self.slices:
            shapes = [list(ir.MemRefType(op.results[0].type).shape) for op in self.slices]
            return ", ".join(f"{'x'.join(str(d) for d in sh)}x{self.type.element_type} in (slice)" for sh in shapes)
        return f"{''.join(f'{d}x' for d in self.tile_shape(tiled))}{self.type.element_type} {role}"


def element_bytes(element: ir.Type) -> int:
    text = str(element)
    if text == "i1":
        return 1
    if text in ("bf16", "f16"):
        return 2
    width = int("".join(c for c in text if c.isdigit()) or 32)
    return max(1, width // 8)


def root_buffer(value: ir.Value) -> ir.Value:
    while not isinstance(value.owner, ir.Block) and as_operation(value.owner).name in VIEW_OPS:
        value = as_operation(value.owner).operands[0]
    return value


class NpuAssignError(GraphfuseError):
    pass


def collect_buffers(kernel: ir.Operation) -> tuple[list[KernelBuffer], list[ir.Operation], bool]:
    """The kernel's root buffers, its top-level ops, and whether row tiling is possible so far."""
    block = kernel.regions[0].blocks[0]
    ops = [as_operation(o) for o in block.operations]
    buffers: dict[int, KernelBuffer] = {}
    by_value: list[tuple[ir.Value, KernelBuffer]] = []

    def find(value: ir.Value) -> KernelBuffer | None:
        for v, b in by_value:
            if v == value:
                return b
        return None

    for arg in block.arguments:
        if isinstance(arg.type, ir.MemRefType):
            buf = KernelBuffer(arg, "gm_in")
            by_value.append((arg, buf))
            buffers[len(buffers)] = buf
    tileable = True
    for op in ops:
        if op.name == "memref.alloc" or op.name == "memref.get_global":
            buf = KernelBuffer(op.results[0], "local" if op.name == "memref.alloc" else "gm_in")
            by_value.append((op.results[0], buf))
            buffers[len(buffers)] = buf
        elif op.name in VIEW_OPS:
            root = find(root_buffer(op.results[0]))
            if root is not None:
                root.has_views = True
        elif len(op.regions) and not op.name.startswith("linalg."):
            tileable = False  # nested control flow: not analysed, run as one tile
            # What it reads inside is loaded whole; what it writes (maybe in part) is loaded and stored whole.
            for inner in nested_ops(op):
                for value, reads, writes in memref_accesses(inner):
                    buf = find(root_buffer(value))
                    if buf is not None:
                        buf.read |= reads or writes
                        buf.written |= writes
                        buf.unknown_access |= writes
    for op in ops:
        access = loop_access(op) if op.name not in VIEW_OPS else ([], [])
        memref_operands = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
        if access is None:
            tileable = False
            # Unknown op: it may read and write any of its memref operands.
            for v in memref_operands:
                buf = find(root_buffer(v))
                if buf is not None:
                    buf.read = buf.written = buf.unknown_access = True
            continue
        for value, _dims, is_write in access[0]:
            buf = find(root_buffer(value))
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
                found.append(KernelBuffer(view.results[0], "gm_in", read=True, cube_read=buf.cube_read, slice_of=True))
            buf.read, buf.slices = False, []
    return found, ops, tileable


def memref_accesses(op: ir.Operation) -> list[tuple[ir.Value, bool, bool]]:
    """The memref operands of an op (not a view, not in a linalg payload), each with whether it is read and
    whether written (both when the op is not understood; a linalg.generic's output is read too when its
    payload uses the output's value)."""
    if op.name in VIEW_OPS or op.parent.name.startswith("linalg."):
        return []
    if op.name == "memref.load":
        return [(op.operands[0], True, False)]
    if op.name == "memref.store":
        return [(op.operands[1], False, True)]
    access = loop_access(op)
    if access is None:
        return [(v, True, True) for v in op.operands if isinstance(v.type, ir.MemRefType)]
    return [(value, not is_write or _payload_reads(op, value), is_write) for value, _, is_write in access[0]]


def _payload_reads(op: ir.Operation, output: ir.Value) -> bool:
    """Whether a linalg.generic's payload uses the current value of its output ``output``."""
    if op.name != "linalg.generic":
        return False
    position = next(k for k, v in enumerate(op.operands) if v == output)
    return any(True for _ in op.regions[0].blocks[0].arguments[position].uses)


def _read_directly(value: ir.Value) -> bool:
    """Whether ``value`` is only an operand of non-view ops (a slice read as it is, not reshaped)."""
    return all(as_operation(use.owner).name not in VIEW_OPS for use in value.uses)


#: Views that keep a contiguous identity-layout buffer contiguous: a staged slice may be reshaped by them.
RESHAPE_VIEWS = frozenset({"memref.expand_shape", "memref.collapse_shape"})


def reshaped_only(value: ir.Value) -> bool:
    """Whether every view derived from ``value`` is a reshape (expand/collapse_shape), recursively."""
    for use in value.uses:
        owner = as_operation(use.owner)
        if owner.name in VIEW_OPS and (owner.name not in RESHAPE_VIEWS or not reshaped_only(owner.results[0])):
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
        if not reshaped_only(owner.results[0]):
            return []
        slices.append(owner)
    return slices


#: What a dim of a buffer follows in a cube-tiled kernel: the M, N or K loop, or nothing (kept whole).
Follows = tuple[str | None, ...]


def single_dims(dims: list[frozenset[int]]) -> list[int | None] | None:
    """Each indexing result's one loop dim (None for a constant index), or None when one mixes loops."""
    out: list[int | None] = []
    for d in dims:
        if len(d) > 1:
            return None
        out.append(next(iter(d)) if d else None)
    return out


def space_over_capacity(peaks: dict[str, int], target: NpuTarget) -> str | None:
    """The first space over capacity, or None."""
    return next((s for s in PLACED_SPACES if peaks[s] > target.buffer(s).bytes), None)


def index_constant(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def row_major_strides(shape: list[int]) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(reversed(strides))


def _space_suffix(space: str | None) -> str:
    return f', #npu.mem<"{space}">' if space else ""


def slot_view(source: ir.Value, slot: ir.Value, space: str) -> ir.Value:
    """Slot ``slot`` of a two-slot buffer ``memref<2x...>``, rank-reduced to the slot's shape."""
    t = ir.MemRefType(source.type)
    shape = list(t.shape)
    inner = shape[1:]
    strides = row_major_strides(shape)[1:]
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


def dma(source: ir.Value, target: ir.Value) -> None:
    ir.Operation.create("npu.dma", operands=[source, target])


def alloc(t: ir.Type) -> ir.Value:
    return ir.Operation.create("memref.alloc", results=[t], operands=[],
                               attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).results[0]


def window_view(source: ir.Value, offsets: list[ir.Value | int], sizes: list[ir.Value | int]) -> ir.Value:
    """``source`` restricted to ``[offsets, offsets + sizes)``, each offset and size static (an int) or not."""
    t = ir.MemRefType(source.type)
    strides, base = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_size()
    dims = "x".join("?" if isinstance(d, ir.Value) else str(d) for d in sizes)
    space = f", {t.memory_space}" if t.memory_space is not None else ""
    offset = "?"
    if not any(isinstance(o, ir.Value) for o in offsets) and base != ir.ShapedType.get_dynamic_stride_or_offset():
        offset = str(base + sum(o * s for o, s in zip(offsets, strides, strict=True)))  # all static: known
    result = ir.Type.parse(f"memref<{dims}x{t.element_type}, strided<[{', '.join(map(str, strides))}], "
                           f"offset: {offset}>{space}>")
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


def retype_views(value: ir.Value, space: str) -> None:
    """Give the views derived from ``value`` (now in ``space``) the same memory space."""
    for use in list(value.uses):
        owner = as_operation(use.owner)
        if owner.name in VIEW_OPS and use.operand_number == 0:
            for result in owner.results:
                result.set_type(with_space(result.type, space))
                retype_views(result, space)


def reassociation(view: ir.Operation) -> list[list[int]]:
    """The reassociation groups of an expand_shape / collapse_shape."""
    return [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(view.attributes["reassociation"])]


def collapse_view(value: ir.Value, groups: list[list[int]]) -> ir.Value:
    """A ``memref.collapse_shape`` of an identity-layout ``value`` (same memory space)."""
    t = ir.MemRefType(value.type)
    shape = [math.prod(t.shape[d] for d in group) for group in groups]
    i64 = ir.IntegerType.get_signless(64)
    attr = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in group]) for group in groups])
    return ir.Operation.create("memref.collapse_shape",
                               results=[ir.MemRefType.get(shape, t.element_type, None, t.memory_space)],
                               operands=[value], attributes={"reassociation": attr}).results[0]


def fill_constant(op: ir.Operation) -> float | None:
    """The float constant ``op`` sets every element of its output to (a ``linalg.fill``, or a ``linalg.map``
    of no input yielding a constant: a padding's zeros, a max pool's -inf), else None."""
    if op.name == "linalg.fill":
        value = op.operands[0]
    elif op.name == "linalg.map" and len(op.operands) == 1:
        body = [as_operation(o) for o in op.regions[0].blocks[0].operations]
        if len(body) != 1:
            return None
        value = body[0].operands[0]
    else:
        return None
    if isinstance(value.owner, ir.Block) or as_operation(value.owner).name != "arith.constant":
        return None
    attr = as_operation(value.owner).attributes["value"]
    return attr.value if isinstance(attr, ir.FloatAttr) else None


def tile_slot(loops: list[tuple[ir.Value, int, int]]) -> ir.Value:
    """The slot (0 or 1) of the current tile of a loop nest: the tile's running number, outer loops' tiles
    counted first, odd or even, so that consecutive transfers alternate slots.  ``loops``: each loop's
    (induction variable, step, trip count), outermost first."""
    index = None
    for iv, step, count in loops:
        number = arith.divui(iv, index_constant(step)) if step > 1 else iv
        index = number if index is None else arith.addi(arith.muli(index, index_constant(count)), number)
    return arith.remui(index, index_constant(2))


def _enclosing_linalg(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    while parent is not None and not parent.name.startswith("linalg."):
        parent = parent.parent
    return parent


def has_indices(op: ir.Operation) -> bool:
    """Whether ``op`` is a linalg op whose payload reads its own loop indices (``linalg.index``)."""
    return op.name.startswith("linalg.") and any(inner.name == "linalg.index" for inner in nested_ops(op))


def shift_indices(op: ir.Operation, shifts: dict[int, ir.Value]) -> None:
    """A linalg op moved onto a tile reads the indices of the whole loop, not the tile's: each
    ``linalg.index d`` in its payload gets the tile's offset ``shifts[d]`` added (dropout's counter, an
    argmax's position, an iota)."""
    if not shifts:
        return
    for inner in nested_ops(op):
        if inner.name != "linalg.index" or op_id(_enclosing_linalg(inner)) != op_id(op):
            continue
        offset = shifts.get(ir.IntegerAttr(inner.attributes["dim"]).value)
        if offset is None:
            continue
        with ir.InsertionPoint.after(inner), inner.location:
            shifted = arith.addi(inner.results[0], offset)
        inner.results[0].replace_all_uses_except(shifted, as_operation(shifted.owner))


def index_shifts(op: ir.Operation, follows: list[tuple[KernelBuffer, Follows]], ivs: dict[str, ir.Value]
                 ) -> dict[int, ir.Value]:
    """For :func:`shift_indices`: each loop dim of ``op`` that a current tile loop cuts -> the loop's index
    (the tile's offset), found through an operand whose dims follow named loops (``follows``; ``ivs``: each
    current loop's name -> its index)."""
    shifts: dict[int, ir.Value] = {}
    access = loop_access(op)
    for value, dims, _ in access[0] if access else []:
        roles = next((f for buf, f in follows if buf.value == value), None)
        for role, op_dims in zip(roles or [], dims, strict=False):
            if role in ivs and len(op_dims) == 1:
                shifts[next(iter(op_dims))] = ivs[role]
    return shifts
