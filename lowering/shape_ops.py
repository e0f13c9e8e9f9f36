"""Lowerings of the data-movement graph ops: reshape, broadcast_to, transpose, concat, split, slice, pad,
iota (gather, gather_elements and scatter_update: :mod:`graphfuse.lowering.indexing_ops`).

They only move elements, so every element type of the dialect lowers the
same way (f32, f16, bf16, i1, i8, i32, i64: no arithmetic on the elements).
Each result is built from ``tensor`` and ``linalg`` ops on tensors:

- ``reshape`` is ``tensor.collapse_shape`` to the coarsest common grouping of
  the two shapes followed by ``tensor.expand_shape`` to the result (either is
  left out when it would not change the shape; ``4x8 -> 2x16`` goes through
  ``32``, ``4x1x8 -> 4x8`` is one collapse).  Rank 0 collapses/expands with
  an empty reassociation.  A dynamic operand dimension is grouped like a
  static one when both types have one dynamic dimension and the same static
  element count, so the dynamic sizes are equal (``?x8x4 -> ?x32``).  Every
  other dynamic case collapses to 1-D and expands to the result, the one
  dynamic result size being the element count divided by the static sizes.
  A static operand with a dynamic result dimension is lowered with that
  size computed at compile time and a ``tensor.cast`` to the declared type.
  A reshape with no elements (a static size 0) is a ``tensor.empty``.
- ``broadcast_to`` is a ``linalg.generic`` reading the operand through a
  broadcast indexing map (missing leading dims dropped, static size-1 dims
  read at index 0) into a ``tensor.empty``.  A dynamic operand dim under a
  static result dim larger than 1 may be 1 or that size at run time, as
  numpy allows; that case reads the operand with ``tensor.extract`` at
  index ``size == 1 ? 0 : i`` inside the generic instead.
- ``transpose`` is ``linalg.transpose`` into a ``tensor.empty``; an identity
  permutation (every rank-0 and rank-1 transpose) is the operand itself.
- ``concat`` is a ``tensor.empty`` of the result with one
  ``tensor.insert_slice`` per operand at the running offset along the axis
  (``tensor.dim`` and ``arith.addi`` where sizes are dynamic); an operand
  with a static zero size inserts nothing and is skipped.
- ``split`` is one ``tensor.extract_slice`` per piece, ``slice`` one strided
  ``tensor.extract_slice`` (StableHLO start/limit/strides; the result sizes
  are always static).  A piece or slice with no elements is a
  ``tensor.empty``: the slice verifiers reject a static offset equal to the
  size even for an empty slice, and there is nothing to copy.
- ``pad`` is a ``linalg.generic`` over the result that ``tensor.extract`` s,
  at each position, the operand element its mode points at: index arithmetic
  per padded dim on ``linalg.index`` (subtract the low pad; reflect mirrors
  with a select on each padded side, replicate clamps, circular wraps once
  around what the negative pads leave).  Constant mode clamps the position
  into the operand as replicate does and selects the padding value (the
  optional rank-0 operand, read through an empty map, or 0) where it lies
  outside; an operand with a static empty dim is not read at all.  Like
  gather's, the generic fuses with the elementwise ops after it.  Only padded
  dims get arithmetic; crops (negative pads) need no bounds tests, and a pad
  that only crops (static shapes) is one ``tensor.extract_slice``.  A dynamic
  dim found empty at run time is read at position 0 in constant mode (the
  value is then discarded), as gather reads an empty axis.
- ``iota`` is a ``linalg.generic`` with no input writing ``linalg.index 0``
  into a ``tensor.empty`` sized by ``tensor.dim`` of the operand.

Not lowered (the op stays; ``graph-to-linalg{strict}`` reports it): a
reshape whose dynamic result size is undefined because the static result
sizes multiply to 0 (numpy's ``-1`` rejects that as well).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.dialect.ops.shape import RANDOM_GOLDEN, RANDOM_MIX, random_seed_bits
from graphfuse.dialect.shape_utils import reshape_units
from graphfuse.lowering.common import PARALLEL, broadcast_map, build_generic, const, register_lowering

__all__ = [
    "lower_broadcast_to",
    "lower_concat",
    "lower_iota",
    "lower_pad",
    "lower_random_uniform",
    "lower_reshape",
    "lower_slice",
    "lower_split",
    "lower_transpose",
]

_DYNAMIC = ir.ShapedType.get_dynamic_size()

Size = int | ir.Value  # a static size or an index value


def _ranked(v: ir.Value) -> ir.RankedTensorType | None:
    return ir.RankedTensorType(v.type) if isinstance(v.type, ir.RankedTensorType) else None


def _shape(t: ir.RankedTensorType) -> list[int | None]:
    return [None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank)]


def _tensor_type(shape: Sequence[int | None], element: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([_DYNAMIC if d is None else d for d in shape], element)


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _dim(v: ir.Value, i: int) -> Size:
    """Size ``i`` of tensor ``v``: an int when static, else a ``tensor.dim``."""
    t = ir.RankedTensorType(v.type)
    return tensor.dim(v, _index(i)) if t.is_dynamic_dim(i) else t.get_dim_size(i)


def _as_value(size: Size) -> ir.Value:
    return _index(size) if isinstance(size, int) else size


def _mixed(sizes: Sequence[Size]) -> tuple[list[ir.Value], list[int]]:
    """Split mixed sizes/offsets into the dynamic operands and the static array of an offset-sizes op."""
    return [s for s in sizes if not isinstance(s, int)], [s if isinstance(s, int) else _DYNAMIC for s in sizes]


def _empty(sizes: Sequence[Size], result: ir.RankedTensorType) -> ir.Value:
    """``tensor.empty`` of exactly ``result``: a size that ``result`` leaves dynamic is passed as a value."""
    values: list[Size] = [_as_value(s) if result.is_dynamic_dim(i) else s for i, s in enumerate(sizes)]
    return tensor.empty(values, result.element_type)


def _replace(op: ir.Operation, values: Sequence[ir.Value]) -> bool:
    for old, new in zip(op.results, values, strict=True):
        if new.type != old.type:
            new = tensor.cast(old.type, new)
        old.replace_all_uses_with(new)
    op.erase()
    return True


def _axis(op: ir.Operation, rank: int) -> int:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    return axis + rank if axis < 0 else axis


def _i64_array(op: ir.Operation, name: str) -> list[int] | None:
    if name not in op.attributes:
        return None
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


# A size in a reshape grouping: (product of the static sizes, whether the dynamic size is a factor).
_Product = tuple[int, bool]
# The reassociations of the operand and of the result onto the common shape.
_Grouping = tuple[list[list[int]], list[list[int]]]


def _prefix_products(shape: list[int | None]) -> list[_Product]:
    out: list[_Product] = []
    static, dynamic = 1, False
    for d in shape:
        if d is None:
            dynamic = True
        else:
            static *= d
        out.append((static, dynamic))
    return out


def _groups(ends: list[int]) -> list[list[int]]:
    starts = [0, *(e + 1 for e in ends[:-1])]
    return [list(range(s, e + 1)) for s, e in zip(starts, ends, strict=True)]


def _common_grouping(source: list[int | None], result: list[int | None]) -> _Grouping | None:
    """Reassociations of ``source`` and ``result`` (rank >= 1) onto their coarsest common shape, or None.

    A group boundary is a prefix product that both shapes reach; with one
    dynamic size on each side the products are symbolic in it, which is
    sound only when the static products of the whole shapes agree.
    """
    ps, pr = _prefix_products(source), _prefix_products(result)
    if ps[-1] != pr[-1] or source.count(None) > 1 or result.count(None) > 1:
        return None
    in_result = set(pr)
    bounds: list[_Product] = []
    for p in ps:
        if p in in_result and p not in bounds:
            bounds.append(p)
    source_ends = [max(i for i, p in enumerate(ps) if p == b) for b in bounds]
    result_ends = [max(i for i, p in enumerate(pr) if p == b) for b in bounds]
    if any(a >= b for a, b in itertools.pairwise(result_ends)):
        return None  # boundaries reached in a different order: no common grouping
    source_groups, result_groups = _groups(source_ends), _groups(result_ends)
    for sg, rg in zip(source_groups, result_groups, strict=True):
        s_dims, r_dims = [source[i] for i in sg], [result[i] for i in rg]
        if (None in s_dims) != (None in r_dims):
            return None
        if None not in s_dims and math.prod(s_dims) != math.prod(r_dims):  # type: ignore[arg-type]
            return None
    return source_groups, result_groups


def _collapse(x: ir.Value, groups: list[list[int]]) -> ir.Value:
    t = ir.RankedTensorType(x.type)
    if len(groups) == t.rank:
        return x
    shape = _shape(t)
    collapsed = []
    for g in groups:
        dims = [shape[i] for i in g]
        collapsed.append(None if None in dims else math.prod(dims))  # type: ignore[arg-type]
    return tensor.collapse_shape(_tensor_type(collapsed, t.element_type), x, groups)


def _expand(x: ir.Value, groups: list[list[int]], result: ir.RankedTensorType) -> ir.Value:
    """``tensor.expand_shape`` of ``x`` to ``result``; each dynamic result size is its group's size / static sizes."""
    if len(groups) == result.rank:
        return x
    shape = _shape(result)
    sizes: list[Size] = []
    for j, g in enumerate(groups):
        for i in g:
            if shape[i] is not None:
                sizes.append(shape[i])  # type: ignore[arg-type]
                continue
            known = math.prod(shape[k] for k in g if k != i)  # type: ignore[misc]
            whole = _as_value(_dim(x, j))
            sizes.append(whole if known == 1 else arith.divui(whole, _index(known)))
    dynamic, static = _mixed(sizes)
    return tensor.expand_shape(result, x, groups, dynamic, static)


