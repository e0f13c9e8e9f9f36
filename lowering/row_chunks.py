"""Row programs in register-sized chunks: the vectorized body of a row loop, strip-mined.

``tile-kernel-rows`` vectorizes each row as whole-row vectors (``vector<1x1024xf32>``).
LLVM splits such a vector into as many registers as it needs (64 zmm for 1024
floats against 32 in the register file), so every row spilled to the stack.
This module rewrites such a row body into loops over chunks of the row:

- each phase of reductions (those that do not need each other's results:
  softmax's max, then its sum; layer_norm's mean, then its variance) is one
  loop whose accumulators are vectors of the chunk's width, reduced across
  lanes once after the loop (the first chunk initializes them: no neutral
  element needed);
- the row's writes are one loop at the end;
- every chunk recomputes, from the row's reads, the elementwise values it
  needs (the row is in L1 after the first phase reads it from memory);
  values that depend on the row's scalars only (``1 / sqrt(var + eps)``)
  are computed once per row, before the loops.

A chunk is ``unroll`` host vectors (LLVM splits it into that many registers:
independent accumulator chains).  The rest of the row is done in host-vector
chunks and then one narrower vector, all static: no masks and no
shape-specific cases.

Values the same in every chunk are built once per row at each chunk width:
splat constants, broadcasts of scalars and of one-element vectors, transfer reads that broadcast one
element along the row (a [rows, 1] operand) and ``vector.from_elements`` of
one repeated scalar (how a reduced row value broadcast over a short row can
arrive).  Left whole, such a row stayed one vector of the whole row (8
registers for 64 floats, 128 for 1024), and LLVM's code for it grew with
the row.

Row bodies holding anything else than elementwise arith/math ops, transfer
reads and writes at minor-identity maps or broadcasting along the row,
leading-unit extracts and broadcasts, splat ``vector.from_elements`` and
``vector.reduction`` are left as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, scf, tensor, vector

from graphfuse.dialect.matching import as_operation
from graphfuse.lowering.common import element_bytes

__all__ = ["chunk_row_loops"]

_LOOPS = frozenset({"scf.for", "scf.forall"})
#: vector.reduction kind -> the elementwise op combining two partial vectors (float, integer).
_COMBINE = {
    "add": ("arith.addf", "arith.addi"),
    "mul": ("arith.mulf", "arith.muli"),
    "minimumf": ("arith.minimumf", None),
    "maximumf": ("arith.maximumf", None),
    "minnumf": ("arith.minnumf", None),
    "maxnumf": ("arith.maxnumf", None),
    "minsi": (None, "arith.minsi"),
    "maxsi": (None, "arith.maxsi"),
    "minui": (None, "arith.minui"),
    "maxui": (None, "arith.maxui"),
    "and": (None, "arith.andi"),
    "or": (None, "arith.ori"),
    "xor": (None, "arith.xori"),
}
#: Row ops computing a row's written values above which the write loop works on LONG_WRITE_VECTORS registers per
#: chunk instead of a whole chunk (layer norm's normalization is 5 ops, a tanh-gelu about 40).
WIDE_WRITE_MAX_OPS = 16
#: Registers per chunk of a long write computation.  Its chain of dependent instructions (an exp per element)
#: is longer than the core can overlap from one register's work to the next, so two interleaved chains run
#: faster than one (tanh-gelu, AVX2: 20% fewer cycles per element); four ran out of registers (spills).
LONG_WRITE_VECTORS = 2
#: Row ops (after the row's reads) above which a value a reduction computes and a write needs again is kept in
#: a row-sized scratch buffer rather than computed again (softmax's exp is about 40 ops; x - mean is 2).
STASH_MIN_OPS = 12
#: Largest stash (bytes of a row value): it lives on the thread's stack (the runtime puts row scratch buffers of
#: up to 256 KiB there).  Longer rows compute the value again in the write loop.
STASH_MAX_BYTES = 256 << 10


def _vector_shape(t: ir.Type) -> list[int] | None:
    return list(ir.VectorType(t).shape) if isinstance(t, ir.VectorType) else None


def _row_length(t: ir.Type) -> int | None:
    """N if ``t`` is ``vector<1x...x1xN>`` (a whole row), else None."""
    if not isinstance(t, ir.VectorType):
        return None
    known = _ROW_LENGTHS.get(t, _UNKNOWN)  # asked of every value of every row body: once per type
    if known is _UNKNOWN:
        shape = list(t.shape)
        known = None if not shape or any(d != 1 for d in shape[:-1]) or t.scalable else shape[-1]
        _ROW_LENGTHS[t] = known
    return known


#: _row_length's answers for the types of the module chunk_row_loops works on (emptied at each call: a key keeps
#: its context alive)
_ROW_LENGTHS: dict[ir.Type, int | None] = {}
_UNKNOWN = object()


def _chunk_type(t: ir.Type, width: int) -> ir.Type:
    vt = ir.VectorType(t)
    return ir.VectorType.get([*list(vt.shape)[:-1], width], vt.element_type)


def _kind(op: ir.Operation) -> str:
    return str(op.attributes["kind"]).split("<")[-1].rstrip(">")


def _minor_identity(op: ir.Operation, vector_rank: int) -> bool:
    amap = ir.AffineMapAttr(op.attributes["permutation_map"]).value
    return len(amap.results) == vector_rank and amap == ir.AffineMap.get_minor_identity(amap.n_dims, vector_rank)


def _is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.F16Type | ir.BF16Type | ir.F32Type | ir.F64Type)


@dataclass
class _RowBody:
    """One row loop's body and what was found in it."""

    block: ir.Block
    length: int  # N: the row length of its row vectors
    lanes: int  # elements per host vector for its widest element type
    row_values: set = field(default_factory=set)  # values of row-vector type defined in the body


