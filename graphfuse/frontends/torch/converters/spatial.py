"""Converters of pooling, padding and resizing."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.dialect.ops.shape import PAD_MODES
from graphfuse.frontends.torch.converters.nn import _pair
from graphfuse.frontends.torch.importer import _Importer, _Missing
from graphfuse.frontends.torch.registry import _converts, _op_name


def _pool_args(a: dict[str, Any]) -> tuple[list[int], list[int], list[int]]:
    kernel = _pair(a["kernel_size"])
    strides = _pair(a["stride"]) if a["stride"] else kernel
    ph, pw = _pair(a["padding"])
    return kernel, strides, [ph, pw, ph, pw]


def _ceil_pads(
    imp: _Importer, node: fx.Node, x: Tensor, kernel: list[int], strides: list[int], pads: list[int], index: int | None
) -> list[int]:
    """Pads for ceil_mode: extra bottom/right cells until floor division gives PyTorch's output size."""
    out = imp.out_shape(node, index)
    shape = imp.static_shape(x)
    pads = list(pads)
    for axis, (size, want) in enumerate(zip(shape[-2:], out[-2:], strict=True)):
        while (size + pads[axis] + pads[axis + 2] - kernel[axis]) // strides[axis] + 1 < want:
            pads[axis + 2] += 1
    return pads


def _max_pool(imp: _Importer, node: fx.Node, a: dict[str, Any], index: int | None) -> Tensor:
    x = imp.tensor(a["self"])
    kernel, strides, pads = _pool_args(a)
    if any(d != 1 for d in _pair(a["dilation"])):
        raise imp.unsupported(node, "dilated max pooling")
    if a["ceil_mode"]:
        pads = _ceil_pads(imp, node, x, kernel, strides, pads, index)
    unbatched = len(x.shape) == 3
    if unbatched:
        x = imp.emit("reshape", x, (1, *x.shape))
    y = imp.emit("max_pool2d", x, kernel=kernel, strides=strides, pads=pads)
    return imp.emit("reshape", y, y.shape[1:]) if unbatched else y


@_converts("aten.max_pool2d.default", graph="`max_pool2d`", notes="no dilation; ceil_mode by extra padding")
def _max_pool2d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _max_pool(imp, node, a, None)


