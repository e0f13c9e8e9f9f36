"""graph-to-linalg for the structured ops: reductions, matmul, conv2d, the 2-D poolings and resize.

Every reduction, contraction and window op computes into a
``linalg.fill``-initialised destination, in the accumulator type of the op's
reference semantics
(``graphfuse.dialect.ops.reduction`` and ``graphfuse.dialect.ops.nn``): f32 for
f16/bf16 operands (the interpreter widens them and rounds each result once), the
operand type otherwise.  A final elementwise ``linalg.generic`` rounds an f32
accumulator back to f16/bf16 (``arith.truncf``).

- ``reduce_sum/mean/max/min``: one ``linalg.generic`` with the reduced axes as
  reduction iterators into a destination filled with the identity (0,
  -inf/+inf, the integer type's minimum/maximum).  max/min use
  ``arith.maximumf``/``arith.minimumf`` (a NaN anywhere gives NaN) or
  ``arith.maxsi``/``arith.minsi``, in the operand type (exact, no widening).
  Integer sums wrap in the operand type.  ``reduce_mean`` divides the f32 (or
  operand-type) sum by the element count converted to that type, in a second
  elementwise generic that also rounds f16/bf16; the count of a dynamic axis
  comes from ``tensor.dim``.  An empty axis gives 0 for a sum and NaN (0/0)
  for a mean.  With ``keep_dims`` the destination has the size-1 dims and the
  result map reads them at index 0 (``(d0, d1, d2) -> (d0, 0, d2)``), so the
  reduction writes the result directly, with no reshape after it; an empty
  ``axes`` is the operand itself.
  A dynamic axis that turns out empty gives the identity (-inf, +inf, integer
  extremes) for max/min, where the reference raises.
- ``matmul`` (numpy.matmul semantics): named ops where they apply exactly:
  ``linalg.matmul`` for 2-D x 2-D (a transpose flag becomes the op's
  ``indexing_maps``), ``linalg.matvec``/``linalg.vecmat``/``linalg.dot`` for
  1-D operands, ``linalg.batch_matmul`` for equal batch dims (several batch
  dims are collapsed into one and expanded back), and ``linalg.matmul`` on
  ``a`` with its batch dims collapsed into the rows when ``b`` has no batch dims
  and ``a`` is not transposed.  With static shapes those last two forms are one
  ``linalg.contract`` instead, with no reshape around it (``_contract``
  explains why).  Broadcast batch dims (a static size-1 dim
  against a larger or dynamic one, or a batch on ``b`` only) use a
  ``linalg.generic`` with parallel/reduction iterators and the broadcast read
  through the indexing maps.  Floats multiply and accumulate in f32; integers
  wrap in their type (the reference's int64 sum narrowed is the same value).
  Two dynamic batch dims are taken to be equal (no runtime broadcasting).
- ``conv2d``: ``tensor.pad`` with zeros ([top, left, bottom, right] on H and
  W), then, for f32 with groups == 1, unit strides and dilations, static shapes
  and output rows of a register tile or wider, one generic reading the padded
  input directly (``_direct_conv``, scheduled by the runtime), for other
  groups == 1 convolutions with static shapes im2col + ``linalg.contract``
  (``_conv_as_matmul``), else ``linalg.conv_2d_nchw_fchw`` (groups == 1),
  for f32 depthwise ones (groups == C == O, one filter per channel) with
  unit strides and dilations the direct generic with one input channel per
  filter, other depthwise ones ``linalg.depthwise_conv_2d_nchw_chw``, or
  ``linalg.conv_2d_ngchw_gfchw`` on the input and weights expanded to a
  group dim (other groups), strides and dilations as op attributes.
  Every form accumulates into a tensor filled with zeros, or with the bias
  operand broadcast over the output (``_accumulator``): the bias is summed in
  place, the seed's conv + biasAdd, not added by a second pass.
- ``max_pool2d``: ``tensor.pad`` with -inf (integers: the type's minimum) and
  ``linalg.pooling_nchw_max`` into a destination filled the same way (NaN
  propagates through ``arith.maximumf``).  ``avg_pool2d``: zero padding,
  ``linalg.pooling_nchw_sum`` in f32, then a division by ``kh * kw``
  (``count_include_pad``) or by the number of unpadded cells of each window:
  a constant ``(OH, OW)`` tensor computed at compile time when H and W are
  static, ``linalg.index`` arithmetic in the division's body otherwise.
- ``resize``: one ``linalg.generic`` over the result whose body
  ``tensor.extract`` s the taps (one for the nearest modes, two per resized
  dim for bilinear) at positions read from 1-D i64 constants, weighted by 1-D
  f32 constants (``dialect.ops.nn.resize_taps``, the reference's own), summed
  along W then along H in f32 and rounded once: bit-exact against the
  reference, and a gather-like loop the elementwise ops after it fuse with.

Dynamic dims are supported throughout: sizes come from ``tensor.dim`` and,
for the spatial output dims, from ``(padded - extent) floordiv stride + 1`` in
index arithmetic.  Unranked operands are not lowered (the lowering returns
False and the op stays a graph op); so is a conv2d whose kernel size is
dynamic, which the op catalog rejects anyway.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor
from mlir.dialects import math as mlir_math

from graphfuse.dialect.catalog import lookup_op, read_attributes
from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import producer
from graphfuse.dialect.ops.nn import resize_taps
from graphfuse.lowering.common import (
    PARALLEL,
    REDUCTION,
    broadcast_map,
    build_generic,
    compute_type,
    const,
    cube_convolutions_enabled,
    element_bytes,
    element_type,
    is_bool,
    is_float,
    is_int,
    narrow,
    register_lowering,
    widen,
)
from graphfuse.lowering.contraction import DIRECT_CONV, FILTER_LANES, register_tile
from graphfuse.lowering.fast_math import fadd, fast_math_enabled, fmul
from graphfuse.lowering.host import vector_bits

__all__ = ["lower_conv2d", "lower_matmul", "lower_pool2d", "lower_reduction", "lower_resize"]

Size = int | ir.Value

# --------------------------------------------------------------------------
# Shapes, sizes and small builders (call them under an insertion point and a location).


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


# --------------------------------------------------------------------------
# Reductions.


def _dims_map(rank: int, dims: Sequence[int]) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in dims])


@register_lowering("reduce_sum", "reduce_mean", "reduce_max", "reduce_min")
def lower_reduction(op: ir.Operation) -> bool:
    """A reduction generic into an identity-filled destination; mean divides by the count afterwards."""
    x = op.operands[0]
    xt, rt = _ranked(x), _ranked(op.results[0])
    if xt is None or rt is None or not _numeric(xt.element_type):
        return False
    name = op.name[len("graph.") :]
    attrs = _attrs(op)
    rank = xt.rank
    axes = {a % rank for a in attrs["axes"]} if rank else set()
    et = xt.element_type
    if name == "reduce_mean" and not is_float(et):
        return False
    with op.location, ir.InsertionPoint(op):
        if not axes:
            return _replace(op, x)
        kept = [i for i in range(rank) if i not in axes]
        # Sums and means accumulate in f32 for f16/bf16; max/min are exact in the operand type.
        acc = compute_type(et) if name in ("reduce_sum", "reduce_mean") else et
        float_acc = is_float(acc)
        if name == "reduce_max":
            identity, combine = _lowest(et), (arith.maximumf if float_acc else arith.maxsi)
        elif name == "reduce_min":
            identity, combine = _highest(et), (arith.minimumf if float_acc else arith.minsi)
        else:
            # contract: a fused producer's multiply (sum(x * x)) and the accumulation may become one FMA
            identity, combine = 0, (fadd if float_acc else arith.addi)
        # keep_dims, static shapes: reduce into the kept dims (a projected-permutation result map, which
        # tiling needs) and expand_shape the size-1 dims back afterwards.  Dynamic shapes: the reduced dims
        # stay size-1 dims the result map writes at index 0 (no dynamically sized intermediate buffer).
        keep_dims = bool(attrs["keep_dims"])
        expand_after = keep_dims and xt.has_static_shape
        keep = keep_dims and not expand_after
        out_dims = range(rank) if keep else kept
        sizes = [1 if i in axes else _dim(x, i) for i in out_dims]
        exprs = [ir.AffineConstantExpr.get(0) if i in axes else ir.AffineDimExpr.get(i) for i in out_dims]
        init = _filled(sizes, acc, identity)
        generic = build_generic(
            [_tensor_type(sizes, acc)],
            [x],
            [init],
            [ir.AffineMap.get_identity(rank), ir.AffineMap.get(rank, 0, exprs)],
            [REDUCTION if i in axes else PARALLEL for i in range(rank)],
            lambda args: [combine(args[1], widen(args[0]) if acc != et else args[0])],
        )
        value = generic.results[0]
        if name == "reduce_mean":
            count: Size = 1
            for a in sorted(axes):
                count = _mul(count, _dim(x, a))
            fast = fast_math_enabled()  # one reciprocal, then a multiply per element (at most 1.5 ulp)
            if isinstance(count, int):
                # an empty axis: sum * inf = 0 * inf = NaN, as 0 / 0
                divisor = const(acc, (1.0 / count if count else float("inf")) if fast else float(count))
            else:
                divisor = arith.sitofp(acc, arith.index_cast(ir.IntegerType.get_signless(64), count))
                if fast:
                    divisor = arith.divf(const(acc, 1.0), divisor)
            step = fmul if fast else arith.divf
            value = _elementwise(value, et, lambda s: narrow(step(s, divisor), et))
        else:
            value = _round_to(value, et)
        if expand_after:
            value = _expand(value, _keep_dims_groups(rank, axes), [1 if i in axes else _dim(x, i) for i in range(rank)])
        return _replace(op, value)


@register_lowering("argmax", "argmin")
def lower_arg_extreme(op: ir.Operation) -> bool:
    """One reduction generic carrying the best value and its index (``linalg.index`` of the axis): an element
    replaces the best when strictly better, so the first of equal ones stays; a NaN (float) replaces a best
    that is not NaN and nothing replaces a NaN, so the first NaN wins, as numpy's and PyTorch's do."""
    x = op.operands[0]
    xt, rt = _ranked(x), _ranked(op.results[0])
    if xt is None or rt is None or not _numeric(xt.element_type):
        return False
    attrs = _attrs(op)
    rank, et = xt.rank, xt.element_type
    axis = int(attrs["axis"]) % rank
    i64 = ir.IntegerType.get_signless(64)
    largest = op.name == "graph.argmax"
    with op.location, ir.InsertionPoint(op):
        kept = [i for i in range(rank) if i != axis]
        sizes = [_dim(x, i) for i in kept]
        out_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(i) for i in kept])
        worst = _lowest(et) if largest else _highest(et)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            value, best, best_index = args
            position = arith.index_cast(i64, linalg.IndexOp(axis).result)
            if is_float(et):
                predicate = arith.CmpFPredicate.OGT if largest else arith.CmpFPredicate.OLT
                better = arith.cmpf(predicate, value, best)
                nan = arith.cmpf(arith.CmpFPredicate.UNO, value, value)
                best_is_number = arith.cmpf(arith.CmpFPredicate.ORD, best, best)
                take = arith.ori(better, arith.andi(nan, best_is_number))
            else:
                take = arith.cmpi(arith.CmpIPredicate.sgt if largest else arith.CmpIPredicate.slt, value, best)
            return [arith.select(take, value, best), arith.select(take, position, best_index)]

        generic = build_generic(
            [_tensor_type(sizes, et), _tensor_type(sizes, i64)],
            [x],
            [_filled(sizes, et, worst), _filled(sizes, i64, 0)],
            [ir.AffineMap.get_identity(rank), out_map, out_map],
            [REDUCTION if i == axis else PARALLEL for i in range(rank)],
            body,
        )
        value = generic.results[1]
        if attrs["keep_dims"]:
            groups = _keep_dims_groups(rank, {axis})
            value = _expand(value, groups, [1 if i == axis else _dim(x, i) for i in range(rank)])
        return _replace(op, value)


@register_lowering("one_hot")
def lower_one_hot(op: ir.Operation) -> bool:
    """One elementwise generic over the result: on_value where ``linalg.index`` of the new axis equals the
    index, else off_value (an index outside [0, depth) matches no position)."""
    indices, on_value, off_value = op.operands
    it, rt = _ranked(indices), _ranked(op.results[0])
    if it is None or rt is None:
        return False
    rank = rt.rank
    axis = int(_attrs(op)["axis"]) % rank
    i64 = ir.IntegerType.get_signless(64)
    with op.location, ir.InsertionPoint(op):
        d = [ir.AffineDimExpr.get(i) for i in range(rank)]
        maps = [ir.AffineMap.get(rank, 0, [e for i, e in enumerate(d) if i != axis]),
                ir.AffineMap.get(rank, 0, []), ir.AffineMap.get(rank, 0, []), ir.AffineMap.get_identity(rank)]

        def body(args: list[ir.Value]) -> list[ir.Value]:
            index, on, off, _ = args
            index = arith.extsi(i64, index) if ir.IntegerType(index.type).width < 64 else index
            position = arith.index_cast(i64, linalg.IndexOp(axis).result)
            return [arith.select(arith.cmpi(arith.CmpIPredicate.eq, index, position), on, off)]

        others = iter(range(rank - 1))
        sizes = [int(_attrs(op)["depth"]) if i == axis else _dim(indices, next(others)) for i in range(rank)]
        generic = build_generic([rt], [indices, on_value, off_value], [tensor.empty(sizes, rt.element_type)],
                                maps, [PARALLEL] * rank, body)
        return _replace(op, generic.results[0])


@register_lowering("assign")
def lower_assign(op: ir.Operation) -> bool:
    """The value, broadcast to the variable's shape by an elementwise copy."""
    value = op.operands[1]
    vt, rt = _ranked(value), _ranked(op.results[0])
    if vt is None or rt is None or not rt.has_static_shape:
        return False
    operand_map = broadcast_map(vt, rt)
    if operand_map is None:
        return False
    with op.location, ir.InsertionPoint(op):
        rank = rt.rank
        generic = build_generic([rt], [value], [tensor.empty(list(rt.shape), rt.element_type)],
                                [operand_map, ir.AffineMap.get_identity(rank)], [PARALLEL] * rank,
                                lambda args: [args[0]])
        return _replace(op, generic.results[0])


