"""Streaming (non-temporal) stores for loop nests whose data does not fit the last-level cache.

A normal store first reads the cache line it writes (write-allocate): an
output written once costs two transfers, and it evicts data that is still
needed.  A loop nest whose buffers exceed the last-level cache gets nothing
from caching its output, so its vector stores into the graph's result
buffers become ``vector.store {nontemporal}`` (``vmovntps`` on x86): one
transfer per line.

Non-temporal vector stores must be aligned to their width, so each store's
address alignment is proven from the IR: result buffers are 64-byte aligned
(the runtime allocates them so, and copies through an aligned buffer when a
caller's ``out=`` array is not), and the offset of every store is a sum of
indices times static strides whose power-of-two factors are known
(constants, loop induction variables with known lower bounds and steps).  A
store whose alignment is proven to be at least 16 bytes is streamed with
that alignment (LLVM splits a 64-byte vector stored at a 32-byte boundary
into two 32-byte non-temporal stores); other stores are left alone.

The same large row loops prefetch the next row's inputs during the current
row's last pass (:func:`prefetch_next_rows`).

Runs on the bufferized entry function, while its arguments are still the
inputs, the outputs and the workspace.  ``GRAPHFUSE_STREAM_MIN_BYTES`` sets
the footprint from which loop nests stream and prefetch (bytes; default the
last-level cache's size), ``off`` turns both off.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from graphfuse.dialect.matching import as_operation, nested_ops
from graphfuse.lowering.common import element_bytes

__all__ = [
    "BUFFER_ALIGNMENT", "FOOTPRINT_VERSION", "large_nests", "prefetch_next_rows", "static_bounds",
    "stream_large_stores", "version_large_nests",
]

#: Byte alignment the runtime guarantees for result buffers.
BUFFER_ALIGNMENT = 64
#: Cap on the divisibility tracked for index values (a zero offset is divisible by everything).
_CAP = 1 << 20
_MIN_ALIGNMENT = 16


def _power_of_two(n: int) -> int:
    """The largest power of two dividing ``n`` (capped; every power divides 0)."""
    n = abs(n)
    return _CAP if n == 0 else min(_CAP, n & -n)


def _divisibility(value: ir.Value) -> int:
    """A power of two that surely divides the index ``value`` (1 when nothing is known)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = as_operation(owner.owner)
        if parent.name == "scf.for" and value == owner.arguments[0]:
            return math.gcd(_divisibility(parent.operands[0]), _divisibility(parent.operands[2]))
        if parent.name == "scf.forall":
            number = next(k for k, a in enumerate(owner.arguments) if a == value)
            lower = list(ir.DenseI64ArrayAttr(parent.attributes["staticLowerBound"]))
            steps = list(ir.DenseI64ArrayAttr(parent.attributes["staticStep"]))
            dynamic = ir.ShapedType.get_dynamic_size()
            if number < len(steps) and dynamic not in (lower[number], steps[number]):
                return _power_of_two(math.gcd(lower[number], steps[number]))
        return 1
    op = as_operation(owner)
    if op.name == "arith.constant" and isinstance(value.type, ir.IndexType | ir.IntegerType):
        return _power_of_two(ir.IntegerAttr(op.attributes["value"]).value)
    if op.name == "arith.addi":
        return math.gcd(_divisibility(op.operands[0]), _divisibility(op.operands[1]))
    if op.name == "arith.muli":
        return min(_CAP, _divisibility(op.operands[0]) * _divisibility(op.operands[1]))
    if op.name == "arith.index_cast":
        return _divisibility(op.operands[0])
    return 1


def _strides(t: ir.Type) -> list[int] | None:
    """Static strides of a memref type (None when any is dynamic)."""
    strides, _ = ir.MemRefType(t).get_strides_and_offset()
    if ir.ShapedType.get_dynamic_stride_or_offset() in strides:
        return None
    return list(strides)


def _offsets_divisibility(indices: list[ir.Value], strides: list[int]) -> int:
    result = _CAP
    for index, stride in zip(indices, strides, strict=True):
        result = math.gcd(result, min(_CAP, _divisibility(index) * stride) if stride else _CAP)
    return result


