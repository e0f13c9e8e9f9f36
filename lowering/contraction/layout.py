"""Contractions other than the named matmuls (``linalg.contract``, generic multiply-accumulate loops)
rewritten as ``linalg.matmul`` / ``linalg.batch_matmul`` on collapsed, transposed operands."""


import math

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from graphfuse.lowering.contraction.sizes import SERIAL

#: The operand maps of the plain named ops, as result dim positions: A, B, C.
_DEFAULT_MAPS = {
    "linalg.matmul": ((0, 2), (2, 1), (0, 1)),
    "linalg.batch_matmul": ((0, 1, 3), (0, 3, 2), (0, 1, 2)),
}


def _map_dims(attr: ir.Attribute) -> tuple[int, ...] | None:
    result = []
    for expr in ir.AffineMapAttr(attr).value.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        result.append(expr.position)
    return tuple(result)


def matmul_b_transposed(a: ir.Value, bt: ir.Value, init: ir.Value) -> ir.Value:
    """``linalg.matmul`` of A [M, K] and B read as Bt [N, K] through its maps (a linear layer's x @ W^T, the form
    :func:`_reads_b_transposed` recognizes)."""
    i, j, k = (ir.AffineDimExpr.get(d) for d in range(3))
    maps = [ir.AffineMap.get(3, 0, dims) for dims in ([i, k], [j, k], [i, j])]
    return linalg.matmul(a, bt, outs=[init], indexing_maps=maps)


def replace_operands(op: ir.Operation, a: ir.Value, b: ir.Value) -> ir.Value:
    """Replace named product ``op`` (``linalg.matmul`` or ``linalg.batch_matmul``, its maps kept) by the same
    product of ``a`` and ``b`` into its init; the new result.  A new op, not new operands: a named op's body
    converts the element types its operands had when it was built."""
    build = linalg.matmul if op.name == "linalg.matmul" else linalg.batch_matmul
    maps = {"indexing_maps": op.attributes["indexing_maps"]} if "indexing_maps" in op.attributes else {}
    with op.location, ir.InsertionPoint(op):
        product = build(a, b, outs=[op.operands[2]], **maps)
    op.results[0].replace_all_uses_with(product)
    op.erase()
    return product


def _reads_b_transposed(op: ir.Operation) -> bool:
    """Whether a matmul reads A [M, K] and B as [N, K] (a linear layer's x @ W^T, through its maps)."""
    if "indexing_maps" not in op.attributes:
        return False
    return tuple(_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])) == ((0, 2), (1, 2), (0, 1))


def _materialize_transposes(op: ir.Operation) -> bool:
    """Rewrite a matmul reading a transposed operand (through its indexing maps) as transpose + plain matmul.

    With B transposed, the blocked (i, k, j) loop would read B with stride K
    in its innermost loop; one explicit ``linalg.transpose`` (K x N copies,
    nothing next to the M x N x K products) gives the contiguous form.
    """
    if "indexing_maps" not in op.attributes:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    defaults = _DEFAULT_MAPS[op.name]
    if None in maps or maps[2] != defaults[2]:
        return False
    operands = list(op.operands)
    with op.location, ir.InsertionPoint(op):
        for k in (0, 1):
            if maps[k] == defaults[k]:
                continue
            if sorted(maps[k]) != sorted(defaults[k]):
                return False
            permutation = [maps[k].index(d) for d in defaults[k]]
            source = ir.RankedTensorType(operands[k].type)
            shape = [source.shape[p] for p in permutation]
            init = tensor.empty(shape, source.element_type)
            operands[k] = linalg.transpose(operands[k], outs=[init], permutation=permutation)
        build = linalg.matmul if op.name == "linalg.matmul" else linalg.batch_matmul
        result = build(operands[0], operands[1], outs=[operands[2]])
        if SERIAL in op.attributes:  # (the Python builders spell out the default maps: a product of a task's)
            result.owner.attributes[SERIAL] = ir.UnitAttr.get()
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


