"""graph-to-linalg for ``graph.grouped_matmul``: one product per group of rows, in blocks of static size.

The result starts as zeros (rows in no group stay so).  An ``scf.for`` over the groups carries it and the
previous group's end; each step reads the group's end, counts a negative one back from the end (rows + end)
and clamps it to [0, rows] (the op's Python-slice reading of the ends), so no row outside ``x`` is read or
written, and a group whose end is not after its start has no rows.  Groups run in order, so with decreasing
ends a row in two groups keeps the later one's product, as the reference computes it.

A group's rows (``count`` rows from ``start``) are known only when the code runs, while the matmul schedules
of :mod:`graphfuse.lowering.contraction` need static shapes.  So they are cut into blocks whose sizes are
known when compiling: an ``scf.for`` over whole blocks of ``BLOCK_ROWS`` rows, then the rest as one last block
of the smallest power of two that holds it (a ladder of ``scf.if``, one block size each): its rows copied into a
block of zeros, of whose product only those rows are written.  Each block is a static ``linalg.matmul`` of its
rows of ``x`` with the group's matrix (a slice of ``weights``, no copy) written into its rows of the result.  The
last block computes fewer than twice its rows, and a group at most one block more than its whole blocks (cutting
the rest by its binary digits took up to seven, each with its own tasks, and 30% more time for Mixtral's groups;
the NPU's lowering keeps those, :func:`_group_rows`);
an f32 whole block accumulates in the result itself, and the only other buffers are per block (a bf16 block's f32
accumulator, the last block's rows, the panels below), on the stack up to 512 KiB.  A block has at most
``ROW_DOT_ROWS`` rows, so that in f32 with the weights in a linear layer's layout ([groups, n, k]: PyTorch's
experts, the importer's) every block takes the row-dot schedule, which reads the group's matrix as it is.  With
[groups, k, n] the register-tiled schedule copies the block's matrix into panels (512x256x1024 in 4 groups, one
thread: 3.9 ms against 3.3).  A bf16 product on a host with bf16 dot products is cut into blocks of up to
``PAIR_BLOCK_ROWS`` rows instead: a block of more rows than the row dots take runs on the packed pair products
(:mod:`graphfuse.lowering.contraction.pairs`), which copy the block's columns of the group's matrix into panels of
pairs (a 128th of the block's work) and then compute twice as fast as the row dots' FMAs on widened values.

The cores share the columns: an ``scf.forall`` of up to ``COLUMN_TASKS`` tasks of equal width (a divisor
of n, at least ``TASK_COLUMNS``), each running the loop over groups on its columns, so the threads fork once
per grouped product and not once per block (each block's schedule then runs inside its task).  Forking per
block (26 blocks for 512 rows in 4 groups) took 5.9 ms for 512x256x1024 on 2 threads of the shared 2-core
machine (medians of 50 calls while other jobs ran), in tasks 3.5 to 3.7 ms.  When n has no such divisor,
each block's schedule shares the block out.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from graphfuse.dialect.matching import attributes
from graphfuse.lowering.common import PARALLEL, build_generic, compute_type, const, host_cpu_forms, register_lowering
from graphfuse.lowering.contraction import ROW_DOT_ROWS
from graphfuse.lowering.contraction.layout import matmul_b_transposed
from graphfuse.lowering.host import dot_products

__all__ = ["BLOCK_ROWS", "COLUMN_TASKS", "PAIR_BLOCK_ROWS", "TASK_COLUMNS", "block_rows", "column_tasks",
           "lower_grouped_matmul"]

#: Rows of the blocks a group's rows are cut into first: the most a row-dot product takes.
BLOCK_ROWS = ROW_DOT_ROWS
#: The same for a bf16 product on bf16 dot products (:func:`block_rows`).  The zoo's Mixtral layer, 512 x 256 by
#: [4, 1024, 256] in groups of 131, 119, 140 and 122 rows, on 2 threads, the rests still cut by binary digits:
#: 1.20 ms, against 2.13 in blocks of 32 (64: 1.21, 256: 1.27); 512 x 512 by [4, 256, 512]: 0.55 against 0.88.
#: In f32 blocks of 128 were slower (2.36 against 2.17 ms): the f32 register tiles' packed panels gain less over
#: the row dots than pairs do.
PAIR_BLOCK_ROWS = 128
#: The most column tasks: enough for 16 threads.
COLUMN_TASKS = 16
#: The fewest columns of a task: its row-dot tiles (at most 8 columns each) whole, and a block's work well above
#: the loops' bookkeeping.
TASK_COLUMNS = 32

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _split(offsets: Sequence[int | ir.Value]) -> tuple[list[ir.Value], list[int]]:
    """Offsets as an offset-sizes op takes them: the dynamic values, and the static array."""
    return [o for o in offsets if not isinstance(o, int)], [o if isinstance(o, int) else _DYNAMIC for o in offsets]


def _slice(value: ir.Value, offsets: Sequence[int | ir.Value], sizes: Sequence[int | ir.Value],
           result_shape: Sequence[int] | None = None) -> ir.Value:
    """The slice of ``value`` of ``sizes`` at ``offsets``, unit strides; ``result_shape`` drops unit dims (a
    rank-reducing slice)."""
    element = ir.RankedTensorType(value.type).element_type
    dynamic_sizes, static_sizes = _split(sizes)
    result = ir.RankedTensorType.get(static_sizes if result_shape is None else list(result_shape), element)
    dynamic, static = _split(offsets)
    return tensor.extract_slice(result, value, dynamic, dynamic_sizes, [], static, static_sizes, [1] * len(sizes))


def _insert(part: ir.Value, into: ir.Value, offsets: Sequence[int | ir.Value],
            sizes: Sequence[int | ir.Value] | None = None) -> ir.Value:
    """``into`` with ``part`` (of ``sizes``, default its static shape) written at ``offsets``."""
    dynamic, static = _split(offsets)
    dynamic_sizes, static_sizes = _split(list(ir.RankedTensorType(part.type).shape) if sizes is None else sizes)
    return tensor.insert_slice(part, into, dynamic, dynamic_sizes, [], static, static_sizes, [1, 1])


def _row_bound(end: ir.Value, rows: ir.Value) -> ir.Value:
    """A group end as a row position: a negative one counts back from ``rows``, then clamped to [0, rows]."""
    position = arith.index_cast(ir.IndexType.get(), end)
    zero = _index(0)
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, zero)
    position = arith.select(negative, arith.addi(position, rows), position)
    return arith.minsi(arith.maxsi(position, zero), rows)


def block_rows(x: ir.Value, weights: ir.Value) -> int:
    """The most rows of a block: ``PAIR_BLOCK_ROWS`` when ``x`` and ``weights`` are bf16 of an even depth (whole
    pairs) and the host, lowered for (:func:`host_cpu_forms`), has bf16 dot products, else ``BLOCK_ROWS``."""
    x_type, w_type = ir.RankedTensorType(x.type), ir.RankedTensorType(weights.type)
    pairs = all(isinstance(t.element_type, ir.BF16Type) for t in (x_type, w_type)) and x_type.shape[1] % 2 == 0
    return PAIR_BLOCK_ROWS if pairs and host_cpu_forms() and "bf16" in dot_products() else BLOCK_ROWS


def column_tasks(columns: int) -> int:
    """How many tasks of equal width share ``columns``: the largest divisor of at most ``COLUMN_TASKS`` that
    leaves each task ``TASK_COLUMNS`` columns or more; 1 when none does."""
    return next((t for t in range(min(COLUMN_TASKS, columns // TASK_COLUMNS), 1, -1) if columns % t == 0), 1)


class _Blocks:
    """The products of one group's blocks: rows of ``x`` times ``weight`` (the group's [k, n], or [n, k] when
    ``transposed``) written into the same rows of the result, whose element type is ``element``."""

    def __init__(self, x: ir.Value, weight: ir.Value, transposed: bool, element: ir.Type) -> None:
        self.x, self.weight, self.transposed = x, weight, transposed
        self.element, self.acc = element, compute_type(element)
        self.depth = ir.RankedTensorType(x.type).shape[1]
        self.columns = ir.RankedTensorType(weight.type).shape[0 if transposed else 1]

    def block(self, out: ir.Value, row: ir.Value, rows: int) -> ir.Value:
        """``out`` with the ``rows`` rows from ``row`` replaced by their product."""
        lhs = _slice(self.x, [row, 0], [rows, self.depth])
        dest = _slice(out, [row, 0], [rows, self.columns])
        if self.acc == self.element:  # f32: accumulated in the result's rows themselves
            return _insert(self._matmul(lhs, linalg.fill(const(self.acc, 0), outs=[dest])), out, [row, 0])
        return _insert(self._rounded(self._matmul(lhs, self._zeros(rows, self.columns, self.acc)), dest), out,
                       [row, 0])

    def last_block(self, out: ir.Value, row: ir.Value, count: ir.Value, rows: int) -> ir.Value:
        """``out`` with the ``count`` (at most ``rows``) rows from ``row`` replaced by their product: a block of
        ``rows`` rows whose first ``count`` are those rows of ``x`` and the others zeros, of whose product the
        first ``count`` rows are written."""
        part = _slice(self.x, [row, 0], [count, self.depth])
        lhs = _insert(part, self._zeros(rows, self.depth, self.element), [0, 0], [count, self.depth])
        product = self._matmul(lhs, self._zeros(rows, self.columns, self.acc))
        if self.acc != self.element:
            product = self._rounded(product, tensor.empty([rows, self.columns], self.element))
        return _insert(_slice(product, [0, 0], [count, self.columns]), out, [row, 0], [count, self.columns])

    @staticmethod
    def _zeros(rows: int, columns: int, element: ir.Type) -> ir.Value:
        return linalg.fill(const(element, 0), outs=[tensor.empty([rows, columns], element)])

    def _rounded(self, sums: ir.Value, dest: ir.Value) -> ir.Value:
        """The f32 sums rounded once to the result's type, into ``dest``."""
        identity = ir.AffineMap.get_identity(2)
        return build_generic([dest.type], [sums], [dest], [identity, identity], [PARALLEL, PARALLEL],
                             lambda args: [arith.truncf(self.element, args[0])]).results[0]

    def _matmul(self, lhs: ir.Value, init: ir.Value) -> ir.Value:
        if not self.transposed:
            return linalg.matmul(lhs, self.weight, outs=[init])
        return matmul_b_transposed(lhs, self.weight, init)