def _root(view: ir.Value) -> tuple[ir.Value | None, int]:
    """The block argument ``view`` is a view of, and a power of two dividing its element offset in it."""
    divisibility = _CAP
    dynamic_mark = ir.ShapedType.get_dynamic_stride_or_offset()
    while True:
        owner = view.owner
        if isinstance(owner, ir.Block):
            loop = as_operation(owner.owner)
            number = next(k for k, a in enumerate(owner.arguments) if a == view)
            if loop.name == "scf.for" and number >= 1:
                # a buffer carried through a loop (bufferized iter_args yield the buffer they were given)
                if as_operation(owner.operations[len(owner.operations) - 1]).operands[number - 1] != view:
                    return None, 1
                view = loop.operands[2 + number]
                continue
            return view, divisibility
        op = as_operation(owner)
        if op.name == "scf.for":  # a loop's result is the buffer its iter_arg carried
            number = next(k for k, r in enumerate(op.results) if r == view)
            body = op.regions[0].blocks[0]
            if as_operation(body.operations[len(body.operations) - 1]).operands[number] != body.arguments[number + 1]:
                return None, 1
            view = op.operands[3 + number]
        elif op.name == "memref.subview":
            source = op.operands[0]
            strides = _strides(source.type)
            static = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
            dynamic = iter(list(op.operands)[1:1 + sum(1 for s in static if s == dynamic_mark)])
            if strides is None:
                return None, 1
            for offset, stride in zip(static, strides, strict=True):
                if offset == dynamic_mark:
                    d = min(_CAP, _divisibility(next(dynamic)) * stride)
                else:
                    d = _power_of_two(offset * stride)
                divisibility = math.gcd(divisibility, d)
            view = source
        elif op.name in {"memref.cast", "memref.collapse_shape", "memref.expand_shape"}:
            view = op.operands[0]
        else:
            return None, 1


def _bytes(t: ir.Type) -> int:
    buffer_type = ir.MemRefType(t)
    if not buffer_type.has_static_shape:
        return 0
    return math.prod(buffer_type.shape) * element_bytes(buffer_type.element_type)


def _nest_roots(nest: ir.Operation) -> list[ir.Value]:
    """The distinct function arguments the loop nest reads or writes."""
    roots: dict[ir.Value, None] = {}
    for op in nested_ops(nest):
        for value in op.operands:
            if isinstance(value.type, ir.MemRefType):
                root, _ = _root(value)
                if root is not None:
                    roots[root] = None
    return list(roots)


def _footprint(nest: ir.Operation) -> int:
    """Bytes of the distinct function arguments of static size the loop nest reads or writes."""
    return sum(_bytes(root.type) for root in _nest_roots(nest))


#: The marker of an ``scf.if`` choosing at run time between a loop nest touching at least the streaming footprint
#: (its then region, which streams and prefetches) and the same nest touching less (its else region).
FOOTPRINT_VERSION = "graphfuse.cpu.footprint_version"


def large_nests(func: ir.Operation, min_bytes: int) -> list[ir.Operation]:
    """The loop nests of ``func``'s body touching at least ``min_bytes``: those whose static footprint says so, and
    the large version of each nest whose footprint is known at run time (:func:`version_large_nests`)."""
    nests = []
    for op in func.regions[0].blocks[0].operations:
        op = as_operation(op)
        if FOOTPRINT_VERSION in op.attributes:
            nests.append(as_operation(op.regions[0].blocks[0].operations[0]))
        elif op.regions and _footprint(op) >= min_bytes:
            nests.append(op)
    return nests


def _run_time_bytes(root: ir.Value) -> ir.Value:
    """The bytes of memref ``root`` as an index value computed where the insertion point is."""
    buffer_type = ir.MemRefType(root.type)
    total = _index(element_bytes(buffer_type.element_type))
    for dim, size in enumerate(buffer_type.shape):
        extent = memref.dim(root, _index(dim)) if size == ir.ShapedType.get_dynamic_size() else _index(size)
        total = arith.muli(total, extent)
    return total


