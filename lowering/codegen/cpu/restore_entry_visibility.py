"""restore-entry-visibility: give the entry back the visibility privatize-entry recorded (none: public)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.entry import HIDDEN_VISIBILITY, entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["RestoreEntryVisibility"]


@dataclass(frozen=True)
class RestoreEntryVisibility(GraphPass):
    name: ClassVar[str] = "restore-entry-visibility"
    summary: ClassVar[str] = "Give the entry back the visibility privatize-entry took away"

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        if HIDDEN_VISIBILITY not in func.attributes:
            context.fail(f"{self.name}: the entry was not made private by privatize-entry")
        visibility = func.attributes[HIDDEN_VISIBILITY]
        del func.attributes[HIDDEN_VISIBILITY]
        if ir.StringAttr(visibility).value:
            func.attributes["sym_visibility"] = visibility
        else:
            del func.attributes["sym_visibility"]
