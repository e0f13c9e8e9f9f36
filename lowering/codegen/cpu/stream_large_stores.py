"""stream-large-stores: vector stores into the results of loop nests larger than the cache become non-temporal.

The rewrite is :func:`graphfuse.lowering.streaming.stream_large_stores`; this pass runs it on the entry's output
arguments and records how many stores it streamed (``graphfuse.cpu.streamed_stores``): such code needs 64-byte
aligned result buffers, which the runtime then guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.entry import STREAMED_STORES, argument_counts, entry_function, set_count
from graphfuse.lowering.host import stream_min_bytes
from graphfuse.lowering.streaming import stream_large_stores
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["StreamLargeStores", "min_bytes_or_default"]


def min_bytes_or_default(min_bytes: int) -> int | None:
    """The footprint option of the streaming passes: -1 is GRAPHFUSE_STREAM_MIN_BYTES, else the last-level
    cache's size (None: streaming is off)."""
    return stream_min_bytes() if min_bytes < 0 else min_bytes


@dataclass(frozen=True)
class StreamLargeStores(GraphPass):
    name: ClassVar[str] = "stream-large-stores"
    summary: ClassVar[str] = ("Make the vector stores into the entry's results non-temporal in loop nests touching "
                              "at least min-bytes (after bufferization)")
    min_bytes: int = option(-1, "the loop-nest footprint from which stores stream (-1: GRAPHFUSE_STREAM_MIN_BYTES, "
                                "else the last-level cache's size)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        min_bytes = min_bytes_or_default(self.min_bytes)
        if min_bytes is None:
            return
        func = entry_function(module, self.name)
        inputs, outputs = argument_counts(func)
        arguments = list(func.regions[0].blocks[0].arguments)
        set_count(func, STREAMED_STORES, stream_large_stores(func, arguments[inputs:inputs + outputs], min_bytes))