def _reshape(x: ir.Value, result: ir.RankedTensorType) -> ir.Value:
    """Reshape ``x`` (some elements) to ``result``, whose dynamic size (if any) has a nonzero cofactor."""
    source = ir.RankedTensorType(x.type)
    s_shape, r_shape = _shape(source), _shape(result)
    if s_shape == r_shape:
        return x
    if source.rank == 0:
        return tensor.expand_shape(result, x, [], [], r_shape)  # result sizes are all static 1
    if result.rank == 0:
        if None in s_shape:
            x = tensor.cast(_tensor_type([1] * source.rank, result.element_type), x)
        return tensor.collapse_shape(result, x, [])
    units = reshape_units(s_shape, r_shape) if r_shape.count(None) > 1 else None
    if units is not None:  # several dynamic dims, each an operand dim (the catalog's rule): one group per pair
        return _expand(_collapse(x, [taken for taken, _ in units]), [dims for _, dims in units], result)
    grouping = _common_grouping(s_shape, r_shape)
    if grouping is not None:
        source_groups, result_groups = grouping
        return _expand(_collapse(x, source_groups), result_groups, result)
    # Through 1-D: the one dynamic result size (if any) is the element count over the static sizes.
    known = math.prod(d for d in r_shape if d is not None)  # type: ignore[misc]
    flat = _collapse(x, [list(range(source.rank))])
    if None not in r_shape and None in s_shape:
        flat = tensor.cast(_tensor_type([known], result.element_type), flat)
    return _expand(flat, [list(range(result.rank))], result)


