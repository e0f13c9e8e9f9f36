"""Converters of shape and indexing ops: reshapes, transposes, slices, gathers, scatters, padding, resizing."""

from __future__ import annotations

import math

import numpy as np

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.onnx.importer import _axis, _known_value, _Node, _proto_array
from graphfuse.frontends.onnx.registry import _converter, _NodeError


def _shape_values(value: np.ndarray | None, what: str) -> list[int]:
    if value is None:
        raise _NodeError(f"needs the {what} input")
    return [int(v) for v in np.asarray(value).reshape(-1)]


@_converter("Reshape", constant_operands=(1,), lowering="`reshape` to the constant shape (0 copies a dim unless "
                                                        "allowzero, -1 is inferred)")
def _reshape(n: _Node) -> list[Tensor]:
    x = n.input(0)
    requested = _shape_values(n.constant(1, "shape"), "shape")
    allow_zero = int(n.attr("allowzero", 0))
    shape = []
    for k, d in enumerate(requested):
        if d == 0 and not allow_zero:
            if k >= len(x.shape):
                raise _NodeError(f"shape {requested}: dim {k} copies an input dim that does not exist")
            shape.append(x.shape[k])
        else:
            shape.append(d)
    if shape.count(-1) > 1:
        raise _NodeError(f"shape {requested} has more than one -1")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        total = math.prod(x.shape)
        if known == 0 or total % known:
            raise _NodeError(f"cannot reshape {list(x.shape)} to {requested}")
        shape[shape.index(-1)] = total // known
    return [n.b.reshape(x, tuple(shape))]


@_converter("Flatten", lowering="`reshape` to 2-D at `axis`")
def _flatten(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    axis = int(n.attr("axis", 1))
    if not -rank <= axis <= rank:
        raise _NodeError(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    return [n.b.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))]


@_converter("Transpose", lowering="`transpose` (default perm: reversed axes)")
def _transpose(n: _Node) -> list[Tensor]:
    x = n.input(0)
    perm = n.ints("perm", list(reversed(range(len(x.shape)))))
    return [n.b.transpose(x, perm=[_axis(p, len(x.shape)) for p in perm])]


@_converter("Squeeze", "Unsqueeze", constant_operands=(1,),
            lowering="`reshape`; axes from the attribute (opset < 13) or the constant input")
def _squeeze(n: _Node) -> list[Tensor]:
    x = n.input(0)
    if n.opset >= 13:
        value = n.constant(1, "axes")
        axes = None if value is None else _shape_values(value, "axes")
    else:
        axes = n.ints("axes")
    if n.node.op_type == "Squeeze":
        rank = len(x.shape)
        if axes is None:
            drop = {k for k, d in enumerate(x.shape) if d == 1}
        else:
            drop = {_axis(a, rank) for a in axes}
            for a in drop:
                if x.shape[a] != 1:
                    raise _NodeError(f"cannot squeeze axis {a} of size {x.shape[a]}")
        shape = tuple(d for k, d in enumerate(x.shape) if k not in drop)
    else:
        if not axes:
            raise _NodeError("needs axes")
        out_rank = len(x.shape) + len(axes)
        inserted = {_axis(a, out_rank) for a in axes}
        if len(inserted) != len(axes):
            raise _NodeError(f"axes {axes} repeat an axis")
        rest = iter(x.shape)
        shape = tuple(1 if k in inserted else next(rest) for k in range(out_rank))
    return [n.b.reshape(x, shape)]


@_converter("Concat", lowering="`concat` (nested when more than two operands of different shapes)")
def _concat(n: _Node) -> list[Tensor]:
    values = n.inputs()
    if not values:
        raise _NodeError("needs at least one input")
    axis = _axis(int(n.attr("axis")), len(values[0].shape))
    if len(values) == 1:
        return [n.b.broadcast_to(values[0], values[0].shape)]
    # IRDL gives every value of a variadic group one type: fold operands whose shapes differ.
    result = values[0]
    rest = values[1:]
    while len(rest) > 1 and any(v.shape != rest[1].shape for v in rest[1:]):
        result = n.b.concat(result, rest[0], axis=axis)
        rest = rest[1:]
    return [n.b.concat(result, *rest, axis=axis)]


@_converter("Split", constant_operands=(1,),
            lowering="`split` (or one `slice` per piece when pieces after the second differ in size); sizes from "
                     "the attribute / constant input, or num_outputs")
