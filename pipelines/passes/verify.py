"""graph-verify: check element types, ranks, broadcasting and attributes of every graph op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.verifier import verify_operation
from graphfuse.pipelines.pass_base import GraphPass, PassContext, PassFailure


@dataclass(frozen=True)
class GraphVerify(GraphPass):
    name: ClassVar[str] = "graph-verify"
    summary: ClassVar[str] = "Check what IRDL cannot: element types, ranks, broadcasting, attribute values"
    statistics: ClassVar[dict[str, str]] = {"num-ops-checked": "Number of graph ops verified"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        diagnostics = verify_operation(module.operation)
        context.count("num-ops-checked", len(graph_op_names(module)))
        if diagnostics:
            raise PassFailure(diagnostics)
