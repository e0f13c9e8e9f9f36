"""Converters of reductions: sums, means, extremes and their indices, variance."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.torch.converters.shapes import _axis
from graphfuse.frontends.torch.importer import _Importer
from graphfuse.frontends.torch.registry import Converter, _converts


def _dims(dim: Any, rank: int) -> list[int]:
    """Reduced axes: None or [] means all of them (PyTorch's convention for sum/mean/amax)."""
    if dim is None or (isinstance(dim, list | tuple) and len(dim) == 0):
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({_axis(d, rank) for d in dims})


def _reduction(graph_op: str, all_dims: bool = False) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        x = imp.tensor(a["self"], imp.out_dtype(node))
        dims = list(range(len(x.shape))) if all_dims else _dims(a.get("dim"), len(x.shape))
        return imp.emit(graph_op, x, axes=dims, keep_dims=bool(a.get("keepdim", False)))

    return convert


@_converts("aten.any.dim", "aten.any.default", graph="`cast` to i32, `reduce_max`, `not_equal` 0",
           notes="a constant false over an empty dim")
def _any(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"], "i32")
    dims = list(range(len(x.shape))) if a.get("dim") is None else _dims(a["dim"], len(x.shape))
    shape = imp.out_shape(node)
    if any(x.shape[d] == 0 for d in dims) and None not in shape:  # any of nothing is false; reduce_max has no identity
        return imp.const(np.zeros(shape, np.bool_), "i1")
    largest = imp.emit("reduce_max", x, axes=dims, keep_dims=bool(a.get("keepdim", False)))
    return imp.emit("not_equal", largest, imp.const(np.asarray(0), "i32"))


_converts("aten.sum.dim_IntList", "aten.sum.default", graph="`reduce_sum`", notes="integers and bools sum as i64")(
    _reduction("reduce_sum")
)
_converts("aten.mean.dim", "aten.mean.default", graph="`reduce_mean`")(_reduction("reduce_mean"))
_converts("aten.amax.default", graph="`reduce_max`")(_reduction("reduce_max"))
_converts("aten.amin.default", graph="`reduce_min`")(_reduction("reduce_min"))
_converts("aten.max.default", graph="`reduce_max` over all axes")(_reduction("reduce_max", all_dims=True))
_converts("aten.min.default", graph="`reduce_min` over all axes")(_reduction("reduce_min", all_dims=True))


def _arg_extreme(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        x = imp.tensor(a["self"])
        dim, keepdim = a.get("dim"), bool(a.get("keepdim", False))
        if dim is None:  # over all elements, of the tensor flattened
            if None in x.shape:
                raise imp.unsupported(node, "argmax/argmin over all elements of a tensor of dynamic shape")
            flat = imp.emit("reshape", x, (math.prod(x.shape),)) if len(x.shape) != 1 else x
            index = imp.emit(graph_op, flat, axis=0, keep_dims=False)
            return imp.emit("reshape", index, (1,) * len(x.shape) if keepdim else ())
        return imp.emit(graph_op, x, axis=_axis(dim, len(x.shape)), keep_dims=keepdim)

    return convert


_converts("aten.argmax.default", graph="`argmax` (`reshape` for dim=None)",
          notes="first maximum; NaN counts as largest")(_arg_extreme("argmax"))
_converts("aten.argmin.default", graph="`argmin` (`reshape` for dim=None)",
          notes="first minimum; NaN counts as smallest")(_arg_extreme("argmin"))


@_converts(
    "aten.var.correction",
    "aten.var.dim",
    graph="`reduce_mean`, `sub`, `square`, `reduce_sum`, `div`",
    notes="two-pass variance, divided by count - correction",
)
def _var(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    dims = _dims(a.get("dim"), len(x.shape))
    shape = imp.static_shape(x)
    count = math.prod(shape[d] for d in dims)
    if "unbiased" in a:
        correction = 1 if a["unbiased"] else 0
    else:
        correction = 1 if a.get("correction") is None else a["correction"]
    mean = imp.emit("reduce_mean", x, axes=dims, keep_dims=True)
    squares = imp.emit("square", imp.emit("sub", x, mean))
    total = imp.emit("reduce_sum", squares, axes=dims, keep_dims=bool(a.get("keepdim", False)))
    return imp.emit("div", total, imp.const(np.asarray(max(count - correction, 0)), dtype))