@register_lowering("cumsum")
def lower_cumsum(op: ir.Operation) -> bool:
    """An ``scf.for`` along the axis carrying the result and the running sum of one slice (f32 for f16/bf16).

    Each step adds the operand's slice to the running sum in place and writes it (rounded to the element type)
    into the result's slice; exclusive writes before adding, reverse walks the axis from its end.  Every
    other dimension is one elementwise generic per step.
    """
    x = op.operands[0]
    xt = _ranked(x)
    if xt is None or xt.rank == 0 or not _numeric(xt.element_type):
        return False
    attrs = _attrs(op)
    rank, et = xt.rank, xt.element_type
    axis = attrs["axis"] % rank
    acc = compute_type(et)
    add = fadd if is_float(acc) else arith.addi
    identity = ir.AffineMap.get_identity(rank)
    with op.location, ir.InsertionPoint(op):
        sizes = _dims(x)
        slice_sizes = [1 if d == axis else sizes[d] for d in range(rank)]
        dynamic, static = [s for s in slice_sizes if not isinstance(s, int)], [
            s if isinstance(s, int) else ir.ShapedType.get_dynamic_size() for s in slice_sizes]
        length = _as_value(sizes[axis])
        zero, one = _index(0), _index(1)
        loop = scf.ForOp(zero, length, one, [tensor.empty(sizes, et), _filled(slice_sizes, acc, 0)])
        with ir.InsertionPoint(loop.body):
            step = loop.induction_variable
            if attrs["reverse"]:
                step = arith.subi(arith.subi(length, one), step)
            result, running = loop.inner_iter_args
            offsets = [step if d == axis else 0 for d in range(rank)]
            dyn_offsets = [o for o in offsets if not isinstance(o, int)]
            static_offsets = [o if isinstance(o, int) else ir.ShapedType.get_dynamic_size() for o in offsets]

            def piece_of(source: ir.Value, element: ir.Type) -> ir.Value:
                return tensor.extract_slice(_tensor_type(slice_sizes, element), source, dyn_offsets, dynamic, [],
                                            static_offsets, static, [1] * rank)

            def accumulate(total: ir.Value) -> ir.Value:
                return build_generic([total.type], [piece_of(x, et)], [total], [identity, identity],
                                     [PARALLEL] * rank,
                                     lambda args: [add(args[1], widen(args[0]) if acc != et else args[0])]).results[0]

            def write(total: ir.Value, into: ir.Value) -> ir.Value:
                rounded = build_generic([_tensor_type(slice_sizes, et)], [total], [piece_of(into, et)],
                                        [identity, identity], [PARALLEL] * rank,
                                        lambda args: [narrow(args[0], et) if acc != et else args[0]]).results[0]
                return tensor.insert_slice(rounded, into, dyn_offsets, dynamic, [], static_offsets, static,
                                           [1] * rank)

            if attrs["exclusive"]:
                result = write(running, result)
                running = accumulate(running)
            else:
                running = accumulate(running)
                result = write(running, result)
            scf.YieldOp([result, running])
        return _replace(op, loop.results[0])


