"""Loop order and cache blocking of matmuls for the CPU, with the transform dialect, before bufferization.

``linalg.matmul`` lowered as it is loops over (i, j, k): the innermost loop
walks a column of B (stride N) into one accumulator, which neither
vectorizes nor reuses cache lines (0.25 GFLOP/s on 1024x1024x4096).  Here
each ``linalg.matmul`` / ``linalg.batch_matmul`` is tiled into 256 x 256
blocks of (j, k) so a block of B stays in L2, generalized, and interchanged
to (i, k, j) order: the innermost loop is C[i, j:j+256] += A[i, k] * B[k,
j:j+256], contiguous and without a loop-carried reduction, which LLVM's loop
vectorizer turns into FMA vector code.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects.transform import interpreter

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = ["BLOCK", "block_contractions"]

BLOCK = 256

_SCRIPT = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} attributes{graph.block} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t, %l:2 = transform.structured.tile_using_for %m tile_sizes [0, B, B]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %g = transform.structured.generalize %t : (!transform.any_op) -> !transform.any_op
      %i = transform.structured.interchange %g iterator_interchange = [0, 2, 1]
        : (!transform.any_op) -> !transform.any_op
    }
    %bmm = transform.structured.match ops{["linalg.batch_matmul"]} attributes{graph.block} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t, %l:2 = transform.structured.tile_using_for %m tile_sizes [0, 0, B, B]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %g = transform.structured.generalize %t : (!transform.any_op) -> !transform.any_op
      %i = transform.structured.interchange %g iterator_interchange = [0, 1, 3, 2]
        : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
}"""


def block_contractions(module: ir.Module) -> None:
    """Tile and reorder every statically shaped ``linalg.matmul`` / ``linalg.batch_matmul`` of ``module``."""
    marked = 0

    def mark(op: ir.Operation) -> ir.WalkResult:
        nonlocal marked
        if op.name in ("linalg.matmul", "linalg.batch_matmul") and all(
            isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).has_static_shape
            for v in op.operands
        ):
            op.attributes["graph.block"] = ir.UnitAttr.get()
            marked += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(mark)
    if not marked:  # dynamic shapes keep the plain loops: blocking would need dynamically sized buffers
        return
    script = ir.Module.parse(_SCRIPT.replace(" B, B]", f" {BLOCK}, {BLOCK}]"), module.context)
    try:
        interpreter.apply_named_sequence(module, script.body.operations[0], script)
    except ir.MLIRError as error:
        raise GraphfuseError(f"blocking matmuls failed: {error}") from None
