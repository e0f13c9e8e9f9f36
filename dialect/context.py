"""MLIR contexts with the graph dialect loaded."""

from __future__ import annotations

import sys
import types
from functools import cache
from pathlib import Path

from mlir import ir
from mlir.dialects import irdl

DIALECT_DIR = Path(__file__).resolve().parent
GRAPH_IRDL_PATH = DIALECT_DIR / "graph.irdl.mlir"
#: The emulated NPU target's memory spaces and transfer op (docs/npu.md).
NPU_IRDL_PATH = DIALECT_DIR / "npu.irdl.mlir"
#: The IRDL-defined dialects (dialect/*.irdl.mlir): they have no Python op classes.
IRDL_DIALECTS = ("graph", "npu")


def register_dialect_modules() -> None:
    """Give each IRDL dialect an empty ``mlir.dialects.<name>`` module.

    Each time the bindings wrap an op (iterating a block, a walk, an operand's
    owner) they import the Python module of its dialect, and they do not
    remember a failed import: every graph op wrapped cost a search of
    sys.path (about 50 us; 90% of the graph pipeline's time on large graphs).
    An empty module is found once and remembered; it registers no op class,
    so ops are wrapped exactly as before.
    """
    for name in IRDL_DIALECTS:
        sys.modules.setdefault(f"mlir.dialects.{name}", types.ModuleType(f"mlir.dialects.{name}"))


# Before any graph op is wrapped (and so before any context exists).
register_dialect_modules()


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
