"""Converters of torch.distributed's functional collectives (a tensor-parallel model's all-reduces)."""

from __future__ import annotations

from typing import Any

from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.torch.importer import _Importer
from graphfuse.frontends.torch.registry import _converts

_COLLECTIVE_REDUCTIONS = {"sum": "sum", "max": "max", "min": "min"}


def _collective_group(imp: _Importer, node: fx.Node, name: str, size: int | None) -> dict[str, Any]:
    """The graph ops' group attributes of a process group named ``name`` (the default group: "world")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        from torch.distributed.distributed_c10d import _resolve_process_group

        try:
            group = _resolve_process_group(name)
        except (RuntimeError, ValueError):
            group = None
        if group is not None:
            if size is None:
                size = group.size()
            if group == dist.group.WORLD:
                name = "world"
    if size is None:
        raise imp.error(f"FX node '{node.name}': the size of process group '{name}' is unknown: import the model "
                        "where torch.distributed is initialized (torchrun)")
    return {"group": name, "group_size": int(size)}


def _collective_reduction(imp: _Importer, node: fx.Node, op: str) -> str:
    if op.lower() not in _COLLECTIVE_REDUCTIONS:
        raise imp.error(f"FX node '{node.name}': the reduction '{op}' of a collective is not supported (sum, max, "
                        "min)")
    return _COLLECTIVE_REDUCTIONS[op.lower()]


@_converts("_c10d_functional.all_reduce.default", graph="`all_reduce`",
           notes="sum, max, min; the group's size from torch.distributed")
def _all_reduce(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("all_reduce", imp.tensor(a["input"]), reduction=_collective_reduction(imp, node, a["reduce_op"]),
                    **_collective_group(imp, node, a["group_name"], None))


@_converts("_c10d_functional.all_gather_into_tensor.default", graph="`all_gather` (axis 0)")
def _all_gather(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("all_gather", imp.tensor(a["input"]), axis=0,
                    **_collective_group(imp, node, a["group_name"], a["group_size"]))


@_converts("_c10d_functional.reduce_scatter_tensor.default", graph="`reduce_scatter` (axis 0)", notes="sum, max, min")
def _reduce_scatter(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("reduce_scatter", imp.tensor(a["input"]), axis=0,
                    reduction=_collective_reduction(imp, node, a["reduce_op"]),
                    **_collective_group(imp, node, a["group_name"], a["group_size"]))


@_converts("_c10d_functional.wait_tensor.default", graph="none (the operand)",
           notes="a collective's result is ready when its graph op is")
def _wait_tensor(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.tensor(a["tensor"])
