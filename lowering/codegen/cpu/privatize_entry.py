"""privatize-entry: make the entry private while bufferization runs; restore-entry-visibility undoes it.

``drop-equivalent-buffer-results`` leaves public functions alone, and the entry's results must be dropped (each
is equivalent to its output argument after destination-passing style).  The entry's own visibility is kept in
an attribute (:data:`~graphfuse.lowering.codegen.cpu.entry.HIDDEN_VISIBILITY`) for the restoring pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.entry import HIDDEN_VISIBILITY, entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["PrivatizeEntry"]


@dataclass(frozen=True)
class PrivatizeEntry(GraphPass):
    name: ClassVar[str] = "privatize-entry"
    summary: ClassVar[str] = ("Make the entry private until restore-entry-visibility (for "
                              "drop-equivalent-buffer-results)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
        func.attributes[HIDDEN_VISIBILITY] = ir.StringAttr.get("") if visibility is None else visibility
        func.attributes["sym_visibility"] = ir.StringAttr.get("private")
