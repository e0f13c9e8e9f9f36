"""apply-contraction-schedules: run the schedule each op's ``graph.schedule`` attribute names.

The application half of ``block-contractions`` (:func:`graphfuse.lowering.contraction.apply_schedules`): the
schedules ``select-contraction-schedules`` recorded run family by family, the products their fusions left
unread are erased, the register tiles vectorized and the marks cleared.  Written by hand, a schedule runs one
sequence of ``lowering/schedules`` on an op of one's own, which is how each is tested:
``{sequence = "register_tiles", rows_per_task = 8 : i64, ...}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.contraction import apply_schedules
from graphfuse.lowering.contraction.application import schedule_problem
from graphfuse.lowering.schedules.library import (
    SCHEDULE,
    loaded,
    parameter_problem,
    schedule_sequence,
    scheduled_ops,
)
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ApplyContractionSchedules"]


@dataclass(frozen=True)
class ApplyContractionSchedules(GraphPass):
    name: ClassVar[str] = "apply-contraction-schedules"
    summary: ClassVar[str] = "Tile each op as the transform-dialect schedule its graph.schedule attribute names"

    def run(self, module: ir.Module, context: PassContext) -> None:
        schedules = scheduled_ops(module)
        with loaded(module.context):  # one parse of the library for the checks and the schedules
            for schedule, ops in schedules.items():
                _check(schedule, ops[0], context)
            # where each sequence is first asked for, read now: the ops are replaced as their schedules run
            located = {schedule_sequence(s): ops[0].location for s, ops in schedules.items()}
            try:
                apply_schedules(module)
            except GraphfuseError as error:
                message = "; ".join(d.message for d in error.diagnostics)
                context.fail(message, next((at for name, at in located.items() if f"@{name}:" in message), None))


def _check(schedule: ir.Attribute, op: ir.Operation, context: PassContext) -> None:
    """Fail with ``op``'s location unless ``schedule`` names a sequence of the library and gives each of its
    parameters, and nothing else, as an integer, and can tile ``op`` (:func:`schedule_problem`)."""
    if not isinstance(schedule, ir.DictAttr) or "sequence" not in schedule \
            or not isinstance(schedule["sequence"], ir.StringAttr):
        context.fail(f"{SCHEDULE} must be a dictionary naming a sequence, got {schedule}", op.location)
    entries = {named.name: named.attr for named in schedule}
    name = ir.StringAttr(entries.pop("sequence")).value
    problem = parameter_problem(op.context, name, entries)
    if problem is not None:
        context.fail(problem, op.location)
    for key, value in entries.items():
        if not isinstance(value, ir.IntegerAttr):
            context.fail(f"parameter '{key}' of @{name} must be an integer, got {value}", op.location)
    problem = schedule_problem(ir.DictAttr(schedule), op)
    if problem is not None:
        context.fail(problem, op.location)

