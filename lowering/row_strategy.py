"""select-row-schedules: choose how each kernel with rows is tiled, and record it as its results' graph.row_schedule.

A kernel with a row reduction (softmax, layer_norm, rms_norm: one input reduced over the innermost dim) has
rows, whose count may be dynamic (tokens: each row is tiled by 1, so it is static) but not their length; with
``elementwise`` so has an elementwise kernel without transposes whose rows hold at least one chunk, and a 1-D
elementwise kernel of at least ``parallel-min-elements`` (16,384) elements, cut into rows of 4096.  Other
elementwise kernels are left to LLVM's loop vectorizer, kernels holding a convolution or a generic contraction
are left alone.  A named contraction (``linalg.matmul``, ``batch_matmul``, ``contract``:
flash attention's two products) stays whole, outside the row loops: the rows it reads are tiled as roots of
their own (attention's softmax, one pass per row between the two products).

Each op computing a result of such a kernel (a *root*) gets the schedule ``apply-row-schedules`` runs:

- ``{rows = array<i64: 1, 1, 0>, tasks = true, vectorize = true, vector_bits = 512 : i64, chunk_vectors = 4 :
  i64}``: the root tiled by those sizes (1 on every parallel loop but the innermost) with its producers fused,
  the rows an ``scf.forall`` of parallel tasks when ``tasks``, vectorized and cut into chunks of
  ``chunk_vectors`` registers of ``vector_bits`` bits when ``vectorize``.  Rows longer than ``max-row`` (a
  vocabulary's logits) are vectorized only when every row body can be cut into chunks: ``max_vector =
  4096 : i64`` asks the application to keep the vectors only if none longer is left.
- ``{row = 4096 : i64, tasks = true, vector_bits = 512 : i64, chunk_vectors = 4 : i64}``: a 1-D result as rows
  of ``row`` elements and one shorter rest, vectorized and chunked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation
from graphfuse.lowering.host import vector_bits
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.parallel import DEFAULT_MIN_ELEMENTS, static_elements
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option

__all__ = ["FLAT_ROW_CHUNKS", "ROW_SCHEDULE", "SelectRowSchedules", "dynamic_loops", "row_loops", "select_row_schedule"]

#: The attribute recording a root's row schedule.
ROW_SCHEDULE = "graph.row_schedule"
_ALLOWED = frozenset({"linalg.generic", "linalg.fill"})
#: Named contractions a row-tiled kernel may hold: they stay whole, outside the row loops.
_CONTRACTIONS = frozenset({"linalg.contract", "linalg.matmul", "linalg.batch_matmul"})
#: Rows of a 1-D elementwise kernel, in chunks (64 chunks of 64 floats at 512 bits: 16 KiB per row, so the rows
#: split evenly over the threads and the one shorter rest is small).
FLAT_ROW_CHUNKS = 64


def row_loops(op: ir.Operation) -> int:
    """How many loops a root ``op`` has (its ``rows`` sizes, one per loop)."""
    if op.name == "linalg.fill":
        return ir.RankedTensorType(op.results[0].type).rank
    return len(_iterators(op))


def _iterators(op: ir.Operation) -> list[str]:
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _row_tiles(op: ir.Operation) -> list[int]:
    """Tile 1 on every parallel loop but the innermost loop; 0 (untiled) on the innermost and reductions."""
    if op.name == "linalg.fill":
        rank = ir.RankedTensorType(op.results[0].type).rank
        return [1] * (rank - 1) + [0]
    iterators = _iterators(op)
    return [1 if it == "parallel" and k < len(iterators) - 1 else 0 for k, it in enumerate(iterators)]


def _innermost_extent(func_op: ir.Operation) -> int:
    """The longest innermost loop of the kernel's generics (the row length once rows are tiled)."""
    extent = 1
    for op in func_op.regions[0].blocks[0].operations:
        op = as_operation(op)
        if op.name != "linalg.generic":
            continue
        loops = len(_iterators(op))
        for value in op.operands:
            t = value.type
            if isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).rank == loops and loops:
                extent = max(extent, ir.RankedTensorType(t).shape[-1])
    return extent


def dynamic_loops(op: ir.Operation) -> set[int]:
    """The loops of linalg ``op`` whose extent is known only at run time (no operand has a static size for it)."""
    if op.name == "linalg.fill":
        return {k for k, size in enumerate(ir.RankedTensorType(op.results[0].type).shape) if size < 0}
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    static: set[int] = set()
    for value, amap in zip(op.operands, maps, strict=True):
        if not isinstance(value.type, ir.RankedTensorType):
            continue
        shape = ir.RankedTensorType(value.type).shape
        for size, expr in zip(shape, amap.results, strict=True):
            if isinstance(expr, ir.AffineDimExpr) and size >= 0:
                static.add(expr.position)
    return set(range(maps[0].n_dims)) - static


