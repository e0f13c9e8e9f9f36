"""block-contractions: matmuls and batch matmuls as register tiles over packed panels, parallel over blocks of C.

``select-contraction-schedules`` then ``apply-contraction-schedules``, in one pass
(:func:`graphfuse.lowering.contraction.block_contractions`).  The CPU pipeline runs the two, right after
``to-destination-passing-style`` (the tiles of C may then be the caller's output buffer), so that the schedules
chosen can be printed between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.contraction import block_contractions
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["BlockContractions"]


@dataclass(frozen=True)
class BlockContractions(GraphPass):
    name: ClassVar[str] = "block-contractions"
    summary: ClassVar[str] = "Tile matmuls into register blocks over packed panels of B, split over the threads"
    threads: int = option(1, "threads the blocks of C are shared among")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if self.threads < 1:
            context.fail(f"option 'threads' of pass '{self.name}' must be at least 1, got {self.threads}")
        block_contractions(module, self.threads)