def _keep_dims_groups(rank: int, axes: set[int]) -> list[list[int]]:
    """Reassociation from the kept dims to all dims: each reduced dim joins a neighbouring kept dim's group."""
    kept = [i for i in range(rank) if i not in axes]
    if not kept:
        return []
    groups: list[list[int]] = [[i] for i in kept]
    for d in range(rank):
        if d in axes:
            before = [g for g in groups if g[0] < d]
            (before[-1] if before else groups[0]).append(d)
    return [sorted(g) for g in groups]


# --------------------------------------------------------------------------
# matmul.


def _matmul_2d(a: ir.Value, b: ir.Value, ta: bool, tb: bool, acc: ir.Type) -> ir.Value:
    """``a' @ b'`` for operands of rank 1 or 2 with a named op, into a zero-filled ``acc`` destination."""
    ra, rb = ir.RankedTensorType(a.type).rank, ir.RankedTensorType(b.type).rank
    if ra == 2 and rb == 2:
        m, n = _dim(a, 1 if ta else 0), _dim(b, 0 if tb else 1)
        init = _filled([m, n], acc, 0)
        if not ta and not tb:
            return linalg.matmul(a, b, outs=[init])
        i, j, k = (ir.AffineDimExpr.get(d) for d in range(3))
        maps = [
            ir.AffineMap.get(3, 0, [k, i] if ta else [i, k]),
            ir.AffineMap.get(3, 0, [j, k] if tb else [k, j]),
            ir.AffineMap.get(3, 0, [i, j]),
        ]
        return linalg.matmul(a, b, outs=[init], indexing_maps=maps)
    if ra == 1 and rb == 1:
        return linalg.dot(a, b, outs=[_filled([], acc, 0)])
    if ra == 1:  # row vector a times matrix b; b' = b^T turns it into b @ a
        init = _filled([_dim(b, 0 if tb else 1)], acc, 0)
        return linalg.matvec(b, a, outs=[init]) if tb else linalg.vecmat(a, b, outs=[init])
    init = _filled([_dim(a, 1 if ta else 0)], acc, 0)  # matrix a times column vector b
    return linalg.vecmat(b, a, outs=[init]) if ta else linalg.matvec(a, b, outs=[init])


def _batch_matmul(a: ir.Value, b: ir.Value, ta: bool, tb: bool, acc: ir.Type) -> ir.Value:
    """``linalg.batch_matmul`` of two rank-3 operands with equal batch dims."""
    init = _filled([_dim(a, 0), _dim(a, 2 if ta else 1), _dim(b, 1 if tb else 2)], acc, 0)
    if not ta and not tb:
        return linalg.batch_matmul(a, b, outs=[init])
    p, i, j, k = (ir.AffineDimExpr.get(d) for d in range(4))
    maps = [
        ir.AffineMap.get(4, 0, [p, k, i] if ta else [p, i, k]),
        ir.AffineMap.get(4, 0, [p, j, k] if tb else [p, k, j]),
        ir.AffineMap.get(4, 0, [p, i, j]),
    ]
    return linalg.batch_matmul(a, b, outs=[init], indexing_maps=maps)


