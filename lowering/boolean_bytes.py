"""store-booleans-as-bytes: boolean tensors held as bytes, so that no ``memref<...xi1>`` is ever made.

LLVM's memref lowering aborts on stores of ``memref<...xi1>``, and numpy
keeps booleans in bytes anyway: the CPU runtime retypes every boolean tensor
as ``tensor<...xi8>`` holding 0 or 1 before bufferization
(:func:`~graphfuse.lowering.runtime.store_booleans_as_bytes`); this pass does
the same inside a pass pipeline (the emulated NPU's lowering runs it before
bufferizing its kernels, so a mask crosses kernels and GM as bytes, as it
does on an Ascend device).  Values stay ``i1`` inside linalg bodies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import nested_ops
from graphfuse.lowering.runtime import store_booleans_as_bytes
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["StoreBooleansAsBytes"]


@dataclass(frozen=True)
class StoreBooleansAsBytes(GraphPass):
    name: ClassVar[str] = "store-booleans-as-bytes"
    summary: ClassVar[str] = "Retype boolean tensors (i1) as byte tensors (i8 holding 0 or 1) before bufferization"

    def run(self, module: ir.Module, context: PassContext) -> None:
        if any(op.name.startswith("graph.") for op in nested_ops(module)):
            context.fail("store-booleans-as-bytes: lower graph ops to linalg first (graph-to-linalg)")
        try:
            with module.context, ir.Location.unknown():
                store_booleans_as_bytes(module)
        except GraphfuseError as error:
            context.fail(f"store-booleans-as-bytes: {error.diagnostics[0].message}")