#: Casts a contraction body may hold that the named ops' (signed) operand extension would get wrong.
_UNSIGNED_CASTS = frozenset({"arith.extui", "arith.uitofp"})


def _static_tensor(value: ir.Value) -> ir.RankedTensorType | None:
    t = value.type
    if isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape:
        return ir.RankedTensorType(t)
    return None


def _layout(
    axes_dims: tuple[int, ...], groups: list[list[int]], unit: set[int]
) -> tuple[list[int], list[list[int]]]:
    """The axis order putting a tensor's axes in group order, and the reassociation collapsing each group.

    Axis ``i`` of the tensor is indexed by loop dim ``axes_dims[i]``; the axes
    of size-1 loop dims (``unit``) go first and join the first group.
    """
    order = [axes_dims.index(d) for d in axes_dims if d in unit]
    for group in groups:
        order += [axes_dims.index(d) for d in group]
    lengths = [len(g) for g in groups]
    lengths[0] += len(axes_dims) - sum(lengths)
    reassociation, start = [], 0
    for length in lengths:
        reassociation.append(list(range(start, start + length)))
        start += length
    return order, reassociation


def _pack(value: ir.Value, axes_dims: tuple[int, ...], groups: list[list[int]], unit: set[int]) -> ir.Value:
    """``value`` transposed (an explicit copy, only when needed) and collapsed to one axis per group."""
    order, reassociation = _layout(axes_dims, groups, unit)
    t = ir.RankedTensorType(value.type)
    if order != list(range(t.rank)):
        init = tensor.empty([t.shape[p] for p in order], t.element_type)
        value = linalg.transpose(value, outs=[init], permutation=order).results[0]
    if len(reassociation) == t.rank:
        return value
    shape = ir.RankedTensorType(value.type).shape
    sizes = [math.prod(shape[a] for a in group) for group in reassociation]
    return tensor.collapse_shape(ir.RankedTensorType.get(sizes, t.element_type), value, reassociation)


def _unpack(
    value: ir.Value, like: ir.RankedTensorType, axes_dims: tuple[int, ...], groups: list[list[int]], unit: set[int]
) -> ir.Value:
    """The inverse of :func:`_pack` for the product: expanded to the ordered axes, transposed back to ``like``."""
    order, reassociation = _layout(axes_dims, groups, unit)
    ordered_shape = [like.shape[p] for p in order]
    if len(reassociation) != like.rank:
        value = tensor.expand_shape(
            ir.RankedTensorType.get(ordered_shape, like.element_type), value, reassociation, [], ordered_shape
        )
    if order != list(range(like.rank)):
        inverse = [order.index(a) for a in range(like.rank)]
        init = tensor.empty(list(like.shape), like.element_type)
        value = linalg.transpose(value, outs=[init], permutation=inverse).results[0]
    return value


