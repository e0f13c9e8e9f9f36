"""Converters of the FX graph's own nodes: run-time assertions and tuple items."""

from __future__ import annotations

from typing import Any

from torch import fx

from graphfuse.frontends.torch.importer import _Importer, _Missing
from graphfuse.frontends.torch.registry import _converts


@_converts(
    "aten._assert_tensor_metadata.default",
    graph="none (dropped)",
    notes="export's checks of dtypes and sizes, which the graph's tensor types fix",
)
def _assertion(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> None:
    return None


@_converts("aten._assert_scalar.default", graph="none (dropped)",
           notes="export's checks of data-dependent sizes (`u0 >= 0` after a repeat_interleave by constant "
           "repeats); the imported graph's sizes are computed from the constants")
def _scalar_assertion(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> None:
    return None


@_converts("getitem", graph="none (picks a result)", notes="results of multi-result ops")
def _getitem(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Any:
    value = imp.values[a["self"]]
    if not isinstance(value, list | tuple):
        raise imp.unsupported(node, f"indexing a {type(value).__name__}")
    item = value[a["index"]]
    if isinstance(item, _Missing):
        raise imp.error(f"FX node '{node.name}' uses {item.what}, which the import does not provide")
    return item
