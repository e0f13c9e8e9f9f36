"""apply-row-schedules and tile-kernel-rows: one pass over each row of a kernel with reductions (softmax,
layer_norm, rms_norm...), and rows of register-sized chunks for them and for large elementwise kernels.

After ``fuse-kernel-loops`` a normalization kernel is still several loop
nests over the whole tensor (max, sum of exp, normalize for softmax), each
streaming the input from memory again.  ``select-row-schedules``
(:mod:`graphfuse.lowering.row_strategy`) records on each result's op (a
*root*) how it is tiled; this module runs that schedule: the root is tiled
by rows (every parallel dim but the innermost to 1) and all its producers
fused into that loop (``transform.structured.fuse``), so each row is read
from memory once and the reductions and elementwise steps run on it while it
is in L1.  The ops inside the loop have static row shapes and are then
vectorized (``@vectorize_rows`` of ``lowering/schedules/rows.mlir``):
reductions become ``vector.reduction``, elementwise bodies vector code, and
each row is then cut into register-sized chunks
(:mod:`graphfuse.lowering.row_chunks`).  1-D kernels are split first, so that
every row is static (``@flat_rows``).

A named contraction in the kernel stays whole, outside the row loops: a
same-type ``tensor.cast`` between it and its users stops the producer fusion
from pulling it into a row loop.  A schedule with ``max_vector`` (rows longer
than ``max-row``: a vocabulary's logits, a long sequence's scores) is tried
on a copy of the kernel and kept when no vector longer than ``max_vector`` is
left, and otherwise tiled without vectors (a whole-row vector would not fit
the register file).

``tile-kernel-rows`` is the two passes in one, with select-row-schedules's options.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import tensor, transform
from mlir.dialects.transform import structured

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation, nested_ops
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.row_chunks import chunk_row_loops
from graphfuse.lowering.row_strategy import (
    ROW_SCHEDULE,
    SelectRowSchedules,
    dynamic_loops,
    row_loops,
    select_row_schedule,
)
from graphfuse.lowering.schedules.library import apply_sequence, include, loaded, run_transforms
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ApplyRowSchedules", "TileKernelRows", "apply_row_schedule"]

#: Named contractions a row-tiled kernel may hold: they stay whole, outside the row loops (see _fence_contractions).
_CONTRACTIONS = frozenset({"linalg.contract", "linalg.matmul", "linalg.batch_matmul"})
_FENCE = "graph.row_fence"
_ROOTS = frozenset({"linalg.generic", "linalg.fill"})
_VECTOR_BITS = (128, 256, 512)


@dataclass(frozen=True)
class _KernelSchedule:
    """The entries of a kernel's row schedules that hold for the whole kernel (every root gives the same)."""

    flat_row: int  # rows of a 1-D kernel; 0: rows of a rank >= 2 kernel
    tasks: bool
    vectorize: bool
    max_vector: int  # 0: keep the vectors whatever their length
    vector_bits: int
    chunk_vectors: int


#: What each kind of schedule entry is written as.
_KINDS = {bool: "a boolean", int: "an integer", list: "an array<i64>"}


def _entry(schedule: ir.DictAttr, name: str, kind: type) -> object:
    """Entry ``name`` of ``schedule`` as ``kind`` (int, bool or a list of ints); TypeError when it is another."""
    attr = schedule[name]
    if kind is bool and isinstance(attr, ir.BoolAttr):
        return ir.BoolAttr(attr).value
    if kind is int and isinstance(attr, ir.IntegerAttr) and not isinstance(attr, ir.BoolAttr):
        return ir.IntegerAttr(attr).value
    if kind is list and isinstance(attr, ir.DenseI64ArrayAttr):
        return list(ir.DenseI64ArrayAttr(attr))
    raise TypeError(f"entry '{name}' must be {_KINDS[kind]}, got {attr}")


