"""Lowerings of the indexing graph ops: gather, gather_elements, scatter_update.

They only move elements, as the ops of :mod:`graphfuse.lowering.shape_ops` do, so every element type
lowers the same way:

- ``gather`` of slices (data has dims after the axis: an embedding's rows),
  statically shaped and outside kernels, is an ``scf.for`` over data's dims
  before the axis and the indices: each step reads one index, turns it into
  an ``index`` (counted from the end when negative, clamped into the axis)
  and copies the slice it selects (``tensor.insert_slice`` of a
  ``tensor.extract_slice``: a contiguous copy once bufferized).  Any other
  ``gather`` is a ``linalg.generic`` over the result that reads the indices
  through a projection onto the result dims they fill and ``tensor.extract``
  s the element of data there; the other coordinates are the generic's own
  ``linalg.index`` es.  In a kernel, fused with the elementwise ops after it,
  it is one loop nest.
  ``gather_elements`` is the same generic with the indices read at the
  result's own coordinates, which are also data's outside the axis.  The
  clamp keeps every read inside data; an index out of range (which the op
  raises on, as does ``scatter_update``) is reported by the run-time check
  graph-to-linalg puts before the op (``lowering/run_checks.py``).
- ``scatter_update`` is an ``scf.for`` over the indices (collapsed to one
  dimension, the updates' index dims with them) carrying the result tensor,
  initialised with a copy of data (``linalg.copy``): each step reads an index, counts it from the end
  when negative and, inside the axis, ``tensor.insert_slice`` s the update's
  slice there (``scf.if``: an index still out of range writes nothing).
  Bufferization writes into that copy in place.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from graphfuse.lowering.common import PARALLEL, build_generic, register_lowering
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.shape_ops import (
    Size,
    _as_value,
    _axis,
    _collapse,
    _dim,
    _empty,
    _expand,
    _index,
    _mixed,
    _ranked,
    _replace,
    _shape,
    _tensor_type,
)

__all__ = ["lower_gather", "lower_gather_elements", "lower_scatter_update"]


@register_lowering("gather")
def lower_gather(op: ir.Operation) -> bool:
    """A generic over the result reading each index and extracting the element of data it points at.

    The index is cast to ``index``, counted from the end when negative and clamped into the axis (the op's
    rule), all in the body: a row of the result is one ``tensor.extract`` per element from data's row.
    """
    data, indices = op.operands
    source, positions, result = _ranked(data), _ranked(indices), _ranked(op.results[0])
    if source is None or positions is None or result is None or source.rank == 0:
        return False
    axis = _axis(op, source.rank) if "axis" in op.attributes else 0
    depth = positions.rank
    if _copies_rows(op, axis, source, positions, result):
        with op.location, ir.InsertionPoint(op):
            return _replace(op, [_gather_rows(data, indices, axis, result)])
    with op.location, ir.InsertionPoint(op):
        sizes: list[Size] = [_dim(data, d) for d in range(axis)]
        sizes += [_dim(indices, d) for d in range(depth)]
        sizes += [_dim(data, d) for d in range(axis + 1, source.rank)]
        init = _empty(sizes, result)
        size = _as_value(_dim(data, axis))
        zero, last = _index(0), arith.subi(size, _index(1))
        index_map = ir.AffineMap.get(result.rank, 0, [ir.AffineDimExpr.get(axis + d) for d in range(depth)])
        identity = ir.AffineMap.get_identity(result.rank)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            position = arith.index_cast(ir.IndexType.get(), args[0])
            from_end = arith.addi(position, size)
            negative = arith.cmpi(arith.CmpIPredicate.slt, position, zero)
            position = arith.select(negative, from_end, position)
            position = arith.maxsi(arith.minsi(position, last), zero)
            coordinates = [linalg.IndexOp(d).result for d in range(axis)] + [position]
            coordinates += [linalg.IndexOp(axis + depth + d).result for d in range(source.rank - axis - 1)]
            return [tensor.extract(data, coordinates)]

        generic = build_generic([result], [indices], [init], [index_map, identity], [PARALLEL] * result.rank, body)
        return _replace(op, [generic.results[0]])


def _copies_rows(op: ir.Operation, axis: int, source: ir.RankedTensorType, positions: ir.RankedTensorType,
                 result: ir.RankedTensorType) -> bool:
    """Whether the gather is lowered as row copies (:func:`_gather_rows`): data has dims after the axis (each
    index selects a slice, an embedding's row), every shape is static and non-empty (data included), and the op
    is not inside a kernel (whose loops fuse-kernel-loops fuses: there the generic joins the loop nest of its
    consumers)."""
    if axis + 1 >= source.rank or not (source.has_static_shape and positions.has_static_shape and
                                       result.has_static_shape) or 0 in _shape(result) or 0 in _shape(source):
        return False
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return parent is None or not is_kernel(parent)


def _gather_rows(data: ir.Value, indices: ir.Value, axis: int, result: ir.RankedTensorType) -> ir.Value:
    """An ``scf.for`` over data's dims before the axis and the indices (flattened), each step copying the slice of
    data's dims after the axis that its index selects (``tensor.insert_slice`` of a ``tensor.extract_slice``).

    The generic form reads the index again for every element it copies (LLVM cannot hoist the load above the
    stores, which might alias it), one scalar load and store each: an embedding of 256 tokens by 256 took 57 us.
    Here the index is read once per slice and the slice is a contiguous copy.
    """
    source, positions = ir.RankedTensorType(data.type), ir.RankedTensorType(indices.type)
    shape = _shape(source)
    prefix, trailing = shape[:axis], shape[axis + 1:]
    flat = _as_index_rows(indices, 0, positions.rank)  # [N] (N = 1 for a 0-d index)
    count = _shape(ir.RankedTensorType(flat.type))[0]
    rows_type = _tensor_type([*prefix, count, *trailing], source.element_type)
    slice_type = _tensor_type(trailing, source.element_type)
    unit = [1] * (axis + 1)
    size, zero, one = _index(shape[axis]), _index(0), _index(1)
    last = _index(shape[axis] - 1)
    init = tensor.empty(rows_type.shape, rows_type.element_type)
    loop = scf.ForOp(zero, _index(math.prod(prefix) * count), one, [init])
    with ir.InsertionPoint(loop.body):
        step, rows = loop.induction_variable, loop.inner_iter_args[0]
        n, coordinates = step, []  # the index's position, the coordinates before the axis
        if prefix:
            indices_count = _index(count)
            n, outer = arith.remui(step, indices_count), arith.divui(step, indices_count)
            for extent in reversed(prefix):
                extent_value = _index(extent)
                coordinates.insert(0, arith.remui(outer, extent_value))
                outer = arith.divui(outer, extent_value)
        position = arith.index_cast(ir.IndexType.get(), tensor.extract(flat, [n]))
        negative = arith.cmpi(arith.CmpIPredicate.slt, position, zero)
        position = arith.select(negative, arith.addi(position, size), position)
        position = arith.maxsi(arith.minsi(position, last), zero)
        sizes = [*unit, *trailing]
        dynamic = ir.ShapedType.get_dynamic_size()
        static_offsets = [dynamic] * (axis + 1) + [0] * len(trailing)
        row = tensor.extract_slice(slice_type, data, [*coordinates, position], [], [], static_offsets, sizes,
                                   [1] * source.rank)
        rows = tensor.insert_slice(row, rows, [*coordinates, n], [], [], static_offsets, sizes, [1] * source.rank)
        scf.YieldOp([rows])
    gathered = loop.results[0]
    if positions.rank == 1:
        return gathered
    if positions.rank == 0:  # the unit index dim joins the first dim after it
        groups = [[d] for d in range(axis)] + [[axis, axis + 1]] + [[d] for d in range(axis + 2, source.rank)]
        return tensor.collapse_shape(result, gathered, groups)
    groups = [[d] for d in range(axis)] + [list(range(axis, axis + positions.rank))]
    groups += [[d] for d in range(axis + positions.rank, result.rank)]
    return _expand(gathered, groups, result)


@register_lowering("gather_elements")
def lower_gather_elements(op: ir.Operation) -> bool:
    """A generic over the result (indices' shape) extracting data at its coordinates, the axis' one read."""
    data, indices = op.operands
    source, result = _ranked(data), _ranked(op.results[0])
    if source is None or result is None or source.rank == 0 or result.rank != source.rank:
        return False
    axis = _axis(op, source.rank) if "axis" in op.attributes else 0
    with op.location, ir.InsertionPoint(op):
        init = _empty([_dim(indices, d) for d in range(result.rank)], result)
        size = _as_value(_dim(data, axis))
        zero, last = _index(0), arith.subi(size, _index(1))
        identity = ir.AffineMap.get_identity(result.rank)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            position = arith.index_cast(ir.IndexType.get(), args[0])
            negative = arith.cmpi(arith.CmpIPredicate.slt, position, zero)
            position = arith.select(negative, arith.addi(position, size), position)
            position = arith.maxsi(arith.minsi(position, last), zero)
            coordinates = [position if d == axis else linalg.IndexOp(d).result for d in range(result.rank)]
            return [tensor.extract(data, coordinates)]

        generic = build_generic([result], [indices], [init], [identity, identity], [PARALLEL] * result.rank, body)
        return _replace(op, [generic.results[0]])


def _as_index_rows(x: ir.Value, start: int, depth: int) -> ir.Value:
    """``x`` with its dims ``start .. start + depth - 1`` (the index dims) as one (a new unit dim when depth is 0)."""
    t = ir.RankedTensorType(x.type)
    if depth == 0:
        shape = _shape(t)
        result = _tensor_type([*shape[:start], 1, *shape[start:]], t.element_type)
        if t.rank == 0:
            return tensor.expand_shape(result, x, [], [], [1])
        # The unit dim joins the group of the dim after it, or of the last dim when it goes last.
        host = min(start, t.rank - 1)
        groups = [[i] if i < host else [i + 1] for i in range(t.rank)]
        groups[host] = [host, host + 1]
        return _expand(x, groups, result)
    groups = [[i] for i in range(start)] + [list(range(start, start + depth))]
    groups += [[i] for i in range(start + depth, t.rank)]
    return _collapse(x, groups)


@register_lowering("scatter_update")
def lower_scatter_update(op: ir.Operation) -> bool:
    """An ``scf.for`` over the indices inserting one slice of updates per index into the carried result."""
    data, indices, updates = op.operands
    source, positions = _ranked(data), _ranked(indices)
    if source is None or positions is None or _ranked(updates) is None or source.rank == 0:
        return False
    axis = _axis(op, source.rank) if "axis" in op.attributes else 0
    with op.location, ir.InsertionPoint(op):
        flat_indices = _as_index_rows(indices, 0, positions.rank)
        rows = _as_index_rows(updates, axis, positions.rank)
        count = _as_value(_dim(flat_indices, 0))
        size = _as_value(_dim(data, axis))
        zero, one = _index(0), _index(1)
        slice_sizes: list[Size] = [1 if d == axis else _dim(data, d) for d in range(source.rank)]
        dyn_sizes, static_sizes = _mixed(slice_sizes)
        piece_type = _tensor_type(
            [1 if d == axis else _shape(source)[d] for d in range(source.rank)], source.element_type
        )
        # Into a copy of data: with the loop folded away (one index) the branch would otherwise write into data,
        # a read-only argument, and bufferization would copy it inside the branch.
        init = linalg.copy(data, outs=[_empty([_dim(data, d) for d in range(source.rank)], source)])
        loop = scf.ForOp(zero, count, one, [init])
        with ir.InsertionPoint(loop.body):
            k, current = loop.induction_variable, loop.inner_iter_args[0]
            raw = tensor.extract(flat_indices, [k])
            position = arith.index_cast(ir.IndexType.get(), raw)
            negative = arith.cmpi(arith.CmpIPredicate.slt, position, zero)
            position = arith.select(negative, arith.addi(position, size), position)
            inside = arith.andi(
                arith.cmpi(arith.CmpIPredicate.sge, position, zero),
                arith.cmpi(arith.CmpIPredicate.slt, position, size),
            )
            branch = scf.IfOp(inside, [data.type], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                read_offsets = [k if d == axis else 0 for d in range(source.rank)]
                write_offsets = [position if d == axis else 0 for d in range(source.rank)]
                dyn_read, static_read = _mixed(read_offsets)
                dyn_write, static_write = _mixed(write_offsets)
                piece = tensor.extract_slice(
                    piece_type, rows, dyn_read, dyn_sizes, [], static_read, static_sizes, [1] * source.rank
                )
                written = tensor.insert_slice(
                    piece, current, dyn_write, dyn_sizes, [], static_write, static_sizes, [1] * source.rank
                )
                scf.YieldOp([written])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([current])
            scf.YieldOp([branch.results[0]])
        return _replace(op, [loop.results[0]])