def version_large_nests(func: ir.Operation, min_bytes: int) -> int:
    """Let each loop nest of ``func``'s body whose footprint depends on the call's sizes stream when the call is large.

    A nest reading or writing function arguments of dynamic size (tokens) touches a number of bytes known only
    when it runs.  Such a nest, when its static part stays below ``min_bytes``, becomes an ``scf.if`` (marked
    FOOTPRINT_VERSION) on its bytes at run time: a copy of the nest in the then region, which the streaming
    passes treat as large, the nest itself in the else region.  Returns how many nests were versioned.
    """
    entry = func.regions[0].blocks[0]
    versioned = 0
    for nest in list(entry.operations):
        nest = as_operation(nest)
        if not nest.regions or nest.results or nest.name not in {"scf.for", "scf.forall", "scf.parallel"}:
            continue
        roots = _nest_roots(nest)
        dynamic = [r for r in roots if not ir.MemRefType(r.type).has_static_shape]
        if not dynamic or _footprint(nest) >= min_bytes:
            continue
        if any(not isinstance(r.owner, ir.Block) or r.owner != entry for r in dynamic):
            continue  # a buffer whose size the entry cannot read before the nest
        with nest.location, ir.InsertionPoint(nest):
            total = _index(_footprint(nest))
            for root in dynamic:
                total = arith.addi(total, _run_time_bytes(root))
            large = arith.cmpi(arith.CmpIPredicate.sge, total, _index(min_bytes))
            choice = scf.IfOp(large, [], has_else=True)
        choice.attributes[FOOTPRINT_VERSION] = ir.UnitAttr.get()
        with ir.InsertionPoint(choice.then_block):
            nest.clone()
            scf.YieldOp([])
        with ir.InsertionPoint(choice.else_block):
            scf.YieldOp([])
        nest.move_before(as_operation(choice.else_block.operations[0]))
        versioned += 1
    return versioned


def _streamable(write: ir.Operation) -> bool:
    if "in_bounds" not in write.attributes:
        return False
    if not all(ir.BoolAttr(a).value for a in ir.ArrayAttr(write.attributes["in_bounds"])):
        return False
    sizes = list(ir.DenseI32ArrayAttr(write.attributes["operandSegmentSizes"]))
    if sizes[3]:  # a mask
        return False
    value_type = ir.VectorType(write.operands[0].type)
    if any(d != 1 for d in list(value_type.shape)[:-1]) or value_type.scalable:
        return False
    amap = ir.AffineMapAttr(write.attributes["permutation_map"]).value
    rank = value_type.rank
    return len(amap.results) == rank and amap == ir.AffineMap.get_minor_identity(amap.n_dims, rank)


def _roots_read(ops: list[ir.Operation]) -> list[ir.Value]:
    """The buffers the nest reads (softmax reads back the exp it kept in the output row).

    Streaming evicts the line: a buffer the nest reads again stays cached, with normal stores.
    """
    roots = []
    for op in ops:
        if op.name in {"vector.transfer_read", "memref.load", "vector.load"}:
            source = _root(op.operands[0])[0]
            if source is not None:
                roots.append(source)
    return roots


def stream_large_stores(func: ir.Operation, aligned: list[ir.Value], min_bytes: int) -> int:
    """Make the vector stores into ``aligned`` arguments non-temporal in loop nests touching >= ``min_bytes``.

    Returns how many stores were rewritten.
    """
    aligned_roots = set(aligned)
    rewritten = 0
    for nest in large_nests(func, min_bytes):
        ops = list(nested_ops(nest))
        read = _roots_read(ops)
        for write in ops:
            if write.name != "vector.transfer_write" or len(write.results) or not _streamable(write):
                continue
            buffer = write.operands[1]
            root, divisibility = _root(buffer)
            if root is None or any(root == r for r in read):
                continue
            strides = _strides(buffer.type)
            if root not in aligned_roots or strides is None or strides[-1] != 1:
                continue
            indices = list(write.operands[2:])
            divisibility = math.gcd(divisibility, _offsets_divisibility(indices, strides))
            value_type = ir.VectorType(write.operands[0].type)
            size = element_bytes(value_type.element_type)
            alignment = min(BUFFER_ALIGNMENT, min(_CAP, divisibility * size))
            vector_bytes = value_type.shape[-1] * size
            if alignment < _MIN_ALIGNMENT or vector_bytes % alignment:
                continue
            with write.location, ir.InsertionPoint(write):
                flat = ir.VectorType.get([value_type.shape[-1]], value_type.element_type)
                value = write.operands[0]
                if value_type.rank > 1:
                    value = vector.shape_cast(flat, value)
                store = vector.StoreOp(value, buffer, indices)
                store.attributes["nontemporal"] = ir.BoolAttr.get(True)
                store.attributes["alignment"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), alignment)
            write.erase()
            rewritten += 1
    return rewritten


# --------------------------------------------------------------------------- prefetching the next row

#: Bytes a prefetch brings in (one cache line).
_LINE = 64


def static_bounds(loop: ir.Operation) -> tuple[ir.Value, int, int, int] | None:
    """(induction variable, lower bound, upper bound, step) of a one-dimensional loop with constant bounds."""
    bounds = _row_bounds(loop)
    return bounds if bounds is not None and isinstance(bounds[2], int) else None  # type: ignore[return-value]


