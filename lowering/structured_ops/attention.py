"""graph-to-linalg for ``flash_attention`` over sequence lengths known only at run time: the tiled
online-softmax form, in which every tile has a size known when compiling.

The untiled form (``lowering/decompose.py``: matmul, softmax, matmul) needs the scores of a query row as one
row of the key count's length; with that count dynamic, neither the products nor the softmax between them
have a static tile.  Here instead (FlashAttention's schedule):

- a parallel task per batch index and block of ``QUERY_BLOCK`` query rows (the last block the rows left),
  computed in tiles of ``SMALL_QUERY_BLOCK`` rows, the last padded with zero rows whose results are not
  stored;
- each task walks the keys in blocks: the block's keys and values are read (and packed) once for all its
  tiles; per tile S = Q K^T of the block, then per query row the running maximum m, the probabilities
  p = exp(s - m) and their running sum l, the rows of the accumulator rescaled by exp(m_old - m), and
  acc += P V of the block.  Whole blocks of ``KEY_BLOCK`` keys (a loop counted at run time), then the keys
  left, when there are any, in one more step on the narrowest block of ``LAST_KEY_BLOCKS`` that holds them,
  padded with zero rows whose scores are -inf;
- each task's result is acc / l, row by row.

The two products are static ``linalg.matmul`` ops marked serial (each runs inside its task), which the
contraction schedules pack and register-tile as any other; the softmax steps are vector code on whole rows
of a block.  f32 only; other element types, and static lengths, keep the untiled form.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor, vector

from graphfuse.lowering.common import const, padded_rows, register_lowering
from graphfuse.lowering.contraction.sizes import SERIAL
from graphfuse.lowering.fast_math import fadd, fast_exp, fmul, fsub
from graphfuse.lowering.structured_ops.builders import _as_value, _attrs, _dim, _filled, _index

__all__ = [
    "KEY_BLOCK",
    "LAST_KEY_BLOCKS",
    "QUERY_BLOCK",
    "SMALL_QUERY_BLOCK",
    "lower_tiled_attention",
    "tiled_attention_applies",
]

#: Query rows of a task (eight register tiles of eight rows on a 512-bit machine).
QUERY_BLOCK = 64
#: Query rows of a task over the rows short of a whole QUERY_BLOCK (one register tile).
SMALL_QUERY_BLOCK = 8
#: Keys of a step: the scores of a query row are one vector of this many lanes; the product of the
#: probabilities with the values a reduction this deep, over which the accumulator stays in registers.
KEY_BLOCK = 256
#: The blocks of the last, padded step (the keys short of a whole KEY_BLOCK), the narrowest that holds them: a
#: short sequence (a prompt of 17 tokens) costs a block of its length rounded up to a power of two, 16 at least.
LAST_KEY_BLOCKS = (KEY_BLOCK, 128, 64, 32, 16)

_DYNAMIC = ir.ShapedType.get_dynamic_size()
_DYNAMIC_OFFSET = ir.ShapedType.get_dynamic_stride_or_offset()


def _ranked(value: ir.Value) -> ir.RankedTensorType | None:
    return ir.RankedTensorType(value.type) if isinstance(value.type, ir.RankedTensorType) else None


def tiled_attention_applies(op: ir.Operation) -> bool:
    """Whether ``op`` (a ``graph.flash_attention``) is lowered tiled: f32 operands, q, k, v and the result of
    one rank, the query or the key count dynamic, static head dims, and every batch dim of k, v and the mask
    either that of the scores or a static 1 (q's batch dims are the result's)."""
    types = [_ranked(v) for v in (*op.operands, op.results[0])]
    if any(t is None for t in types) or not all(isinstance(t.element_type, ir.F32Type) for t in types):
        return False
    q, k, v, *rest = types
    result = rest[-1]
    mask = rest[0] if len(rest) == 2 else None
    rank = q.rank
    if rank < 2 or k.rank != rank or v.rank != rank or result.rank != rank:
        return False
    if _DYNAMIC in (q.shape[-1], k.shape[-1], v.shape[-1]) or q.shape[-1] != k.shape[-1]:
        return False
    if q.shape[-2] != _DYNAMIC and k.shape[-2] != _DYNAMIC:
        return False
    if any(q.shape[i] != result.shape[i] for i in range(rank - 2)):
        return False
    return mask is None or mask.rank <= rank


def _slice(source: ir.Value, offsets: list[ir.Value | int], sizes: list[ir.Value | int], shape: list[int]) -> ir.Value:
    """The slice of ``source`` at ``offsets`` of ``sizes`` (values or ints), rank-reduced to ``shape`` (a
    dynamic size is -1 there)."""
    element = ir.RankedTensorType(source.type).element_type
    dynamic_offsets = [o for o in offsets if isinstance(o, ir.Value)]
    dynamic_sizes = [s for s in sizes if isinstance(s, ir.Value)]
    static_offsets = [_DYNAMIC_OFFSET if isinstance(o, ir.Value) else o for o in offsets]
    static_sizes = [_DYNAMIC if isinstance(s, ir.Value) else s for s in sizes]
    return tensor.extract_slice(ir.RankedTensorType.get(shape, element), source, dynamic_offsets, dynamic_sizes, [],
                                static_offsets, static_sizes, [1] * len(offsets))


def _serial_matmul(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    product = linalg.matmul(a, b, outs=[c])
    product.owner.attributes[SERIAL] = ir.UnitAttr.get()
    return product


class _Attention:
    """The operands of one tiled attention and the pieces of its task, built under an insertion point."""

    def __init__(self, op: ir.Operation) -> None:
        self.q, self.k, self.v = op.operands[:3]
        self.mask = op.operands[3] if len(op.operands) > 3 else None
        attrs = _attrs(op)
        self.scale = float(attrs["scale"])
        self.safe = bool(attrs.get("safe_softmax"))
        q_type = ir.RankedTensorType(self.q.type)
        self.rank = q_type.rank
        self.batch_dims = self.rank - 2
        self.depth = q_type.shape[-1]
        self.value_depth = ir.RankedTensorType(self.v.type).shape[-1]
        self.f32 = ir.F32Type.get()

    def _batch_indices(self, operand: ir.Value, batch: list[ir.Value]) -> list[ir.Value | int]:
        """``operand``'s indices for the task's batch indices: 0 along a dim it broadcasts (a static 1)."""
        t = ir.RankedTensorType(operand.type)
        return [0 if t.shape[i] == 1 else batch[i] for i in range(self.batch_dims)]

    def rows_of(self, operand: ir.Value, batch: list[ir.Value], first: ir.Value, rows: ir.Value | int) -> ir.Value:
        """Rows [first, first + rows) of ``operand``'s matrix at the task's batch indices, [rows, W]."""
        width = ir.RankedTensorType(operand.type).shape[-1]
        offsets = [*self._batch_indices(operand, batch), first, 0]
        sizes = [1] * self.batch_dims + [rows, width]
        return _slice(operand, offsets, sizes, [rows if isinstance(rows, int) else _DYNAMIC, width])

    def mask_row(self, batch: list[ir.Value], query: ir.Value, key: ir.Value, width: int, in_bounds: bool) -> ir.Value:
        """The mask's values for query row ``query`` and keys [key, key + width), a vector; a key past the mask's
        end reads -inf (``in_bounds`` False: the last, partial block)."""
        t = ir.RankedTensorType(self.mask.type)
        lead = self.rank - t.rank  # the scores' dims the mask lacks in front
        indices: list[ir.Value] = []
        for d in range(t.rank):
            dim = lead + d
            if t.shape[d] == 1:
                indices.append(_index(0))
            elif dim < self.batch_dims:
                indices.append(batch[dim])
            else:
                indices.append(query if dim == self.batch_dims else key)
        lanes = ir.VectorType.get([width], self.f32)
        if t.shape[-1] == 1:  # one value for every key
            return vector.broadcast(lanes, tensor.extract(self.mask, indices))
        return vector.transfer_read(lanes, self.mask, indices, ir.AffineMap.get_minor_identity(t.rank, 1),
                                    const(self.f32, float("-inf")), [in_bounds])

    def step(self, batch: list[ir.Value], query_tile: ir.Value, tiles: ir.Value, first_query: ir.Value,
             last_query: ir.Value, key: ir.Value, width: int, valid: ir.Value | None,
             state: list[ir.Value]) -> list[ir.Value]:
        """One block of ``width`` keys from ``key`` (``valid`` of them when given: the last, padded block) folded
        into ``state`` = [maxima, sums, acc] of the first ``tiles`` tiles of SMALL_QUERY_BLOCK rows of
        ``query_tile``; the new state.  The block's keys and values are read (and packed, the products' B) once
        for all the tiles."""
        if valid is None:
            keys = self.rows_of(self.k, batch, key, width)
            values = self.rows_of(self.v, batch, key, width)
        else:
            keys = padded_rows(self.rows_of(self.k, batch, key, valid), valid, width)
            values = padded_rows(self.rows_of(self.v, batch, key, valid), valid, width)
        transposed = linalg.transpose(keys, outs=[tensor.empty([self.depth, width], self.f32)], permutation=[1, 0])
        loop = scf.ForOp(_index(0), tiles, _index(1), state)
        with ir.InsertionPoint(loop.body):
            row = arith.muli(loop.induction_variable, _index(SMALL_QUERY_BLOCK))
            queries, *tile_state = (_tile_rows(part, row) for part in (query_tile, *loop.inner_iter_args))
            maxima, sums, acc = self._tile_step(batch, queries, arith.addi(first_query, row), last_query, key,
                                                width, valid, transposed.results[0], values, tile_state)
            scf.YieldOp([_inserted(part, whole, row)
                         for part, whole in zip((maxima, sums, acc), loop.inner_iter_args, strict=True)])
        return list(loop.results)

    def _tile_step(self, batch: list[ir.Value], query_tile: ir.Value, first_query: ir.Value,
                   last_query: ir.Value, key: ir.Value, width: int, valid: ir.Value | None, transposed_keys: ir.Value,
                   values: ir.Value, state: list[ir.Value]) -> list[ir.Value]:
        """A step (:meth:`step`) for the rows of one tile of queries: the new [maxima, sums, acc] of its rows.

        Row by row the scores are scaled and masked and their maximum taken; the tile's new maxima, and the
        factors exp(m_old - m) that rescale what the earlier steps summed, are then one vector of the tile's
        rows (a scalar exp per row was a chain of dependent operations that made the rows' updates most of a
        short sequence's time); row by row again the probabilities, their sums and the rescaled rows of acc."""
        rows = SMALL_QUERY_BLOCK
        maxima, sums, acc = state
        scores = _serial_matmul(query_tile, transposed_keys, _filled([rows, width], self.f32, 0.0))
        scores, row_maxima = self._masked_scores(scores, batch, first_query, last_query, key, width, valid)
        tile = ir.VectorType.get([rows], self.f32)
        minus_inf = const(tile, float("-inf"))
        old_max = _read_vector(maxima, tile)
        new_max = arith.maximumf(old_max, _read_vector(row_maxima, tile))
        # a row with no key counted yet: exp(-inf - -inf) would be NaN; its probabilities are 0 against base 0
        base = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, new_max, minus_inf), const(tile, 0.0), new_max)
        correction = fast_exp(fsub(old_max, base), nonpositive=True)
        bases, corrections = (_written_vector(v) for v in (base, correction))
        probabilities, row_sums, acc = self._probabilities(scores, bases, corrections, acc, width)
        total = fadd(fmul(_read_vector(sums, tile), correction), _read_vector(row_sums, tile))
        return [_written_vector(new_max), _written_vector(total), _serial_matmul(probabilities, values, acc)]

    def _masked_scores(self, scores: ir.Value, batch: list[ir.Value], first_query: ir.Value, last_query: ir.Value,
                       key: ir.Value, width: int, valid: ir.Value | None) -> tuple[ir.Value, ir.Value]:
        """The tile's scores scaled and masked (-inf for the keys padded onto the last block), and each row's
        maximum: ([rows, width], [rows])."""
        lanes = ir.VectorType.get([width], self.f32)
        loop = scf.ForOp(_index(0), _index(SMALL_QUERY_BLOCK), _index(1),
                         [scores, tensor.empty([SMALL_QUERY_BLOCK], self.f32)])
        with ir.InsertionPoint(loop.body):
            row = loop.induction_variable
            scaled, maxima = loop.inner_iter_args
            query = arith.minui(arith.addi(first_query, row), last_query)
            s = fmul(_read_row(scaled, row, lanes), const(lanes, self.scale))
            if self.mask is not None:
                s = fadd(s, self.mask_row(batch, query, key, width, valid is None))
            if valid is not None:  # the keys padded onto the last block count for nothing
                inside = vector.create_mask(ir.VectorType.get([width], ir.IntegerType.get_signless(1)), [valid])
                s = arith.select(inside, s, const(lanes, float("-inf")))
            scf.YieldOp([_written_row(s, scaled, row),
                         tensor.insert(vector.reduction(self.f32, "maximumf", s), maxima, [row])])
        return loop.results[0], loop.results[1]

    def _probabilities(self, scores: ir.Value, bases: ir.Value, corrections: ir.Value, acc: ir.Value,
                       width: int) -> list[ir.Value]:
        """Per row of the tile p = exp(s - base), its sum, and its row of ``acc`` times its correction:
        [p [rows, width], sums [rows], acc]."""
        lanes = ir.VectorType.get([width], self.f32)
        acc_lanes = ir.VectorType.get([self.value_depth], self.f32)
        loop = scf.ForOp(_index(0), _index(SMALL_QUERY_BLOCK), _index(1),
                         [tensor.empty([SMALL_QUERY_BLOCK, width], self.f32),
                          tensor.empty([SMALL_QUERY_BLOCK], self.f32), acc])
        with ir.InsertionPoint(loop.body):
            row = loop.induction_variable
            p, sums, acc = loop.inner_iter_args
            base = vector.broadcast(lanes, tensor.extract(bases, [row]))
            probabilities = fast_exp(fsub(_read_row(scores, row, lanes), base), nonpositive=True)
            correction = vector.broadcast(acc_lanes, tensor.extract(corrections, [row]))
            scf.YieldOp([_written_row(probabilities, p, row),
                         tensor.insert(vector.reduction(self.f32, "add", probabilities), sums, [row]),
                         _written_row(fmul(_read_row(acc, row, acc_lanes), correction), acc, row)])
        return list(loop.results)

    def normalized(self, acc: ir.Value, sums: ir.Value, keys: ir.Value, count: ir.Value) -> ir.Value:
        """acc / sums per row, for the first ``count`` rows: NaN for a row whose every score is -inf (softmax's
        0 / 0), 0 with ``safe_softmax``; 0 for every row when there are no keys (an empty product)."""
        zero = const(self.f32, 0.0)
        no_keys = arith.cmpi(arith.CmpIPredicate.eq, keys, _index(0))
        rows = scf.ForOp(_index(0), count, _index(1), [acc])
        with ir.InsertionPoint(rows.body):
            row = rows.induction_variable
            (out,) = rows.inner_iter_args
            total = tensor.extract(sums, [row])
            factor = arith.divf(const(self.f32, 1.0), total)
            if self.safe:
                factor = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, total, zero), zero, factor)
            factor = arith.select(no_keys, zero, factor)
            lanes = ir.VectorType.get([self.value_depth], self.f32)
            values = fmul(_read_row(out, row, lanes), vector.broadcast(lanes, factor))
            if not self.safe:  # 0 * inf is NaN: an empty row of keys gives 0, not NaN
                values = arith.select(no_keys, const(lanes, 0.0), values)
            scf.YieldOp([_written_row(values, out, row)])
        return rows.results[0]

    def task(self, batch: list[ir.Value], first: ir.Value, rows: ir.Value) -> ir.Value:
        """The results of the query rows [first, first + rows) at the task's batch indices (at most QUERY_BLOCK
        rows), [rows, Dv]: all the keys folded into a state of QUERY_BLOCK rows, of which the tiles of
        SMALL_QUERY_BLOCK rows that hold a query row are computed (the last padded with zero rows)."""
        last_query = arith.subi(_as_value(_dim(self.q, self.rank - 2)), _index(1))
        query_tile = padded_rows(self.rows_of(self.q, batch, first, rows), rows, QUERY_BLOCK)
        tiles = arith.ceildivui(rows, _index(SMALL_QUERY_BLOCK))
        state = [_filled([QUERY_BLOCK], self.f32, float("-inf")), _filled([QUERY_BLOCK], self.f32, 0.0),
                 _filled([QUERY_BLOCK, self.value_depth], self.f32, 0.0)]
        keys = _as_value(_dim(self.k, self.rank - 2))
        state, done = self._steps(batch, query_tile, tiles, first, last_query, _index(0), keys, KEY_BLOCK, state)
        left = arith.subi(keys, done)
        _, sums, acc = self._last_step(batch, query_tile, tiles, first, last_query, done, left, state)
        result = self.normalized(acc, sums, keys, rows)
        return _slice(result, [0, 0], [rows, self.value_depth], [_DYNAMIC, self.value_depth])

    def _steps(self, batch: list[ir.Value], query_tile: ir.Value, tiles: ir.Value, first: ir.Value,
               last_query: ir.Value, start: ir.Value, keys: ir.Value, width: int,
               state: list[ir.Value]) -> tuple[list[ir.Value], ir.Value]:
        """The whole blocks of ``width`` keys from ``start`` folded into ``state``: (the state, the first key after
        them)."""
        count = arith.divui(arith.subi(keys, start), _index(width))
        steps = scf.ForOp(_index(0), count, _index(1), state)
        with ir.InsertionPoint(steps.body):
            key = arith.addi(start, arith.muli(steps.induction_variable, _index(width)))
            scf.YieldOp(self.step(batch, query_tile, tiles, first, last_query, key, width, None,
                                  list(steps.inner_iter_args)))
        return list(steps.results), arith.addi(start, arith.muli(count, _index(width)))

    def _last_step(self, batch: list[ir.Value], query_tile: ir.Value, tiles: ir.Value, first: ir.Value,
                   last_query: ir.Value, key: ir.Value, left: ir.Value, state: list[ir.Value],
                   widths: tuple[int, ...] = LAST_KEY_BLOCKS) -> list[ir.Value]:
        """The ``left`` keys from ``key`` (fewer than KEY_BLOCK) folded into ``state`` in one padded step, of the
        narrowest of ``widths`` (widest first) that holds them.  Beyond its products a step of 256 keys costs
        about what one of 64 does, so one padded step beats a loop of narrower ones (200 keys: one step of
        256, not three of 64 and a padded one: BERT's attention at 3 x 200 tokens 1.53 -> 1.14 ms a layer)."""
        if not widths:
            return state
        width, *narrower = widths
        bound = narrower[0] if narrower else 0
        types = [s.type for s in state]
        choice = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, left, _index(bound)), types, has_else=True)
        with ir.InsertionPoint(choice.then_block):
            scf.YieldOp(self.step(batch, query_tile, tiles, first, last_query, key, width, left, state))
        with ir.InsertionPoint(choice.else_block):
            scf.YieldOp(self._last_step(batch, query_tile, tiles, first, last_query, key, left, state,
                                        tuple(narrower)))
        return list(choice.results)

    def tasks(self, out: ir.Value) -> ir.Value:
        """``out`` computed by parallel tasks, one per batch index and block of QUERY_BLOCK query rows, the
        last block holding the rows left."""
        queries = _as_value(_dim(self.q, self.rank - 2))
        batch_sizes = [_as_value(_dim(self.q, i)) for i in range(self.batch_dims)]
        blocks = arith.ceildivui(queries, _index(QUERY_BLOCK))
        tasks = scf.ForallOp([0] * (self.batch_dims + 1), [*batch_sizes, blocks], [1] * (self.batch_dims + 1), [out])
        with ir.InsertionPoint(tasks.body):
            *batch, index = tasks.induction_variables
            first = arith.muli(index, _index(QUERY_BLOCK))
            rows = arith.minui(_index(QUERY_BLOCK), arith.subi(queries, first))
            result = self.task(batch, first, rows)
            with ir.InsertionPoint(tasks.terminator().regions[0].blocks[0]):
                tensor.parallel_insert_slice(
                    result, tasks.inner_iter_args[0], [*batch, first], [rows], [],
                    [_DYNAMIC_OFFSET] * (self.batch_dims + 1) + [0],
                    [1] * self.batch_dims + [_DYNAMIC, self.value_depth], [1] * self.rank)
        return tasks.results[0]


