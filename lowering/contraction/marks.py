"""The marker attributes the schedules set on ops, and the clean-up of what the schedules left unread."""


from collections.abc import Callable

from mlir import ir

from graphfuse.dialect.matching import producer
from graphfuse.lowering.contraction.layout import _static_tensor
from graphfuse.lowering.contraction.pairs import COLUMN_SUMS, COMPENSATED_INIT, UNSIGNED_ROWS
from graphfuse.lowering.contraction.sizes import FILTER_LANES, SERIAL
from graphfuse.lowering.schedules.library import SCHEDULE, schedule_sequence


def _mark_static_tiles(module: ir.Module, ops: tuple[str, ...] = ("linalg.matmul", "linalg.generic"),
                       loops: str = "graph.matmul_tiles") -> int:
    """Mark the statically shaped ``ops`` inside the loops marked ``loops`` (the tiled row blocks) for
    vectorization; how many.

    A tile left dynamic would stay a scalar loop; the row split and the peeled tile loops leave none.  An int8
    product's compensated fill of its block of C (COMPENSATED_INIT) is left to LLVM's loop vectorizer, as a
    ``linalg.fill`` is: vectorized whole, a task's block would be one vector of thousands of lanes, unrolled.
    """
    marked = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal marked
        if op.name in ops and all(_static_tensor(v) for v in op.operands) and COMPENSATED_INIT not in op.attributes:
            op.attributes["graph.vectorize"] = ir.UnitAttr.get()
            marked += 1
        return ir.WalkResult.ADVANCE

    def blocks(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("scf.forall", "scf.for") and loops in op.attributes:
            op.walk(visit)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(blocks)
    return marked


def _elementwise_epilogues(matmul: ir.Operation) -> list[ir.Operation]:
    """The statically shaped, all-parallel 2-D generics of the function body that read ``matmul``'s result."""
    found = []
    for use in matmul.results[0].uses:
        user = use.owner
        if user.name != "linalg.generic" or user.parent != matmul.parent or len(user.results) != 1:
            continue
        iterators = [str(t) for t in ir.ArrayAttr(user.attributes["iterator_types"])]
        values = [*user.operands, *user.results]
        if all("parallel" in t for t in iterators) and len(iterators) == 2 and all(_static_tensor(v) for v in values):
            found.append(user)
    return found


def _erase_unread(module: ir.Module, erasable: Callable[[ir.Operation], bool]) -> None:
    """Erase the ops of ``module`` for which ``erasable(op)`` holds and whose results nothing reads.

    Bufferization would still compute them, into buffers of their own.
    """
    unread: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if erasable(op) and not any(True for r in op.results for _ in r.uses):
            unread.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in unread:
        op.erase()


def _erase_fused_products(module: ir.Module) -> None:
    """Erase the products left unread once fused into their epilogue's loops (the ``_with_epilogue``
    schedules): fusion computes each block inside the loops and leaves the whole product where it was."""
    def fused(op: ir.Operation) -> bool:
        return op.name == "linalg.generic" and SCHEDULE in op.attributes \
            and "_with_epilogue" in schedule_sequence(op.attributes[SCHEDULE])

    _erase_unread(module, fused)


def _erase_unused_fills(module: ir.Module) -> None:
    """Erase the fills no op reads any more (C's fill, once each product fills its own part in its row blocks;
    an int8 product's compensated fill likewise, COMPENSATED_INIT).

    A size read from a fill (the tiling of a product with rows counted at run time takes its row count from
    C) is read from the fill's destination instead: the size is the same, and a fill kept alive by its size
    alone would be bufferized as written before the tasks that fill C's parts, a copy of C per call."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "tensor.dim":
            fill = producer(op.operands[0], "linalg.fill")
            if fill is not None:
                op.operands[0] = fill.operands[1]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    _erase_unread(module, lambda op: len(op.results) == 1 and (
        op.name == "linalg.fill" or (op.name == "linalg.generic" and COMPENSATED_INIT in op.attributes)))


def _clear_marks(module: ir.Module) -> None:
    def visit(op: ir.Operation) -> ir.WalkResult:
        for name in ("graph.matmul_tiles", "graph.vectorize", "graph.block", "graph.pack_transposed",
                     "graph.conv_columns", FILTER_LANES, "graph.serial_pack",
                     "graph.serial_pack_transposed", "graph.batch_tasks", "graph.row_dot_tiles", "graph.pack_pairs",
                     "graph.pack_transposed_pairs", "graph.pair_copy", COMPENSATED_INIT, COLUMN_SUMS, UNSIGNED_ROWS,
                     SERIAL, SCHEDULE):
            if name in op.attributes:
                del op.attributes[name]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
