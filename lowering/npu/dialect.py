"""The npu dialect (dialect/npu.irdl.mlir): memory-space attributes and the explicit transfer op."""

from __future__ import annotations

from mlir import ir

from graphfuse.dialect.context import NPU_IRDL_PATH, load_npu_dialect

__all__ = ["NPU_IRDL_PATH", "is_gm", "load_npu_dialect", "mem_space", "memory_space_of", "with_space"]


def mem_space(kind: str) -> ir.Attribute:
    """``#npu.mem<"kind">`` (the npu dialect must be loaded in the current context)."""
    return ir.Attribute.parse(f'#npu.mem<"{kind}">')


def memory_space_of(t: ir.Type) -> str:
    """"gm" for a memref without memory space (or with ``#npu.mem<"gm">``), else the npu space's name."""
    space = ir.MemRefType(t).memory_space
    if space is None:
        return "gm"
    text = str(space)
    if text.startswith('#npu.mem<"'):
        return text[len('#npu.mem<"'):-2]
    return text


def is_gm(t: ir.Type) -> bool:
    return memory_space_of(t) == "gm"


def with_space(t: ir.Type, kind: str | None) -> ir.Type:
    """The memref type ``t`` in memory space ``kind`` (None: no memory space), same shape and layout."""
    m = ir.MemRefType(t)
    space = None if kind is None else mem_space(kind)
    return ir.MemRefType.get(list(m.shape), m.element_type, m.layout, space)
