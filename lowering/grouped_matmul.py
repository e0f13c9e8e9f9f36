"""graph-to-linalg for ``graph.grouped_matmul``: one product per group of rows, blocks of static size.

The result starts as zeros (rows in no group stay so) and an ``scf.for`` over the groups carries it and the
previous group's end.  Each step reads the group's end, counts a negative one from the last row and clamps it
to [0, rows] (the op's Python-slice reading of the ends), so no row outside ``x`` is read or written; a group
whose end is not after its start has no rows.  Groups run in order, so with decreasing ends a row in two groups
keeps the later one's product, as the reference computes it.

A group's rows are ``count`` rows from ``start``, known only when the code runs, while the matmul schedules
of :mod:`graphfuse.lowering.contraction` need static shapes.  So they are cut into blocks whose sizes are
known when compiling: an ``scf.for`` over blocks of ``BLOCK_ROWS`` rows, then one block of each power of two
below that which ``count`` holds (its binary digits, each an ``scf.if``).  Every block is a static
``linalg.matmul`` of its rows of ``x`` with the group's matrix (a slice of ``weights``, no copy) written into
its rows of the result, and no row is computed twice: the work is rows x k x n multiply-adds, and the memory
the result's.  Blocks hold at most ``ROW_DOT_ROWS`` rows, so that in f32 with the weights in a linear layer's
layout ([groups, n, k], PyTorch's experts) every block takes the row-dot schedule, which reads the group's
matrix as it is: no copy of it into panels per block.  The other layout is packed into panels per block by
the register-tiled schedule.  f16/bf16 blocks accumulate in f32 and are rounded into the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from graphfuse.lowering.common import PARALLEL, build_generic, compute_type, const, register_lowering
from graphfuse.lowering.contraction import ROW_DOT_ROWS

__all__ = ["BLOCK_ROWS", "lower_grouped_matmul"]

#: Rows of the blocks a group's rows are cut into first: the most a row-dot product takes.
BLOCK_ROWS = ROW_DOT_ROWS


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _slice(value: ir.Value, offsets: Sequence[int | ir.Value], sizes: Sequence[int],
           result_shape: Sequence[int] | None = None) -> ir.Value:
    """A slice of ``value`` of static ``sizes`` at ``offsets`` (ints or index values), unit strides;
    ``result_shape`` drops unit dims (a rank-reducing slice)."""
    element = ir.RankedTensorType(value.type).element_type
    shape = list(sizes if result_shape is None else result_shape)
    dynamic = [o for o in offsets if not isinstance(o, int)]
    static = [o if isinstance(o, int) else ir.ShapedType.get_dynamic_size() for o in offsets]
    return tensor.extract_slice(ir.RankedTensorType.get(shape, element), value, dynamic, [], [], static,
                                list(sizes), [1] * len(sizes))


def _insert(part: ir.Value, into: ir.Value, row: ir.Value) -> ir.Value:
    rows, columns = ir.RankedTensorType(part.type).shape
    return tensor.insert_slice(part, into, [row], [], [], [ir.ShapedType.get_dynamic_size(), 0], [rows, columns],
                               [1, 1])


def _row_bound(end: ir.Value, rows: ir.Value) -> ir.Value:
    """A group end as a row position: negative counts from ``rows``, then clamped to [0, rows]."""
    position = arith.index_cast(ir.IndexType.get(), end)
    zero = _index(0)
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, zero)
    position = arith.select(negative, arith.addi(position, rows), position)
    return arith.minsi(arith.maxsi(position, zero), rows)


class _Product:
    """The blocks of one group: ``x``'s rows times ``weight`` (the group's [k, n], or [n, k] when
    ``transposed``) into the result's rows, in the result type ``element`` through ``acc``."""

    def __init__(self, x: ir.Value, weight: ir.Value, transposed: bool, columns: int, element: ir.Type) -> None:
        self.x, self.weight, self.transposed, self.columns = x, weight, transposed, columns
        self.element, self.acc = element, compute_type(element)
        self.depth = ir.RankedTensorType(x.type).shape[1]

    def block(self, out: ir.Value, row: ir.Value, rows: int) -> ir.Value:
        """``out`` with ``rows`` rows from ``row`` replaced by their product."""
        lhs = _slice(self.x, [row, 0], [rows, self.depth])
        if self.acc == self.element:  # f32: computed in place in the result's rows
            init = linalg.fill(const(self.acc, 0), outs=[_slice(out, [row, 0], [rows, self.columns])])
            return _insert(self._matmul(lhs, init), out, row)
        init = linalg.fill(const(self.acc, 0), outs=[tensor.empty([rows, self.columns], self.acc)])
        product = self._matmul(lhs, init)
        identity = ir.AffineMap.get_identity(2)
        rounded = build_generic([ir.RankedTensorType.get([rows, self.columns], self.element)], [product],
                                [_slice(out, [row, 0], [rows, self.columns])], [identity, identity],
                                [PARALLEL, PARALLEL], lambda args: [arith.truncf(self.element, args[0])])
        return _insert(rounded.results[0], out, row)

    def _matmul(self, lhs: ir.Value, init: ir.Value) -> ir.Value:
        if not self.transposed:
            return linalg.matmul(lhs, self.weight, outs=[init])
        i, j, k = (ir.AffineDimExpr.get(d) for d in range(3))
        maps = [ir.AffineMap.get(3, 0, dims) for dims in ([i, k], [j, k], [i, j])]
        return linalg.matmul(lhs, self.weight, outs=[init], indexing_maps=maps)


