"""graph-to-linalg for matmul: named linalg ops where they apply exactly, a generic contraction otherwise."""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.lowering.common import (
    PARALLEL,
    REDUCTION,
    build_generic,
    compute_type,
    element_bytes,
    is_float,
    register_lowering,
    widen,
)
from graphfuse.lowering.structured_ops.builders import (
    Size,
    _attrs,
    _collapse,
    _dim,
    _dims_map,
    _expand,
    _filled,
    _numeric,
    _ranked,
    _replace,
    _round_to,
    _static,
    _tensor_type,
)


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
