"""Shapes, sizes and small builders of the structured lowerings (call them under an insertion point and a location)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.dialect.catalog import lookup_op, read_attributes
from graphfuse.lowering.common import (
    PARALLEL,
    build_generic,
    const,
    element_type,
    is_bool,
    is_float,
    is_int,
    widen,
)

Size = int | ir.Value


def _attrs(op: ir.Operation) -> dict[str, Any]:
    spec = lookup_op(op.name)
    assert spec is not None, op.name
    return read_attributes(spec, op)


def _ranked(v: ir.Value) -> ir.RankedTensorType | None:
    return ir.RankedTensorType(v.type) if isinstance(v.type, ir.RankedTensorType) else None


def _static(t: ir.RankedTensorType, i: int) -> int | None:
    return None if t.is_dynamic_dim(i) else t.get_dim_size(i)


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _as_value(size: Size) -> ir.Value:
    return _index(size) if isinstance(size, int) else size


def _dim(v: ir.Value, i: int) -> Size:
    """Size ``i`` of tensor ``v``: an int when static, a ``tensor.dim`` otherwise."""
    t = ir.RankedTensorType(v.type)
    return t.get_dim_size(i) if not t.is_dynamic_dim(i) else tensor.dim(v, _index(i))


def _dims(v: ir.Value) -> list[Size]:
    return [_dim(v, i) for i in range(ir.RankedTensorType(v.type).rank)]


def _mul(a: Size, b: Size) -> Size:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int) and a == 1:
        return b
    if isinstance(b, int) and b == 1:
        return a
    return arith.muli(_as_value(a), _as_value(b))


def _window_count(padded: Size, extent: int, stride: int) -> Size:
    """Number of windows of ``extent`` every ``stride`` cells over ``padded`` cells."""
    if isinstance(padded, int):
        return (padded - extent) // stride + 1
    span = arith.subi(padded, _index(extent))
    if stride != 1:
        span = arith.floordivsi(span, _index(stride))
    return arith.addi(span, _index(1))


def _tensor_type(sizes: Sequence[Size | None], et: ir.Type) -> ir.RankedTensorType:
    """A tensor type of ``sizes``: ints are static, anything else (a Value, None) is dynamic."""
    dynamic = ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get([s if isinstance(s, int) else dynamic for s in sizes], et)


def _filled(sizes: Sequence[Size], et: ir.Type, value: float | int) -> ir.Value:
    """A ``tensor.empty`` of ``sizes`` filled with ``value`` by ``linalg.fill``."""
    return linalg.fill(const(et, value), outs=[tensor.empty(list(sizes), et)])


def _accumulator(sizes: Sequence[Size], et: ir.Type, bias: ir.Value | None, bias_dims: list[int]) -> ir.Value:
    """A convolution's initial accumulator: zeros, or ``bias`` (its dimensions the ``bias_dims`` of ``sizes``:
    the output channels) broadcast and widened to ``et``: the bias is accumulated in place, not added after."""
    if bias is None:
        return _filled(sizes, et, 0)
    rank = len(sizes)
    generic = build_generic(
        [_tensor_type(sizes, et)],
        [bias],
        [tensor.empty(list(sizes), et)],
        [_dims_map(rank, bias_dims), ir.AffineMap.get_identity(rank)],
        [PARALLEL] * rank,
        lambda args: [widen(args[0])],
    )
    return generic.results[0]


def _collapse(v: ir.Value, groups: list[list[int]]) -> ir.Value:
    t = ir.RankedTensorType(v.type)
    sizes: list[int | None] = []
    for group in groups:
        static = [_static(t, i) for i in group]
        sizes.append(int(np.prod(static, dtype=np.int64)) if None not in static else None)
    return tensor.collapse_shape(_tensor_type(sizes, t.element_type), v, groups)


def _expand(v: ir.Value, groups: list[list[int]], sizes: Sequence[Size]) -> ir.Value:
    """``tensor.expand_shape`` of ``v`` to ``sizes``; the static/dynamic split of each group is made consistent.

    The verifier wants a static source dim for an all-static group (a ``tensor.cast`` first) and a static
    group for a static source dim (its one dynamic size is then the quotient).
    """
    sizes = list(sizes)
    t = ir.RankedTensorType(v.type)
    source = [_static(t, i) for i in range(t.rank)]
    for i, group in enumerate(groups):
        static = [sizes[j] for j in group if isinstance(sizes[j], int)]
        product = int(np.prod(static, dtype=np.int64))
        if len(static) == len(group) and source[i] is None:
            source[i] = product
        elif len(static) == len(group) - 1 and source[i] is not None and product > 0:
            (j,) = [j for j in group if not isinstance(sizes[j], int)]
            sizes[j] = source[i] // product
    cast_type = _tensor_type(source, t.element_type)
    if cast_type != t:
        v = tensor.cast(cast_type, v)
    t = _tensor_type(sizes, element_type(v))
    dynamic = [s for s in sizes if not isinstance(s, int)]
    return tensor.expand_shape(t, v, groups, dynamic, list(t.shape))


def _elementwise(v: ir.Value, et: ir.Type, fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """``fn`` applied to each element of ``v`` (a parallel generic into a ``tensor.empty`` of type ``et``)."""
    t = ir.RankedTensorType(v.type)
    init = tensor.empty(_dims(v), et)
    identity = ir.AffineMap.get_identity(t.rank)
    generic = build_generic(
        [ir.RankedTensorType.get(t.shape, et)],
        [v],
        [init],
        [identity, identity],
        [PARALLEL] * t.rank,
        lambda args: [fn(args[0])],
    )
    return generic.results[0]


def _round_to(v: ir.Value, et: ir.Type) -> ir.Value:
    """An f32 accumulator rounded once to the result type ``et`` (nothing to do when it already is)."""
    if element_type(v) == et:
        return v
    return _elementwise(v, et, lambda x: arith.truncf(et, x))


def _pad(x: ir.Value, low: list[int], high: list[int], value: float | int) -> ir.Value:
    """``tensor.pad`` of ``x`` with the constant ``value`` (``x`` itself when nothing is padded)."""
    if not any(low) and not any(high):
        return x
    t = ir.RankedTensorType(x.type)
    sizes: list[int | None] = []
    for i in range(t.rank):
        size = _static(t, i)
        sizes.append(size + low[i] + high[i] if size is not None else None)
    fill = const(t.element_type, value)
    pad = tensor.PadOp(_tensor_type(sizes, t.element_type), x, [], [], low, high)
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * t.rank)
    with ir.InsertionPoint(block):
        tensor.YieldOp(fill)
    return pad.result


def _replace(op: ir.Operation, value: ir.Value) -> bool:
    result_type = op.results[0].type
    if value.type != result_type:  # the declared type may be more static than the one derived here
        value = tensor.cast(result_type, value)
    op.results[0].replace_all_uses_with(value)
    op.erase()
    return True


def _lowest(et: ir.Type) -> float | int:
    """The identity of a maximum: -inf, or the integer type's minimum."""
    return -float("inf") if is_float(et) else -(2 ** (ir.IntegerType(et).width - 1))


def _highest(et: ir.Type) -> float | int:
    return float("inf") if is_float(et) else 2 ** (ir.IntegerType(et).width - 1) - 1


def _numeric(t: ir.Type) -> bool:
    return is_float(t) or (is_int(t) and not is_bool(t))


def _dims_map(rank: int, dims: Sequence[int]) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in dims])