def _dynamic_size_reason(op: ir.Operation) -> str | None:
    """Why ``op``'s dynamic sizes keep its kernel from being row-tiled (None: they do not): a row loop is tiled by 1,
    so a dynamic extent there leaves each row static; a dynamic row length or reduction would not be."""
    types = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, ir.RankedTensorType)]
    if all(ir.RankedTensorType(t).has_static_shape for t in types):
        return None
    if op.name in ("tensor.dim", "tensor.empty", "func.return"):  # the rows' destinations and results
        return None
    if op.name not in _ALLOWED:
        return f"it has dynamic shapes in {op.name}"
    if op.name == "linalg.generic":
        iterators = _iterators(op)
        if any(iterators[loop] == "reduction" for loop in dynamic_loops(op)):
            return "a reduction has a dynamic length"
    return None


def _dynamic_row_reason(root: ir.Operation) -> str | None:
    """Why ``root``'s dynamic sizes keep the kernel from being row-tiled (None: they do not): every loop of
    dynamic extent must be one tiled by 1, so that each row the tiling leaves has a static length."""
    tiled = _row_tiles(root)
    if any(not tiled[loop] for loop in dynamic_loops(root)):
        return "its rows have a dynamic length"
    return None


def _has_reduction(func_op: ir.Operation) -> bool:
    """Whether a kernel holds a generic with a reduction loop (row kernels; the others are elementwise)."""
    return any(op.name == "linalg.generic" and "reduction" in _iterators(op) for op in
               (as_operation(o) for o in func_op.regions[0].blocks[0].operations))


def _order_preserving(op: ir.Operation) -> bool:
    """Every indexing map of ``op`` picks loop dims in increasing order (identity or broadcast, no transpose)."""
    for attr in ir.ArrayAttr(op.attributes["indexing_maps"]):
        positions = []
        for expr in ir.AffineMapAttr(attr).value.results:
            expr = expr.maybe_downcast()
            if not isinstance(expr, ir.AffineDimExpr):
                return False
            positions.append(expr.position)
        if positions != sorted(set(positions)):
            return False
    return True


def _elementwise_rows(func_op: ir.Operation, min_row: int, flat_min: int, max_row: int) -> str | None:
    """Why an elementwise kernel is not row-tiled (None: it is): no transposes, and rank >= 2 results with rows
    of at least ``min_row`` or 1-D results of at least ``flat_min`` elements (cut into rows, see
    @flat_rows in lowering/schedules/rows.mlir)."""
    if min_row <= 0:
        return "it has no reduction (LLVM vectorizes elementwise loops)"
    block = func_op.regions[0].blocks[0]
    for op in block.operations:
        op = as_operation(op)
        if op.name == "linalg.generic" and not _order_preserving(op):
            return "it has no reduction and transposes (LLVM vectorizes elementwise loops)"
    ret = block.operations[len(block.operations) - 1]
    ranks = set()
    for value in ret.operands:
        t = value.type
        if not isinstance(t, ir.RankedTensorType) or ir.RankedTensorType(t).rank < 1:
            return "it has no reduction and a scalar result (LLVM vectorizes elementwise loops)"
        ranks.add(ir.RankedTensorType(t).rank)
        if ir.RankedTensorType(t).shape[-1] < 0:
            return "its rows have a dynamic length" if ir.RankedTensorType(t).rank >= 2 else \
                "it has no reduction and a 1-D result of dynamic length"
        if ir.RankedTensorType(t).rank >= 2 and ir.RankedTensorType(t).shape[-1] < min_row:
            return f"it has no reduction and rows shorter than {min_row} (LLVM vectorizes elementwise loops)"
        if ir.RankedTensorType(t).rank >= 2 and ir.RankedTensorType(t).shape[-1] > max_row:
            return f"it has no reduction and rows longer than {max_row} (LLVM vectorizes elementwise loops)"
        if ir.RankedTensorType(t).rank == 1 and ir.RankedTensorType(t).shape[0] < flat_min:
            return f"it has no reduction and a 1-D result below {flat_min} elements (LLVM vectorizes elementwise loops)"
    if len(ranks) > 1 and 1 in ranks:
        return "it has no reduction and 1-D results beside others"
    return None


