"""Converters of shape and indexing ops: views, transposes, concatenation, slices, gathers
and scatters, factories (arange, full), embedding lookups, repeats."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import fx
from torch.fx.experimental.symbolic_shapes import statically_known_true

from graphfuse.dialect.builder import Tensor
from graphfuse.dialect.shape_utils import reshape_units
from graphfuse.frontends.torch.dtypes import _INT64_MAX
from graphfuse.frontends.torch.importer import _Const, _Importer, _Symbolic
from graphfuse.frontends.torch.registry import _converts, _op_name


def _axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


@_converts(
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.squeeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.unsqueeze.default",
    graph="`reshape` (none when the shape stays), with a sizes operand for symbolic sizes read from tensors",
    notes="one dynamic dim in the result is the element count over the others; any others are dynamic dims of "
          "the operand in order (heads split off) or sizes read from tensors' dims (`[b * s, n]` viewed as "
          "`[b, s, n]`)",
)
def _reshape(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    shape = imp.out_shape(node)
    if shape.count(None) > 1 and reshape_units(x.shape, shape) is None and "size" in a:
        return _reshape_to_symbolic_sizes(imp, node, x, shape, a["size"])
    return _to_node_shape(imp, node, x, "reshape")


def _reshape_to_symbolic_sizes(imp: _Importer, node: fx.Node, x: Tensor, shape: tuple, sizes: Sequence[Any]
                               ) -> Tensor:
    """A view to several symbolic sizes that are not the operand's dims in order (``[b * s, n] -> [b, s, n]``):
    ``reshape`` with a sizes operand whose dims are those read from tensors (``x.shape[d]``); one more, if any
    (``b * heads``, or -1), is the element count over the others."""
    lines = {k: line for k, size in enumerate(sizes) if (line := _size_line(imp, size)) is not None}
    counted = [k for k, d in enumerate(shape) if d is None and k not in lines]
    if len(counted) > 1:
        raise imp.unsupported(node, f"a view to sizes {list(sizes)}, of which {len(counted)} (dims {counted}) are "
                                    "neither numbers nor read from tensors' dims: only one can follow from the count")
    return imp.emit("reshape", x, _size_carrier(imp, lines, len(shape)), shape)


@_converts("aten.expand.default", graph="`broadcast_to` (none when the shape stays); an `add` of a filled tensor "
           "to a symbolic size", notes="a size-1 dim expanded to a symbolic size read from a tensor's dim")
def _expand(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    shape = imp.out_shape(node)
    offset = len(shape) - len(x.shape)
    if any(size is None and (k < offset or x.shape[k - offset] == 1) for k, size in enumerate(shape)):
        return _expand_to_symbolic_sizes(imp, node, x, a["size"], offset)
    return _to_node_shape(imp, node, x, "broadcast_to")


def _expand_to_symbolic_sizes(imp: _Importer, node: fx.Node, x: Tensor, sizes: Sequence[Any], offset: int) -> Tensor:
    """``x.expand(batch, seq)`` where a size-1 dim of ``x`` (or a new leading one) becomes a symbolic size (BERT's
    token type ids): ``x`` plus zeros of those sizes (:func:`_filled`, 1 where ``x`` keeps its own dim), which
    the elementwise broadcast widens; ``broadcast_to`` has no size to give a dynamic dim."""
    zero_sizes = [size if k < offset or (x.shape[k - offset] == 1 and size != -1) else 1
                  for k, size in enumerate(sizes)]
    if x.dtype == "i1":
        return imp.emit("logical_or", x, _filled(imp, node, zero_sizes, False, "i1"))
    return imp.emit("add", x, _filled(imp, node, zero_sizes, 0, x.dtype))


def _to_node_shape(imp: _Importer, node: fx.Node, x: Tensor, graph_op: str) -> Tensor:
    """``graph_op`` (reshape or broadcast_to) of ``x`` to the node's shape; ``x`` itself when it has it."""
    shape = imp.out_shape(node)
    if shape == x.shape and x.sig.is_static:
        return x
    return imp.emit(graph_op, x, shape)


