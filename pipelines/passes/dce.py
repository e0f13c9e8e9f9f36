"""graph-dce: erase graph ops (and constants) whose results are unused.

Upstream DCE never touches IRDL ops: the IRDL runtime gives them no memory
effects, so MLIR must assume they have side effects.  Every graph op is pure,
so an op none of whose results is used can go; except the collectives: every
rank must call the same collectives in the same order, and a rank whose
constants let it drop one (a weight shard of zeros) would leave the others
waiting for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.ops.collective import COLLECTIVE_OPS
from graphfuse.pipelines.pass_base import GraphPass, PassContext

_PURE_OTHER_OPS = frozenset({"arith.constant", "tensor.empty"})


def is_pure(op: ir.Operation) -> bool:
    return (op.name.startswith("graph.") and op.name not in COLLECTIVE_OPS) or op.name in _PURE_OTHER_OPS


def erase_dead_ops(block: ir.Block) -> int:
    """Erase dead pure ops of ``block`` (and of blocks nested in its ops); returns how many."""
    erased = 0
    # One backward sweep suffices: users come after their producers, so by the
    # time a producer is visited every dead user has already been erased.
    for op in reversed(list(block.operations)):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                erased += erase_dead_ops(inner)
        if is_pure(op) and all(len(list(result.uses)) == 0 for result in op.results):
            op.erase()
            erased += 1
    return erased


@dataclass(frozen=True)
class GraphDCE(GraphPass):
    name: ClassVar[str] = "graph-dce"
    summary: ClassVar[str] = "Erase graph ops and constants whose results are unused"
    statistics: ClassVar[dict[str, str]] = {"num-erased": "Number of dead operations erased"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        context.count("num-erased", erase_dead_ops(module.body))