def _read_schedule(root: ir.Operation) -> _KernelSchedule:
    """The kernel-wide entries of ``root``'s row schedule, checked against ``root``; GraphfuseError saying what is
    wrong with the schedule for this op."""
    schedule = root.attributes[ROW_SCHEDULE]
    if not isinstance(schedule, ir.DictAttr):
        raise GraphfuseError(f"{ROW_SCHEDULE} must be a dictionary, got {schedule}")
    schedule = ir.DictAttr(schedule)
    flat = "row" in schedule
    required = {"row": int} if flat else {"rows": list, "vectorize": bool}
    required |= {"tasks": bool, "vector_bits": int, "chunk_vectors": int}
    optional = {} if flat else {"max_vector": int}
    entries = {named.name for named in schedule}
    unknown = sorted(entries - set(required) - set(optional))
    missing = sorted(set(required) - entries)
    if unknown or missing:
        raise GraphfuseError(
            f"{ROW_SCHEDULE} of {'a 1-D kernel' if flat else 'rows'} takes {', '.join(required)}"
            + ("" if flat else " and optionally max_vector")
            + "".join(f"; {what} {', '.join(names)}" for what, names in (("missing", missing), ("unknown", unknown))
                      if names))
    try:
        values = {name: _entry(schedule, name, kind) for name, kind in (required | optional).items() if name in entries}
    except TypeError as error:
        raise GraphfuseError(f"{ROW_SCHEDULE}: {error}") from None
    if root.name not in _ROOTS:
        raise GraphfuseError(f"{ROW_SCHEDULE} tiles a linalg.generic or linalg.fill, not {root.name}")
    if values["vector_bits"] not in _VECTOR_BITS or values["chunk_vectors"] < 0:
        raise GraphfuseError(f"{ROW_SCHEDULE}: vector_bits must be 128, 256 or 512 and chunk_vectors >= 0, got "
                             f"{values['vector_bits']} and {values['chunk_vectors']}")
    result = ir.RankedTensorType(root.results[0].type)
    if 0 in result.shape:
        raise GraphfuseError(f"{ROW_SCHEDULE} tiles a result of non-zero shape, not {result}")
    if values.get("max_vector", 1) < 1:
        raise GraphfuseError(f"{ROW_SCHEDULE}: max_vector must be >= 1, got {values['max_vector']}")
    if flat:
        if result.rank != 1 or values["row"] < 1 or not result.has_static_shape:
            raise GraphfuseError(f"{ROW_SCHEDULE} with 'row' tiles a static 1-D result by a positive row, not "
                                 f"{result} by {values['row']}")
    else:
        rows = values["rows"]
        if len(rows) != row_loops(root) or any(size < 0 for size in rows) or not any(rows):
            raise GraphfuseError(f"{ROW_SCHEDULE}: 'rows' needs a size >= 0 for each of the op's {row_loops(root)} "
                                 f"loops, not all 0; got {rows}")
        untiled = sorted(loop for loop in dynamic_loops(root) if rows[loop] != 1)
        if untiled:
            raise GraphfuseError(f"{ROW_SCHEDULE}: a loop of dynamic extent is tiled by 1 (rows of static shape); "
                                 f"loop {untiled[0]} is not, in {rows}")
    return _KernelSchedule(values.get("row", 0), values["tasks"], values.get("vectorize", True),
                           values.get("max_vector", 0), values["vector_bits"], values["chunk_vectors"])


def _fence_contractions(func_op: ir.Operation) -> None:
    """Put a same-type ``tensor.cast`` between each named contraction and its users.

    ``transform.structured.fuse`` pulls every producer of a row into the row
    loop, a contraction included: per row it would be a matrix-vector
    product the runtime cannot block.  The cast is not a tiling interface
    op, so fusion stops there and the contraction stays whole before the
    loop; :func:`_drop_fences` removes the casts after tiling.
    """
    block = func_op.regions[0].blocks[0]
    for op in list(block.operations):
        op = as_operation(op)
        if op.name not in _CONTRACTIONS:
            continue
        result = op.results[0]
        with op.location, ir.InsertionPoint.after(op):
            fence = tensor.CastOp(result.type, result)
        fence.attributes[_FENCE] = ir.UnitAttr.get()
        result.replace_all_uses_except(fence.result, fence.operation)


