"""MLIR contexts with the graph dialect loaded."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from mlir import ir
from mlir.dialects import irdl

DIALECT_DIR = Path(__file__).resolve().parent
GRAPH_IRDL_PATH = DIALECT_DIR / "graph.irdl.mlir"
#: The emulated NPU target's memory spaces and transfer op (docs/npu.md).
NPU_IRDL_PATH = DIALECT_DIR / "npu.irdl.mlir"


@cache
def graph_irdl_text() -> str:
    return GRAPH_IRDL_PATH.read_text()


def load_graph_dialect(context: ir.Context) -> None:
    """Register the IRDL-defined graph dialect in ``context`` (idempotent).

    Loading an IRDL dialect twice into one context aborts the process, so this
    checks first.
    """
    if context.is_registered_operation("graph.add"):
        return
    with context, ir.Location.unknown():
        definition = ir.Module.parse(graph_irdl_text())
        irdl.load_dialects(definition)


@cache
def _npu_irdl_text() -> str:
    return NPU_IRDL_PATH.read_text()


def load_npu_dialect(context: ir.Context) -> None:
    """Register the IRDL npu dialect in ``context`` (idempotent, for the same reason)."""
    if context.is_registered_operation("npu.dma"):
        return
    with context, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(_npu_irdl_text()))


def make_context(allow_unregistered_dialects: bool = False) -> ir.Context:
    """A fresh context in which graph-dialect (and NPU-lowered) IR parses and verifies."""
    context = ir.Context()
    context.allow_unregistered_dialects = allow_unregistered_dialects
    load_graph_dialect(context)
    load_npu_dialect(context)
    return context