@_converts("aten.permute.default", graph="`transpose`")
def _permute(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    perm = [_axis(d, len(x.shape)) for d in a["dims"]]
    return x if perm == sorted(perm) else imp.emit("transpose", x, perm=perm)


def _swap(imp: _Importer, x: Tensor, dim0: int, dim1: int) -> Tensor:
    rank = len(x.shape)
    perm = list(range(rank))
    d0, d1 = _axis(dim0, rank), _axis(dim1, rank)
    if d0 == d1:
        return x
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return imp.emit("transpose", x, perm=perm)


@_converts("aten.transpose.int", graph="`transpose`")
def _transpose(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _swap(imp, imp.tensor(a["self"]), a["dim0"], a["dim1"])


@_converts("aten.t.default", graph="`transpose`", notes="rank <= 2")
def _t(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    return x if len(x.shape) < 2 else _swap(imp, x, 0, 1)


def _concat(imp: _Importer, values: list[Tensor], axis: int) -> Tensor:
    """concat of any number of values; IRDL wants the values after the first two to share one type."""
    if len(values) == 1:
        return values[0]
    first, second, *rest = values
    if all(v.sig == rest[0].sig for v in rest):
        return imp.emit("concat", first, second, *rest, axis=axis)
    return _concat(imp, [imp.emit("concat", first, second, axis=axis), *rest], axis)


def _has_no_elements(imp: _Importer, arg: Any) -> bool:
    """Whether an FX argument is a tensor with a static zero-size dimension."""
    val = imp.meta(arg)
    return isinstance(val, torch.Tensor) and any(isinstance(d, int) and d == 0 for d in val.shape)


@_converts("aten.cat.default", graph="`concat` (nested when shapes differ)",
           notes="operands promoted first; empty operands dropped")
def _cat(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    shape = imp.out_shape(node)
    # An empty operand adds nothing; PyTorch's legacy rule also skips 1-D operands of shape [0] whatever the rank of
    # the others (transformers' DynamicCache starts each layer with torch.tensor([])).  Dropped before they are
    # imported, they leave no empty tensor in the graph.
    kept = [t for t in a["tensors"] if not _has_no_elements(imp, t)]
    if not kept:
        if None in shape:
            raise imp.unsupported(node, "every operand is empty and the result has a dynamic shape")
        return imp.const(np.zeros(shape), dtype)
    return _concat(imp, [imp.tensor(t, dtype) for t in kept], _axis(a["dim"], len(shape)))


@_converts("aten.stack.default", graph="`reshape`, `concat`")
def _stack(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    out_shape = imp.out_shape(node)
    axis = _axis(a["dim"], len(out_shape))
    pieces = []
    for t in a["tensors"]:
        value = imp.tensor(t, dtype)
        shape = list(value.shape)
        shape.insert(axis, 1)
        pieces.append(imp.emit("reshape", value, tuple(shape)))
    return _concat(imp, pieces, axis)


def _split(imp: _Importer, x: Tensor, axis: int, sizes: list[int]) -> tuple[Tensor, ...]:
    """split into ``sizes``; IRDL wants the pieces after the first two to share one type (else nested splits)."""
    if len(sizes) == 1:
        return (x,)
    if len(sizes) == 2 or all(s == sizes[2] for s in sizes[2:]):
        return tuple(imp.emit("split", x, axis=axis, sizes=sizes))
    first, rest = imp.emit("split", x, axis=axis, sizes=[sizes[0], sum(sizes[1:])])
    return (first, *_split(imp, rest, axis, sizes[1:]))


@_converts(
    "aten.split.Tensor",
    "aten.split_with_sizes.default",
    "aten.unbind.int",
    graph="`split` (`reshape` for unbind)",
    notes="static size along the split axis",
)
def _split_op(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, ...]:
    x = imp.tensor(a["self"])
    axis = _axis(a["dim"], len(x.shape))
    pieces = imp.meta(node)
    sizes = [int(p.shape[axis]) if node.target != torch.ops.aten.unbind.int else 1 for p in pieces]
    parts = _split(imp, x, axis, sizes)
    if node.target == torch.ops.aten.unbind.int:
        parts = tuple(imp.emit("reshape", p, imp.out_shape(node, i)) for i, p in enumerate(parts))
    return parts


def _slice_box(imp: _Importer, x: Tensor, axis: int, start: int, end: int, step: int) -> Tensor:
    shape = imp.static_shape(x)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, max(start, end), step
    if starts == [0] * len(shape) and limits == list(shape) and step == 1:
        return x
    return imp.emit("slice", x, start=starts, limit=limits, strides=strides)


def _bound(value: Any, size: int, default: int) -> int:
    """A slice bound as PyTorch reads it: None is the default, negatives count from the end, then clamped."""
    if value is None:
        return default
    value = int(value)
    if value < 0:
        value += size
    return min(max(value, 0), size)


@_converts("aten.slice.Tensor", graph="`slice`; along a static dim of a dynamic shape `split` (with a step, of a "
           "`reshape` into groups of the step)",
           notes="positive step; static shape, a static dim of a dynamic shape, or a dynamic dim sliced to "
           "numbers within its smallest size")
def _slice(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    if isinstance(a["end"], fx.Node):
        return _slice_to_symbolic_end(imp, node, x, a)
    if isinstance(a["start"], fx.Node):
        return _slice_of_a_symbolic_last_part(imp, node, x, a)
    if not x.sig.is_static:
        if x.shape[_axis(a["dim"], len(x.shape))] is not None and a["step"] >= 1:
            return _slice_of_a_static_dim(imp, node, x, a)
        return _slice_of_a_dynamic_dim(imp, node, x, a)
    axis, start, end, step = _slice_bounds(imp, node, a, imp.static_shape(x))
    return _slice_box(imp, x, axis, start, end, step)


def _slice_of_a_static_dim(imp: _Importer, node: fx.Node, x: Tensor, a: dict[str, Any]) -> Tensor:
    """``x[..., :8]`` along a static dim of ``x`` whose other dims are dynamic (rotary embeddings' halves under a
    symbolic sequence length): the middle result of a ``split`` of that dim, which keeps the dynamic dims whole
    (a ``slice`` names every dim's bounds).  With a step (``x[..., ::2]``, GPT-J's interleaved rotary pairs):
    :func:`_every_step`."""
    axis = _axis(a["dim"], len(x.shape))
    size = x.shape[axis]
    _, start, end, step = _slice_bounds(imp, node, a, tuple(size if k == axis else 0 for k in range(len(x.shape))))
    end = max(start, end)
    if (start, end) != (0, size):
        sizes = [start, end - start, size - end]
        kept = [k for k, part in enumerate(sizes) if part or k == 1]  # the middle part, empty or not
        x = imp.emit("split", x, axis=axis, sizes=[sizes[k] for k in kept])[kept.index(1)]
    return x if step == 1 or end - start <= 1 else _every_step(imp, x, axis, step)


def _every_step(imp: _Importer, x: Tensor, axis: int, step: int) -> Tensor:
    """Every ``step``-th element of ``x`` along its static dim ``axis`` from the first: the whole groups of
    ``step`` seen as a dim of their own (a reshape that keeps the dynamic dims whole) and the first of each
    taken by a ``split``, then the first of the elements left, when there are any."""
    size = x.shape[axis]
    groups, left = divmod(size, step)
    parts = []
    if groups:
        whole = x if not left else imp.emit("split", x, axis=axis, sizes=[groups * step, left])[0]
        shape = list(whole.shape)
        grouped = imp.emit("reshape", whole, tuple([*shape[:axis], groups, step, *shape[axis + 1:]]))
        first = imp.emit("split", grouped, axis=axis + 1, sizes=[1, step - 1])[0]
        parts.append(imp.emit("reshape", first, tuple([*shape[:axis], groups, *shape[axis + 1:]])))
    if left:  # the element after the whole groups, split off without pieces of size 0
        sizes = [size for size in (groups * step, 1, left - 1) if size]
        parts.append(imp.emit("split", x, axis=axis, sizes=sizes)[1 if groups else 0])
    return parts[0] if len(parts) == 1 else imp.emit("concat", *parts, axis=axis)


def _slice_of_a_dynamic_dim(imp: _Importer, node: fx.Node, x: Tensor, a: dict[str, Any]) -> Tensor:
    """``x[:, :1]`` with dim 1 of ``x`` dynamic and the others static: a static slice, exact when the bounds are
    numbers within the smallest size torch.export's range allows that dim (the slice never clamps; the compiled
    code checks the bounds at each call too)."""
    axis = _axis(a["dim"], len(x.shape))
    start = 0 if a["start"] is None else a["start"]
    end = a["end"]
    size = imp.meta(a["self"]).shape[axis]
    ranges = getattr(imp.program, "range_constraints", {})
    bound = ranges.get(size.node.expr) if isinstance(size, torch.SymInt) else None
    try:
        lower = int(bound.lower)
    except (AttributeError, TypeError, ValueError):
        lower = None
    to_the_end = end is None or end == _INT64_MAX
    if start == 0 and to_the_end and a["step"] == 1:
        return x  # the whole dim
    from_the_end = isinstance(start, int) and start < 0 and (to_the_end or (isinstance(end, int) and start <= end <= 0))
    if from_the_end and a["step"] == 1 and lower is not None and -start <= lower:
        return _slice_from_the_end(imp, x, axis, -start, 0 if to_the_end else -end)
    others = [d for k, d in enumerate(x.shape) if k != axis]
    if None in others or not isinstance(end, int) or not isinstance(start, int) or a["step"] < 1 or lower is None \
            or not 0 <= start <= end <= lower:
        raise imp.unsupported(node, f"a slice of {x.sig} whose result has a dynamic size, or past the smallest "
                                    f"size of dimension {axis}")
    starts, limits, strides = [0] * len(x.shape), list(x.shape), [1] * len(x.shape)
    starts[axis], limits[axis], strides[axis] = start, end, int(a["step"])
    return imp.emit("slice", x, start=starts, limit=limits, strides=strides)


def _slice_from_the_end(imp: _Importer, x: Tensor, axis: int, first: int, last: int) -> Tensor:
    """``x[:, -first:-last]`` of a dynamic dim at least ``first`` long (the last token's hidden state): a ``gather``
    at the positions ``size - first ... size - last - 1``, counted from the dim's size at run time."""
    size = imp.emit("dimension_size", x, axis=axis)
    offsets = imp.const(np.arange(-first, -last, dtype=np.int64), "i64")
    return imp.emit("gather", x, imp.emit("add", offsets, size), axis=axis)


def _slice_bounds(imp: _Importer, node: fx.Node, a: dict[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
    """(axis, start, end, step) of a ``slice`` / ``slice_scatter`` node over ``shape``, bounds as PyTorch reads
    them; a step below 1 is unsupported."""
    axis = _axis(a["dim"], len(shape))
    size = shape[axis]
    start = _bound(a["start"], size, 0)
    end = _bound(None if a["end"] == _INT64_MAX else a["end"], size, size)
    if a["step"] < 1:
        raise imp.unsupported(node, f"slice step {a['step']}")
    return axis, start, end, int(a["step"])


def _slice_to_symbolic_end(imp: _Importer, node: fx.Node, x: Tensor, a: dict[str, Any]) -> Tensor:
    """``x[..., :s]`` with ``s`` read from another tensor's dim: a ``gather`` at ``iota`` of that dim, exact when
    torch.export's range for ``s`` keeps it within the static size, or, for a dynamic size, when the sizes'
    symbols prove it within (Mamba's convolution of ``s + 3`` outputs cut to ``s``): the slice never clamps."""
    axis = _axis(a["dim"], len(x.shape))
    size = x.shape[axis]
    end = imp.meta(a["end"])
    ranges = getattr(imp.program, "range_constraints", {})
    bound = ranges.get(end.node.expr) if isinstance(end, torch.SymInt) else None
    try:
        upper = int(bound.upper)  # sympy's oo (no bound) does not convert
    except (AttributeError, TypeError, ValueError):
        upper = None
    within = upper is not None and size is not None and upper <= size
    if size is None and isinstance(end, torch.SymInt):
        within = statically_known_true(imp.meta(a["self"]).shape[axis] >= end)
    if a["start"] not in (0, None) or a["step"] != 1 or not within:
        raise imp.unsupported(node, f"a slice to the symbolic size {a['end'].name} that may exceed dimension {axis} "
                                    f"of {x.sig}, or with a start or step")
    tensor_node, dim = _symbolic_dim(imp, node, a["end"])
    return imp.emit("gather", x, imp.emit("iota", imp.tensor(tensor_node), axis=dim), axis=axis)


def _slice_of_a_symbolic_last_part(imp: _Importer, node: fx.Node, x: Tensor, a: dict[str, Any]) -> Tensor:
    """``x[..., -s:]`` with ``s`` a symbolic size the sizes' symbols prove at most the dim's (Mamba's
    convolution of ``s + 3`` outputs cut to the last ``s``): a ``gather`` at ``size - s`` plus the positions of
    a line of length ``s``."""
    axis = _axis(a["dim"], len(x.shape))
    start = imp.values.get(a["start"])
    negated = start.node.args[0] if isinstance(start, _Symbolic) and start.node is not None \
        and start.node.target is operator.neg and len(start.node.args) == 1 else None
    line = _size_line(imp, negated) if negated is not None else None
    size = imp.meta(a["self"]).shape[axis]
    to_the_end = a["end"] is None or a["end"] == _INT64_MAX
    if line is None or a["step"] != 1 or not to_the_end or not statically_known_true(size >= imp.meta(negated)):
        raise imp.unsupported(node, f"a slice of {x.sig} from a symbolic start other than minus a size within "
                                    f"dimension {axis}, or to another end, or with a step")
    positions = imp.emit("iota", line, axis=0)
    first = imp.emit("sub", imp.emit("dimension_size", x, axis=axis), imp.emit("dimension_size", line, axis=0))
    return imp.emit("gather", x, imp.emit("add", positions, first), axis=axis)


@_converts("aten.select.int", graph="`slice`, `reshape`; `gather` at the index when a dim has a dynamic size",
           notes="an index out of range of a dynamic dim raises when the graph runs")
def _select(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    if not x.sig.is_static:  # BERT's pooler: hidden_states[:, 0] over a batch and a length known at run time
        axis = _axis(a["dim"], len(x.shape))
        if x.shape[axis] is not None and not -x.shape[axis] <= a["index"] < x.shape[axis]:
            raise imp.error(f"FX node '{node.name}': index {a['index']} is out of range for dimension {axis} of size "
                            f"{x.shape[axis]}", node)
        return imp.emit("gather", x, imp.const(np.asarray(a["index"], np.int64), "i64"), axis=axis,
                        negative_indices=True)
    shape = imp.static_shape(x)
    axis = _axis(a["dim"], len(shape))
    index = a["index"] + shape[axis] if a["index"] < 0 else a["index"]
    return imp.emit("reshape", _slice_box(imp, x, axis, index, index + 1, 1), imp.out_shape(node))


def _gather(imp: _Importer, node: fx.Node, x: Tensor, index_arg: Any, axis: int) -> Tensor:
    """``graph.gather`` of ``x`` along ``axis`` at ``index_arg``, a negative index out of range as PyTorch's
    index_select and embedding have it; known indices are range-checked as PyTorch checks them."""
    indices = _indices(imp, node, index_arg, axis, imp.static_shape(x)[axis])
    return imp.emit("gather", x, indices, axis=axis, negative_indices=False)


def _indices(imp: _Importer, node: fx.Node, index_arg: Any, axis: int, size: int) -> Tensor:
    """The index tensor of a gather or scatter along ``axis`` of ``size``; known indices are range-checked as
    PyTorch checks them (run-time ones are checked by the graph ops, which raise an IndexError as eager does)."""
    known = imp.constant_value(index_arg)
    if known is not None and known.numel() and not (0 <= int(known.min()) and int(known.max()) < size):
        raise imp.error(f"FX node '{node.name}': indices {known.reshape(-1).tolist()[:8]} are out of range for "
                        f"dimension {axis} of size {size}", node)
    indices = imp.tensor(index_arg)
    if indices.dtype not in ("i32", "i64"):
        raise imp.unsupported(node, f"indices of dtype {indices.dtype}")
    return indices


def _flat_index(imp: _Importer, node: fx.Node, x: Tensor, entries: list[Any]) -> tuple[int, int, Tensor]:
    """The integer index tensors of ``entries`` (one per dim of ``x``, None for a whole dim) as one index into
    the indexed dims flattened: ``(first indexed dim, how many, sum(ik * stride_k))`` over the broadcast indices.

    Constant indices are range-checked as PyTorch checks them; run-time ones are counted from the end when
    negative, and one still out of range for its dim makes the sum out of range for the flattened dim (its term
    is that dim's whole size), so the gather or scatter raises the IndexError eager raises.  The sizes and
    strides of indexed dims of dynamic size are ``dimension_size`` arithmetic (HF's padding mask indexed by
    ``[batch, key]`` positions).
    """
    shape = tuple(x.shape)
    used = [k for k, entry in enumerate(entries) if entry is not None]
    if used != list(range(used[0], used[-1] + 1)):
        raise imp.unsupported(node, "index tensors on dims that are not adjacent")
    first, dims = used[0], shape[used[0]:used[-1] + 1]
    metas = [imp.meta(entries[k]) for k in used]
    if any(not isinstance(m, torch.Tensor) or m.dtype == torch.bool or m.is_floating_point() for m in metas):
        raise imp.unsupported(node, "an index that is not an integer tensor (boolean masks included)")
    common = tuple(d if isinstance(d, int) else None for d in torch.broadcast_shapes(*(m.shape for m in metas)))
    known = [imp.values.get(entries[k]) for k in used]
    if None in dims:
        return first, len(dims), _dynamic_flat_index(imp, node, x, first, [entries[k] for k in used], common)
    strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
    if all(isinstance(value, _Const) for value in known):
        flat = np.zeros(common, np.int64)
        for axis, (value, size, stride) in enumerate(zip(known, dims, strides, strict=True)):
            index = np.broadcast_to(value.tensor.numpy().astype(np.int64), common)
            if index.size and not (-size <= int(index.min()) and int(index.max()) < size):
                raise imp.error(f"FX node '{node.name}': an index is out of range for dimension {first + axis} "
                                f"of size {size}", node)
            flat = flat + np.where(index < 0, index + size, index) * stride
        return first, len(dims), imp.const(flat, "i64")
    indices = None
    outside = imp.tensor(math.prod(dims), "i64")
    for k, size, stride in zip(used, dims, strides, strict=True):
        index = imp.tensor(entries[k], "i64")
        wrapped = imp.emit("add", index, imp.tensor(size, "i64"))
        index = imp.emit("select", imp.emit("less", index, imp.tensor(0, "i64")), wrapped, index)
        out_of_range = imp.emit("logical_or", imp.emit("less", index, imp.tensor(0, "i64")),
                                imp.emit("greater_equal", index, imp.tensor(size, "i64")))
        term = imp.emit("mul", index, imp.tensor(stride, "i64")) if stride != 1 else index
        term = imp.emit("select", out_of_range, outside, term)
        indices = term if indices is None else imp.emit("add", indices, term)
    assert indices is not None
    if tuple(indices.shape) != common:
        indices = imp.emit("broadcast_to", indices, common)
    return first, len(dims), indices


def _dynamic_flat_index(imp: _Importer, node: fx.Node, x: Tensor, first: int, entries: list[Any],
                        common: tuple[int | None, ...]) -> Tensor:
    """:func:`_flat_index`'s sum over indexed dims of ``x`` from ``first`` some of which have dynamic sizes: the
    sizes are rank-0 ``dimension_size`` tensors and the strides their products; the broadcast of the index
    tensors must then be the one their sum makes."""
    sizes = [imp.tensor(d, "i64") if d is not None else imp.emit("dimension_size", x, axis=first + k)
             for k, d in enumerate(tuple(x.shape)[first:first + len(entries)])]
    strides: list[Tensor | None] = [None] * len(sizes)  # None: 1
    for k in range(len(sizes) - 2, -1, -1):
        after = sizes[k + 1]
        strides[k] = after if strides[k + 1] is None else imp.emit("mul", strides[k + 1], after)
    outside = sizes[0] if strides[0] is None else imp.emit("mul", strides[0], sizes[0])
    zero = imp.tensor(0, "i64")
    indices = None
    for entry, size, stride in zip(entries, sizes, strides, strict=True):
        index = imp.tensor(entry, "i64")
        index = imp.emit("select", imp.emit("less", index, zero), imp.emit("add", index, size), index)
        out_of_range = imp.emit("logical_or", imp.emit("less", index, zero), imp.emit("greater_equal", index, size))
        term = index if stride is None else imp.emit("mul", index, stride)
        term = imp.emit("select", out_of_range, outside, term)
        indices = term if indices is None else imp.emit("add", indices, term)
    assert indices is not None
    if tuple(indices.shape) != common:
        raise imp.unsupported(node, f"index tensors of {x.sig} broadcast to {common} other than their sum")
    return indices


def _indexed_dims_merged(imp: _Importer, node: fx.Node, x: Tensor, first: int, count: int
                         ) -> tuple[Tensor, tuple[int | None, ...]]:
    """``x`` reshaped with its ``count`` indexed dims from ``first`` merged into one, and that shape; refused
    when the reshape would merge a dynamic dim with others beside another dynamic dim."""
    shape = tuple(x.shape)
    merged = _merged(shape, first, count)
    if shape == merged:
        return x, merged
    if merged.count(None) > 1 and reshape_units(shape, merged) is None:
        raise imp.unsupported(node, f"the indexed {x.sig} with its indexed dims merged has two dynamic sizes, "
                                    "one of them a dynamic dim merged with others")
    return imp.emit("reshape", x, merged), merged


def _merged(shape: tuple[int | None, ...], first: int, count: int) -> tuple[int | None, ...]:
    """``shape`` with dims ``first .. first + count - 1`` as one (dynamic when one of them is)."""
    group = shape[first:first + count]
    return (*shape[:first], None if None in group else math.prod(group), *shape[first + count:])


@_converts("aten.index.Tensor", graph="`gather` of the indexed dims flattened into one",
           notes="integer index tensors on adjacent dims; constant indices range-checked, run-time ones out of range "
                 "raise when the graph runs")
def _index(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """Advanced indexing ``x[..., i0, i1, ...]``: the indexed dims are flattened into one and gathered at
    ``sum(ik * stride_k)`` over the broadcast index tensors, the result's dims in numpy's order."""
    x = imp.tensor(a["self"])
    entries = list(a["indices"])
    if all(entry is None for entry in entries):
        return x
    first, count, indices = _flat_index(imp, node, x, entries)
    flat_x, _ = _indexed_dims_merged(imp, node, x, first, count)
    return imp.emit("gather", flat_x, indices, axis=first)


@_converts("aten.index_put.default", graph="`scatter_update` of the indexed dims flattened into one; "
           "`select` for a boolean mask", notes="integer index tensors on adjacent dims, or one boolean mask with "
           "a single value; not accumulate")
def _index_put(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x[..., i0, i1, ...] = values``: the values broadcast to the indexed positions are written by
    ``scatter_update`` into x with the indexed dims flattened; ``x[mask] = v`` is a ``select``."""
    if a["accumulate"]:
        raise imp.unsupported(node, "accumulate=True")
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"])
    shape = tuple(x.shape)
    entries = list(a["indices"])
    metas = [imp.meta(entry) for entry in entries if entry is not None]
    if len(metas) == 1 and isinstance(metas[0], torch.Tensor) and metas[0].dtype == torch.bool:
        mask_at = next(k for k, entry in enumerate(entries) if entry is not None)
        value = imp.meta(a["values"])
        if mask_at != 0 or (isinstance(value, torch.Tensor) and value.numel() != 1):
            raise imp.unsupported(node, "a boolean mask that is not leading, or more than one value for it")
        mask = imp.tensor(entries[0], "i1")
        if len(mask.shape) < len(shape):  # x[mask] with a mask over the leading dims: broadcast it
            mask = imp.emit("reshape", mask, tuple(mask.shape) + (1,) * (len(shape) - len(mask.shape)))
        fill = imp.tensor(a["values"], dtype)
        if len(fill.shape):
            fill = imp.emit("reshape", fill, ())
        return imp.emit("select", mask, fill, x)
    first, count, indices = _flat_index(imp, node, x, entries)
    flat_x, merged = _indexed_dims_merged(imp, node, x, first, count)
    rows = (*merged[:first], *indices.shape, *merged[first + 1:])
    # numpy's rule: with the index tensors adjacent, the indexed dims sit where they were, before broadcasting.
    values = imp.tensor(a["values"], dtype)
    if tuple(values.shape) != rows:
        offset = len(rows) - len(values.shape)
        if any(d is None and (k < offset or values.shape[k - offset] is not None) for k, d in enumerate(rows)):
            raise imp.unsupported(node, f"values {values.sig} broadcast to the dynamic indexed rows {rows}")
        values = imp.emit("broadcast_to", values, rows)
    written = imp.emit("scatter_update", flat_x, indices, values, axis=first)
    return written if tuple(shape) == merged else imp.emit("reshape", written, shape)


@_converts("aten.index_copy.default", graph="`scatter_update` (`negative_indices = false`)",
           notes="constant indices are range-checked, run-time ones out of range (negative ones too) raise when the "
                 "graph runs")
def _index_copy(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    axis = _axis(a["dim"], len(x.shape))
    indices = _indices(imp, node, a["index"], axis, imp.static_shape(x)[axis])
    return imp.emit("scatter_update", x, indices, imp.tensor(a["source"], x.dtype), axis=axis,
                    negative_indices=False)


@_converts("aten.slice_scatter.default", graph="`scatter_update` at the constant positions of the slice",
           notes="positive step; static shape")
def _slice_scatter(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x[..., start:end:step, ...] = src`` (a view written in place, functionalized)."""
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    axis, start, end, step = _slice_bounds(imp, node, a, shape)
    positions = np.arange(start, max(start, end), step, dtype=np.int64)
    if positions.size == shape[axis]:
        return imp.tensor(a["src"], x.dtype)  # the whole dim is written
    return imp.emit("scatter_update", x, imp.const(positions, "i64"), imp.tensor(a["src"], x.dtype), axis=axis)


@_converts("aten.select_scatter.default", graph="`scatter_update` at one constant position")
def _select_scatter(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x[..., index, ...] = src`` (a view written in place, functionalized)."""
    x = imp.tensor(a["self"])
    shape = imp.static_shape(x)
    axis = _axis(a["dim"], len(shape))
    index = int(a["index"])
    if not -shape[axis] <= index < shape[axis]:
        raise imp.error(f"FX node '{node.name}': index {index} is out of range for dimension {axis} of size "
                        f"{shape[axis]}", node)
    position = imp.const(np.asarray(index % shape[axis], np.int64), "i64")
    return imp.emit("scatter_update", x, position, imp.tensor(a["src"], x.dtype), axis=axis)


@_converts("aten.gather.default", graph="`gather_elements` (`negative_indices = false`)",
           notes="constant indices are range-checked, run-time ones out of range (negative ones too) raise when the "
                 "graph runs; not sparse_grad")
def _gather_along(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    axis = _axis(a["dim"], len(x.shape))
    indices = _indices(imp, node, a["index"], axis, imp.static_shape(x)[axis])
    return imp.emit("gather_elements", x, indices, axis=axis, negative_indices=False)


@_converts("aten.cumsum.default", graph="`cumsum` (a `cast` first to the result type: int64 for integers "
           "and booleans, or the given dtype)")
def _cumsum(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"], imp.out_dtype(node))
    if not x.shape:  # a 0-d tensor is its own running sum
        return x
    return imp.emit("cumsum", x, axis=_axis(a["dim"], len(x.shape)))


@_converts("aten.arange.default", "aten.arange.start", "aten.arange.start_step",
           graph="`iota` along the dim the size is read from (a `cast` to a float dtype)",
           notes="only over a symbolic size (`arange(x.shape[1])`, or a product of such sizes and numbers; start "
           "0, step 1); arange over numbers is computed when importing")
def _arange(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``torch.arange(x.shape[d])`` under a dynamic shape; a constant arange never reaches here (folded)."""
    end, start, step = a.get("end"), a.get("start", 0), a.get("step", 1)
    line = _size_line(imp, end) if start == 0 and step == 1 else None
    if line is None:
        raise imp.unsupported(node, "arange over a size that is neither one dim of a tensor nor a product of such "
                                    "sizes and numbers, or with a start or step")
    read = imp.values[end].source is not None  # the line is then the iota along that dim: the arange itself
    positions = line if read else imp.emit("iota", line, axis=0)
    dtype = imp.out_dtype(node)
    return positions if dtype == "i64" else imp.emit("cast", positions, dtype)


def _symbolic_dim(imp: _Importer, node: fx.Node, size: Any) -> tuple[fx.Node, int]:
    """The tensor and dim a symbolic size was read from (``x.shape[d]``)."""
    value = imp.values.get(size) if isinstance(size, fx.Node) else None
    if not isinstance(value, _Symbolic) or value.source is None:
        raise imp.unsupported(node, f"a size ({size}) that is neither a number nor one dim of a tensor")
    return value.source


def _size_line(imp: _Importer, size: Any) -> Tensor | None:
    """A 1-D i64 tensor whose length is the symbolic ``size``: an ``iota`` along the tensor dim it reads
    (``x.shape[d]``), or for a product of such sizes and numbers (``batch * heads``), the lines of the factors
    broadcast against each other and flattened. None for a number or a size of any other form."""
    value = imp.values.get(size) if isinstance(size, fx.Node) else None
    if not isinstance(value, _Symbolic):
        return None
    if value.source is not None:
        tensor_node, dim = value.source
        return imp.emit("iota", imp.tensor(tensor_node), axis=dim)
    node = value.node
    if node is None or node.target is not operator.mul or len(node.args) != 2 or node.kwargs:
        return None
    factors = [arg if isinstance(arg, int) else _size_line(imp, arg) for arg in node.args]
    if any(f is None for f in factors):
        return None
    shape = tuple(f if isinstance(f, int) else None for f in factors)
    grid = [f if isinstance(f, int) else imp.emit("reshape", f, tuple(None if k == i else 1 for k in range(2)))
            for i, f in enumerate(factors)]
    lines = [g for g in grid if not isinstance(g, int)]
    product = lines[0] if len(lines) == 1 else imp.emit("add", *lines)
    if tuple(product.shape) != shape:
        product = imp.emit("broadcast_to", product, shape)
    return imp.emit("reshape", product, (None,))


def _size_carrier(imp: _Importer, lines: dict[int, Tensor], rank: int) -> Tensor:
    """An i1 tensor of ``rank`` dims, true throughout, whose dim at each position of ``lines`` has that line's
    length (:func:`_size_line`) and whose other dims are 1: what gives ops their dynamic sizes."""
    condition = None
    for position, line in lines.items():
        placed = imp.emit("reshape", line, tuple(None if k == position else 1 for k in range(rank)))
        present = imp.emit("greater_equal", placed, imp.tensor(0, "i64"))
        condition = present if condition is None else imp.emit("logical_and", condition, present)
    assert condition is not None, "no symbolic size to carry"
    return condition


def _filled(imp: _Importer, node: fx.Node, sizes: Sequence[Any], value: Any, dtype: str) -> Tensor:
    """A tensor of ``sizes`` (numbers, or symbolic sizes read from tensors' dims) holding ``value``.

    Each symbolic dim comes from a line of its length (:func:`_size_line`), placed at its position; their
    conjunction (all true) selects ``value`` and a ``broadcast_to`` adds the static dims: a dynamic dim is
    always carried by an operand, as the lowering needs.
    """
    lines = {k: _size_line(imp, size) for k, size in enumerate(sizes) if not isinstance(size, int)}
    if unknown := [sizes[k] for k, line in lines.items() if line is None]:
        raise imp.unsupported(node, f"sizes ({unknown}) that are neither numbers nor read from tensors' dims")
    shape = tuple(size if isinstance(size, int) else None for size in sizes)
    return _filled_with_lines(imp, lines, shape, value, dtype)  # type: ignore[arg-type]


def _filled_like(imp: _Importer, like: fx.Node, value: Any, dtype: str) -> Tensor:
    """A tensor of the shape of FX node ``like`` holding ``value``: each dynamic dim's line an ``iota`` along
    it (``like`` itself is not read when its shape is static)."""
    shape = tuple(d if isinstance(d, int) else None for d in like.meta["val"].shape)
    lines = {}
    if None in shape:
        x = imp.tensor(like)
        lines = {k: imp.emit("iota", x, axis=k) for k, d in enumerate(shape) if d is None}
    return _filled_with_lines(imp, lines, shape, value, dtype)


def _filled_with_lines(imp: _Importer, lines: dict[int, Tensor], shape: tuple[int | None, ...], value: Any,
                       dtype: str) -> Tensor:
    fill = imp.tensor(value, dtype)
    if fill.shape:
        fill = imp.emit("reshape", fill, ())
    if lines:
        fill = imp.emit("select", _size_carrier(imp, lines, len(shape)), fill, fill)
    if tuple(fill.shape) != shape:
        fill = imp.emit("broadcast_to", fill, shape)
    return fill


@_converts("aten.full.default", "aten.new_full.default", "aten.ones.default", "aten.new_ones.default",
           "aten.zeros.default", "aten.new_zeros.default",
           graph="`select` on `iota`s of the symbolic dims, `broadcast_to`",
           notes="only with a symbolic size (numbers are computed when importing)")
def _full(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """A factory over a symbolic shape (``x.new_ones(b, s)`` under a dynamic sequence length)."""
    name = _op_name(node.target)
    value = a.get("fill_value", 1 if "ones" in name else 0)
    return _filled(imp, node, list(a["size"]), value, imp.out_dtype(node))


@_converts("aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default",
           graph="`broadcast_to` of a constant (`select` on `iota`s for symbolic dims)")
def _full_like(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    name = _op_name(node.target)
    value = a.get("fill_value", 1 if "ones" in name else 0)
    return _filled_like(imp, a["self"], value, imp.out_dtype(node))


@_converts("aten.scalar_tensor.default", graph="a rank-0 constant")
def _scalar_tensor(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.const(np.asarray(a["s"]), imp.out_dtype(node))


@_converts("aten.scatter.value", graph="`select` of `equal(index, iota)`",
           notes="one index per row along dim (index of size 1 there, as nll_loss's backward writes)")
def _scatter_value(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``self`` with ``value`` at ``index`` along ``dim``: where the position along dim equals the row's index."""
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    rank = len(x.shape)
    dim = _axis(a["dim"], rank)
    index = imp.tensor(a["index"], "i64")
    others = [d for d in range(rank) if d != dim]
    if len(index.shape) != rank or index.shape[dim] != 1 or any(index.shape[d] != x.shape[d] for d in others):
        raise imp.unsupported(node, f"an index of shape {index.shape} (one index per row along dim {dim})")
    positions = imp.emit("iota", x, axis=dim)
    positions = imp.emit("reshape", positions, tuple(x.shape[dim] if d == dim else 1 for d in range(rank)))
    hit = imp.emit("equal", index, positions)
    return imp.emit("select", hit, imp.const(np.asarray(a["value"]), dtype), x)


@_converts("aten.embedding.default", graph="`gather` along axis 0 (`negative_indices = false`)",
           notes="padding_idx only matters for training; constant indices are range-checked, run-time ones out of "
                 "range (negative ones too) raise when the graph runs")
def _embedding(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _gather(imp, node, imp.tensor(a["weight"]), a["indices"], 0)


@_converts("aten.index_select.default", graph="`gather` (`negative_indices = false`)",
           notes="constant indices are range-checked, run-time ones out of range (negative ones too) raise when the "
                 "graph runs")
def _index_select(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    return _gather(imp, node, x, a["index"], _axis(a["dim"], len(x.shape)))


@_converts("aten.repeat.default", graph="`tile` (`reshape` first when repeats add dims)")
def _repeat(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    repeats = list(a["repeats"])
    if len(repeats) > len(x.shape):
        x = imp.emit("reshape", x, (1,) * (len(repeats) - len(x.shape)) + tuple(x.shape))
    return imp.emit("tile", x, multiples=repeats)


@_converts("aten.repeat_interleave.self_int", graph="`repeat_interleave` (`reshape` to 1-D first for dim=None)",
           notes="each element repeated along dim, as torch.repeat_interleave (GPT-J's and Cohere's rotary)")
def _repeat_interleave_int(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    repeats = a["repeats"]
    if not isinstance(repeats, int):
        raise imp.unsupported(node, f"a symbolic repeat count ({repeats})")
    if a.get("dim") is None:  # over the elements flattened
        x = imp.emit("reshape", x, (math.prod(imp.static_shape(x)),))
        return imp.emit("repeat_interleave", x, repeats=repeats, dim=0)
    return imp.emit("repeat_interleave", x, repeats=repeats, dim=_axis(a["dim"], len(x.shape)))


@_converts("aten.repeat_interleave.self_Tensor", graph="`gather` at the constant repeated positions",
           notes="constant repeats only (one per element along dim, or one for all)")
def _repeat_interleave_tensor(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``x.repeat_interleave(r, dim)`` with ``r`` known when importing: position i along dim is read r[i] times."""
    repeats = imp.constant_value(a["repeats"])
    if repeats is None:
        raise imp.unsupported(node, "repeats computed at run time (the result's size would depend on them)")
    x = imp.tensor(a["self"])
    if a.get("dim") is None:
        x = imp.emit("reshape", x, (math.prod(imp.static_shape(x)),))
    axis = 0 if a.get("dim") is None else _axis(a["dim"], len(x.shape))
    size = imp.static_shape(x)[axis]
    counts = np.broadcast_to(repeats.reshape(-1).numpy().astype(np.int64), (size,))
    positions = np.repeat(np.arange(size, dtype=np.int64), counts)
    return imp.emit("gather", x, imp.const(positions, "i64"), axis=axis)