def _group(out: ir.Value, product: _Product, start: ir.Value, count: ir.Value, block_rows: int) -> ir.Value:
    """``out`` with the ``count`` rows from ``start`` replaced by their product: blocks of ``block_rows`` (a
    power of two), then one block of each power of two below it that ``count`` holds."""
    full = arith.andi(count, _index(-block_rows))  # count rounded down to whole blocks
    blocks = scf.ForOp(start, arith.addi(start, full), _index(block_rows), [out])
    with ir.InsertionPoint(blocks.body):
        scf.YieldOp([product.block(blocks.inner_iter_args[0], blocks.induction_variable, block_rows)])
    out, row = blocks.results[0], arith.addi(start, full)
    rows = block_rows // 2
    while rows:
        taken = arith.andi(count, _index(rows))
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ne, taken, _index(0)), [out.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([product.block(out, row, rows)])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([out])
        out, row, rows = branch.results[0], arith.addi(row, taken), rows // 2
    return out


@register_lowering("grouped_matmul")
def lower_grouped_matmul(op: ir.Operation) -> bool:
    """An ``scf.for`` over the groups, each group's rows in blocks of static sizes (the module docstring)."""
    x, weights, ends = op.operands
    types = [v.type for v in (x, weights, ends, op.results[0])]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape for t in types):
        return False
    rows, depth = ir.RankedTensorType(x.type).shape
    groups, *matrix = ir.RankedTensorType(weights.type).shape
    result = ir.RankedTensorType(op.results[0].type)
    columns, element = result.shape[1], result.element_type
    transposed = "transpose_weights" in op.attributes and ir.BoolAttr(op.attributes["transpose_weights"]).value
    with op.location, ir.InsertionPoint(op):
        zeros = linalg.fill(const(element, 0), outs=[tensor.empty([rows, columns], element)])
        if 0 in (rows, columns, groups, depth):  # no product to add
            op.results[0].replace_all_uses_with(zeros)
            op.erase()
            return True
        block_rows = min(BLOCK_ROWS, 1 << (rows.bit_length() - 1))  # a block never has more rows than x
        loop = scf.ForOp(_index(0), _index(groups), _index(1), [zeros, _index(0)])
        with ir.InsertionPoint(loop.body):
            group, (out, start) = loop.induction_variable, loop.inner_iter_args
            end = _row_bound(tensor.extract(ends, [group]), _index(rows))
            count = arith.maxsi(arith.subi(end, start), _index(0))
            weight = _slice(weights, [group, 0, 0], [1, *matrix], matrix)
            product = _Product(x, weight, transposed, columns, element)
            scf.YieldOp([_group(out, product, start, count, block_rows), end])
    op.results[0].replace_all_uses_with(loop.results[0])
    op.erase()
    return True