def _contract(a: ir.Value, b: ir.Value, ta: bool, tb: bool, acc: ir.Type) -> ir.Value:
    """``linalg.contract`` of ``a`` (batch dims, rows, k) with ``b`` (the same batch dims or none, k, columns).

    Static shapes only.  Unlike collapse_shape + a named 2-D/3-D op +
    expand_shape, it has no reshape for fuse-kernel-loops' reshape
    propagation to push through (which turns the named op into a generic
    contraction and then fuses elementwise producers into its innermost
    loop); the runtime collapses it into a blocked ``linalg.matmul`` /
    ``batch_matmul`` after fusion (``contraction.block_contractions``).
    """
    ra, rb = ir.RankedTensorType(a.type).rank, ir.RankedTensorType(b.type).rank
    nb = ra - 2
    loops = nb + 3
    batch = [ir.AffineDimExpr.get(d) for d in range(nb)]
    i, j, k = (ir.AffineDimExpr.get(d) for d in range(nb, nb + 3))
    b_batch = batch if rb == ra else []
    maps = [
        ir.AffineMap.get(loops, 0, [*batch, *([k, i] if ta else [i, k])]),
        ir.AffineMap.get(loops, 0, [*b_batch, *([j, k] if tb else [k, j])]),
        ir.AffineMap.get(loops, 0, [*batch, i, j]),
    ]
    sizes = [*(_dim(a, d) for d in range(nb)), _dim(a, ra - 1 if ta else ra - 2), _dim(b, rb - 2 if tb else rb - 1)]
    init = _filled(sizes, acc, 0)
    return linalg.contract(a, b, outs=[init], indexing_maps=maps)


def _broadcasts(size: int | None, out: int | None) -> bool:
    """A batch dim of ``size`` read broadcast into a result batch dim of ``out`` (numpy, static size 1)."""
    return size == 1 and out != 1


#: Largest copy (bytes) a batched matmul's broadcast operand is materialized into, so that the product runs as a
#: blocked batched matmul rather than one generic loop nest (falcon's multi-query attention: keys of one head read
#: by 8 query heads).  Beyond it the broadcast stays in the generic's indexing maps.
BROADCAST_BATCH_MAX_BYTES = 16 * 2**20


def _batch_broadcast_copy(v: ir.Value, batch: list[int]) -> ir.Value:
    """``v`` (static: batch dims, then its two matrix dims) copied to the batch dims ``batch`` (numpy
    broadcasting: missing leading dims added, size-1 dims repeated)."""
    t = ir.RankedTensorType(v.type)
    nb, own = len(batch), t.rank - 2
    loops = nb + 2
    exprs = [ir.AffineConstantExpr.get(0) if t.shape[j] == 1 and batch[nb - own + j] != 1
             else ir.AffineDimExpr.get(nb - own + j) for j in range(own)]
    exprs += [ir.AffineDimExpr.get(nb), ir.AffineDimExpr.get(nb + 1)]
    out_type = ir.RankedTensorType.get([*batch, *t.shape[-2:]], t.element_type)
    init = tensor.empty(list(out_type.shape), t.element_type)
    maps = [ir.AffineMap.get(loops, 0, exprs), _dims_map(loops, list(range(loops)))]
    return build_generic([out_type], [v], [init], maps, [PARALLEL] * loops, lambda args: [args[0]]).results[0]


def _materialized_batches(a: ir.Value, b: ir.Value, rt: ir.RankedTensorType) -> tuple[ir.Value, ir.Value] | None:
    """(a, b) with their batch dims broadcast to the result's by a copy, when both are static float matrices with
    batch dims, one broadcasts, and the copy is at most BROADCAST_BATCH_MAX_BYTES; else None."""
    at, bt = ir.RankedTensorType(a.type), ir.RankedTensorType(b.type)
    if at.rank < 2 or bt.rank < 2 or max(at.rank, bt.rank) < 3 or not is_float(at.element_type):
        return None  # integer products are not blocked: the copy would buy nothing
    if not (at.has_static_shape and bt.has_static_shape and rt.has_static_shape):
        return None
    batch = list(rt.shape[:-2])
    copies = [(v, t) for v, t in ((a, at), (b, bt)) if list(t.shape[:-2]) != batch]
    size = sum(math.prod(batch) * t.shape[-2] * t.shape[-1] * element_bytes(t.element_type) for _, t in copies)
    if not copies or size > BROADCAST_BATCH_MAX_BYTES:
        return None
    return tuple(_batch_broadcast_copy(v, batch) if list(t.shape[:-2]) != batch else v
                 for v, t in ((a, at), (b, bt)))  # type: ignore[return-value]


def _matmul_generic(a: ir.Value, b: ir.Value, ta: bool, tb: bool, acc: ir.Type, rt: ir.RankedTensorType) -> ir.Value:
    """The general case: parallel batch/row/column loops and one reduction, batch broadcasting in the maps."""
    at, bt = ir.RankedTensorType(a.type), ir.RankedTensorType(b.type)
    ra, rb = at.rank, bt.rank
    has_m, has_n = ra >= 2, rb >= 2
    nb = rt.rank - has_m - has_n
    m_d, n_d, k_d = nb, nb + has_m, nb + has_m + has_n
    loops = k_d + 1
    out_batch = [_static(rt, i) for i in range(nb)]

    def operand_map(t: ir.RankedTensorType, inner: list[int]) -> ir.AffineMap:
        batch = t.rank - len(inner)
        exprs: list[ir.AffineExpr] = []
        for j in range(batch):
            i = nb - batch + j
            broadcast = _broadcasts(_static(t, j), out_batch[i])
            exprs.append(ir.AffineConstantExpr.get(0) if broadcast else ir.AffineDimExpr.get(i))
        return ir.AffineMap.get(loops, 0, exprs + [ir.AffineDimExpr.get(d) for d in inner])

    a_inner = [k_d] if ra == 1 else ([k_d, m_d] if ta else [m_d, k_d])
    b_inner = [k_d] if rb == 1 else ([n_d, k_d] if tb else [k_d, n_d])
    out_dims = list(range(nb)) + ([m_d] if has_m else []) + ([n_d] if has_n else [])
    maps = [operand_map(at, a_inner), operand_map(bt, b_inner), _dims_map(loops, out_dims)]

    sizes: list[Size] = []
    for i in range(nb):
        if out_batch[i] is not None:
            sizes.append(out_batch[i])
            continue
        for v, t, inner in ((a, at, a_inner), (b, bt, b_inner)):
            j = i - (nb - (t.rank - len(inner)))
            if j >= 0 and t.is_dynamic_dim(j):
                sizes.append(_dim(v, j))
                break
    if has_m:
        sizes.append(_dim(a, ra - 1 if ta else ra - 2))
    if has_n:
        sizes.append(_dim(b, rb - 2 if tb else rb - 1))
    init = _filled(sizes, acc, 0)

    def body(args: list[ir.Value]) -> list[ir.Value]:
        x, y, out = args
        if is_float(acc):
            return [arith.addf(out, arith.mulf(widen(x), widen(y)))]
        return [arith.addi(out, arith.muli(x, y))]

    iterators = [PARALLEL] * k_d + [REDUCTION]
    return build_generic([_tensor_type(sizes, acc)], [a, b], [init], maps, iterators, body).results[0]