def _split(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = _axis(int(n.attr("axis", 0)), len(x.shape))
    if n.opset >= 13:
        value = n.constant(1, "split")
        sizes = None if value is None else _shape_values(value, "split")
    else:
        sizes = n.ints("split")
    count = len(n.node.output)
    if sizes is None:
        parts = int(n.attr("num_outputs", count))
        chunk = -(-x.shape[axis] // parts)
        sizes = [min(chunk, x.shape[axis] - k * chunk) for k in range(parts)]
    if len(sizes) != count or sum(sizes) != x.shape[axis]:
        raise _NodeError(f"split sizes {sizes} do not cut axis {axis} of size {x.shape[axis]} into {count} pieces")
    if count == 1:
        return [n.b.broadcast_to(x, x.shape)]
    if len(set(sizes[2:])) <= 1:
        return list(n.b.split(x, axis=axis, sizes=sizes))
    pieces = []
    start = 0
    for size in sizes:
        begin = [0] * len(x.shape)
        limit = list(x.shape)
        begin[axis], limit[axis] = start, start + size
        pieces.append(n.b.slice(x, start=begin, limit=limit))
        start += size
    return pieces


@_converter("Slice", constant_operands=(1, 2, 3, 4),
            lowering="`slice` with starts/ends clamped as ONNX does; a negative step is a `concat` of size-1 slices "
                     "(a `gather` beyond 1024)")
def _slice(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    if n.opset < 10:
        starts, ends = n.ints("starts"), n.ints("ends")
        axes, steps = n.ints("axes"), None
    else:
        starts = _shape_values(n.constant(1, "starts"), "starts")
        ends = _shape_values(n.constant(2, "ends"), "ends")
        axes_value, steps_value = n.constant(3, "axes"), n.constant(4, "steps")
        axes = None if axes_value is None else _shape_values(axes_value, "axes")
        steps = None if steps_value is None else _shape_values(steps_value, "steps")
    if starts is None or ends is None:
        raise _NodeError("needs starts and ends")
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    begin, limit, strides = [0] * rank, list(x.shape), [1] * rank
    reversed_axes: dict[int, list[int]] = {}
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        axis = _axis(axis, rank)
        size = x.shape[axis]
        if step == 0:
            raise _NodeError(f"step 0 on axis {axis}")
        start = start + size if start < 0 else start
        end = end + size if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), size), min(max(end, 0), size)
            begin[axis], limit[axis], strides[axis] = start, max(end, start), step
        else:  # ONNX clamps a backward slice to [-1, size - 1]; the indices are taken one by one below
            start, end = min(max(start, 0), size - 1), min(max(end, -1), size - 1)
            reversed_axes[axis] = list(range(start, end, step))
    result = n.b.slice(x, start=begin, limit=limit, strides=strides)
    for axis, indices in reversed_axes.items():
        result = _take_along(n, result, axis, indices)
    return [result]


#: Constant indices taken as that many size-1 slices (shape computations then stay foldable); more are one
#: ``graph.gather`` of a constant.
_MAX_TAKEN_SLICES = 1024


def _take_along(n: _Node, x: Tensor, axis: int, indices: list[int]) -> Tensor:
    """``x`` indexed along ``axis`` by constant, in-range ``indices``: a concat of size-1 slices, or a gather."""
    if len(indices) > _MAX_TAKEN_SLICES:
        return n.b.gather(x, n.b.const(np.asarray(indices, np.int64)), axis=axis)
    if not indices:
        shape = list(x.shape)
        shape[axis] = 0
        return n.b.slice(x, start=[0] * len(shape), limit=shape)
    pieces = []
    for index in indices:
        begin, limit = [0] * len(x.shape), list(x.shape)
        begin[axis], limit[axis] = index, index + 1
        pieces.append(n.b.slice(x, start=begin, limit=limit))
    return pieces[0] if len(pieces) == 1 else n.b.concat(*pieces, axis=axis)


@_converter("Expand", constant_operands=(1,), lowering="`broadcast_to` the broadcast of the input and the shape")
def _expand(n: _Node) -> list[Tensor]:
    x = n.input(0)
    requested = _shape_values(n.constant(1, "shape"), "shape")
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(requested))
    except ValueError:
        raise _NodeError(f"cannot expand {list(x.shape)} to {requested}") from None
    return [n.b.broadcast_to(x, tuple(int(d) for d in shape))]