def _reshape_to_given_sizes(x: ir.Value, given: ir.Value, result: ir.RankedTensorType) -> ir.Value:
    """Reshape ``x`` to ``result``, whose dynamic dims are those of ``given`` (a reshape's sizes operand) where it
    has dynamic dims, and one more, if any, the element count over the others.

    The static dims that end both shapes alike are kept (``[?, 768] -> [?, ?, 768]`` expands only the rows);
    the dims before them collapse into one and expand into the result's.
    """
    s_shape, r_shape, g_shape = _shape(ir.RankedTensorType(x.type)), _shape(result), _shape(_ranked(given))
    kept = 0
    while kept < min(len(s_shape), len(r_shape)) - 1 and s_shape[-1 - kept] is not None \
            and s_shape[-1 - kept] == r_shape[-1 - kept]:
        kept += 1
    head = len(s_shape) - kept
    source_groups = [list(range(head)), *([i] for i in range(head, len(s_shape)))]
    result_groups = [list(range(len(r_shape) - kept)), *([i] for i in range(len(r_shape) - kept, len(r_shape)))]
    sizes: list[Size] = [_dim(given, i) if g is None else r for i, (g, r) in enumerate(zip(g_shape, r_shape,
                                                                                          strict=True))]
    rest = [i for i, size in enumerate(sizes) if size is None]
    if rest:  # the element count over the other sizes
        count: ir.Value | None = None
        for i, d in enumerate(s_shape):
            if d is None:
                size = _dim(x, i)
                count = size if count is None else arith.muli(count, size)
        static_in = math.prod(d for d in s_shape if d is not None)
        if count is None or static_in != 1:
            count = _index(static_in) if count is None else arith.muli(count, _index(static_in))
        static_out = math.prod(d for d in sizes if isinstance(d, int))
        if static_out != 1:
            count = arith.divui(count, _index(static_out))
        for size in sizes:
            if isinstance(size, ir.Value):
                count = arith.divui(count, size)
        sizes[rest[0]] = count
    dynamic, static = _mixed(sizes)
    return tensor.expand_shape(result, _collapse(x, source_groups), result_groups, dynamic, static)