def _constant(value: ir.Value) -> int | None:
    """The integer an ``arith.constant`` gives ``value``, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or as_operation(owner).name != "arith.constant":
        return None
    return ir.IntegerAttr(as_operation(owner).attributes["value"]).value


def _row_bounds(loop: ir.Operation) -> tuple[ir.Value, int, int | ir.Value, int] | None:
    """(induction variable, lower bound, upper bound, step) of a one-dimensional loop with a constant lower bound
    and step; the upper bound a constant, or a value when the rows are counted at run time."""
    row = loop.regions[0].blocks[0].arguments[0] if loop.regions else None
    if loop.name == "scf.forall":
        bounds = [list(ir.DenseI64ArrayAttr(loop.attributes[name]))
                  for name in ("staticLowerBound", "staticUpperBound", "staticStep")]
        if any(len(b) != 1 for b in bounds):
            return None
        dynamic = ir.ShapedType.get_dynamic_size()
        (lower,), (upper,), (step,) = bounds
        if dynamic in (lower, step):
            return None
        return row, lower, upper if upper != dynamic else loop.operands[0], step
    if loop.name == "scf.for":
        lower, upper, step = (_constant(v) for v in list(loop.operands)[:3])
        if lower is None or step is None:
            return None
        return row, lower, loop.operands[1] if upper is None else upper, step
    return None


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _pass_work(loop: ir.Operation) -> int:
    """A chunk loop's work on its row: its trip count times the ops of its body (nested ones included)."""
    lower, upper, step = static_bounds(loop)[1:]
    return (upper - lower) // step * sum(1 for _ in nested_ops(loop))


def prefetch_next_rows(func: ir.Operation, inputs: list[ir.Value], min_bytes: int) -> int:
    """Prefetch the next row's inputs while a large row loop works on the current row.

    A row kernel reads its row from memory in its first pass and from L1 in the next ones; during those,
    no demand miss keeps the hardware prefetcher going, and the memory idles (one thread reached 16 GB/s of
    the 35 a triad gets).  In the row body's chunk loop with the most work (trip count times body ops: the
    longest pass, softmax's exp and sum, so the prefetches spread over most of the row's time), each input
    row's line at the same offset in the next row (the loop's induction variable plus its step, the last
    row clamped) is prefetched.  Returns how many row loops got prefetches.
    """
    input_roots = set(inputs)
    done = 0
    for nest in large_nests(func, min_bytes):
        bounds = _row_bounds(nest)
        if bounds is None:
            continue
        row, lower, upper, step = bounds
        body = nest.regions[0].blocks[0]
        rows = [as_operation(op) for op in body.operations]
        slices = [op for op in rows if op.name == "memref.subview" and any(v == row for v in op.operands[1:])
                  and _root(op.operands[0])[0] is not None and any(_root(op.operands[0])[0] == r for r in input_roots)]
        chunk_loops = [op for op in rows if op.name == "scf.for" and static_bounds(op) is not None]
        if not slices or not chunk_loops or (isinstance(upper, int) and upper - lower <= step):
            continue
        loop = max(reversed(chunk_loops), key=_pass_work)
        j, _, _, chunk_step = static_bounds(loop)
        with nest.location, ir.InsertionPoint(loop):
            if isinstance(upper, int):
                last = _index(lower + (upper - lower - 1) // step * step)
            else:  # a row count known at run time: the last row's start, lower + (upper - lower - 1) / step * step
                rows_left = arith.subi(arith.subi(upper, _index(lower)), _index(1))
                last = arith.addi(_index(lower), arith.muli(arith.divui(rows_left, _index(step)), _index(step)))
            following = arith.minsi(arith.addi(row, _index(step)), last)
        with nest.location, ir.InsertionPoint.at_block_begin(loop.regions[0].blocks[0]):
            for view in slices:
                element = ir.MemRefType(view.results[0].type).element_type
                size = element_bytes(element)
                static = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
                dynamic = iter(view.operands[1:])
                offsets = []
                for offset in static:
                    value = next(dynamic) if offset == ir.ShapedType.get_dynamic_stride_or_offset() else _index(offset)
                    offsets.append(following if value == row else value)
                for line in range(max(1, chunk_step * size // _LINE)):
                    shift = arith.addi(j, _index(line * _LINE // size)) if line else j
                    indices = [*offsets[:-1], arith.addi(offsets[-1], shift)]
                    memref.PrefetchOp(view.operands[0], indices, False, 3, True)
        done += 1
    return done