def _lanes(vector_bits: int, element_types: list[ir.Type]) -> int:
    widest = 32
    for t in element_types:
        widest = max(widest, ir.IntegerType(t).width if isinstance(t, ir.IntegerType) else 64
                     if isinstance(t, ir.F64Type) else 32)
    return max(1, vector_bits // widest)


def _analyse(block: ir.Block, vector_bits: int, unroll: int) -> tuple[_RowBody | None, str]:
    """The row body of ``block`` if it is one this module can chunk into chunks of ``unroll`` registers, or the
    reason it is not (none for a row of at most one chunk: left whole before its ops are looked at one by one,
    which took most of the lowering's time on long chains of short rows)."""
    lengths: set[int] = set()
    element_types: list[ir.Type] = []
    rooted = 0  # reductions and writes of rows: what the chunk loops are built for
    for op in block.operations:
        op = as_operation(op)
        if op.name == "arith.constant":
            continue  # splats, possibly used by nested rows of another length
        for value in [*op.operands, *op.results]:
            n = _row_length(value.type)
            if n is not None and n > 1:
                lengths.add(n)
                element_types.append(ir.VectorType(value.type).element_type)
        if op.name in {"vector.reduction", "vector.transfer_write"}:
            rooted += 1
    if not rooted or not lengths:
        return None, ""  # not a vectorized row body: nothing to say
    if len(lengths) != 1:
        return None, f"row vectors of {len(lengths)} lengths"
    (length,) = lengths
    body = _RowBody(block, length, _lanes(vector_bits, element_types))
    if length <= body.lanes * unroll:
        return None, ""  # the whole row is at most one chunk already
    for op in block.operations:
        op = as_operation(op)
        row_results = [r for r in op.results if _row_length(r.type) == length]
        row_operands = [v for v in op.operands if _row_length(v.type) == length]
        if not row_results and not row_operands:
            # scalars and small vectors (a vector<1xf32> of a per-row scalar) stay where they are
            if op.regions and any(_uses_row_value(r, body.row_values) for r in op.regions):
                return None, f"{op.name} has a region using row vectors"
            continue
        if op.regions:
            return None, f"{op.name} with a region works on row vectors"
        for value in row_operands:
            owner = value.owner
            if isinstance(owner, ir.Block):
                return None, "a row vector is a block argument"
            owner = as_operation(owner)
            if owner.block != block and owner.name != "arith.constant":
                return None, f"a row vector defined outside the row loop by {owner.name}"
        reason = _row_op_reason(op, length)
        if reason:
            return None, reason
        body.row_values.update(row_results)
    return body, ""


def _uses_row_value(region: ir.Region, row_values: set) -> bool:
    for block in region.blocks:
        for op in block.operations:
            op = as_operation(op)
            if any(v in row_values for v in op.operands):
                return True
            if any(_uses_row_value(r, row_values) for r in op.regions):
                return True
    return False


def _row_op_reason(op: ir.Operation, length: int) -> str:
    """Why ``op`` (which touches row vectors) cannot be chunked; empty when it can."""
    name = op.name
    if name.startswith(("arith.", "math.")) and name != "arith.constant":
        if all(_row_length(v.type) == length for v in [*op.operands, *op.results] if isinstance(v.type, ir.VectorType)):
            return ""
        return f"{name} mixes row vectors with other vectors"
    if name == "vector.transfer_read":
        rank = len(_vector_shape(op.results[0].type))
        if len(op.operands) != 2 + _index_count(op) or not _in_bounds(op) or not (
                _minor_identity(op, rank) or _broadcast_read(op)):
            return "a transfer_read with a mask, a permutation or out-of-bounds lanes"
        return ""
    if name == "vector.from_elements":
        return "" if _splat_elements(op) else "a vector.from_elements of different elements"
    if name == "vector.transfer_write":
        rank = len(_vector_shape(op.operands[0].type))
        if len(op.operands) != 2 + _index_count(op) or not _minor_identity(op, rank) or not _in_bounds(op):
            return "a transfer_write with a mask, a permutation or out-of-bounds lanes"
        if _row_length(op.operands[0].type) != length:
            return "a transfer_write of a vector that is not a row"
        return ""
    if name == "vector.broadcast":
        source = op.operands[0].type
        if not isinstance(source, ir.VectorType) or _row_length(source) == length:
            return ""
        if math.prod(ir.VectorType(source).shape) == 1:
            return ""  # one element (a row's reduced vector<1xf32>) along the row: a splat
        return "a broadcast of a vector that is not a row"
    if name == "vector.extract":
        if len(op.operands) == 1 and _row_length(op.operands[0].type) == length and \
                _row_length(op.results[0].type) == length:
            return ""
        return "a vector.extract of part of a row"
    if name == "vector.reduction":
        float_combine, int_combine = _COMBINE.get(_kind(op), (None, None))
        element = ir.VectorType(op.operands[0].type).element_type
        if (float_combine if _is_float(element) else int_combine) is None:
            return f"a vector.reduction of kind {_kind(op)}"
        if len(_vector_shape(op.operands[0].type)) != 1:
            return "a vector.reduction of a multi-dim vector"
        return ""
    if name == "arith.constant":
        return "" if ir.DenseElementsAttr(op.attributes["value"]).is_splat else "a non-splat row constant"
    return f"{name} works on row vectors"


def _broadcast_read(op: ir.Operation) -> bool:
    """Whether the transfer_read broadcasts one element along the row (a [R, 1] operand read as a whole row)."""
    results = ir.AffineMapAttr(op.attributes["permutation_map"]).value.results
    return len(results) > 0 and isinstance(results[-1], ir.AffineConstantExpr) and results[-1].value == 0


def _splat_elements(op: ir.Operation) -> bool:
    """Whether the vector.from_elements repeats one scalar (how a broadcast row scalar can end up)."""
    return len(op.operands) > 0 and all(v == op.operands[0] for v in op.operands)


def _index_count(op: ir.Operation) -> int:
    """How many indices a transfer op has (segments: read = base, indices, padding, mask; write = value, base, ...)."""
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return sizes[1] if op.name == "vector.transfer_read" else sizes[2]


def _in_bounds(op: ir.Operation) -> bool:
    if "in_bounds" not in op.attributes:
        return False
    return all(ir.BoolAttr(a).value for a in ir.ArrayAttr(op.attributes["in_bounds"]))


@dataclass(frozen=True)
class _Segment:
    """Chunks of ``width`` elements at ``start``, ``start + width``, ... below ``stop``."""

    start: int
    stop: int
    width: int

    @property
    def count(self) -> int:
        return (self.stop - self.start) // self.width


def _segments(length: int, chunk: int, lanes: int) -> list[_Segment]:
    """The row cut into full chunks, then host vectors, then one narrower vector (each part may be empty)."""
    segments = []
    main = length // chunk * chunk
    if main:
        segments.append(_Segment(0, main, chunk))
    vectors = main + (length - main) // lanes * lanes
    if vectors > main:
        segments.append(_Segment(main, vectors, lanes))
    if length > vectors:
        segments.append(_Segment(vectors, length, length - vectors))
    return segments


class _Chunker:
    """Rewrites one row body into chunk loops (see the module docstring)."""

    def __init__(self, body: _RowBody, chunk: int):
        self.body = body
        self.segments = _segments(body.length, chunk, body.lanes)
        self.write_segments = _segments(body.length, min(chunk, body.lanes * LONG_WRITE_VECTORS), body.lanes)
        self.row_values = body.row_values
        self.uniform: dict[ir.Value, bool] = {}
        #: (value, width) -> the value's chunk computed once per row (depends on the row's scalars only)
        self.hoisted: dict[tuple[ir.Value, int], ir.Value] = {}
        #: (value, width) pairs _hoist has been through, uniform or not
        self.visited: set[tuple[ir.Value, int]] = set()
        self.pending_reductions: list[ir.Operation] = []
        self.pending_writes: list[ir.Operation] = []
        self.replaced: set[ir.Operation] = set()
        self.constants: dict[int, ir.Value] = {}

    def index(self, value: int) -> ir.Value:
        """An index constant at the start of the row body (one per value)."""
        if value not in self.constants:
            with ir.InsertionPoint.at_block_begin(self.body.block), ir.Location.unknown():
                self.constants[value] = arith.ConstantOp(ir.IndexType.get(), value).result
        return self.constants[value]

    def shifted(self, index: ir.Value, offset: ir.Value) -> ir.Value:
        """``index + offset``, folded when ``index`` is the constant 0 (the usual case: rows are extracted slices)."""
        owner = index.owner
        if not isinstance(owner, ir.Block) and as_operation(owner).name == "arith.constant":
            if ir.IntegerAttr(as_operation(owner).attributes["value"]).value == 0:
                return offset
        return arith.addi(index, offset)

    # ------------------------------------------------------------------ classification

    def is_uniform(self, value: ir.Value) -> bool:
        """Whether the row value is the same in every chunk (built from broadcast scalars and splats only)."""
        if value not in self.uniform:
            for v in _post_order(value, self._uniform_inputs, self.uniform.__contains__):
                self.uniform[v] = self._uniform_given_inputs(v)
        return self.uniform[value]

    def _uniform_inputs(self, value: ir.Value) -> list[ir.Value]:
        """The values whose uniformity decides ``value``'s."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return []
        op = as_operation(owner)
        if op.name == "vector.broadcast":
            return [op.operands[0]] if isinstance(op.operands[0].type, ir.VectorType) else []
        if op.name in ("arith.constant", "vector.transfer_read", "vector.from_elements"):
            return []
        return [v for v in op.operands if v in self.row_values or _row_length(v.type) == self.body.length]

    def _uniform_given_inputs(self, value: ir.Value) -> bool:
        """is_uniform of ``value``, that of its :meth:`_uniform_inputs` known."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return False
        op = as_operation(owner)
        if op.name == "arith.constant":
            return True
        if op.name == "vector.broadcast":
            source = op.operands[0]
            return not isinstance(source.type, ir.VectorType) or self.uniform[source] \
                or math.prod(ir.VectorType(source.type).shape) == 1
        if op.name == "vector.transfer_read":
            return _broadcast_read(op)  # reads with an index: the loop's offset moves them
        if op.name == "vector.from_elements":
            return True  # a splat (_row_op_reason accepts no other)
        return all(self.uniform[v] for v in self._uniform_inputs(value))

    # ------------------------------------------------------------------ emission

    def chunk_of(self, value: ir.Value, offset: ir.Value | None, width: int, memo: dict) -> ir.Value:
        """The ``width`` elements of row value ``value`` at ``offset``, built at the current insertion point.

        Uniform values come from :attr:`hoisted` (built once per row at the row level, ``offset`` unused).
        Operands are built before their users, each once (``memo``), walking the row's computation without
        recursion: a chain of thousands of row ops is as deep.
        """
        def built(v: ir.Value) -> bool:
            return not self._is_row(v) or self.is_uniform(v) or v in memo

        def inputs(v: ir.Value) -> list[ir.Value]:
            op = as_operation(v.owner)
            return [] if op.name == "vector.transfer_read" else list(op.operands)

        for v in _post_order(value, inputs, built):
            op = as_operation(v.owner)
            new_type = _chunk_type(v.type, width)
            if op.name == "vector.transfer_read":
                n = _index_count(op)
                indices = list(op.operands[1:1 + n])
                indices[-1] = self.shifted(indices[-1], offset)
                memo[v] = _clone(op, [op.operands[0], *indices, *op.operands[1 + n:]], [new_type])
            else:
                memo[v] = _clone(op, [self._chunk(u, width, memo) for u in op.operands], [new_type])
        return self._chunk(value, width, memo)

    def _is_row(self, value: ir.Value) -> bool:
        return isinstance(value.type, ir.VectorType) and _row_length(value.type) == self.body.length

    def _chunk(self, value: ir.Value, width: int, memo: dict) -> ir.Value:
        """The chunk of a value chunk_of has built (a scalar or small vector of the row is used as it is)."""
        if not self._is_row(value):
            return value
        return self.hoisted[(value, width)] if self.is_uniform(value) else memo[value]

    def hoist(self, values: list[ir.Value], segments: list[_Segment]) -> None:
        """Build, at the current insertion point, every uniform row value reachable from ``values`` at each width."""
        for segment in segments:
            for value in values:
                self._hoist(value, segment.width)

    def _hoist(self, value: ir.Value, width: int) -> None:
        # every value once per width: a row computation reuses values (diamonds), and walking it as a tree
        # took time exponential in its depth (a 100-op chain of sigmoids and products never finished); without
        # recursion, as a chain of thousands of row ops is as deep
        def done(v: ir.Value) -> bool:
            return not self._is_row(v) or (v, width) in self.visited

        for v in _post_order(value, lambda v: list(as_operation(v.owner).operands), done):
            self.visited.add((v, width))
            if not self.is_uniform(v):
                continue
            op = as_operation(v.owner)
            new_type = _chunk_type(v.type, width)
            if op.name == "arith.constant":
                splat = ir.DenseElementsAttr(op.attributes["value"]).get_splat_value()
                result = arith.ConstantOp(new_type, ir.DenseElementsAttr.get_splat(new_type, splat)).result
            elif op.name == "vector.from_elements":
                result = vector.broadcast(new_type, op.operands[0])
            else:
                operands = [self.hoisted.get((u, width), u) for u in op.operands]
                result = _clone(op, operands, [new_type])
            self.hoisted[(v, width)] = result

    def flush_reductions(self, writes: list[ir.Operation] = ()) -> dict[int, tuple[ir.Value, ir.Value]]:
        """One loop per segment over the pending reductions' chunks; their results replace the originals'.

        With the pending ``writes``, a costly row value that a reduction reads and a write's value needs too
        (softmax's exp) is stored into a row-sized scratch tensor (:func:`_scratch_like` the write's
        destination) as the reduction loop computes it; returns {write index: (row value, scratch tensor
        holding it)} for the write loop to read it back.
        """
        reductions, self.pending_reductions = self.pending_reductions, []
        if not reductions:
            return {}
        self.hoist([r.operands[0] for r in reductions], self.segments)
        stashes = self._stash_plan(reductions, writes)
        tensors = [_scratch_like(writes[k].operands[1]) for _, k in stashes]
        partial: list[ir.Value | None] = [r.operands[1] if len(r.operands) > 1 else None for r in reductions]
        for segment in self.segments:
            first = self.index(segment.start)
            memo: dict = {}
            accumulators = [self.chunk_of(r.operands[0], first, segment.width, memo) for r in reductions]
            tensors = [self._write_chunk(writes[k], dest, memo[row], first)
                       for (row, k), dest in zip(stashes, tensors, strict=True)]
            if segment.count > 1:
                start, stop, step = segment.start + segment.width, segment.stop, segment.width
                loop = scf.ForOp(self.index(start), self.index(stop), self.index(step), accumulators + tensors)
                with ir.InsertionPoint(loop.body):
                    memo = {}
                    offset = loop.induction_variable
                    carried = list(loop.inner_iter_args)
                    chunks = [self.chunk_of(r.operands[0], offset, segment.width, memo) for r in reductions]
                    combined = [_combine(r, acc, c) for r, acc, c in zip(
                        reductions, carried[:len(reductions)], chunks, strict=True)]
                    stored = [self._write_chunk(writes[k], dest, memo[row], offset)
                              for (row, k), dest in zip(stashes, carried[len(reductions):], strict=True)]
                    scf.YieldOp(combined + stored)
                accumulators = list(loop.results)[:len(reductions)]
                tensors = list(loop.results)[len(reductions):]
            for k, (r, acc) in enumerate(zip(reductions, accumulators, strict=True)):
                partial[k] = _reduce(r, acc, partial[k])
        for r, value in zip(reductions, partial, strict=True):
            r.results[0].replace_all_uses_with(value)
            self.replaced.add(r)
        return {k: (row, dest) for (row, k), dest in zip(stashes, tensors, strict=True)}

    def _stash_plan(self, reductions: list[ir.Operation], writes: list[ir.Operation]) -> list[tuple[ir.Value, int]]:
        """(row value, write index): costly values the reductions compute that a write's value needs again."""
        plan: list[tuple[ir.Value, int]] = []
        for r in reductions:
            row = r.operands[0]
            if not isinstance(row.owner, ir.Block) and as_operation(row.owner).name == "vector.extract":
                row = as_operation(row.owner).operands[0]
            if row not in self.row_values or self.is_uniform(row) or self._cone_size(row) < STASH_MIN_OPS:
                continue
            if _bytes(row.type) > STASH_MAX_BYTES:
                continue
            for k, w in enumerate(writes):
                if any(k == used for _, used in plan) or w.operands[0].type != row.type or not w.results:
                    continue
                if self._in_cone(row, w.operands[0]):
                    plan.append((row, k))
                    break
        return plan

    def _cone_size(self, value: ir.Value, leaves: set | frozenset = frozenset()) -> int:
        """How many row ops compute ``value`` from the row's reads or ``leaves`` (what each chunk repeats)."""
        seen: set = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen or v in leaves or v not in self.row_values or self.is_uniform(v):
                continue
            seen.add(v)
            stack.extend(as_operation(v.owner).operands)
        return len(seen)

    def _in_cone(self, value: ir.Value, root: ir.Value) -> bool:
        seen: set = set()
        stack = [root]
        while stack:
            v = stack.pop()
            if v == value:
                return True
            if v in seen or v not in self.row_values:
                continue
            seen.add(v)
            stack.extend(as_operation(v.owner).operands)
        return False

    def flush_writes(self) -> None:
        """One loop per segment over the pending writes' chunks; their tensors replace the originals'."""
        writes, self.pending_writes = self.pending_writes, []
        if not writes:
            return
        stashed = self.flush_reductions(writes)
        # A long computation (an exp per element) at a whole chunk's registers at once runs out of registers:
        # then LONG_WRITE_VECTORS registers per chunk.
        kept = {row for row, _ in stashed.values()}
        cost = sum(self._cone_size(w.operands[0], kept) for w in writes)
        segments = self.write_segments if cost > WIDE_WRITE_MAX_OPS else self.segments
        self.hoist([w.operands[0] for w in writes], segments)
        tensors = [w.operands[1] for w in writes]
        for segment in segments:
            if segment.count > 1:
                start, stop, step = self.index(segment.start), self.index(segment.stop), self.index(segment.width)
                loop = scf.ForOp(start, stop, step, tensors)
                with ir.InsertionPoint(loop.body):
                    scf.YieldOp(self._write_chunks(writes, loop.inner_iter_args, loop.induction_variable,
                                                   segment.width, stashed))
                tensors = list(loop.results)
            else:
                tensors = self._write_chunks(writes, tensors, self.index(segment.start), segment.width, stashed)
        for w, tensor_value in zip(writes, tensors, strict=True):
            if w.results:
                w.results[0].replace_all_uses_with(tensor_value)
            self.replaced.add(w)

    def _write_chunks(self, writes: list[ir.Operation], tensors: list, offset: ir.Value, width: int,
                      stashed: dict[int, tuple[ir.Value, ir.Value]]) -> list:
        memo: dict = {}
        for k, (row, scratch) in stashed.items():
            memo[row] = self._read_chunk(writes[k], scratch, row, offset, width)
        written = []
        for w, dest in zip(writes, tensors, strict=True):
            value = self.chunk_of(w.operands[0], offset, width, memo)
            written.append(self._write_chunk(w, dest, value, offset) if w.results else dest)
        return written

    def _write_chunk(self, write: ir.Operation, dest: ir.Value, value: ir.Value, offset: ir.Value) -> ir.Value:
        """``write`` of a chunk ``value`` into ``dest`` at ``offset`` along the row; the new tensor."""
        n = _index_count(write)
        indices = list(write.operands[2:2 + n])
        indices[-1] = self.shifted(indices[-1], offset)
        return _clone(write, [value, dest, *indices, *write.operands[2 + n:]], [r.type for r in write.results])

    def _read_chunk(self, write: ir.Operation, source: ir.Value, row: ir.Value, offset: ir.Value,
                    width: int) -> ir.Value:
        """The chunk of ``row`` that :meth:`_write_chunk` stored into ``source`` (same indices and map)."""
        n = _index_count(write)
        indices = list(write.operands[2:2 + n])
        indices[-1] = self.shifted(indices[-1], offset)
        element = ir.VectorType(row.type).element_type
        zero = ir.FloatAttr.get(element, 0.0) if _is_float(element) else ir.IntegerAttr.get(element, 0)
        padding = arith.ConstantOp(element, zero).result
        attributes = {
            "in_bounds": write.attributes["in_bounds"],
            "permutation_map": write.attributes["permutation_map"],
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, n, 1, 0]),
        }
        return ir.Operation.create("vector.transfer_read", results=[_chunk_type(row.type, width)],
                                   operands=[source, *indices, padding], attributes=attributes).results[0]

    def depends_on_pending(self, value: ir.Value) -> bool:
        """Whether row value ``value`` reads a result of a pending reduction (so it needs the flush first)."""
        pending = {r.results[0] for r in self.pending_reductions}
        seen: set = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in pending:
                return True
            if v in seen or isinstance(v.owner, ir.Block):
                continue
            seen.add(v)
            op = as_operation(v.owner)
            if v in self.row_values:
                stack.extend(op.operands)
        return False

    def run(self) -> None:
        ops = [as_operation(op) for op in self.body.block.operations]
        for op in ops:
            with ir.InsertionPoint(op), op.location:
                if op.name == "vector.reduction" and _row_length(op.operands[0].type) == self.body.length:
                    if self.depends_on_pending(op.operands[0]):
                        self.flush_reductions()
                    self.pending_reductions.append(op)
                    continue
                if op.name == "vector.transfer_write" and _row_length(op.operands[0].type) == self.body.length:
                    self.pending_writes.append(op)  # flush_writes flushes the reductions it needs first
                    continue
                if any(v in self.row_values for v in op.results):
                    continue  # built lazily, chunk by chunk
                used = set(op.operands) | _region_operands(op)
                if any(r.results[0] in used for r in self.pending_reductions):
                    self.flush_reductions()
                if any(w.results and w.results[0] in used for w in self.pending_writes):
                    self.flush_writes()
                if op is ops[-1] or op == ops[-1]:  # the terminator
                    self.flush_writes()
                    self.flush_reductions()
        self._erase_dead_row_ops(ops)

    def _erase_dead_row_ops(self, ops: list[ir.Operation]) -> None:
        for op in reversed(ops):
            if op in self.replaced or any(v in self.row_values for v in op.results):
                if all(not list(r.uses) for r in op.results):
                    op.erase()