def _candidate_roots(func_op: ir.Operation, min_elementwise_row: int = 0, flat_min: int = 0,
                     max_row: int = 4096) -> tuple[list[ir.Operation], str | None]:
    """The linalg ops producing the kernel's results, or a reason the kernel is not row-tiled.

    Kernels without a row reduction are tiled too when :func:`_elementwise_rows` accepts them (their rows are
    then cut into register-sized chunks and stored with streaming stores where they are large).
    """
    block = func_op.regions[0].blocks[0]
    has_reduction = False
    contractions: list[ir.Operation] = []
    for op in block.operations:
        op = as_operation(op)
        if op.name in _CONTRACTIONS:
            contractions.append(op)
            continue
        if op.name.startswith("linalg.") and op.name not in _ALLOWED:
            return [], f"it holds {op.name}"
        for value in (*op.operands, *op.results):
            if isinstance(value.type, ir.RankedTensorType) and 0 in ir.RankedTensorType(value.type).shape:
                return [], "it has a zero-size dimension"  # linalg tiling asserts on empty loops
        reason = _dynamic_size_reason(op)
        if reason is not None:
            return [], reason
        if op.name == "linalg.generic" and "reduction" in _iterators(op):
            iterators = _iterators(op)
            if len(op.operands) - len(op.results) != 1:
                return [], "a reduction has several inputs (a contraction: vectorizing it would unroll it)"
            if iterators[-1] != "reduction":
                return [], "a reduction is not over the innermost dim"
            has_reduction = True
    if not has_reduction:
        reason = _elementwise_rows(func_op, min_elementwise_row, flat_min, max_row)
        if reason is not None:
            return [], reason
    ret = block.operations[len(block.operations) - 1]
    roots: list[ir.Operation] = []
    for value in ret.operands:
        owner = value.owner
        reshapes = ("tensor.expand_shape", "tensor.collapse_shape")
        if not isinstance(owner, ir.Block) and as_operation(owner).name in reshapes:
            owner = as_operation(owner).operands[0].owner
        if isinstance(owner, ir.Block) or as_operation(owner).name not in _ALLOWED:
            continue
        owner = as_operation(owner)
        rank = ir.RankedTensorType(owner.results[0].type).rank
        if rank < 1 or (not any(_row_tiles(owner)) and not (rank == 1 and not has_reduction)):
            continue
        if all(r is not owner and r != owner for r in roots):
            roots.append(owner)
    for contraction in contractions:  # the rows a contraction reads (attention's softmax before its second product)
        n_inputs = len(contraction.operands) - len(contraction.results)
        for value in list(contraction.operands)[:n_inputs]:
            owner = value.owner
            if isinstance(owner, ir.Block) or as_operation(owner).name != "linalg.generic":
                continue
            owner = as_operation(owner)
            if not any(_row_tiles(owner)) or any(r == owner for r in roots):
                continue
            roots.append(owner)
    if contractions and all(_static_operands(c) for c in contractions):
        # around contractions only the roots whose rows hold a reduction (the softmax, not a cast of the product):
        # the contraction schedules apply an elementwise epilogue to each block of a static product, not of a
        # product with rows counted at run time
        roots = [r for r in roots if _reads_a_row_reduction(r)]
    if not roots:
        return [], "no result is a linalg op with rows to tile"
    for root in roots:
        reason = _dynamic_row_reason(root)
        if reason is not None:
            return [], reason
    return roots, None


def _static_operands(op: ir.Operation) -> bool:
    """Whether every tensor operand of ``op`` has a static shape."""
    return all(not isinstance(v.type, ir.RankedTensorType) or ir.RankedTensorType(v.type).has_static_shape
               for v in op.operands)


def _reads_a_row_reduction(root: ir.Operation) -> bool:
    """Whether ``root`` or a generic/fill it reads from (transitively, within the kernel) is a reduction."""
    pending, seen = [root], []
    while pending:
        op = pending.pop()
        if any(op == s for s in seen):
            continue
        seen.append(op)
        if op.name == "linalg.generic" and "reduction" in _iterators(op):
            return True
        for value in op.operands:
            owner = value.owner
            if not isinstance(owner, ir.Block) and as_operation(owner).name in _ALLOWED:
                pending.append(as_operation(owner))
    return False


