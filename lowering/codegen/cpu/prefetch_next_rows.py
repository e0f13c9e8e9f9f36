"""prefetch-next-rows: large row loops prefetch the next row of their inputs during the current row's last pass.

The rewrite is :func:`graphfuse.lowering.streaming.prefetch_next_rows`; this pass runs it on the entry's inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.entry import argument_counts, entry_function
from graphfuse.lowering.codegen.cpu.stream_large_stores import min_bytes_or_default
from graphfuse.lowering.streaming import prefetch_next_rows
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["PrefetchNextRows"]


@dataclass(frozen=True)
class PrefetchNextRows(GraphPass):
    name: ClassVar[str] = "prefetch-next-rows"
    summary: ClassVar[str] = ("Prefetch the next row of the entry's inputs in row loops touching at least min-bytes "
                              "(after bufferization)")
    min_bytes: int = option(-1, "the loop-nest footprint from which rows are prefetched (-1: "
                                "GRAPHFUSE_STREAM_MIN_BYTES, else the last-level cache's size)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        min_bytes = min_bytes_or_default(self.min_bytes)
        if min_bytes is None:
            return
        func = entry_function(module, self.name)
        inputs, _ = argument_counts(func)
        prefetch_next_rows(func, list(func.regions[0].blocks[0].arguments)[:inputs], min_bytes)