@register_lowering("matmul")
def lower_matmul(op: ir.Operation) -> bool:
    """numpy.matmul with named linalg ops where they apply exactly, else one generic."""
    a, b = op.operands
    at, bt, rt = _ranked(a), _ranked(b), _ranked(op.results[0])
    if at is None or bt is None or rt is None or not _numeric(at.element_type) or at.element_type != bt.element_type:
        return False
    attrs = _attrs(op)
    ta, tb = bool(attrs["transpose_a"]), bool(attrs["transpose_b"])
    et = rt.element_type
    acc = compute_type(et)
    ra, rb = at.rank, bt.rank
    with op.location, ir.InsertionPoint(op):
        if ra <= 2 and rb <= 2:
            value = _round_to(_matmul_2d(a, b, ta, tb, acc), et)
        elif ra == rb and all(
            not _broadcasts(_static(at, i), _static(bt, i)) and not _broadcasts(_static(bt, i), _static(at, i))
            for i in range(ra - 2)
        ):
            nb = ra - 2
            if nb == 1:
                value = _round_to(_batch_matmul(a, b, ta, tb, acc), et)
            elif at.has_static_shape and bt.has_static_shape:
                value = _round_to(_contract(a, b, ta, tb, acc), et)
            else:
                groups = [list(range(nb)), [nb], [nb + 1]]
                r = _batch_matmul(_collapse(a, groups), _collapse(b, groups), ta, tb, acc)
                sizes = [_dim(a, i) for i in range(nb)] + [_dim(r, 1), _dim(r, 2)]
                value = _expand(_round_to(r, et), groups, sizes)
        elif ra >= 3 and rb == 2 and not ta and at.has_static_shape and bt.has_static_shape:
            value = _round_to(_contract(a, b, False, tb, acc), et)
        elif ra >= 3 and rb <= 2 and not ta:
            # b has no batch dims: the batch dims of a are more rows of one 2-D product.
            r = _matmul_2d(_collapse(a, [list(range(ra - 1)), [ra - 1]]), b, False, tb, acc)
            rows = [_dim(a, i) for i in range(ra - 1)]
            if rb == 2:
                value = _expand(_round_to(r, et), [list(range(ra - 1)), [ra - 1]], [*rows, _dim(r, 1)])
            else:
                value = _expand(_round_to(r, et), [list(range(ra - 1))], rows)
        elif (materialized := _materialized_batches(a, b, rt)) is not None:
            a, b = materialized
            batched = _batch_matmul if rt.rank == 3 else _contract
            value = _round_to(batched(a, b, ta, tb, acc), et)
        else:
            value = _round_to(_matmul_generic(a, b, ta, tb, acc, rt), et)
        return _replace(op, value)


# --------------------------------------------------------------------------
# conv2d and pooling.


def _spatial_out(
    padded: ir.Value, rt: ir.RankedTensorType, kernel: list[int], strides: list[int], dilations: list[int]
) -> list[Size]:
    """Output OH, OW: static from the result type, else computed from the padded input."""
    sizes: list[Size] = []
    for d in range(2):
        size = _static(rt, 2 + d)
        if size is None:
            size = _window_count(_dim(padded, 2 + d), dilations[d] * (kernel[d] - 1) + 1, strides[d])
        sizes.append(size)
    return sizes


def _hw_pads(pads: list[int]) -> tuple[list[int], list[int]]:
    top, left, bottom, right = pads
    return [0, 0, top, left], [0, 0, bottom, right]


#: Largest im2col buffer (bytes) a conv2d is lowered through; beyond it the named convolution is kept.
IM2COL_MAX_BYTES = 64 * 2**20


def _im2col_fits(xp: ir.Value, w: ir.Value, rt: ir.RankedTensorType) -> bool:
    """Static shapes and an im2col buffer (C*KH*KW x N*OH*OW, 4 bytes each) of at most ``IM2COL_MAX_BYTES``."""
    xt, wt = ir.RankedTensorType(xp.type), ir.RankedTensorType(w.type)
    if not (xt.has_static_shape and wt.has_static_shape and rt.has_static_shape):
        return False
    n, _, oh, ow = rt.shape
    _, c, kh, kw = wt.shape
    return c * kh * kw * n * oh * ow * 4 <= IM2COL_MAX_BYTES


def _conv_as_matmul(
    xp: ir.Value,
    w: ir.Value,
    rt: ir.RankedTensorType,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    acc: ir.Type,
    bias: ir.Value | None,
) -> ir.Value:
    """A plain convolution of the padded input as im2col + one contraction (static shapes).

    ``linalg.conv_2d_nchw_fchw`` as loops has the reduction innermost (7
    loops, strided reads), which LLVM does not vectorize.  Here a parallel
    generic gathers the windows into ``cols[c, kh, kw, n, oh, ow] = xp[n, c,
    oh * sh + kh * dh, ow * sw + kw * dw]`` (contiguous rows for stride 1),
    and ``linalg.contract`` multiplies the weights as a ``[F, C*KH*KW]``
    matrix with it, writing ``[N, F, OH, OW]`` directly; the runtime turns
    that into a blocked matmul.  A 1x1 kernel with stride 1 reads the input
    itself as the matrix (no gather).
    """
    n, f, oh, ow = rt.shape
    c = ir.RankedTensorType(w.type).shape[1]
    et = element_type(xp)
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    if kernel == [1, 1] and strides == [1, 1] and ir.RankedTensorType(xp.type).shape[2:] == [oh, ow]:
        cols = xp  # [N, C, OH, OW]: reduction dim C
        cols_map = ir.AffineMap.get(5, 0, [d[1], d[4], d[2], d[3]])
    else:
        kh, kw = kernel
        loops = [ir.AffineDimExpr.get(i) for i in range(6)]  # c, kh, kw, n, oh, ow
        row = loops[4] * strides[0] + loops[1] * dilations[0]
        col = loops[5] * strides[1] + loops[2] * dilations[1]
        gather = build_generic(
            [ir.RankedTensorType.get([c, kh, kw, n, oh, ow], et)],
            [xp],
            [tensor.empty([c, kh, kw, n, oh, ow], et)],
            [ir.AffineMap.get(6, 0, [loops[3], loops[0], row, col]), ir.AffineMap.get_identity(6)],
            [PARALLEL] * 6,
            lambda args: [args[0]],
        )
        cols = _collapse(gather.results[0], [[0, 1, 2], [3], [4], [5]])  # [C*KH*KW, N, OH, OW]
        cols_map = ir.AffineMap.get(5, 0, [d[4], d[1], d[2], d[3]])
    # loops: f, n, oh, ow, then the reduction k over C*KH*KW
    weights = _collapse(w, [[0], [1, 2, 3]])
    maps = [ir.AffineMap.get(5, 0, [d[0], d[4]]), cols_map, ir.AffineMap.get(5, 0, [d[1], d[0], d[2], d[3]])]
    init = _accumulator([n, f, oh, ow], acc, bias, [1])
    return linalg.contract(weights, cols, outs=[init], indexing_maps=maps)


