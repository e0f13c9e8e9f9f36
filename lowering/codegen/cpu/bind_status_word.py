"""bind-status-word: the run-time checks' status word becomes the entry's last workspace argument.

The logic is :func:`graphfuse.lowering.run_checks.bind_status_word`; this pass records what the runtime needs of
it on the entry: the word's buffer is appended to ``graphfuse.cpu.workspace`` and the check sites are
``graphfuse.cpu.checks`` (each as its failure store carried it).  It runs after ``hoist-allocations``: the word
outlives the call, so no buffer of the arena may share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.entry import CHECKS, add_workspace, entry_function
from graphfuse.lowering.run_checks import bind_status_word, site_attribute
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["BindStatusWord"]


@dataclass(frozen=True)
class BindStatusWord(GraphPass):
    name: ClassVar[str] = "bind-status-word"
    summary: ClassVar[str] = ("Make the run-time checks' status word the entry's last workspace argument (after "
                              "hoist-allocations)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        func = entry_function(module, self.name)
        sites = bind_status_word(module, func)
        if sites:
            block = func.regions[0].blocks[0]
            add_workspace(func, [block.arguments[len(block.arguments) - 1].type])
            func.attributes[CHECKS] = ir.ArrayAttr.get([site_attribute(site) for site in sites])