def _post_order(root: ir.Value, inputs: Callable[[ir.Value], list[ir.Value]],
                done: Callable[[ir.Value], bool]) -> Iterator[ir.Value]:
    """The values ``root`` depends on through ``inputs`` and ``root`` itself, each after its inputs and once, in
    the order a recursive walk would give them; values ``done`` says are done are neither given nor walked."""
    stack: list[tuple[ir.Value, bool]] = [(root, False)]
    seen: set = set()
    while stack:
        value, expanded = stack.pop()
        if expanded:
            yield value
            continue
        if value in seen or done(value):
            continue
        seen.add(value)
        stack.append((value, True))
        stack.extend((v, False) for v in reversed(inputs(value)))


def _region_operands(op: ir.Operation) -> set:
    found = set()
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_operation(inner)
                found.update(inner.operands)
                found |= _region_operands(inner)
    return found


def _clone(op: ir.Operation, operands: list, result_types: list) -> ir.Value | None:
    attributes = {name: op.attributes[name] for name in op.attributes}
    new = ir.Operation.create(op.name, results=result_types, operands=operands, attributes=attributes)
    return new.results[0] if result_types else None


def _combine(reduction: ir.Operation, a: ir.Value, b: ir.Value) -> ir.Value:
    element = ir.VectorType(a.type).element_type
    float_op, int_op = _COMBINE[_kind(reduction)]
    name = float_op if _is_float(element) else int_op
    attributes = {}
    if _is_float(element) and "fastmath" in reduction.attributes:
        attributes["fastmath"] = reduction.attributes["fastmath"]
    return ir.Operation.create(name, results=[a.type], operands=[a, b], attributes=attributes).results[0]


