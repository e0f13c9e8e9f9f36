"""version-large-loop-nests: a loop nest whose footprint is known only at run time streams when the call is large.

The rewrite is :func:`graphfuse.lowering.streaming.version_large_nests`: each loop nest of the entry reading or
writing arguments of dynamic size becomes an ``scf.if`` on its bytes at run time, whose then region (a copy of the
nest) ``stream-large-stores`` and ``prefetch-next-rows`` then treat as a nest of at least min-bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.lowering.codegen.cpu.stream_large_stores import min_bytes_or_default
from graphfuse.lowering.streaming import version_large_nests
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["VersionLargeLoopNests"]


@dataclass(frozen=True)
class VersionLargeLoopNests(GraphPass):
    name: ClassVar[str] = "version-large-loop-nests"
    summary: ClassVar[str] = ("Give each loop nest of the entry touching buffers of dynamic size a copy run when it "
                              "touches at least min-bytes at run time, for the streaming passes (after bufferization)")
    statistics: ClassVar[dict[str, str]] = {"num-versioned": "Number of loop nests given a large version"}
    min_bytes: int = option(-1, "the loop-nest footprint from which the large version runs (-1: "
                                "GRAPHFUSE_STREAM_MIN_BYTES, else the last-level cache's size)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        min_bytes = min_bytes_or_default(self.min_bytes)
        if min_bytes is None:
            return
        func = entry_function(module, self.name)
        with module.context, ir.Location.unknown():
            context.count("num-versioned", version_large_nests(func, min_bytes))