def select_row_schedule(func_op: ir.Operation, name: str, policy: SelectRowSchedules) -> bool:
    """Record the row schedule of kernel ``func_op`` on its roots as ``policy``'s options decide; whether it has one
    (the reason it has none is logged)."""
    bits = policy.vector_bits or vector_bits()
    lanes = bits // 32
    min_row = lanes * policy.chunk_vectors if policy.elementwise and policy.vectorize else 0
    flat_row = min(policy.max_row, FLAT_ROW_CHUNKS * min_row)
    flat_min = max(2 * flat_row, policy.parallel_min_elements) if min_row else 0
    roots, reason = _candidate_roots(func_op, min_row, flat_min, policy.max_row)
    if reason is not None:
        log.debug(f"select-row-schedules: @{name} is not tiled: {reason}")
        return False
    i64 = ir.IntegerType.get_signless(64)
    chunks = {"vector_bits": ir.IntegerAttr.get(i64, bits),
              "chunk_vectors": ir.IntegerAttr.get(i64, policy.chunk_vectors)}
    if not _has_reduction(func_op) and all(ir.RankedTensorType(r.results[0].type).rank == 1 for r in roots):
        length = ir.RankedTensorType(roots[0].results[0].type).shape[0]
        if any(ir.RankedTensorType(r.results[0].type).shape[0] != length for r in roots):
            log.debug(f"select-row-schedules: @{name} is not tiled: its 1-D results differ in length")
            return False
        schedule = ir.DictAttr.get({"row": ir.IntegerAttr.get(i64, flat_row),
                                    "tasks": ir.BoolAttr.get(length >= policy.parallel_min_elements), **chunks})
        for root in roots:
            root.attributes[ROW_SCHEDULE] = schedule
        log.debug(f"select-row-schedules: @{name}: 1-D, rows of {flat_row}")
        return True
    row = _innermost_extent(func_op)
    # a dynamic row count is shared out at run time: the rows are tasks whatever their count
    tasks = all(not ir.RankedTensorType(r.results[0].type).has_static_shape
                or (static_elements(r.results[0]) or 0) >= policy.parallel_min_elements for r in roots)
    trial = policy.vectorize and row > policy.max_row and policy.chunk_vectors > 0
    vectorize = trial or (policy.vectorize and row <= policy.max_row)
    for root in roots:
        entries = {"rows": ir.DenseI64ArrayAttr.get(_row_tiles(root)), "tasks": ir.BoolAttr.get(tasks),
                   "vectorize": ir.BoolAttr.get(vectorize), **chunks}
        if trial:
            entries["max_vector"] = ir.IntegerAttr.get(i64, policy.max_row)
        root.attributes[ROW_SCHEDULE] = ir.DictAttr.get(entries)
    log.debug(f"select-row-schedules: @{name}: {len(roots)} result loop(s) by rows of {row}"
              + (", vectorized" if vectorize else "") + (" if the chunks leave no longer vector" if trial else ""))
    return True


@dataclass(frozen=True)
class SelectRowSchedules(GraphPass):
    name: ClassVar[str] = "select-row-schedules"
    summary: ClassVar[str] = (
        "Record how each kernel with reductions (or large elementwise rows) is tiled by rows, as its results' "
        "graph.row_schedule")
    statistics: ClassVar[dict[str, str]] = {"num-kernels": "Number of kernels given a row schedule"}
    vectorize: bool = option(True, "vectorize the ops inside the row loop")
    max_row: int = option(
        4096, "longest row (elements) vectorized as it is; longer rows are vectorized only when cut into chunks")
    parallel_min_elements: int = option(
        DEFAULT_MIN_ELEMENTS, "kernels with at least this many result elements get a parallel row loop (scf.forall)")
    vector_bits: int = option(0, "vector register width (bits) the row chunks are sized for; 0: the host's")
    chunk_vectors: int = option(
        4, "vector registers per row chunk (independent accumulators); 0 keeps whole-row vectors")
    elementwise: bool = option(
        True, "tile elementwise kernels by rows too: rank >= 2 with rows of one chunk to max-row, 1-D from "
        "parallel-min-elements (needs chunk-vectors)")

    def __post_init__(self) -> None:
        if self.max_row < 1:
            raise OptionError(f"option 'max-row' of pass '{self.name}' must be >= 1, got {self.max_row}")
        if self.vector_bits not in (0, 128, 256, 512):
            raise OptionError(f"option 'vector-bits' of pass '{self.name}' must be 0, 128, 256 or 512, "
                              f"got {self.vector_bits}")
        if self.chunk_vectors < 0:
            raise OptionError(f"option 'chunk-vectors' of pass '{self.name}' must be >= 0, got {self.chunk_vectors}")

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context, ir.Location.unknown():
            for name, func_op in functions(module).items():
                if is_kernel(func_op) and func_op.regions[0].blocks and select_row_schedule(func_op, name, self):
                    context.count("num-kernels")