def _read_row(matrix: ir.Value, row: ir.Value, lanes: ir.VectorType) -> ir.Value:
    """Row ``row`` of a static [rows, W] tensor as a vector of W lanes."""
    return vector.transfer_read(lanes, matrix, [row, _index(0)], ir.AffineMap.get_minor_identity(2, 1),
                                const(lanes.element_type, 0.0), [True])


def _written_row(values: ir.Value, matrix: ir.Value, row: ir.Value) -> ir.Value:
    """``matrix`` with row ``row`` replaced by the vector ``values``."""
    return vector.transfer_write(matrix.type, values, matrix, [row, _index(0)], ir.AffineMap.get_minor_identity(2, 1),
                                 [True])


def _read_vector(values: ir.Value, lanes: ir.VectorType) -> ir.Value:
    """A static 1-D tensor as a vector."""
    return vector.transfer_read(lanes, values, [_index(0)], ir.AffineMap.get_minor_identity(1, 1),
                                const(lanes.element_type, 0.0), [True])


def _written_vector(values: ir.Value) -> ir.Value:
    """A vector as a new 1-D tensor."""
    lanes = ir.VectorType(values.type)
    empty = tensor.empty(lanes.shape, lanes.element_type)
    return vector.transfer_write(empty.type, values, empty, [_index(0)], ir.AffineMap.get_minor_identity(1, 1), [True])