def _longest_vector(func_op: ir.Operation) -> int:
    """The most elements of any vector value the kernel's ops produce and use (the whole-row constants the chunks
    replaced are left unused, for canonicalization to erase)."""
    longest = 0
    for op in nested_ops(func_op):
        for value in op.results:
            if isinstance(value.type, ir.VectorType) and any(True for _ in value.uses):
                longest = max(longest, math.prod(ir.VectorType(value.type).shape))
    return longest


def _drop_fences(func_op: ir.Operation) -> None:
    for op in nested_ops(func_op):
        if op.name == "tensor.cast" and _FENCE in op.attributes:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


def _widen_forall_destinations(func_op: ir.Operation) -> None:
    """Let a forall over a leading slice of a tensor write into the whole tensor.

    After ``transform.structured.split`` a 1-D kernel's rows are a forall
    over ``extract_slice %d[0] [M]`` whose result is inserted back into ``%d``.
    Bufferization gave the slice a buffer of its own and copied it (a whole
    intermediate); with ``%d`` itself as the forall's destination (its
    parallel_insert_slices keep their offsets) the rows are written in place.
    """
    for insert in [op for op in nested_ops(func_op) if op.name == "tensor.insert_slice"]:
        source, dest = insert.operands[0], insert.operands[1]
        if isinstance(source.owner, ir.Block) or as_operation(source.owner).name != "scf.forall":
            continue
        forall = as_operation(source.owner)
        if len(forall.results) != 1 or len(insert.operands) != 2:
            continue
        init = forall.operands[len(forall.operands) - 1]
        if isinstance(init.owner, ir.Block) or as_operation(init.owner).name != "tensor.extract_slice":
            continue
        slice_op = as_operation(init.owner)
        if slice_op.operands[0] != dest or len(slice_op.operands) != 1 or any(
                o != 0 for o in ir.DenseI64ArrayAttr(insert.attributes["static_offsets"])):
            continue
        if list(ir.DenseI64ArrayAttr(slice_op.attributes["static_offsets"])) != \
                list(ir.DenseI64ArrayAttr(insert.attributes["static_offsets"])):
            continue
        body = forall.regions[0].blocks[0]
        shared = body.arguments[len(body.arguments) - 1]
        shared.set_type(dest.type)
        forall.results[0].set_type(dest.type)
        forall.operands[len(forall.operands) - 1] = dest
        insert.results[0].replace_all_uses_with(forall.results[0])
        insert.erase()
        if not list(slice_op.results[0].uses):
            slice_op.erase()


def _roots(func_op: ir.Operation) -> list[ir.Operation]:
    """The top-level ops of kernel ``func_op`` carrying a row schedule, in the kernel's order."""
    ops = (as_operation(op) for op in func_op.regions[0].blocks[0].operations)
    return [op for op in ops if ROW_SCHEDULE in op.attributes]


def _misplaced_schedule(func_op: ir.Operation) -> ir.Operation | None:
    """An op of ``func_op`` with a row schedule it cannot take: any, outside a kernel; one nested in another op."""
    top = _roots(func_op) if is_kernel(func_op) else []
    return next((op for op in nested_ops(func_op) if ROW_SCHEDULE in op.attributes and all(op != r for r in top)),
                None)


def apply_row_schedule(func_op: ir.Operation, name: str, context: PassContext) -> bool:
    """Run the row schedule recorded on the roots of kernel ``func_op`` (@``name``), then clear it; whether the
    rows were vectorized.  A schedule that cannot tile its op fails the pass at the op."""
    roots = _roots(func_op)
    read = []
    for root in roots:
        try:
            read.append(_read_schedule(root))
        except GraphfuseError as error:
            context.fail(f"apply-row-schedules: {error.diagnostics[0].message}", root.location)
    kernel = read[0]
    for root, other in zip(roots, read, strict=True):
        if other != kernel:
            context.fail("apply-row-schedules: the roots of a kernel take one row schedule but for their 'rows' "
                         f"sizes; @{name}'s differ", root.location)
    location = func_op.location
    try:
        if kernel.flat_row:
            vectorized = _tile_flat(func_op, name, roots, kernel, context)
        elif kernel.max_vector:
            func_op, vectorized = _tile_long_rows(func_op, name, kernel, context)
        else:
            _tile_rows(func_op, name, kernel, kernel.vectorize, context)
            vectorized = kernel.vectorize
    except GraphfuseError as error:
        context.fail(f"apply-row-schedules: {error.diagnostics[0].message}", location)
    for op in nested_ops(func_op):  # the tiled copies of the roots carry the schedule too
        if ROW_SCHEDULE in op.attributes:
            del op.attributes[ROW_SCHEDULE]
    return vectorized