def _reduce(reduction: ir.Operation, vector: ir.Value, accumulator: ir.Value | None) -> ir.Value:
    """``vector.reduction`` of ``vector`` (1-D after dropping unit dims) into ``accumulator``."""
    shape = _vector_shape(vector.type)
    if len(shape) > 1:
        flat = ir.VectorType.get([shape[-1]], ir.VectorType(vector.type).element_type)
        vector = ir.Operation.create("vector.shape_cast", results=[flat], operands=[vector]).results[0]
    attributes = {name: reduction.attributes[name] for name in reduction.attributes}
    operands = [vector] if accumulator is None else [vector, accumulator]
    return ir.Operation.create("vector.reduction", results=[reduction.results[0].type], operands=operands,
                               attributes=attributes).results[0]


def _bytes(vector_type: ir.Type) -> int:
    t = ir.VectorType(vector_type)
    return math.prod(t.shape) * element_bytes(t.element_type)


def _scratch_like(destination: ir.Value) -> ir.Value:
    """A row-sized tensor for a stashed row value (bufferized to a stack buffer of the row loop's body).

    Not the write's destination: the output row would then be read back, so its stores could not bypass the
    cache (streaming stores), and every output line would first be read from memory to be written.
    """
    t = ir.RankedTensorType(destination.type)
    return tensor.EmptyOp(list(t.shape), t.element_type).result


def chunk_row_loops(root: ir.Operation, vector_bits: int, unroll: int,
                    log: Callable[[str], None] = lambda _: None) -> int:
    """Chunk every vectorized row loop body under ``root``; returns how many were rewritten."""
    _ROW_LENGTHS.clear()
    bodies = [root.regions[0].blocks[0]] if root.name == "func.func" and root.regions[0].blocks else []
    for op in _walk(root):  # the function's own block holds a row too: a 1-D kernel's rest (tile-kernel-rows)
        if op.name in _LOOPS:
            bodies.append(op.regions[0].blocks[0])
    rewritten = 0
    for block in bodies:
        body, reason = _analyse(block, vector_bits, unroll)
        if body is None:
            if reason:
                log(f"row loop left whole: {reason}")
            continue
        _Chunker(body, body.lanes * unroll).run()
        rewritten += 1
    return rewritten


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_operation(inner)
                yield inner
                yield from _walk(inner)
