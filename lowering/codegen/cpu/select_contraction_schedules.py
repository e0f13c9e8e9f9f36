"""select-contraction-schedules: choose each contraction's schedule and record it as its graph.schedule.

The strategy half of ``block-contractions`` (:func:`graphfuse.lowering.contraction.select_schedules`): other
contractions become named matmuls, batched matmuls are unrolled or shared out by batches, short products
become row-dot parts and B is packed into panels, and each op to tile gets a ``graph.schedule`` attribute
naming a sequence of ``lowering/schedules`` and its sizes.  ``apply-contraction-schedules`` runs
them; between the two, ``--mlir-print-ir-after=select-contraction-schedules`` shows every decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.dot_products import dot_products_option, resolved_dot_products
from graphfuse.lowering.contraction import select_schedules
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["SelectContractionSchedules"]


@dataclass(frozen=True)
class SelectContractionSchedules(GraphPass):
    name: ClassVar[str] = "select-contraction-schedules"
    summary: ClassVar[str] = "Record each contraction's schedule (tiles, packing, tasks) as a graph.schedule attribute"
    threads: int = option(1, "threads the tasks of each schedule are shared among")
    dot_products: str = dot_products_option()

    def run(self, module: ir.Module, context: PassContext) -> None:
        if self.threads < 1:
            context.fail(f"option 'threads' of pass '{self.name}' must be at least 1, got {self.threads}")
        select_schedules(module, self.threads, resolved_dot_products(self, context))
