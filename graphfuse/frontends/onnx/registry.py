"""The registry of ONNX op converters: ``_converter`` registers one in :data:`CONVERTERS`, and
:func:`support_table_markdown` documents them (docs/frontend-onnx.md's table)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphfuse.dialect.builder import Tensor

if TYPE_CHECKING:
    from graphfuse.frontends.onnx.importer import _Node


class _NodeError(Exception):
    """Raised by converters; turned into a located GraphfuseError naming the node."""


@dataclass(frozen=True)
class OnnxOp:
    """One claimed ONNX op: its converter, the operand positions that must be constants, and a doc note."""

    op_type: str
    convert: Callable[[_Node], list[Tensor | None]]
    constant_operands: frozenset[int]
    lowering: str


#: Every claimed ONNX op (default domain), by op_type.
CONVERTERS: dict[str, OnnxOp] = {}


def _converter(*op_types: str, lowering: str | Mapping[str, str], constant_operands: Sequence[int] = ()):
    """Register a converter for ``op_types``; ``lowering`` (one text, or one per op type) documents it."""

    def register(fn: Callable[[_Node], list[Tensor | None]]):
        for op_type in op_types:
            text = lowering if isinstance(lowering, str) else lowering[op_type]
            CONVERTERS[op_type] = OnnxOp(op_type, fn, frozenset(constant_operands), text)
        return fn

    return register


def support_table_markdown() -> str:
    """The claimed-op table of docs/frontend-onnx.md, generated from :data:`CONVERTERS`."""
    rows = ["| ONNX op | graph dialect | constant inputs |", "|---|---|---|"]
    for op_type in sorted(CONVERTERS):
        spec = CONVERTERS[op_type]
        constants = ", ".join(f"#{k}" for k in sorted(spec.constant_operands)) or "-"
        rows.append(f"| {op_type} | {spec.lowering} | {constants} |")
    return "\n".join(rows) + "\n"