def _group_rows(out: ir.Value, blocks: _Blocks, start: ir.Value, count: ir.Value, largest: int) -> ir.Value:
    """``out`` with the ``count`` rows from ``start`` replaced by their product: blocks of ``largest`` rows (a
    power of two), then the rest: for the host CPU in one last block of the power of two that holds it with the
    fewest rows (:meth:`_Blocks.last_block`); for the NPU (:func:`host_cpu_forms` False) one block of each
    smaller power of two the count holds, whose rows of ``x`` and of the result its buffer assignment streams
    through the UB as they are (a last block's zero rows would be local buffers of every size at once)."""
    whole = arith.andi(count, _index(-largest))  # count rounded down to whole blocks
    loop = scf.ForOp(start, arith.addi(start, whole), _index(largest), [out])
    with ir.InsertionPoint(loop.body):
        scf.YieldOp([blocks.block(loop.inner_iter_args[0], loop.induction_variable, largest)])
    if largest == 1:
        return loop.results[0]  # every row in a whole block
    out, row = loop.results[0], arith.addi(start, whole)
    if host_cpu_forms():
        return _last_block(out, blocks, row, arith.subi(count, whole), largest)
    rows = largest // 2
    while rows:
        taken = arith.andi(count, _index(rows))
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ne, taken, _index(0)), [out.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([blocks.block(out, row, rows)])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([out])
        out, rows = branch.results[0], rows // 2
        if rows:
            row = arith.addi(row, taken)
    return out


def _last_block(out: ir.Value, blocks: _Blocks, row: ir.Value, rest: ir.Value, rows: int) -> ir.Value:
    """``out`` with the ``rest`` (under ``rows``) rows from ``row`` computed as a block of ``rows`` when more than
    half of it, else of a smaller power of two: a ladder of ``scf.if``, one block each."""
    branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.sgt, rest, _index(rows // 2)), [out.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([blocks.last_block(out, row, rest, rows)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_last_block(out, blocks, row, rest, rows // 2) if rows > 1 else out])
    return branch.results[0]


def _groups(out: ir.Value, op: ir.Operation, column: int | ir.Value, transposed: bool) -> ir.Value:
    """The loop over the groups computing the columns of ``out`` (a [rows, width] tensor) from ``column`` on."""
    x, weights, ends = op.operands
    depth = ir.RankedTensorType(x.type).shape[1]
    rows = _rows(x)
    width = ir.RankedTensorType(out.type).shape[1]
    element = ir.RankedTensorType(out.type).element_type
    # no block has more rows than x (known when compiling; else the count's binary digits skip the larger ones)
    most = block_rows(x, weights)
    most = min(most, 1 << (rows.bit_length() - 1)) if isinstance(rows, int) else most
    loop = scf.ForOp(_index(0), _index(ir.RankedTensorType(weights.type).shape[0]), _index(1), [out, _index(0)])
    with ir.InsertionPoint(loop.body):
        group, (out, start) = loop.induction_variable, loop.inner_iter_args
        end = _row_bound(tensor.extract(ends, [group]), rows if isinstance(rows, ir.Value) else _index(rows))
        count = arith.maxsi(arith.subi(end, start), _index(0))
        if transposed:
            weight = _slice(weights, [group, column, 0], [1, width, depth], [width, depth])
        else:
            weight = _slice(weights, [group, 0, column], [1, depth, width], [depth, width])
        scf.YieldOp([_group_rows(out, _Blocks(x, weight, transposed, element), start, count, most), end])
    return loop.results[0]


def _rows(x: ir.Value) -> int | ir.Value:
    """The rows of ``x``: a number, or a ``tensor.dim`` when they are known only at run time."""
    shape = ir.RankedTensorType(x.type)
    return tensor.dim(x, _index(0)) if shape.is_dynamic_dim(0) else shape.shape[0]


@register_lowering("grouped_matmul")
def lower_grouped_matmul(op: ir.Operation) -> bool:
    """Column tasks, each a loop over the groups computing each group's rows in blocks of static sizes."""
    x, weights, _ = op.operands
    values = [*op.operands, op.results[0]]
    if not all(isinstance(v.type, ir.RankedTensorType) for v in values):
        return False
    types = [ir.RankedTensorType(v.type) for v in values]
    if not (types[1].has_static_shape and types[2].has_static_shape) or types[0].is_dynamic_dim(1) \
            or types[3].is_dynamic_dim(1):
        return False  # only the rows may be dynamic
    depth = types[0].shape[1]
    result = types[3]
    columns, element = result.shape[1], result.element_type
    transposed = bool(attributes(op)["transpose_weights"])
    with op.location, ir.InsertionPoint(op):
        rows = _rows(x)
        value = linalg.fill(const(element, 0), outs=[tensor.empty([rows, columns], element)])
        tasks = column_tasks(columns)
        if 0 in (rows, columns, depth, ir.RankedTensorType(weights.type).shape[0]):
            pass  # no row has a product: the zeros
        elif tasks == 1:
            value = _groups(value, op, 0, transposed)
        else:
            width = columns // tasks
            forall = scf.ForallOp([0], [tasks], [1], [value])
            with ir.InsertionPoint(forall.body):
                column = arith.muli(forall.induction_variables[0], _index(width))
                whole = forall.inner_iter_args[0]
                part = _groups(_slice(whole, [0, column], [rows, width]), op, column, transposed)
                with ir.InsertionPoint(forall.terminator().regions[0].blocks[0]):
                    dynamic, static_offsets = _split([0, column])
                    dynamic_sizes, static_sizes = _split([rows, width])
                    tensor.parallel_insert_slice(part, whole, dynamic, dynamic_sizes, [], static_offsets,
                                                 static_sizes, [1, 1])
            value = forall.results[0]
    op.results[0].replace_all_uses_with(value)
    op.erase()
    return True