def as_named_matmul(op: ir.Operation) -> bool:
    """Rewrite a contraction that is not a plain named matmul as collapse/transpose + matmul or batch_matmul.

    ``linalg.contract`` (what graph-to-linalg emits for batched matmuls and
    convolutions) and generic contractions (what reshape propagation makes
    of a named matmul in a fused kernel: ``(d0, d1, d3) x (d3, d2) -> (d0, d1,
    d2)``) are not blocked; as loops their innermost loop is the reduction,
    which neither vectorizes nor reuses cache lines.  Grouping the loop dims
    into batch, rows (M), columns (N) and reduction (K), collapsing each group
    into one dim (size-1 dims dropped) and transposing an operand whose dims
    are out of that order gives a ``linalg.matmul`` ([M, K] x [K, N]) or
    ``linalg.batch_matmul`` that the blocking below makes fast.
    """
    if len(op.results) != 1 or len(op.operands) != 3 or not linalg.isa_contraction_op(op):
        return False
    if any(o.operation.name in _UNSIGNED_CASTS for o in op.regions[0].blocks[0].operations):
        return False  # the named ops extend their operands as signed
    types = [_static_tensor(v) for v in op.operands]
    if None in types:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if None in maps or any(len(set(m)) != len(m) for m in maps):
        return False  # a broadcast (constant index) or diagonal read
    sizes: dict[int, int] = {}
    for t, dims in zip(types, maps, strict=True):
        for axis, d in enumerate(dims):
            sizes[d] = t.shape[axis]
    a_dims, b_dims, c_dims = (set(m) for m in maps)
    unit = {d for d, size in sizes.items() if size == 1}
    batch = [d for d in maps[2] if d in a_dims and d in b_dims and d not in unit]
    rows = [d for d in maps[2] if d in a_dims and d not in b_dims and d not in unit]
    cols = [d for d in maps[2] if d in b_dims and d not in a_dims and d not in unit]
    reduced = [d for d in maps[0] if d in b_dims and d not in c_dims and d not in unit]
    classified = set(batch) | set(rows) | set(cols) | set(reduced) | unit
    if not rows or not cols or not reduced or classified != set(sizes):
        return False  # a dim of one operand only, a matvec, an outer product: left as it is
    lead = [batch] if batch else []
    with op.location, ir.InsertionPoint(op):
        a = _pack(op.operands[0], maps[0], [*lead, rows, reduced], unit)
        b = _pack(op.operands[1], maps[1], [*lead, reduced, cols], unit)
        c = _pack(op.operands[2], maps[2], [*lead, rows, cols], unit)
        build = linalg.batch_matmul if batch else linalg.matmul
        product = build(a, b, outs=[c])
        result = _unpack(product, types[2], maps[2], [*lead, rows, cols], unit)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def _rows_collapsed_matmul(op: ir.Operation) -> bool:
    """Rewrite a generic contraction over rows of which some are dynamic, ``(rows..., k) x (k, n) or (n, k) ->
    (rows..., n)`` (what reshape propagation makes of a linear layer over [batch, tokens, K] with both counted
    at run time), as the rows collapsed into one, a ``linalg.matmul`` (B read transposed through its maps) and
    the result expanded back: the form the products over dynamic rows take (:mod:`.dynamic_rows`).  B, K and
    N static; :func:`as_named_matmul` takes the static contractions."""
    if len(op.results) != 1 or len(op.operands) != 3 or not linalg.isa_contraction_op(op):
        return False
    if any(o.operation.name in _UNSIGNED_CASTS for o in op.regions[0].blocks[0].operations):
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if None in maps:
        return False
    a_dims, b_dims, c_dims = maps
    rows, n, k = c_dims[:-1], c_dims[-1], a_dims[-1]
    if not rows or a_dims != (*rows, k) or b_dims not in ((k, n), (n, k)) or k in c_dims:
        return False
    a, b, c = op.operands
    at, ct = ir.RankedTensorType(a.type), ir.RankedTensorType(c.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    if _static_tensor(b) is None or at.has_static_shape or dynamic in (at.shape[-1], ct.shape[-1]):
        return False
    groups = [list(range(len(rows))), [len(rows)]]
    with op.location, ir.InsertionPoint(op):
        lhs = tensor.collapse_shape(ir.RankedTensorType.get([dynamic, at.shape[-1]], at.element_type), a, groups)
        init = tensor.collapse_shape(ir.RankedTensorType.get([dynamic, ct.shape[-1]], ct.element_type), c, groups)
        if b_dims == (k, n):
            product = linalg.matmul(lhs, b, outs=[init])
        else:
            transposed = [ir.AffineMap.get(3, 0, [ir.AffineDimExpr.get(d) for d in dims])
                          for dims in ((0, 2), (1, 2), (0, 1))]
            product = linalg.matmul(lhs, b, outs=[init], indexing_maps=transposed)
        sizes = [tensor.dim(c, arith.constant(ir.IndexType.get(), i)) if ct.shape[i] == dynamic else ct.shape[i]
                 for i in range(len(rows))]
        dynamic_sizes = [size for size in sizes if isinstance(size, ir.Value)]
        static_sizes = [dynamic if isinstance(size, ir.Value) else size for size in sizes] + [ct.shape[-1]]
        result = tensor.expand_shape(ct, product, groups, dynamic_sizes, static_sizes)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True
