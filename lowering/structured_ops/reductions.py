"""graph-to-linalg for reductions, arg max/min, one_hot, assign and cumsum."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from graphfuse.lowering.common import (
    PARALLEL,
    REDUCTION,
    broadcast_map,
    build_generic,
    compute_type,
    const,
    is_float,
    narrow,
    register_lowering,
    widen,
)
from graphfuse.lowering.fast_math import fadd, fast_math_enabled, fmul
from graphfuse.lowering.structured_ops.builders import (
    Size,
    _as_value,
    _attrs,
    _dim,
    _dims,
    _elementwise,
    _expand,
    _filled,
    _highest,
    _index,
    _lowest,
    _mul,
    _numeric,
    _ranked,
    _replace,
    _round_to,
    _tensor_type,
)


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
        # keep_dims: reduce into the kept dims (a projected-permutation result map, which tiling and producer
        # fusion need) and expand_shape the size-1 dims back afterwards (fuse-kernel-loops folds the expansion
        # into the reader's indexing map).
        expand_after = bool(attrs["keep_dims"])
        sizes = [_dim(x, i) for i in kept]
        exprs = [ir.AffineDimExpr.get(i) for i in kept]
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