@register_lowering("reshape")
def lower_reshape(op: ir.Operation) -> bool:
    x = op.operands[0]
    source, result = _ranked(x), _ranked(op.results[0])
    if source is None or result is None:
        return False
    if len(op.operands) == 2:
        if source.rank == 0 or _ranked(op.operands[1]) is None:
            return False
        with op.location, ir.InsertionPoint(op):
            return _replace(op, [_reshape_to_given_sizes(x, op.operands[1], result)])
    s_shape, r_shape = _shape(source), _shape(result)
    known = math.prod(d for d in r_shape if d is not None)  # type: ignore[misc]
    if None in r_shape and known == 0:
        return False  # the dynamic size is undefined (numpy's -1 rejects it too)
    target = result
    if 0 in s_shape or 0 in r_shape:
        # No elements to move; a dynamic result size is then 0 as well.
        target = _tensor_type([0 if d is None else d for d in r_shape], result.element_type)
        with op.location, ir.InsertionPoint(op):
            return _replace(op, [tensor.empty(_shape(target), result.element_type)])
    if None not in s_shape and None in r_shape:
        # The dynamic size follows from the static element count (the verifier checked that it divides).
        missing = math.prod(s_shape) // known  # type: ignore[arg-type]
        target = _tensor_type([missing if d is None else d for d in r_shape], result.element_type)
    with op.location, ir.InsertionPoint(op):
        return _replace(op, [_reshape(x, target)])


@register_lowering("broadcast_to")
def lower_broadcast_to(op: ir.Operation) -> bool:
    x = op.operands[0]
    source, result = _ranked(x), _ranked(op.results[0])
    if source is None or result is None:
        return False
    if source == result:
        # Equal shapes: nothing is broadcast (a dynamic dim keeps the operand's size).
        with op.location, ir.InsertionPoint(op):
            return _replace(op, [x])
    offset = result.rank - source.rank
    s_shape, r_shape = _shape(source), _shape(result)
    # Operand dims whose size decides at run time whether they broadcast.
    runtime = [k for k in range(source.rank) if s_shape[k] is None and r_shape[offset + k] not in (None, 1)]
    operand_map = broadcast_map(source, result)
    if operand_map is None:
        return False
    if any(d is None and (i < offset or s_shape[i - offset] == 1) for i, d in enumerate(r_shape)):
        return False  # a broadcast dynamic size is unknown (the verifier rejects it)
    identity = ir.AffineMap.get_identity(result.rank)
    with op.location, ir.InsertionPoint(op):
        sizes: list[Size] = []
        for i, d in enumerate(r_shape):
            # A dynamic result size is that of the (not broadcast) operand dim, as the verifier requires.
            sizes.append(d if d is not None else _dim(x, i - offset))
        init = _empty(sizes, result)
        if not runtime:
            generic = build_generic(
                [result], [x], [init], [operand_map, identity], [PARALLEL] * result.rank, lambda args: [args[0]]
            )
        else:
            # Operand size == 1 ? 0 : i, with the sizes and constants hoisted out of the body.
            zero, one = _index(0), _index(1)
            is_one = {k: arith.cmpi(arith.CmpIPredicate.eq, _as_value(_dim(x, k)), one) for k in runtime}

            def body(args: list[ir.Value]) -> list[ir.Value]:
                indices = []
                for k in range(source.rank):
                    if s_shape[k] == 1:
                        indices.append(zero)
                        continue
                    i = linalg.IndexOp(offset + k).result
                    indices.append(arith.select(is_one[k], zero, i) if k in is_one else i)
                return [tensor.extract(x, indices)]

            generic = build_generic([result], [], [init], [identity], [PARALLEL] * result.rank, body)
        return _replace(op, [generic.results[0]])


