"""Converters of linear algebra, convolution, pooling and normalization."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from graphfuse.dialect.builder import Tensor
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.frontends.onnx.importer import _axis, _Node
from graphfuse.frontends.onnx.registry import _converter, _NodeError


@_converter("MatMul", lowering="`matmul` (numpy.matmul semantics, as ONNX)")
def _matmul(n: _Node) -> list[Tensor]:
    return [n.b.matmul(n.input(0), n.input(1))]


@_converter("Gemm", lowering="`alpha * matmul(A, B, transpose_a, transpose_b) + beta * C`")
def _gemm(n: _Node) -> list[Tensor]:
    a, b = n.input(0), n.input(1)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    result = n.b.matmul(a, b, transpose_a=bool(n.attr("transA", 0)), transpose_b=bool(n.attr("transB", 0)))
    if alpha != 1.0:
        result = n.b.mul(result, n.const_like(alpha, result))
    if n.has_input(2):
        c = n.input(2)
        if beta != 1.0:
            c = n.b.mul(c, n.const_like(beta, c))
        result = n.b.add(result, c)
    return [result]


def _spatial_attrs(n: _Node, spatial: Sequence[int], kernel: Sequence[int], dilations: Sequence[int],
                   strides: Sequence[int]) -> list[int]:
    """ONNX pads [begin..., end...] from `pads` or `auto_pad`."""
    rank = len(spatial)
    auto_pad = n.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = n.ints("pads", [0] * (2 * rank))
        if len(pads) != 2 * rank:
            raise _NodeError(f"pads {pads} should hold {2 * rank} values")
        return pads
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise _NodeError(f"auto_pad={auto_pad} is not supported")
    begin, end = [], []
    for size, k, d, s in zip(spatial, kernel, dilations, strides, strict=True):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def _as_2d(n: _Node, x: Tensor, what: str) -> tuple[Tensor, bool]:
    """NCHW view of an NCW (1-D spatial) or NCHW tensor; True when a width-only tensor was widened."""
    if x.dtype not in ("f32", "f16", "bf16"):
        raise _NodeError(f"{what} element type {x.dtype} is not supported (float types only)")
    if len(x.shape) == 4:
        return x, False
    if len(x.shape) == 3:
        return n.b.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), True
    raise _NodeError(f"{what} of rank {len(x.shape)} is not supported (1-D and 2-D spatial data only)")


def _widen(values: list[int], one_d: bool, fill: int) -> list[int]:
    """[a] -> [fill, a] and [begin, end] -> [fill, begin, fill, end] for 1-D data seen as 2-D."""
    if not one_d:
        return values
    if len(values) == 1:
        return [fill, values[0]]
    return [fill, values[0], fill, values[1]]


def _narrow(n: _Node, y: Tensor, one_d: bool) -> Tensor:
    return n.b.reshape(y, (y.shape[0], y.shape[1], y.shape[3])) if one_d else y


@_converter("Conv", lowering="`conv2d` (+ `bias_add` on axis 1); 1-D convolutions run as 2-D ones of height 1")
def _conv(n: _Node) -> list[Tensor]:
    x, one_d = _as_2d(n, n.input(0), "input")
    w = n.input(1)
    if len(w.shape) != len(n.input(0).shape):
        raise _NodeError(f"weight rank {len(w.shape)} does not match the input rank")
    if one_d:
        w = n.b.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
    kernel = n.ints("kernel_shape", list(w.shape[2:]))
    spatial_rank = 1 if one_d else 2
    dilations = n.ints("dilations", [1] * spatial_rank)
    strides = n.ints("strides", [1] * spatial_rank)
    spatial = n.input(0).shape[2:]
    pads = _spatial_attrs(n, spatial, kernel[-spatial_rank:], dilations, strides)
    y = n.b.conv2d(x, w, strides=_widen(strides, one_d, 1), pads=_widen(pads, one_d, 0),
                   dilations=_widen(dilations, one_d, 1), groups=int(n.attr("group", 1)))
    if n.has_input(2):
        y = n.b.bias_add(y, n.input(2), axis=1)
    return [_narrow(n, y, one_d)]


def _pool_geometry(n: _Node, x: Tensor, one_d: bool) -> tuple[list[int], list[int], list[int]]:
    """kernel, strides and pads (2-D, ONNX order) of a pooling node, with ceil_mode folded into the end pads."""
    spatial_rank = 1 if one_d else 2
    kernel = n.ints("kernel_shape")
    if kernel is None or len(kernel) != spatial_rank:
        raise _NodeError(f"kernel_shape {kernel} does not match {spatial_rank}-D spatial data")
    dilations = n.ints("dilations", [1] * spatial_rank)
    if any(d != 1 for d in dilations):
        raise _NodeError(f"dilations={dilations} are not supported (pooling without dilation only)")
    strides = n.ints("strides", [1] * spatial_rank)
    spatial = list(x.shape[2:])
    pads = _spatial_attrs(n, spatial, kernel, dilations, strides)
    if int(n.attr("ceil_mode", 0)):
        for k in range(spatial_rank):
            padded = spatial[k] + pads[k] + pads[k + spatial_rank]
            floor_out = (padded - kernel[k]) // strides[k] + 1
            ceil_out = -(-(padded - kernel[k]) // strides[k]) + 1
            # ONNX drops a last window that would start in the end padding.
            if (ceil_out - 1) * strides[k] >= spatial[k] + pads[k]:
                ceil_out -= 1
            pads[k + spatial_rank] += (ceil_out - floor_out) * strides[k]
    return _widen(kernel, one_d, 1), _widen(strides, one_d, 1), _widen(pads, one_d, 0)


def _pad_spatial(n: _Node, x: Tensor, begin: Sequence[int], end: Sequence[int], fill: float) -> Tensor:
    """``x`` (N, C, spatial...) padded with ``fill`` by ``begin``/``end`` cells per spatial axis (concats)."""
    for k, (low, high) in enumerate(zip(begin, end, strict=True)):
        axis = 2 + k
        parts = []
        for size in (low, high):
            shape = list(x.shape)
            shape[axis] = size
            parts.append(n.b.const(np.full(shape, fill, NUMPY_DTYPES[x.dtype])) if size else None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        if len(pieces) > 1:
            x = n.b.concat(*pieces, axis=axis)  # at most one value after (first, second): any shapes
    return x


def _pool_by_windows(n: _Node, x: Tensor, kind: str) -> Tensor:
    """Pooling of any spatial rank, with dilations and ceil_mode: one strided slice per kernel offset, combined.

    The fallback for what max_pool2d / avg_pool2d do not express.  The average's divisor (cells of each window
    inside the input, or inside the padded input with count_include_pad) is computed here, as a constant.
    """
    spatial = list(x.shape[2:])
    rank = len(spatial)
    kernel = n.ints("kernel_shape")
    if kernel is None or len(kernel) != rank:
        raise _NodeError(f"kernel_shape {kernel} does not match {rank}-D spatial data")
    dilations = n.ints("dilations", [1] * rank)
    strides = n.ints("strides", [1] * rank)
    pads = _spatial_attrs(n, spatial, kernel, dilations, strides)
    begin, end = pads[:rank], pads[rank:]
    ceil_mode = bool(int(n.attr("ceil_mode", 0)))
    outputs, extra = [], []
    for k in range(rank):
        span = (kernel[k] - 1) * dilations[k] + 1
        padded = spatial[k] + begin[k] + end[k]
        count = (-(-(padded - span) // strides[k]) if ceil_mode else (padded - span) // strides[k]) + 1
        if ceil_mode and (count - 1) * strides[k] >= spatial[k] + begin[k]:
            count -= 1  # ONNX drops a last window that would start in the end padding
        if count < 1:
            raise _NodeError(f"the window does not fit spatial axis {k} of size {spatial[k]}")
        outputs.append(count)
        extra.append(max((count - 1) * strides[k] + span - padded, 0))
    is_float = x.dtype in ("f32", "f16", "bf16")
    if kind == "max":
        fill = -np.inf if is_float else np.iinfo(NUMPY_DTYPES[x.dtype]).min
    else:
        fill = 0
    padded_x = _pad_spatial(n, x, begin, [e + x_ for e, x_ in zip(end, extra, strict=True)], fill)
    include_pad = bool(int(n.attr("count_include_pad", 0)))
    counted = np.pad(np.ones(spatial, np.float32), [(b, e) for b, e in zip(begin, end, strict=True)],
                     constant_values=1.0 if include_pad else 0.0)
    counted = np.pad(counted, [(0, e) for e in extra])
    result, divisor = None, np.zeros(outputs, np.float32)
    for offset in np.ndindex(*kernel):
        first = [o * d for o, d in zip(offset, dilations, strict=True)]
        last = [f + (c - 1) * s + 1 for f, c, s in zip(first, outputs, strides, strict=True)]
        window = n.b.slice(padded_x, start=[0, 0, *first], limit=[*x.shape[:2], *last], strides=[1, 1, *strides])
        if result is None:
            result = window
        else:
            result = n.b.maximum(result, window) if kind == "max" else n.b.add(result, window)
        divisor += counted[tuple(slice(f, lim, s) for f, lim, s in zip(first, last, strides, strict=True))]
    assert result is not None
    if kind == "max":
        return result
    return n.b.div(result, n.b.const(divisor.astype(NUMPY_DTYPES[x.dtype])))


def _needs_windows(n: _Node, x: Tensor) -> bool:
    """Whether a pooling node needs the general form: 3-D and beyond, or dilations."""
    dilations = n.ints("dilations")
    return len(x.shape) > 4 or (dilations is not None and any(d != 1 for d in dilations))


@_converter("MaxPool", lowering="`max_pool2d` (1-D data as 2-D of height 1, ceil_mode as extra end padding); "
                                "3-D data or dilations: the `maximum` of one strided `slice` per kernel offset. "
                                "The Indices output is not supported")
def _max_pool(n: _Node) -> list[Tensor]:
    source = n.input(0)
    if len([name for name in n.node.output if name]) > 1:
        raise _NodeError("the Indices output is not supported")
    if _needs_windows(n, source):
        if source.dtype not in ("f32", "f16", "bf16", "i8", "i32", "i64"):
            raise _NodeError(f"input element type {source.dtype} is not supported")
        return [_pool_by_windows(n, source, "max")]
    x, one_d = _as_2d(n, source, "input")
    kernel, strides, pads = _pool_geometry(n, source, one_d)
    y = n.b.max_pool2d(x, kernel=kernel, strides=strides, pads=pads)
    return [_narrow(n, y, one_d)]


@_converter("AveragePool", lowering="`avg_pool2d` with `count_include_pad` (1-D as for MaxPool); 3-D data, "
                                    "dilations, or ceil_mode with count_include_pad: the sum of one strided `slice` "
                                    "per kernel offset divided by a constant count")
def _average_pool(n: _Node) -> list[Tensor]:
    source = n.input(0)
    include_pad = bool(n.attr("count_include_pad", 0))
    if _needs_windows(n, source) or (include_pad and int(n.attr("ceil_mode", 0))):
        n.require_float(source)
        return [_pool_by_windows(n, source, "avg")]
    x, one_d = _as_2d(n, source, "input")
    kernel, strides, pads = _pool_geometry(n, source, one_d)
    y = n.b.avg_pool2d(x, kernel=kernel, strides=strides, pads=pads, count_include_pad=include_pad)
    return [_narrow(n, y, one_d)]


@_converter("GlobalAveragePool", "GlobalMaxPool", lowering={
    "GlobalAveragePool": "`reduce_mean` over the spatial axes, keeping them",
    "GlobalMaxPool": "`reduce_max` over the spatial axes, keeping them"})
def _global_pool(n: _Node) -> list[Tensor]:
    x = n.input(0)
    axes = list(range(2, len(x.shape)))
    op = "reduce_mean" if n.node.op_type == "GlobalAveragePool" else "reduce_max"
    return [n.b.op(op, x, axes=axes, keep_dims=True)]


@_converter("BatchNormalization",
            lowering="`batch_norm`; training_mode=1 normalizes with the batch statistics (`reduce_mean`) and also "
                     "returns the updated running mean and variance")
def _batch_norm(n: _Node) -> list[Tensor]:
    x, scale, bias, mean, var = (n.input(k) for k in range(5))
    epsilon = float(n.attr("epsilon", 1e-5))
    if not int(n.attr("training_mode", 0)):
        return [n.b.batch_norm(x, scale, bias, mean, var, epsilon=epsilon)]
    # Statistics over every axis but the channels (axis 1); the variance is the population variance.
    axes = [k for k in range(len(x.shape)) if k != 1]
    batch_mean = n.b.reduce_mean(x, axes=axes)
    centered = n.b.sub(x, n.b.reshape(batch_mean, tuple(x.shape[1] if k == 1 else 1 for k in range(len(x.shape)))))
    batch_var = n.b.reduce_mean(n.b.mul(centered, centered), axes=axes)
    y = n.b.batch_norm(x, scale, bias, batch_mean, batch_var, epsilon=epsilon)
    momentum = n.const_like(float(n.attr("momentum", 0.9)), mean)
    keep = n.b.sub(n.const_like(1.0, mean), momentum)
    running_mean = n.b.add(n.b.mul(mean, momentum), n.b.mul(batch_mean, keep))
    running_var = n.b.add(n.b.mul(var, momentum), n.b.mul(batch_var, keep))
    return [y, running_mean, running_var]


@_converter("LayerNormalization",
            lowering="`layer_norm` over [axis, rank); the Mean and InvStdDev outputs from `reduce_mean` and `rsqrt`")
def _layer_norm(n: _Node) -> list[Tensor | None]:
    x = n.input(0)
    rank = len(x.shape)
    axis = _axis(int(n.attr("axis", -1)), rank)
    epsilon = float(n.attr("epsilon", 1e-5))
    normalized = x.shape[axis:]
    scale = n.input(1)
    if scale.shape != normalized:
        scale = n.b.broadcast_to(scale, normalized)
    bias = n.input(2) if n.has_input(2) else n.b.const(np.zeros(normalized, NUMPY_DTYPES[x.dtype]))
    if bias.shape != normalized:
        bias = n.b.broadcast_to(bias, normalized)
    outputs: list[Tensor | None] = [n.b.layer_norm(x, scale, bias, begin_norm_axis=axis, epsilon=epsilon)]
    wants_stats = any(name for name in n.node.output[1:])
    if wants_stats:
        stash = int(n.attr("stash_type", 1))
        stats_type = "f32" if stash == 1 else x.dtype
        xs = x if x.dtype == stats_type else n.b.cast(x, stats_type)
        axes = list(range(axis, rank))
        mean = n.b.reduce_mean(xs, axes=axes, keep_dims=True)
        centered = n.b.sub(xs, mean)
        variance = n.b.reduce_mean(n.b.mul(centered, centered), axes=axes, keep_dims=True)
        inv_std = n.b.rsqrt(n.b.add(variance, n.const_like(epsilon, variance)))
        outputs += [mean, inv_std]
    return outputs


def _coerced_2d(n: _Node, op: str, x: Tensor, axis: int) -> Tensor:
    """Softmax before opset 13: over the flattened trailing axes [axis, rank)."""
    rows = math.prod(x.shape[:axis])
    flat = n.b.reshape(x, (rows, math.prod(x.shape[axis:])))
    return n.b.reshape(n.b.op(op, flat, axis=-1), x.shape)


@_converter("Softmax", "LogSoftmax", lowering={
    op: f"`{name}` along `axis` (before opset 13: over the input flattened to 2-D at `axis`)"
    for op, name in (("Softmax", "softmax"), ("LogSoftmax", "log_softmax"))})
def _softmax(n: _Node) -> list[Tensor]:
    x = n.input(0)
    op = "softmax" if n.node.op_type == "Softmax" else "log_softmax"
    if n.opset < 13:
        return [_coerced_2d(n, op, x, _axis(int(n.attr("axis", 1)), len(x.shape)))]
    return [n.b.op(op, x, axis=_axis(int(n.attr("axis", -1)), len(x.shape)))]