@_converts("aten.max_pool2d_with_indices.default", graph="`max_pool2d`", notes="result 0 only (no indices)")
def _max_pool2d_with_indices(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    return (_max_pool(imp, node, a, 0), _Missing("max_pool2d's indices"))


@_converts(
    "aten.avg_pool2d.default",
    graph="`avg_pool2d`",
    notes="count_include_pad; no divisor_override; ceil_mode only where it keeps the size",
)
def _avg_pool2d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    kernel, strides, pads = _pool_args(a)
    if a["divisor_override"] is not None:
        raise imp.unsupported(node, "divisor_override")
    if a["ceil_mode"] and _ceil_pads(imp, node, x, kernel, strides, pads, None) != pads:
        raise imp.unsupported(node, "ceil_mode that adds a partial window")
    unbatched = len(x.shape) == 3
    if unbatched:
        x = imp.emit("reshape", x, (1, *x.shape))
    y = imp.emit(
        "avg_pool2d", x, kernel=kernel, strides=strides, pads=pads, count_include_pad=bool(a["count_include_pad"])
    )
    return imp.emit("reshape", y, y.shape[1:]) if unbatched else y


@_converts(
    "aten.adaptive_avg_pool2d.default",
    "aten._adaptive_avg_pool2d.default",
    graph="`reduce_mean` (global pool) or `avg_pool2d`",
    notes="output size dividing the input size",
)
def _adaptive_avg_pool2d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    rank = len(x.shape)
    height, width = imp.static_shape(x)[-2:]
    out_h, out_w = imp.out_shape(node)[-2:]
    if (out_h, out_w) == (1, 1):
        return imp.emit("reduce_mean", x, axes=[rank - 2, rank - 1], keep_dims=True)
    if height % out_h or width % out_w:
        raise imp.unsupported(node, f"output size {out_h}x{out_w} that does not divide {height}x{width}")
    kernel = [height // out_h, width // out_w]
    if rank == 3:
        x = imp.emit("reshape", x, (1, *x.shape))
    y = imp.emit("avg_pool2d", x, kernel=kernel, strides=kernel)
    return imp.emit("reshape", y, y.shape[1:]) if rank == 3 else y


@_converts("aten.adaptive_avg_pool1d.default", graph="`reduce_mean` (`reshape` first for an output size above 1)",
           notes="output size dividing the input size")
def _adaptive_avg_pool1d(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    rank, length = len(x.shape), imp.static_shape(x)[-1]
    out = imp.out_shape(node)[-1]
    if out == 1:
        return imp.emit("reduce_mean", x, axes=[rank - 1], keep_dims=True)
    if length % out:
        raise imp.unsupported(node, f"output size {out} that does not divide {length}")
    windows = imp.emit("reshape", x, (*x.shape[:-1], out, length // out))
    return imp.emit("reduce_mean", windows, axes=[rank], keep_dims=False)


#: The padding ATen ops with a fixed mode (aten.pad names its mode in an argument).
_FIXED_MODE_PADS = {
    "aten.constant_pad_nd.default": "constant",
    **{f"aten.reflection_pad{n}d.default": "reflect" for n in (1, 2, 3)},
    **{f"aten.replication_pad{n}d.default": "replicate" for n in (1, 2, 3)},
    "aten._pad_circular.default": "circular",
}


@_converts("aten.pad.default", *_FIXED_MODE_PADS, graph="`pad`",
           notes="every mode of F.pad (constant of any value, reflect, replicate, circular) on any element type; "
                 "negative pads crop")
def _pad(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    name = _op_name(node.target)
    mode = _FIXED_MODE_PADS.get(name) or a.get("mode") or "constant"
    pads = [int(p) for p in (a["pad"] if "pad" in a else a["padding"])]
    rank = len(x.shape)
    if mode not in PAD_MODES or len(pads) % 2 or len(pads) > 2 * rank:
        raise imp.unsupported(node, f"mode {mode!r} with pads {pads} on rank {rank}")
    # (before, after) pairs from the last dim backwards, as F.pad takes them
    low, high = [0] * rank, [0] * rank
    for pair in range(len(pads) // 2):
        low[rank - 1 - pair], high[rank - 1 - pair] = pads[2 * pair], pads[2 * pair + 1]
    value = a.get("value")
    if mode != "constant" or value is None or (value == 0 and math.copysign(1.0, value) > 0):
        return imp.emit("pad", x, low=low, high=high, mode=mode)
    # PyTorch fills with the value converted to the tensor's type (an integer tensor truncates it)
    return imp.emit("pad", x, imp.const(np.asarray(value), x.dtype), low=low, high=high, mode=mode)


#: The resizing ATen ops: (graph.resize's mode, how many trailing dims they resize).  upsample_bilinear2d.default
#: never reaches the importer: run_decompositions spells it as index arithmetic and _unsafe_index.
_RESIZE_OPS = {
    **{f"aten.upsample_nearest{n}d.{form}": ("nearest", n) for n in (1, 2) for form in ("vec", "default")},
    **{f"aten._upsample_nearest_exact{n}d.{form}": ("nearest_exact", n) for n in (1, 2) for form in ("vec", "default")},
    "aten.upsample_linear1d.vec": ("bilinear", 1),
    "aten.upsample_linear1d.default": ("bilinear", 1),
    "aten.upsample_bilinear2d.vec": ("bilinear", 2),
}


@_converts(*_RESIZE_OPS, graph="`resize`",
           notes="F.interpolate's nearest, nearest-exact, linear and bilinear modes, sizes or scale factors, "
                 "align_corners; bilinear sums may differ from PyTorch's by an ulp (its FMAs)")
def _resize(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    mode, dims = _RESIZE_OPS[_op_name(node.target)]
    dtype = imp.out_dtype(node)
    x = imp.tensor(a.get("input", a.get("self")), dtype)
    align_corners = bool(a.get("align_corners") or False)
    if "scale_factors" in a:  # the .vec forms: one scale factor per resized dim, or none
        scales = list(a["scale_factors"] or [None] * dims)
    else:
        scales = [a["scales"]] if dims == 1 else [a["scales_h"], a["scales_w"]]
    # PyTorch's kernels step by 1 / scale_factor (in double, rounded to f32) when it is given, else by in / out;
    # align_corners ignores the scale factors
    ratios = [0.0 if align_corners or not s or s <= 0 else float(np.float32(1.0 / s)) for s in scales]
    if dims == 1:
        ratios = [0.0, *ratios]
    size = list(imp.out_shape(node)[-dims:])
    return imp.emit("resize", x, size=size, mode=mode, align_corners=align_corners, ratio_h=ratios[0],
                    ratio_w=ratios[1])
