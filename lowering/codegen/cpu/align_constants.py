"""align-constants: constant buffers start on a cache line, as the workspace's do."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.lowering.codegen.cpu.buffers import ARENA_ALIGNMENT
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["AlignConstants", "align_constants"]


@dataclass(frozen=True)
class AlignConstants(GraphPass):
    name: ClassVar[str] = "align-constants"
    summary: ClassVar[str] = "Align every memref.global without an alignment to a cache line (after bufferization)"

    def run(self, module: ir.Module, context: PassContext) -> None:
        align_constants(module)


def align_constants(module: ir.Module) -> None:
    """Start every constant buffer on a cache line, as the workspace's buffers do.

    Bufferization leaves ``memref.global`` without an alignment and LLVM then aligns an array of floats to
    16 bytes: half the 32-byte loads from a matmul's constant packed B would cross a cache line.
    """
    i64 = ir.IntegerType.get_signless(64)
    for op in module.body.operations:
        if op.operation.name == "memref.global" and "alignment" not in op.attributes:
            op.attributes["alignment"] = ir.IntegerAttr.get(i64, ARENA_ALIGNMENT)