@register_lowering("transpose")
def lower_transpose(op: ir.Operation) -> bool:
    x = op.operands[0]
    source, result = _ranked(x), _ranked(op.results[0])
    perm = _i64_array(op, "perm")
    if source is None or result is None or perm is None or sorted(perm) != list(range(source.rank)):
        return False
    with op.location, ir.InsertionPoint(op):
        if perm == list(range(source.rank)):
            return _replace(op, [x])
        init = _empty([_dim(x, p) for p in perm], result)
        transposed = linalg.transpose(x, outs=[init], permutation=perm)
        return _replace(op, [transposed.results[0]])


@register_lowering("concat")
def lower_concat(op: ir.Operation) -> bool:
    operands = list(op.operands)
    result = _ranked(op.results[0])
    if result is None or any(_ranked(v) is None for v in operands):
        return False
    rank = result.rank
    axis = _axis(op, rank)
    with op.location, ir.InsertionPoint(op):
        pieces: list[tuple[ir.Value, Size, list[Size]]] = []  # operand, offset along axis, sizes
        offset: Size = 0
        all_sizes = [[_dim(v, i) for i in range(rank)] for v in operands]
        empty_result = 0 in _shape(result)
        for v, sizes in zip(operands, all_sizes, strict=True):
            # A piece with no elements inserts nothing (and the slice verifier rejects an offset equal to a size).
            if not empty_result and not any(isinstance(s, int) and s == 0 for s in sizes):
                pieces.append((v, offset, sizes))
            step = sizes[axis]
            if isinstance(offset, int) and isinstance(step, int):
                offset += step
            elif isinstance(offset, int) and offset == 0:
                offset = step
            elif not (isinstance(step, int) and step == 0):
                offset = arith.addi(_as_value(offset), _as_value(step))
        shape: list[Size] = []
        for i in range(rank):
            if i == axis:
                shape.append(offset)
                continue
            # A dynamic non-axis result dim is dynamic in every operand; any of them gives the size.
            shape.append(result.get_dim_size(i) if not result.is_dynamic_dim(i) else all_sizes[0][i])
        return _replace(op, [_inserted(pieces, shape, result, axis)])


#: Operands a concat inserts into one destination; more are inserted in groups of this many, each group built
#: in a destination of its own first.  Bufferization's analysis of one chain of N inserts grows faster than N^2
#: (empty-tensor elimination and one-shot bufferize took 0.6 s at 100 operands, 3.7 s at 200, 179 s at 1,000);
#: groups keep every chain short for empty-tensor elimination (the emulated NPU's bufferization sees them too),
#: and the CPU runtime copies a static concat of more operands into one buffer before one-shot bufferize, whose
#: analysis of the groups together was still superlinear (lowering/codegen/cpu/copy_long_concats.py).  Static
#: shapes only.
CONCAT_GROUP = 32