def _tile_rows(func_op: ir.Operation, name: str, kernel: _KernelSchedule, vectorize: bool,
               context: PassContext) -> None:
    """Tile each root by its ``rows`` sizes with its producers fused, the contractions fenced off; vectorize and
    chunk the rows when ``vectorize``."""
    _fence_contractions(func_op)
    failure = f"tiling @{name} by rows"
    groups = list(dict.fromkeys(root.attributes[ROW_SCHEDULE] for root in _roots(func_op)))

    def build(target: ir.Value) -> None:
        any_op = transform.AnyOpType.get()
        # every group matched before any is tiled: a root fused into another's rows leaves a copy carrying its
        # schedule in that loop, which is not a root
        matched = [structured.MatchOp(any_op, target, op_attrs=ir.DictAttr.get({ROW_SCHEDULE: schedule})).result
                   for schedule in groups]
        for schedule, roots in zip(groups, matched, strict=True):  # a fuse per distinct rows sizes (static sizes:
            sizes = list(ir.DenseI64ArrayAttr(ir.DictAttr(schedule)["rows"]))  # a loop result per size not 0)
            foreach = transform.ForeachOp([], [roots])
            with ir.InsertionPoint(foreach.body):
                structured.FuseOp(foreach.bodyTargets[0], tile_sizes=sizes, use_forall=kernel.tasks)
                transform.YieldOp([])
            include("fold_row_destinations", target, failure)
        _merge_fused_copies(target)
        if vectorize:
            include("vectorize_rows", target, failure)

    run_transforms(func_op, f"{failure} failed", build)
    _drop_fences(func_op)
    if vectorize and kernel.chunk_vectors:
        _chunk(func_op, name, kernel, context)


def _merge_fused_copies(kernel: ir.Value) -> None:
    """A script step: CSE over the kernel once every group of its roots is tiled, with producers fused and row
    destinations folded, before the vectorization.

    Tile-and-fuse fuses a producer into the loop once per slice of it that the loop reads: one read by two ops
    of the row (a diamond) is fused twice, and its own producers twice each.  A kernel of 37 ops of a random
    graph became 3,774 linalg ops in its loops, which the vectorization then went through before the CSE at
    the end of ``@vectorize_rows`` left 162.  Merged here, the same code comes out in a third of the time
    (411 -> 155 ms).  Not between two groups: on a kernel of 2-D and 3-D rows the second fusion then took 14 s
    instead of 1.4.
    """
    transform.ApplyCommonSubexpressionEliminationOp(kernel)


def _tile_long_rows(func_op: ir.Operation, name: str, kernel: _KernelSchedule,
                    context: PassContext) -> tuple[ir.Operation, bool]:
    """Rows longer than ``max_vector``: vectorized on a copy of the kernel, kept when the chunks left no vector
    longer than ``max_vector``, else tiled unvectorized.  Returns the kernel left (the copy or ``func_op``) and
    whether it is vectorized."""
    with ir.InsertionPoint(func_op):
        attempt = func_op.clone()
    _tile_rows(attempt, name, kernel, True, context)
    longest = _longest_vector(attempt)
    if longest <= kernel.max_vector:
        func_op.erase()
        return attempt, True
    log.debug(f"apply-row-schedules: @{name}: rows not vectorized: a row body kept a vector of {longest} elements "
              f"(max_vector {kernel.max_vector})")
    attempt.erase()
    _tile_rows(func_op, name, kernel, False, context)
    return func_op, False


def _chunk(func_op: ir.Operation, name: str, kernel: _KernelSchedule, context: PassContext) -> None:
    """Cut the kernel's vectorized rows into register-sized chunks (lowering/row_chunks.py)."""
    prefix = f"apply-row-schedules: @{name}: "
    chunked = chunk_row_loops(func_op, kernel.vector_bits, kernel.chunk_vectors,
                              lambda message: log.debug(prefix + message))
    context.count("num-chunked", chunked)


