"""graph-verify: check element types, ranks, broadcasting and attributes of every graph op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.verifier import verify_operation
from graphfuse.pipelines.pass_base import GraphPass, PassContext, PassFailure
from graphfuse.pipelines.registry import register_pass


@register_pass
@dataclass(frozen=True)
class GraphVerify(GraphPass):
    name: ClassVar[str] = "graph-verify"
    summary: ClassVar[str] = "Check what IRDL cannot: element types, ranks, broadcasting, attribute values"
    statistics: ClassVar[dict[str, str]] = {"num-ops-checked": "Number of graph ops verified"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        diagnostics = verify_operation(module.operation)
        context.count("num-ops-checked", _count_graph_ops(module.operation))
        if diagnostics:
            raise PassFailure(diagnostics)


def _count_graph_ops(root: ir.Operation) -> int:
    count = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count
        count += op.name.startswith("graph.")
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return count