def _grouped_conv_as_matmul(
    xp: ir.Value,
    w: ir.Value,
    rt: ir.RankedTensorType,
    groups: int,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    acc: ir.Type,
    bias: ir.Value | None,
) -> ir.Value:
    """A grouped convolution (static shapes) as :func:`_conv_as_matmul` does a plain one, with the group as a
    batch dim: ``cols[g, c, kh, kw, n, oh, ow] = xp[n, g * C + c, oh * sh + kh * dh, ow * sw + kw * dw]`` (C
    input channels per group) and one contraction of the weights as ``[G, F, C*KH*KW]`` (F filters per group)
    with it, writing ``[N, G, F, OH, OW]``; the runtime makes it a batched blocked matmul.  (The named grouped
    convolution runs as scalar loops: 1.5 GFLOP/s.)"""
    n, filters, oh, ow = rt.shape
    per_group_in = ir.RankedTensorType(w.type).shape[1]
    per_group_out = filters // groups
    kh, kw = kernel
    et = element_type(xp)
    loops = [ir.AffineDimExpr.get(i) for i in range(7)]  # g, c, kh, kw, n, oh, ow
    row = loops[5] * strides[0] + loops[2] * dilations[0]
    col = loops[6] * strides[1] + loops[3] * dilations[1]
    channel = loops[0] * per_group_in + loops[1]
    sizes = [groups, per_group_in, kh, kw, n, oh, ow]
    gather = build_generic(
        [ir.RankedTensorType.get(sizes, et)],
        [xp],
        [tensor.empty(sizes, et)],
        [ir.AffineMap.get(7, 0, [loops[4], channel, row, col]), ir.AffineMap.get_identity(7)],
        [PARALLEL] * 7,
        lambda args: [args[0]],
    )
    cols = _collapse(gather.results[0], [[0], [1, 2, 3], [4], [5], [6]])  # [G, C*KH*KW, N, OH, OW]
    weights = _collapse(_expand(w, [[0, 1], [2], [3], [4]], [groups, per_group_out, per_group_in, kh, kw]),
                        [[0], [1], [2, 3, 4]])  # [G, F, C*KH*KW]
    d = [ir.AffineDimExpr.get(i) for i in range(6)]  # g, f, n, oh, ow, then the reduction k
    maps = [ir.AffineMap.get(6, 0, [d[0], d[1], d[5]]), ir.AffineMap.get(6, 0, [d[0], d[5], d[2], d[3], d[4]]),
            ir.AffineMap.get(6, 0, [d[2], d[0], d[1], d[3], d[4]])]
    grouped_bias = None if bias is None else _expand(bias, [[0, 1]], [groups, per_group_out])
    init = _accumulator([n, groups, per_group_out, oh, ow], acc, grouped_bias, [1, 2])
    product = linalg.contract(weights, cols, outs=[init], indexing_maps=maps)
    return _collapse(product, [[0], [1, 2], [3], [4]])


def _direct_conv_fits(
    x: ir.Value, w: ir.Value, rt: ir.RankedTensorType, strides: list[int], dilations: list[int],
    depthwise: bool = False,
) -> bool:
    """f32, static shapes, unit strides and dilations, output rows at least one register tile wide (narrower
    ones with many channels are im2col + matmul: 256 channels at 14x14, filters in the lanes, reading the 2.4
    MB of weights for every task of rows, ran at 180 GFLOP/s on 2 cores, im2col at 340).  A depthwise
    convolution has no matmul form: any width (narrow rows take the column ladder's narrower tiles)."""
    static = all(ir.RankedTensorType(v.type).has_static_shape for v in (x, w)) and rt.has_static_shape
    if not (static and isinstance(rt.element_type, ir.F32Type)):
        return False
    wide = depthwise or rt.shape[3] >= register_tile(vector_bits())[1]
    return strides == [1, 1] and dilations == [1, 1] and wide


def _direct_conv(xp: ir.Value, w: ir.Value, rt: ir.RankedTensorType, bias: ir.Value | None,
                 depthwise: bool = False) -> ir.Value:
    """A unit-stride convolution of the padded input as one generic, read in place by the runtime's register
    tiles (no im2col matrix, no copy of the input into panels): ``out[n, f, oh, ow] += w[f, c, kh, kw] *
    xp[n, c, oh + kh, ow + kw]``.

    With at least a register tile's columns of filters (:data:`FILTER_LANES`), the filters are the vector
    lanes: the generic runs over (n, oh, ow, f, c, kh, kw) and reads the weights as ``[C, KH, KW, F]`` (a
    constant transposed now, else a ``linalg.transpose``), so that a tile of MR output columns x NR
    filters is MR broadcast input floats times NR contiguous weights for each (c, kh, kw), whatever the
    row's width.  Else over (n, f, oh, ow, c, kh, kw), the output columns the lanes: MR broadcast weights
    times NR contiguous input floats of one row.

    ``depthwise`` (weights ``[C, 1, KH, KW]``, filter f reads input channel f alone): the same generic with
    the channel loop of extent 1 added to the filter, ``xp[n, f + c, ...]``, and the output columns the lanes
    (each filter of a tile reads its own input row).
    """
    d = [ir.AffineDimExpr.get(i) for i in range(7)]
    if bias is None or ir.RankedTensorType(bias.type).element_type != rt.element_type:
        init = _accumulator(list(rt.shape), rt.element_type, bias, [1])
    else:  # a named broadcast, not a generic: the schedule vectorizes the generics of a task, whose last task
        # of rows may have a dynamic size
        empty = tensor.empty(list(rt.shape), rt.element_type)
        init = linalg.broadcast(bias, outs=[empty], dimensions=[0, 2, 3]).results[0]
    filter_lanes = not depthwise and rt.shape[1] >= register_tile(vector_bits())[1]
    if filter_lanes:  # n, oh, ow, f, c, kh, kw
        w = _filters_last(w)
        maps = [
            ir.AffineMap.get(7, 0, [d[0], d[4], d[1] + d[5], d[2] + d[6]]),
            ir.AffineMap.get(7, 0, [d[4], d[5], d[6], d[3]]),
            ir.AffineMap.get(7, 0, [d[0], d[3], d[1], d[2]]),
        ]
    else:  # n, f, oh, ow, c, kh, kw
        channel = d[1] + d[4] if depthwise else d[4]
        maps = [
            ir.AffineMap.get(7, 0, [d[0], channel, d[2] + d[5], d[3] + d[6]]),
            ir.AffineMap.get(7, 0, [d[1], d[4], d[5], d[6]]),
            ir.AffineMap.get(7, 0, [d[0], d[1], d[2], d[3]]),
        ]
    conv = build_generic([rt], [xp, w], [init], maps, [PARALLEL] * 4 + [REDUCTION] * 3,
                         lambda args: [mlir_math.fma(args[0], args[1], args[2])])
    conv.attributes[DIRECT_CONV] = ir.UnitAttr.get()
    if filter_lanes:
        conv.attributes[FILTER_LANES] = ir.UnitAttr.get()
    return conv.results[0]


