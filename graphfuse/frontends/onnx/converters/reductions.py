"""Converters of reductions."""

from __future__ import annotations

import numpy as np

from graphfuse.dialect.builder import Tensor
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.frontends.onnx.importer import _axis, _Node
from graphfuse.frontends.onnx.registry import _converter

# The opset from which each reduction takes its axes as an input rather than an attribute.
_AXES_INPUT_SINCE = {"ReduceSum": 13}
_REDUCTIONS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare",
               "ReduceLogSum", "ReduceLogSumExp")


_REDUCTION_LOWERING = {
    "ReduceSum": "`reduce_sum`", "ReduceMean": "`reduce_mean`",
    "ReduceMax": "`reduce_max` (bool: on i8; over an empty axis: a constant -inf / false)",
    "ReduceMin": "`reduce_min` (bool: on i8; over an empty axis: a constant +inf / true)",
    "ReduceL1": "`reduce_sum` of `abs`", "ReduceL2": "`sqrt` of `reduce_sum` of `mul(x, x)`",
    "ReduceSumSquare": "`reduce_sum` of `mul(x, x)`", "ReduceLogSum": "`log` of `reduce_sum`",
    "ReduceLogSumExp": "`log` of `reduce_sum` of `exp`",
}


@_converter(*_REDUCTIONS, constant_operands=(1,),
            lowering={k: v + "; axes from the attribute or the constant input, by opset"
                      for k, v in _REDUCTION_LOWERING.items()})
def _reduce(n: _Node) -> list[Tensor]:
    x = n.input(0)
    rank = len(x.shape)
    op_type = n.node.op_type
    if n.opset >= _AXES_INPUT_SINCE.get(op_type, 18):
        value = n.constant(1, "axes")
        axes = None if value is None else [int(a) for a in np.asarray(value).reshape(-1)]
    else:
        axes = n.ints("axes")
    keep_dims = bool(n.attr("keepdims", 1))
    if not axes:
        if int(n.attr("noop_with_empty_axes", 0)):
            return [n.b.broadcast_to(x, x.shape)]  # reduces nothing: a copy
        axes = list(range(rank))
    axes = sorted({_axis(a, rank, "axis") for a in axes})
    if op_type in ("ReduceMax", "ReduceMin") and any(x.shape[a] == 0 for a in axes):
        # Over an empty axis ONNX gives the reduction's identity; the graph ops reject reducing nothing.
        shape = [1 if k in axes else d for k, d in enumerate(x.shape) if keep_dims or k not in axes]
        dtype = NUMPY_DTYPES[x.dtype]
        if x.dtype == "i1":
            fill = op_type == "ReduceMin"
        elif x.dtype in ("f32", "f16", "bf16"):
            fill = -np.inf if op_type == "ReduceMax" else np.inf
        else:
            fill = np.iinfo(dtype).min if op_type == "ReduceMax" else np.iinfo(dtype).max
        return [n.b.const(np.full(shape, fill, dtype))]
    if op_type in ("ReduceMax", "ReduceMin") and x.dtype == "i1":
        # Max of booleans is "any", min is "all": reduced as i8 (the reductions are numeric).
        reduced = n.b.op("reduce_max" if op_type == "ReduceMax" else "reduce_min", n.b.cast(x, "i8"), axes=axes,
                         keep_dims=keep_dims)
        return [n.b.cast(reduced, "i1")]
    base = {"ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max",
            "ReduceMin": "reduce_min"}.get(op_type)
    if base is not None:
        return [n.b.op(base, x, axes=axes, keep_dims=keep_dims)]
    if op_type == "ReduceL1":
        return [n.b.reduce_sum(n.b.abs(x), axes=axes, keep_dims=keep_dims)]
    if op_type in ("ReduceL2", "ReduceSumSquare"):
        total = n.b.reduce_sum(n.b.mul(x, x), axes=axes, keep_dims=keep_dims)
        if op_type == "ReduceSumSquare":
            return [total]
        if x.dtype in ("i8", "i32", "i64"):  # sqrt of an integer sum, truncated back as ONNX's reference does
            return [n.b.cast(n.b.sqrt(n.b.cast(total, "f32")), x.dtype)]
        return [n.b.sqrt(total)]
    if op_type == "ReduceLogSum":
        return [n.b.log(n.b.reduce_sum(x, axes=axes, keep_dims=keep_dims))]
    # ReduceLogSumExp
    return [n.b.log(n.b.reduce_sum(n.b.exp(x), axes=axes, keep_dims=keep_dims))]