def _inserted(pieces: list[tuple[ir.Value, Size, list[Size]]], shape: list[Size], result: ir.RankedTensorType,
              axis: int) -> ir.Value:
    """A tensor of ``shape`` (type ``result``) holding each piece (value, offset along ``axis``, sizes)."""
    rank = result.rank
    # Groups of dynamic size would be buffers of dynamic size between the inserts, which the runtime refuses.
    if len(pieces) > CONCAT_GROUP and all(isinstance(size, int) for size in shape) and \
            all(isinstance(at, int) for _, at, _ in pieces):
        groups = []
        for first in range(0, len(pieces), CONCAT_GROUP):
            members = pieces[first:first + CONCAT_GROUP]
            start = members[0][1]
            end = pieces[first + CONCAT_GROUP][1] if first + CONCAT_GROUP < len(pieces) else shape[axis]
            length = _difference(end, start)
            group_shape = [length if i == axis else size for i, size in enumerate(shape)]
            group_type = ir.RankedTensorType.get(
                [size if isinstance(size, int) else ir.ShapedType.get_dynamic_size() for size in group_shape],
                result.element_type)
            relative = [(v, _difference(at, start), sizes) for v, at, sizes in members]
            groups.append((_inserted(relative, group_shape, group_type, axis), start, group_shape))
        return _inserted(groups, shape, result, axis)
    out = _empty(shape, result)
    for v, at, sizes in pieces:
        offsets = [at if i == axis else 0 for i in range(rank)]
        dyn_offsets, static_offsets = _mixed(offsets)
        dyn_sizes, static_sizes = _mixed(sizes)
        out = tensor.insert_slice(v, out, dyn_offsets, dyn_sizes, [], static_offsets, static_sizes, [1] * rank)
    return out


def _difference(a: Size, b: Size) -> Size:
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    if isinstance(b, int) and b == 0:
        return a
    return arith.subi(_as_value(a), _as_value(b))


def _extract(
    x: ir.Value, result: ir.RankedTensorType, offsets: list[int], strides: list[int], source_sizes: list[Size]
) -> ir.Value:
    """``tensor.extract_slice`` of ``x``; a size that ``result`` leaves dynamic is that of ``x`` (``source_sizes``)."""
    sizes = [source_sizes[i] if result.is_dynamic_dim(i) else result.get_dim_size(i) for i in range(result.rank)]
    if 0 in _shape(result):
        # No elements; the slice verifier would also reject its offset when it equals the size.
        return _empty(sizes, result)
    dyn_sizes, static_sizes = _mixed(sizes)
    return tensor.extract_slice(result, x, [], dyn_sizes, [], offsets, static_sizes, strides)


@register_lowering("split")
def lower_split(op: ir.Operation) -> bool:
    x = op.operands[0]
    source = _ranked(x)
    results = [_ranked(r) for r in op.results]
    sizes = _i64_array(op, "sizes")
    if source is None or sizes is None or len(sizes) != len(results) or any(r is None for r in results):
        return False
    axis = _axis(op, source.rank)
    with op.location, ir.InsertionPoint(op):
        # tensor.dim only where a piece has a dynamic size (the verifier leaves them on non-axis dims).
        source_sizes = [
            _dim(x, i) if any(r.is_dynamic_dim(i) for r in results if r is not None) else 0 for i in range(source.rank)
        ]
        pieces: list[ir.Value] = []
        start = 0
        for size, r in zip(sizes, results, strict=True):
            assert r is not None
            offsets = [start if i == axis else 0 for i in range(source.rank)]
            pieces.append(_extract(x, r, offsets, [1] * source.rank, source_sizes))
            start += size
        return _replace(op, pieces)


@register_lowering("slice")
def lower_slice(op: ir.Operation) -> bool:
    x = op.operands[0]
    source, result = _ranked(x), _ranked(op.results[0])
    start = _i64_array(op, "start")
    if source is None or result is None or start is None or len(start) != source.rank:
        return False
    if not result.has_static_shape:  # the slice sizes come from the result type: decline, strict mode reports it
        return False
    strides = _i64_array(op, "strides") or [1] * source.rank
    with op.location, ir.InsertionPoint(op):
        if source.rank == 0:
            return _replace(op, [x])
        return _replace(op, [_extract(x, result, start, strides, [])])