def _tile_rows(whole: ir.Value, row: ir.Value) -> ir.Value:
    """The SMALL_QUERY_BLOCK rows of ``whole`` from row ``row``, all its columns."""
    shape = [SMALL_QUERY_BLOCK, *ir.RankedTensorType(whole.type).shape[1:]]
    return _slice(whole, [row] + [0] * (len(shape) - 1), shape, shape)


def _inserted(part: ir.Value, whole: ir.Value, row: ir.Value) -> ir.Value:
    """``whole`` with ``part`` (rows of it, all its columns) written from row ``row``."""
    shape = ir.RankedTensorType(part.type).shape
    return tensor.insert_slice(part, whole, [row], [], [], [_DYNAMIC_OFFSET] + [0] * (len(shape) - 1), shape,
                               [1] * len(shape))


@register_lowering("flash_attention")
def lower_tiled_attention(op: ir.Operation) -> bool:
    """The tiled online-softmax form of a ``flash_attention`` that :func:`tiled_attention_applies` to; False
    (IR untouched) for the others, which ``lowering/decompose.py`` has decomposed.

    A task per batch index and block of QUERY_BLOCK query rows, the last block the rows left (all of them for
    a token's step in generation), computed in tiles of SMALL_QUERY_BLOCK rows: a row computed in a padded
    tile costs a tile's work."""
    if not tiled_attention_applies(op):
        return False
    a = _Attention(op)
    result_type = ir.RankedTensorType(op.results[0].type)
    with op.location, ir.InsertionPoint(op):
        queries = _as_value(_dim(a.q, a.rank - 2))
        sizes = [*(_as_value(_dim(a.q, i)) for i in range(a.batch_dims)), queries, a.value_depth]
        out = tensor.empty([s if d == _DYNAMIC else d for s, d in zip(sizes, result_type.shape, strict=True)], a.f32)
        out = a.tasks(out)
    op.results[0].replace_all_uses_with(out)
    op.erase()
    return True