def _tile_flat(func_op: ir.Operation, name: str, roots: list[ir.Operation], kernel: _KernelSchedule,
               context: PassContext) -> bool:
    """A 1-D kernel as rows of ``row`` elements and one shorter rest, vectorized and chunked."""
    length = ir.RankedTensorType(roots[0].results[0].type).shape[0]
    if any(ir.RankedTensorType(r.results[0].type).shape[0] != length for r in roots):
        context.fail(f"apply-row-schedules: the 1-D results of @{name} differ in length: rows of one length tile "
                     "them all", func_op.location)
    row = kernel.flat_row
    main = length // row * row
    sequence = "flat_row_tasks" if kernel.tasks else "flat_rows"
    failure = f"tiling @{name} by rows"
    schedule = ir.DictAttr.get({ROW_SCHEDULE: roots[0].attributes[ROW_SCHEDULE]})

    def build(target: ir.Value) -> None:
        matched = structured.MatchOp(transform.AnyOpType.get(), target, op_attrs=schedule).result
        include(sequence, matched, failure, row=row, main=main, rest=length - main)
        _merge_fused_copies(target)
        include("vectorize_rows", target, failure)

    run_transforms(func_op, f"{failure} failed in @{sequence}", build)
    _widen_forall_destinations(func_op)
    _chunk(func_op, name, kernel, context)
    log.debug(f"apply-row-schedules: @{name}: 1-D, {main // row} rows of {row} and a rest of {length - main}, "
              "vectorized")
    return True


_STATISTICS = {
    "num-kernels": "Number of kernels tiled by rows",
    "num-vectorized": "Number of tiled kernels whose rows were vectorized",
    "num-chunked": "Number of row loops whose vectorized rows were cut into register-sized chunks",
}


def _apply_all(module: ir.Module, context: PassContext, select: SelectRowSchedules | None) -> None:
    """Run the row schedule of every kernel of ``module``, chosen first by ``select`` when given."""
    with module.context, ir.Location.unknown(), loaded(module.context):  # the library parsed once for the module
        for name, func_op in functions(module).items():
            if not func_op.regions[0].blocks:
                continue
            misplaced = _misplaced_schedule(func_op)
            if misplaced is not None:
                context.fail(f"apply-row-schedules: {ROW_SCHEDULE} is on a result of a kernel (a function of fused "
                             "loops): this op is not one", misplaced.location)
            if not is_kernel(func_op):
                continue
            if select is not None and not select_row_schedule(func_op, name, select):
                continue
            if not _roots(func_op):
                continue
            context.count("num-kernels")
            if apply_row_schedule(func_op, name, context):
                context.count("num-vectorized")
        if context.statistics["num-vectorized"]:  # once for the module: a script run per kernel cost 2-3 ms each
            try:
                apply_sequence(module, "drop_leading_unit_dims", "casting away the unit dims of the rows")
            except GraphfuseError as error:
                context.fail(f"apply-row-schedules: {error.diagnostics[0].message}")


@dataclass(frozen=True)
class ApplyRowSchedules(GraphPass):
    name: ClassVar[str] = "apply-row-schedules"
    summary: ClassVar[str] = (
        "Tile each kernel's results by the graph.row_schedule on them: rows with their producers fused, vectorized "
        "in register-sized chunks")
    statistics: ClassVar[dict[str, str]] = _STATISTICS

    def run(self, module: ir.Module, context: PassContext) -> None:
        _apply_all(module, context, None)


@dataclass(frozen=True)
class TileKernelRows(SelectRowSchedules):
    """select-row-schedules and apply-row-schedules in one pass, with the first's options."""

    name: ClassVar[str] = "tile-kernel-rows"
    summary: ClassVar[str] = (
        "Tile kernels with reductions (and large elementwise ones) by rows, fuse their producers per row, vectorize "
        "the rows in register-sized chunks (select-row-schedules and apply-row-schedules in one)")
    statistics: ClassVar[dict[str, str]] = _STATISTICS

    def run(self, module: ir.Module, context: PassContext) -> None:
        _apply_all(module, context, self)