def _pad_source(position: ir.Value, size: ir.Value, low: int, high: int, mode: str
                ) -> tuple[ir.Value, ir.Value | None]:
    """The operand position that result ``position`` reads along a dim of ``size`` padded by ``low`` and
    ``high`` (index arithmetic, in a generic's body), and in constant mode whether it lies inside the operand
    (None when it always does).  Each bound is only tested on a side that has padding."""
    slt, sge = arith.CmpIPredicate.slt, arith.CmpIPredicate.sge
    zero = _index(0)
    if mode == "circular":  # crop by the negative pads, then wrap around the kept elements (once: verified)
        kept = arith.addi(size, _index(min(low, 0) + min(high, 0))) if min(low, 0) + min(high, 0) else size
        shifted = arith.subi(position, _index(low)) if low > 0 else position
        if low > 0:
            shifted = arith.select(arith.cmpi(slt, shifted, zero), arith.addi(shifted, kept), shifted)
        if high > 0:
            shifted = arith.select(arith.cmpi(sge, shifted, kept), arith.subi(shifted, kept), shifted)
        return (arith.addi(shifted, _index(-low)) if low < 0 else shifted), None
    source = arith.subi(position, _index(low)) if low else position
    if mode == "reflect":
        if low > 0:
            source = arith.select(arith.cmpi(slt, source, zero), arith.subi(zero, source), source)
        if high > 0:
            last = arith.subi(size, _index(1))
            mirrored = arith.subi(arith.addi(last, last), source)
            source = arith.select(arith.cmpi(sge, source, size), mirrored, source)
        return source, None
    inside = None
    if mode == "constant":
        if low > 0:
            inside = arith.cmpi(sge, source, zero)
        if high > 0:
            below_end = arith.cmpi(slt, source, size)
            inside = below_end if inside is None else arith.andi(inside, below_end)
    # replicate reads the edge; constant mode reads it too, then selects the value.  The upper clamp comes first
    # so that a dynamic dim empty at run time is read at 0, as gather's clamp does.
    if high > 0:
        source = arith.minsi(source, arith.subi(size, _index(1)))
    if low > 0:
        source = arith.maxsi(source, zero)
    return source, inside


@register_lowering("pad")
def lower_pad(op: ir.Operation) -> bool:
    """A generic over the result extracting, at each position, the operand element the mode points at; constant
    mode selects the padding value where that position lies outside the operand."""
    x = op.operands[0]
    source, result = _ranked(x), _ranked(op.results[0])
    low, high = _i64_array(op, "low"), _i64_array(op, "high")
    mode = ir.StringAttr(op.attributes["mode"]).value if "mode" in op.attributes else "constant"
    if source is None or result is None or low is None or high is None or len(low) != source.rank:
        return False
    padded = [d for d in range(source.rank) if low[d] or high[d]]
    with op.location, ir.InsertionPoint(op):
        if not padded:
            return _replace(op, [x])
        if all(v <= 0 for v in (*low, *high)) and result.has_static_shape:  # a crop only: one slice
            return _replace(op, [_extract(x, result, [-v for v in low], [1] * source.rank, [])])
        sizes: list[Size] = [result.get_dim_size(d) if not result.is_dynamic_dim(d) else _dim(x, d)
                             for d in range(result.rank)]
        sizes = [arith.addi(size, _index(low[d] + high[d])) if not isinstance(size, int) and low[d] + high[d]
                 else size for d, size in enumerate(sizes)]
        init = _empty(sizes, result)
        if 0 in _shape(result):
            return _replace(op, [init])  # nothing to write
        operand_sizes = {d: _as_value(_dim(x, d)) for d in padded}
        element = result.element_type
        has_value = len(op.operands) == 2
        inputs = [op.operands[1]] if has_value else []
        maps = [ir.AffineMap.get(result.rank, 0, [])] * len(inputs) + [ir.AffineMap.get_identity(result.rank)]
        # An operand with a static empty dim has nothing to read: constant mode's result is all padding.
        nothing_to_read = 0 in _shape(source)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            fill = (args[0] if has_value else const(element, 0)) if mode == "constant" else None
            if nothing_to_read:
                return [fill]
            coordinates, inside = [], None
            for d in range(result.rank):
                position = linalg.IndexOp(d).result
                if d not in operand_sizes:
                    coordinates.append(position)
                    continue
                position, within = _pad_source(position, operand_sizes[d], low[d], high[d], mode)
                coordinates.append(position)
                if within is not None:
                    inside = within if inside is None else arith.andi(inside, within)
            value = tensor.extract(x, coordinates)
            return [value if inside is None else arith.select(inside, value, fill)]

        generic = build_generic([result], inputs, [init], maps, [PARALLEL] * result.rank, body)
        return _replace(op, [generic.results[0]])