def _filters_last(w: ir.Value) -> ir.Value:
    """Weights ``[F, C, KH, KW]`` as ``[C, KH, KW, F]``: transposed now when they are a constant (a model's
    weight), else by a ``linalg.transpose`` (one pass over the weights per call)."""
    wt = ir.RankedTensorType(w.type)
    f, c, kh, kw = wt.shape
    transposed = ir.RankedTensorType.get([c, kh, kw, f], wt.element_type)
    constant = producer(w, "arith.constant")
    if constant is not None:
        attr = ir.DenseElementsAttr(constant.attributes["value"])
        if attr.is_splat:
            return arith.constant(transposed, ir.DenseElementsAttr.get_splat(transposed, attr.get_splat_value()))
        array = np.ascontiguousarray(attr_to_array(attr).transpose(1, 2, 3, 0))
        return arith.constant(transposed, array_to_attr(array))
    destination = tensor.empty([c, kh, kw, f], wt.element_type)
    return linalg.transpose(w, outs=[destination], permutation=[1, 2, 3, 0]).results[0]


@register_lowering("conv2d")
def lower_conv2d(op: ir.Operation) -> bool:
    """Zero padding, then im2col + a contraction or a named convolution (depthwise, grouped), accumulating in f32
    from zero or from the bias."""
    x, w = op.operands[:2]
    bias = op.operands[2] if len(op.operands) == 3 else None
    xt, wt, rt = _ranked(x), _ranked(w), _ranked(op.results[0])
    if xt is None or wt is None or rt is None or not is_float(xt.element_type):
        return False
    attrs = _attrs(op)
    strides, dilations = list(attrs["strides"]), list(attrs["dilations"])
    groups = int(attrs["groups"])
    kernel = [_static(wt, 2), _static(wt, 3)]
    if None in kernel:
        return False
    et = rt.element_type
    acc = compute_type(et)
    o_static, i_static = _static(wt, 0), _static(wt, 1)
    with op.location, ir.InsertionPoint(op):
        low, high = _hw_pads(list(attrs["pads"]))
        xp = _pad(x, low, high, 0.0)
        oh, ow = _spatial_out(xp, rt, kernel, strides, dilations)
        n = _dim(x, 0)
        named = {"strides": strides, "dilations": dilations}
        cpu_forms = not cube_convolutions_enabled()
        if groups == 1 and cpu_forms and _direct_conv_fits(xp, w, rt, strides, dilations):
            r = _direct_conv(xp, w, rt, bias)
        elif groups == 1 and cpu_forms and _im2col_fits(xp, w, rt):
            r = _conv_as_matmul(xp, w, rt, kernel, strides, dilations, acc, bias)
        elif groups == 1:
            init = _accumulator([n, _dim(w, 0), oh, ow], acc, bias, [1])
            r = linalg.conv_2d_nchw_fchw(xp, w, outs=[init], **named)
        elif i_static == 1 and o_static == groups and cpu_forms and \
                _direct_conv_fits(xp, w, rt, strides, dilations, depthwise=True):
            r = _direct_conv(xp, w, rt, bias, depthwise=True)
        elif i_static == 1 and o_static == groups:
            # Depthwise: channel c is convolved with filter w[c, 0] alone.
            init = _accumulator([n, groups, oh, ow], acc, bias, [1])
            r = linalg.depthwise_conv_2d_nchw_chw(xp, _collapse(w, [[0, 1], [2], [3]]), outs=[init], **named)
        elif cpu_forms and _im2col_fits(xp, w, rt):
            r = _grouped_conv_as_matmul(xp, w, rt, groups, kernel, strides, dilations, acc, bias)
        else:
            per_group_in = _dim(w, 1)
            per_group_out: Size = (
                o_static // groups if o_static is not None else arith.divui(_dim(w, 0), _index(groups))
            )
            xg = _expand(xp, [[0], [1, 2], [3], [4]], [n, groups, per_group_in, _dim(xp, 2), _dim(xp, 3)])
            wg = _expand(w, [[0, 1], [2], [3], [4]], [groups, per_group_out, per_group_in, *kernel])
            grouped_bias = None if bias is None else _expand(bias, [[0, 1]], [groups, per_group_out])
            init = _accumulator([n, groups, per_group_out, oh, ow], acc, grouped_bias, [1, 2])
            r = linalg.conv_2d_ngchw_gfchw(xg, wg, outs=[init], **named)
            r = _collapse(r, [[0], [1, 2], [3], [4]])
        return _replace(op, _round_to(r, et))


def _static_counts(size: int, kernel: int, stride: int, lo: int, out: int) -> np.ndarray:
    """Cells of each window inside the unpadded input along one dim."""
    starts = np.arange(out, dtype=np.int64) * stride - lo
    return np.minimum(starts + kernel, size) - np.maximum(starts, 0)


def _dynamic_count(pos: ir.Value, size: Size, kernel: int, stride: int, lo: int) -> ir.Value:
    """The same count at output index ``pos`` (index arithmetic, inside a generic body)."""
    start = arith.muli(pos, _index(stride)) if stride != 1 else pos
    start = arith.subi(start, _index(lo)) if lo else start
    end = arith.minsi(arith.addi(start, _index(kernel)), _as_value(size))
    return arith.subi(end, arith.maxsi(start, _index(0)))


