"""The registry of ATen op converters: ``_converts`` registers one, :func:`supported_ops` lists
them (docs/frontend-torch.md's table is generated from it)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import fx

if TYPE_CHECKING:
    from graphfuse.frontends.torch.importer import _Importer


Converter = Callable[["_Importer", fx.Node, dict[str, Any]], Any]


@dataclass(frozen=True)
class SupportedOp:
    """One ATen op the importer translates: its name, the graph ops it becomes, and its limits."""

    name: str
    graph: str
    notes: str
    convert: Converter


_REGISTRY: dict[str, SupportedOp] = {}


def _converts(*names: str, graph: str, notes: str = "") -> Callable[[Converter], Converter]:
    """Register ``fn`` as the converter of the ATen ops ``names`` (``aten.add.Tensor``...)."""

    def register(fn: Converter) -> Converter:
        for name in names:
            assert name not in _REGISTRY, name
            _REGISTRY[name] = SupportedOp(name, graph, notes, fn)
        return fn

    return register


def supported_ops() -> list[str]:
    """The ATen op names (``aten.<op>.<overload>``, plus ``getitem``) the importer translates, sorted."""
    return sorted(_REGISTRY)


def supported_ops_markdown() -> str:
    """The table of supported ops that docs/frontend-torch.md embeds (generated, so it cannot drift)."""
    lines = ["| ATen op | graph ops | notes |", "|---|---|---|"]
    for name in supported_ops():
        op = _REGISTRY[name]
        lines.append(f"| `{name}` | {op.graph} | {op.notes} |")
    return "\n".join(lines) + "\n"


def _op_name(target: Any) -> str:
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.add.Tensor
    return getattr(target, "__name__", str(target))
