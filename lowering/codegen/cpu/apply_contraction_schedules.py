"""apply-contraction-schedules: run the schedule each op's ``graph.schedule`` attribute names.

``block-contractions`` records a schedule on each op it tiles and applies it at once; this pass applies the
schedules written in its input, so that one schedule of ``lowering/contraction/schedules`` can be run, and
tested, on an op of one's own: ``{sequence = "register_tiles", rows_per_task = 8 : i64, ...}``.  The ops of
one schedule are tiled together, the schedules in the order they first appear.  An op a schedule fused into
its consumer's loops, and a fill or transpose so fused, is erased once nothing reads it; the attribute is
then removed from every op (the tiles carry a copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.contraction.library import SCHEDULE, apply_schedule, loaded, scheduled_ops, sequence_parameters
from graphfuse.lowering.contraction.marks import _erase_unread
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ApplyContractionSchedules"]


@dataclass(frozen=True)
class ApplyContractionSchedules(GraphPass):
    name: ClassVar[str] = "apply-contraction-schedules"
    summary: ClassVar[str] = "Tile each op as the transform-dialect schedule its graph.schedule attribute names"

    def run(self, module: ir.Module, context: PassContext) -> None:
        schedules = scheduled_ops(module)
        with loaded(module.context):
            for schedule, ops in schedules.items():
                _check(schedule, ops[0], context)
            for schedule in schedules:
                try:
                    apply_schedule(module, schedule, "applying the schedule")
                except GraphfuseError as error:
                    context.fail("; ".join(d.message for d in error.diagnostics), schedules[schedule][0].location)
        _erase_unread(module, lambda op: SCHEDULE in op.attributes)
        _erase_unread(module, lambda op: op.name in ("linalg.fill", "linalg.transpose"))

        def clear(op: ir.Operation) -> ir.WalkResult:
            if SCHEDULE in op.attributes:
                del op.attributes[SCHEDULE]
            return ir.WalkResult.ADVANCE

        module.operation.walk(clear)


def _check(schedule: ir.Attribute, op: ir.Operation, context: PassContext) -> None:
    """Fail with ``op``'s location unless ``schedule`` names a sequence of the library and gives each of its
    parameters, and nothing else, as an integer."""
    if not isinstance(schedule, ir.DictAttr) or "sequence" not in schedule \
            or not isinstance(schedule["sequence"], ir.StringAttr):
        context.fail(f"{SCHEDULE} must be a dictionary naming a sequence, got {schedule}", op.location)
    entries = {named.name: named.attr for named in schedule}
    name = ir.StringAttr(entries.pop("sequence")).value
    expected = sequence_parameters(op.context, name)
    if expected is None:
        context.fail(f"{SCHEDULE} names no sequence of the contraction schedules: '{name}'", op.location)
    missing, unknown = sorted(set(expected) - set(entries)), sorted(set(entries) - set(expected))
    if missing or unknown:
        context.fail(f"@{name} takes the parameters {', '.join(expected) or 'none'}; "
                     + "; ".join(part for part in (missing and f"missing {', '.join(missing)}",
                                                   unknown and f"unknown {', '.join(unknown)}") if part),
                     op.location)
    for key, value in entries.items():
        if not isinstance(value, ir.IntegerAttr):
            context.fail(f"parameter '{key}' of @{name} must be an integer, got {value}", op.location)
