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

from graphfuse.lowering.contraction import select_schedules
from graphfuse.lowering.host import chosen_dot_products, dot_product_choice_problem
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["SelectContractionSchedules"]


@dataclass(frozen=True)
class SelectContractionSchedules(GraphPass):
    name: ClassVar[str] = "select-contraction-schedules"
    summary: ClassVar[str] = "Record each contraction's schedule (tiles, packing, tasks) as a graph.schedule attribute"
    threads: int = option(1, "threads the tasks of each schedule are shared among")
    dot_products: str = option("host", "the dot products to compute on: host (the machine's), none, or bf16 "
                               "and int8 joined by '+'")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if self.threads < 1:
            context.fail(f"option 'threads' of pass '{self.name}' must be at least 1, got {self.threads}")
        problem = dot_product_choice_problem(self.name, self.dot_products)
        if problem is not None:
            context.fail(problem)
        select_schedules(module, self.threads, chosen_dot_products(self.dot_products))