@register_lowering("max_pool2d", "avg_pool2d")
def lower_pool2d(op: ir.Operation) -> bool:
    """Padding and ``linalg.pooling_nchw_max``/``_sum``; the average divides by the reference's window count."""
    x = op.operands[0]
    xt, rt = _ranked(x), _ranked(op.results[0])
    if xt is None or rt is None or not _numeric(xt.element_type):
        return False
    is_max = op.name == "graph.max_pool2d"
    et = rt.element_type
    if not is_max and not is_float(et):
        return False
    attrs = _attrs(op)
    kernel, strides, pads = list(attrs["kernel"]), list(attrs["strides"]), list(attrs["pads"])
    named = {"strides": strides, "dilations": [1, 1]}
    with op.location, ir.InsertionPoint(op):
        low, high = _hw_pads(pads)
        if is_max:
            xp = _pad(x, low, high, _lowest(et))
            oh, ow = _spatial_out(xp, rt, kernel, strides, [1, 1])
            init = _filled([_dim(x, 0), _dim(x, 1), oh, ow], et, _lowest(et))
            window = tensor.empty(kernel, et)
            return _replace(op, linalg.pooling_nchw_max(xp, window, outs=[init], **named))
        acc = compute_type(et)
        xp = _pad(x, low, high, 0.0)
        oh, ow = _spatial_out(xp, rt, kernel, strides, [1, 1])
        init = _filled([_dim(x, 0), _dim(x, 1), oh, ow], acc, 0)
        total = linalg.pooling_nchw_sum(xp, tensor.empty(kernel, et), outs=[init], **named)
        return _replace(op, _average(total, x, et, kernel, strides, pads, bool(attrs["count_include_pad"])))


def _average(
    total: ir.Value, x: ir.Value, et: ir.Type, kernel: list[int], strides: list[int], pads: list[int], include: bool
) -> ir.Value:
    """``total / count`` in the accumulator type, rounded to ``et``."""
    acc = element_type(total)
    top, left = pads[0], pads[1]  # the window's first cell; bottom/right padding only shortens the last windows
    if include or not any(pads):
        divisor = const(acc, float(kernel[0] * kernel[1]))
        return _elementwise(total, et, lambda s: narrow(arith.divf(s, divisor), et))
    xt, tt = ir.RankedTensorType(x.type), ir.RankedTensorType(total.type)
    h, w, oh, ow = _static(xt, 2), _static(xt, 3), _static(tt, 2), _static(tt, 3)
    rank4 = ir.AffineMap.get_identity(4)
    init = tensor.empty(_dims(total), et)
    result_type = ir.RankedTensorType.get(tt.shape, et)
    if None not in (h, w, oh, ow):
        counts = np.outer(
            _static_counts(h, kernel[0], strides[0], top, oh), _static_counts(w, kernel[1], strides[1], left, ow)
        ).astype(np.float32)
        attr = ir.DenseElementsAttr.get(counts, type=ir.RankedTensorType.get(list(counts.shape), acc))
        count = arith.constant(attr.type, attr)
        generic = build_generic(
            [result_type],
            [total, count],
            [init],
            [rank4, _dims_map(4, [2, 3]), rank4],
            [PARALLEL] * 4,
            lambda args: [narrow(arith.divf(args[0], args[1]), et)],
        )
        return generic.results[0]
    height, width = _dim(x, 2), _dim(x, 3)

    def body(args: list[ir.Value]) -> list[ir.Value]:
        rows = _dynamic_count(linalg.IndexOp(2).result, height, kernel[0], strides[0], top)
        cols = _dynamic_count(linalg.IndexOp(3).result, width, kernel[1], strides[1], left)
        cells = arith.index_cast(ir.IntegerType.get_signless(64), arith.muli(rows, cols))
        return [narrow(arith.divf(args[0], arith.sitofp(acc, cells)), et)]

    return build_generic([result_type], [total], [init], [rank4, rank4], [PARALLEL] * 4, body).results[0]


# --------------------------------------------------------------------------
# resize


def _tap_constant(values: np.ndarray) -> ir.Value:
    """A 1-D constant of a resize's positions (i64) or weights (f32), read per result position."""
    attr = array_to_attr(np.ascontiguousarray(values))
    return arith.constant(attr.type, attr)


@register_lowering("resize")
def lower_resize(op: ir.Operation) -> bool:
    """A generic over the result reading its taps from the operand with ``tensor.extract``.

    The positions and weights along each resized dim are the op's own (``resize_taps``), 1-D constants read
    through the result's index on that dim; the dims before are the generic's ``linalg.index`` es.  Bilinear
    sums the two taps along W, then the two rows along H, in f32, in the reference's order.
    """
    x = op.operands[0]
    xt, rt = _ranked(x), _ranked(op.results[0])
    if xt is None or rt is None:
        return False
    attrs = _attrs(op)
    size, mode = [int(s) for s in attrs["size"]], attrs["mode"]
    first = rt.rank - len(size)
    ratios = (attrs["ratio_h"], attrs["ratio_w"])[2 - len(size):]
    et = rt.element_type
    with op.location, ir.InsertionPoint(op):
        # per resized dim: its taps, each (positions, weights or None) as constants
        taps = [
            [(_tap_constant(positions), None if weights is None else _tap_constant(weights))
             for positions, weights in resize_taps(_static(xt, first + k), out, mode, attrs["align_corners"], ratio)]
            for k, (out, ratio) in enumerate(zip(size, ratios, strict=True))
        ]
        inputs = [v for dim_taps in taps for tap in dim_taps for v in tap if v is not None]
        maps = [_dims_map(rt.rank, [first + k]) for k, dim_taps in enumerate(taps)
                for tap in dim_taps for v in tap if v is not None]
        init = tensor.empty([*_dims(x)[:first], *size], et)

        def body(args: list[ir.Value]) -> list[ir.Value]:
            read = iter(args)
            # per resized dim, per tap: (position as an index, weight or None)
            dim_taps = [[(arith.index_cast(ir.IndexType.get(), next(read)), None if w is None else next(read))
                         for _, w in dim] for dim in taps]
            leading = [linalg.IndexOp(d).result for d in range(first)]
            if mode != "bilinear":
                return [tensor.extract(x, leading + [position for ((position, _),) in dim_taps])]

            def along_w(*row: ir.Value) -> ir.Value:
                (w0, a0), (w1, a1) = dim_taps[-1]
                near = arith.mulf(widen(tensor.extract(x, [*leading, *row, w0])), a0)
                return arith.addf(near, arith.mulf(widen(tensor.extract(x, [*leading, *row, w1])), a1))

            if len(dim_taps) == 1:
                return [narrow(along_w(), et)]
            (h0, b0), (h1, b1) = dim_taps[0]
            return [narrow(arith.addf(arith.mulf(along_w(h0), b0), arith.mulf(along_w(h1), b1)), et)]

        result_type = ir.RankedTensorType.get(rt.shape, et)
        generic = build_generic([result_type], inputs, [init], [*maps, ir.AffineMap.get_identity(rt.rank)],
                                [PARALLEL] * rt.rank, body)
        return _replace(op, generic.results[0])