@_converter("Pad", constant_operands=(1, 3),
            lowering="per axis: negative pads `slice`; constant mode `concat`s blocks of the value (`broadcast_to`), "
                     "edge broadcasts the border slice, reflect and wrap `concat` slices of the input")
def _pad(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    mode = n.attr("mode", "constant")
    if n.opset < 11:
        pads = n.ints("pads") or n.ints("paddings")
        fill = n.const_like(float(n.attr("value", 0.0)), x)
        axes = list(range(rank))
    else:
        pads = _shape_values(n.constant(1, "pads"), "pads")
        fill = n.input(2) if n.has_input(2) else n.const_like(0, x)
        axes_value = n.constant(3, "axes")
        axes = list(range(rank)) if axes_value is None else [_axis(a, rank) for a in _shape_values(axes_value, "axes")]
    if pads is None or len(pads) != 2 * len(axes):
        raise _NodeError(f"pads {pads} should hold two values per padded axis ({len(axes)})")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise _NodeError(f"mode={mode} is not supported")
    if fill.shape not in ((), (1,)):
        raise _NodeError(f"constant_value of shape {list(fill.shape)} should be a scalar")
    for k, axis in enumerate(axes):
        x = _pad_axis(n, x, axis, pads[k], pads[k + len(axes)], mode, fill)
    return [x]


def _pad_axis(n: _Node, x: Tensor, axis: int, before: int, after: int, mode: str, fill: Tensor) -> Tensor:
    """``x`` padded (or, for negative amounts, cropped) along one axis."""
    size = x.shape[axis]
    if before < 0 or after < 0:  # crop first
        begin, limit = [0] * len(x.shape), list(x.shape)
        begin[axis], limit[axis] = max(-before, 0), size - max(-after, 0)
        x = n.b.slice(x, start=begin, limit=limit)
        before, after, size = max(before, 0), max(after, 0), x.shape[axis]
    if before == 0 and after == 0:
        return x
    if mode in ("reflect", "wrap", "edge") and size == 0:
        raise _NodeError(f"cannot pad an empty axis {axis} in {mode} mode")
    if mode == "reflect" and (before >= size or after >= size):
        raise _NodeError(f"reflect padding of {max(before, after)} needs more than {size} elements on axis {axis}")

    def block(count: int, at_end: bool) -> Tensor | None:
        if count == 0:
            return None
        if mode == "constant":
            shape = list(x.shape)
            shape[axis] = count
            return n.b.broadcast_to(n.b.reshape(fill, ()) if fill.shape else fill, tuple(shape))
        if mode == "edge":
            border = _take_along(n, x, axis, [size - 1 if at_end else 0])
            shape = list(x.shape)
            shape[axis] = count
            return n.b.broadcast_to(border, tuple(shape))
        if mode == "reflect":
            indices = [size - 2 - k for k in range(count)] if at_end else [count - k for k in range(count)]
        else:  # wrap
            indices = [k % size for k in range(count)] if at_end else [(size - count + k) % size for k in range(count)]
        return _take_along(n, x, axis, indices)

    pieces = [p for p in (block(before, False), x, block(after, True)) if p is not None]
    return n.b.concat(*pieces, axis=axis)


@_converter("Gather",
            lowering="`gather`; constant indices are range-checked, and up to 1024 of them become a `concat` of "
                     "size-1 slices reshaped to the indices' shape (shape computations stay foldable)")
def _gather(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = _axis(int(n.attr("axis", 0)), len(x.shape))
    if not n.has_input(1) or n.node.input[1] not in n.importer.constants:
        indices_value = n.input(1)
        if indices_value.dtype not in ("i32", "i64"):
            raise _NodeError(f"indices of element type {indices_value.dtype} should be i32 or i64")
        return [n.b.gather(x, indices_value, axis=axis)]
    indices = np.asarray(n.constant(1, "indices"))
    if indices.dtype.kind not in "iu":
        raise _NodeError(f"indices of dtype {indices.dtype} should be integers")
    size = x.shape[axis]
    flat = [int(i) for i in indices.reshape(-1)]
    if any(not -size <= i < size for i in flat):
        raise _NodeError(f"indices {flat[:8]} are out of range for axis {axis} of size {size}")
    taken = _take_along(n, x, axis, [i % size for i in flat])
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    return [taken if taken.shape == shape else n.b.reshape(taken, tuple(shape))]


@_converter("CumSum", constant_operands=(1,), lowering="`cumsum` along the constant axis, `exclusive` and "
            "`reverse` as they are")
def _cumsum(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = np.asarray(n.constant(1, "axis")).reshape(-1)
    if axis.size != 1:
        raise _NodeError(f"axis must hold one integer, got {axis.tolist()}")
    if not -len(x.shape) <= int(axis[0]) < len(x.shape):
        raise _NodeError(f"axis {int(axis[0])} is out of range for rank {len(x.shape)}")
    return [n.b.cumsum(x, axis=int(axis[0]), exclusive=bool(n.attr("exclusive", 0)),
                       reverse=bool(n.attr("reverse", 0)))]


@_converter("GatherElements", lowering="`gather_elements`; constant indices are range-checked, run-time ones out of "
            "range raise when the graph runs")
def _gather_elements(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axis = _axis(int(n.attr("axis", 0)), len(x.shape))
    if n.has_input(1) and n.node.input[1] in n.importer.constants:
        indices = np.asarray(n.constant(1, "indices"))
        size = x.shape[axis]
        if indices.size and size is not None and not (-size <= int(indices.min()) and int(indices.max()) < size):
            raise _NodeError(f"indices {indices.reshape(-1).tolist()[:8]} are out of range for axis {axis} of "
                             f"size {size}")
    indices_value = n.input(1)
    if indices_value.dtype not in ("i32", "i64"):
        raise _NodeError(f"indices of element type {indices_value.dtype} should be i32 or i64")
    return [n.b.gather_elements(x, indices_value, axis=axis)]


@_converter("GatherND", lowering="`gather` along axis 0 of data with its batch and indexed leading dims flattened, "
            "at `batch offset + sum(index_j * stride_j)` (constant indices range-checked; a run-time one out of range "
            "for its dim makes the position out of range, and the graph raises when it runs)")
def _gather_nd(n: _Node) -> list[Tensor]:
    x, indices = n.input(0), n.input(1)
    batch = int(n.attr("batch_dims", 0))
    if indices.dtype not in ("i32", "i64"):
        raise _NodeError(f"indices of element type {indices.dtype} should be i32 or i64")
    if None in x.shape or None in indices.shape or not indices.shape:
        raise _NodeError("data and indices need static shapes, indices at least one dimension")
    depth = indices.shape[-1]
    if not 0 <= batch < len(indices.shape) or batch + depth > len(x.shape) or x.shape[:batch] != indices.shape[:batch]:
        raise _NodeError(f"batch_dims {batch} and {depth} indexed dims do not fit data {list(x.shape)} and "
                         f"indices {list(indices.shape)}")
    dims = [int(d) for d in x.shape[batch:batch + depth]]
    strides = [math.prod(dims[j + 1:]) for j in range(depth)]
    rows = tuple(int(d) for d in indices.shape[:-1])
    # Batch dims: position (b..., i...) reads block linear(b...) of the flattened data.
    batches = np.arange(math.prod(rows[:batch]), dtype=np.int64).reshape(rows[:batch] + (1,) * (len(rows) - batch))
    offsets = np.broadcast_to(batches * math.prod(dims), rows)
    if n.node.input[1] in n.importer.constants:
        known = np.asarray(n.importer.constants[n.node.input[1]]).astype(np.int64).reshape(*rows, depth)
        flat_known = offsets.copy()
        for j, (size, stride) in enumerate(zip(dims, strides, strict=True)):
            column = known[..., j]
            if column.size and not (-size <= int(column.min()) and int(column.max()) < size):
                raise _NodeError(f"indices {column.reshape(-1).tolist()[:8]} are out of range for axis "
                                 f"{batch + j} of size {size}")
            flat_known += np.where(column < 0, column + size, column) * stride
        flat = n.b.const(flat_known)
    else:
        flat = n.b.const(np.ascontiguousarray(offsets)) if batch else None
        wide = indices if indices.dtype == "i64" else n.b.cast(indices, "i64")
        # An index out of range for its dim reads past all of data: the gather raises, as ONNX Runtime does.
        outside = math.prod(int(d) for d in x.shape[:batch + depth])
        for j, (size, stride) in enumerate(zip(dims, strides, strict=True)):
            column = n.b.reshape(n.b.slice(wide, start=[0] * len(rows) + [j], limit=[*rows, j + 1]), rows)
            column = n.b.select(n.b.less(column, n.const_like(0, column)), n.b.add(column, n.const_like(size, column)),
                                column)
            out_of_range = n.b.logical_or(n.b.less(column, n.const_like(0, column)),
                                          n.b.greater_equal(column, n.const_like(size, column)))
            term = n.b.mul(column, n.const_like(stride, column)) if stride != 1 else column
            term = n.b.select(out_of_range, n.const_like(outside, column), term)
            flat = term if flat is None else n.b.add(flat, term)
        assert flat is not None
    merged = (math.prod(int(d) for d in x.shape[:batch + depth]), *(int(d) for d in x.shape[batch + depth:]))
    flat_x = x if tuple(x.shape) == merged else n.b.reshape(x, merged)
    return [n.b.gather(flat_x, flat, axis=0)]


@_converter("InstanceNormalization",
            lowering="`(x - mean) / sqrt(var + epsilon) * scale + B` per (batch, channel), statistics by "
                     "`reduce_mean` over the spatial axes")
def _instance_norm(n: _Node) -> list[Tensor]:
    x, scale, bias = n.input(0), n.input(1), n.input(2)
    n.require_float(x)
    axes = list(range(2, len(x.shape)))
    per_channel = (x.shape[1],) + (1,) * len(axes)
    mean = n.b.reduce_mean(x, axes=axes, keep_dims=True)
    centered = n.b.sub(x, mean)
    variance = n.b.reduce_mean(n.b.mul(centered, centered), axes=axes, keep_dims=True)
    inv_std = n.b.rsqrt(n.b.add(variance, n.const_like(float(n.attr("epsilon", 1e-5)), x)))
    scaled = n.b.mul(n.b.mul(centered, inv_std), n.b.reshape(scale, per_channel))
    return [n.b.add(scaled, n.b.reshape(bias, per_channel))]


@_converter("Tile", constant_operands=(1,), lowering="`tile` with the constant repeats")
def _tile(n: _Node) -> list[Tensor]:
    x = n.input(0)
    return [n.b.tile(x, multiples=_shape_values(n.constant(1, "repeats"), "repeats"))]


@_converter("Constant", lowering="`arith.constant` (value, value_float(s), value_int(s))")
def _constant(n: _Node) -> list[Tensor]:
    for key in ("sparse_value", "value_string", "value_strings"):
        if key in n.attrs:
            raise _NodeError(f"attribute {key} is not supported")
    if "value" in n.attrs:
        array = _proto_array(n.attrs["value"], "attribute value")
    elif "value_float" in n.attrs:
        array = np.asarray(n.attrs["value_float"], np.float32)
    elif "value_floats" in n.attrs:
        array = np.asarray(n.attrs["value_floats"], np.float32)
    elif "value_int" in n.attrs:
        array = np.asarray(n.attrs["value_int"], np.int64)
    elif "value_ints" in n.attrs:
        array = np.asarray(n.attrs["value_ints"], np.int64)
    else:
        raise _NodeError("has no value attribute")
    return [_known_value(n, array)]


@_converter("ConstantOfShape", constant_operands=(0,), lowering="`arith.constant` filled with `value` (default f32 0)")
def _constant_of_shape(n: _Node) -> list[Tensor]:
    shape = _shape_values(n.constant(0, "shape"), "shape")
    fill = n.attrs.get("value")
    value = np.zeros((), np.float32) if fill is None else _proto_array(fill, "attribute value").reshape(())
    return [_known_value(n, np.full(shape, value, dtype=value.dtype))]


@_converter("Shape", lowering="an i64 constant: shapes are static (start/end honoured)")
def _shape(n: _Node) -> list[Tensor]:
    shape = list(n.input(0).shape)
    rank = len(shape)
    start, end = int(n.attr("start", 0)), n.attr("end")
    start = min(max(start + rank if start < 0 else start, 0), rank)
    stop = rank if end is None else int(end)
    stop = min(max(stop + rank if stop < 0 else stop, 0), rank)
    return [_known_value(n, np.asarray(shape[start:stop], np.int64))]


@_converter("Size", lowering="an i64 scalar constant: shapes are static")
def _size(n: _Node) -> list[Tensor]:
    return [_known_value(n, np.asarray(math.prod(n.input(0).shape), np.int64))]