@register_lowering("random_uniform")
def lower_random_uniform(op: ir.Operation) -> bool:
    """A generic with no input: each element's row-major position hashed with the seed in i32 arithmetic (the
    multiplications wrap, the shifts are logical), as the reference does in uint32."""
    (like,) = op.operands
    source, result = _ranked(like), _ranked(op.results[0])
    if source is None or result is None:
        return False
    rank = source.rank
    seed = int(ir.IntegerAttr(op.attributes["seed"]).value)
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    with op.location, ir.InsertionPoint(op):
        sizes = [_dim(like, d) for d in range(rank)]
        init = _empty(sizes, result)
        seed_bits = random_seed_bits(seed)

        def const32(value: int) -> ir.Value:
            return arith.ConstantOp(i32, value - (1 << 32) if value >= 1 << 31 else value).result

        def body(args: list[ir.Value]) -> list[ir.Value]:
            position = arith.ConstantOp(ir.IndexType.get(), 0).result
            for d in range(rank):  # row-major: position * size_d + index_d
                size = sizes[d] if isinstance(sizes[d], ir.Value) else arith.ConstantOp(ir.IndexType.get(),
                                                                                          sizes[d]).result
                position = arith.addi(arith.muli(position, size), linalg.IndexOp(d).result)
            x = arith.trunci(i32, arith.index_cast(i64, position))
            x = arith.xori(arith.muli(x, const32(RANDOM_GOLDEN)), const32(seed_bits))
            for shift, multiplier in ((16, RANDOM_MIX[0]), (15, RANDOM_MIX[1]), (16, None)):
                x = arith.xori(x, arith.shrui(x, const32(shift)))
                if multiplier is not None:
                    x = arith.muli(x, const32(multiplier))
            top24 = arith.uitofp(result.element_type, arith.shrui(x, const32(8)))
            return [arith.mulf(top24, arith.ConstantOp(result.element_type, 2.0**-24).result)]

        identity = ir.AffineMap.get_identity(rank)
        generic = build_generic([result], [], [init], [identity], [PARALLEL] * rank, body)
        return _replace(op, [generic.results[0]])


@register_lowering("dimension_size")
def lower_dimension_size(op: ir.Operation) -> bool:
    """``tensor.dim`` of the operand as a rank-0 i64 tensor."""
    (source,) = op.operands
    ranked, result = _ranked(source), _ranked(op.results[0])
    if ranked is None or result is None or ranked.rank == 0:
        return False
    axis = _axis(op, ranked.rank)
    with op.location, ir.InsertionPoint(op):
        size = _dim(source, axis)
        index = size if isinstance(size, ir.Value) else arith.ConstantOp(ir.IndexType.get(), size).result
        value = arith.index_cast(result.element_type, index)
        return _replace(op, [tensor.from_elements(result, [value])])


@register_lowering("iota")
def lower_iota(op: ir.Operation) -> bool:
    """A generic with no input writing each position's index, sized by the operand's dimension."""
    (like,) = op.operands
    source, result = _ranked(like), _ranked(op.results[0])
    if source is None or result is None or source.rank == 0:
        return False
    axis = _axis(op, source.rank)
    with op.location, ir.InsertionPoint(op):
        init = _empty([_dim(like, axis)], result)
        identity = ir.AffineMap.get_identity(1)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            return [arith.index_cast(result.element_type, linalg.IndexOp(0).result)]

        generic = build_generic([result], [], [init], [identity], [PARALLEL], body)
        return _replace(op, [generic.results[0]])
