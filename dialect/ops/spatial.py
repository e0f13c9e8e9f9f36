"""Spatial ops of convolutional models: conv2d, max_pool2d, avg_pool2d, resize.

Float-only, as the ops of :mod:`graphfuse.dialect.ops.nn`, except ``max_pool2d`` (integer inputs too) and
``resize`` in a nearest mode (any element type).  Reference functions run in float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from graphfuse.dialect.catalog import (
    REQUIRED,
    AttrKind,
    AttrSpec,
    InferFn,
    OpSpec,
    ValueSpec,
    VerifyError,
    register_op,
)
from graphfuse.dialect.ops.nn import _require_floats
from graphfuse.dialect.shape_utils import require_dtype
from graphfuse.dialect.types import ALL_DTYPES, FLOAT_DTYPES, NUMERIC_DTYPES, Dim, TensorSig


def _int_list(attrs: dict[str, Any], name: str, length: int, layout: str) -> list[int]:
    value = attrs.get(name, REQUIRED)
    if value is REQUIRED or value is None:
        raise VerifyError(f"requires attribute '{name}'")
    try:
        values = [int(v) for v in value]
    except (TypeError, ValueError):
        raise VerifyError(f"attribute '{name}' must be an array of {length} integers {layout}, got {value!r}") from None
    if len(values) != length:
        raise VerifyError(f"attribute '{name}' must have {length} values {layout}, got {values}")
    return values


def _require_positive(values: list[int], name: str) -> None:
    if any(v < 1 for v in values):
        raise VerifyError(f"attribute '{name}' must contain only positive values, got {values}")


def _window_out(size: Dim, kernel: int, stride: int, dilation: int, lo: int, hi: int, dim: str, what: str) -> Dim:
    """Output size of a sliding window along one spatial dim (None when the input dim is dynamic)."""
    if size is None:
        return None
    extent = dilation * (kernel - 1) + 1
    padded = size + lo + hi
    if extent > padded:
        raise VerifyError(
            f"{what} {extent} exceeds the padded input {dim} {padded} (input {size} + pads {lo} + {hi}); "
            "the output would be empty"
        )
    return (padded - extent) // stride + 1


def _require_static(sig: TensorSig, dims: Sequence[int], what: str) -> None:
    if any(sig.shape[d] is None for d in dims):
        raise VerifyError(f"{what} {sig}: dynamic dimensions are not supported in its spatial dims")


def _windows(xp: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int]) -> np.ndarray:
    """(N, C, OH, OW, kh, kw) view of the windows of an already-padded NCHW array."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    extent = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    view = sliding_window_view(xp, extent, axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def _pad_hw(x: np.ndarray, pads: Sequence[int], value: Any) -> np.ndarray:
    top, left, bottom, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


_STRIDES_ATTR = AttrSpec("strides", AttrKind.I64_ARRAY, default=[1, 1], doc="[stride_h, stride_w], positive")
_PADS_ATTR = AttrSpec("pads", AttrKind.I64_ARRAY, default=[0, 0, 0, 0],
                      doc="[top, left, bottom, right] (ONNX order), non-negative")


def _read_pads(attrs: dict[str, Any]) -> list[int]:
    pads = _int_list(attrs, "pads", 4, "[top, left, bottom, right]")
    if any(p < 0 for p in pads):
        raise VerifyError(f"attribute 'pads' must contain only non-negative values, got {pads}")
    return pads


def _read_strides(attrs: dict[str, Any]) -> list[int]:
    strides = _int_list(attrs, "strides", 2, "[stride_h, stride_w]")
    _require_positive(strides, "strides")
    return strides


def _infer_conv2d(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    x, w = inputs[:2]
    dtype = _require_floats(inputs, ("x", "w", "bias"))
    if len(inputs) == 3:
        bias = inputs[2]
        if bias.rank != 1:
            raise VerifyError(f"operand bias {bias} must have rank 1 (one value per output channel)")
        if None not in (bias.shape[0], w.shape[0]) and bias.shape[0] != w.shape[0]:
            raise VerifyError(f"operand bias {bias} must have one value per output channel of w {w} ({w.shape[0]})")
    if x.rank != 4:
        raise VerifyError(f"operand x {x} must have rank 4 (NCHW)")
    if w.rank != 4:
        raise VerifyError(f"operand w {w} must have rank 4 (OIHW)")
    strides = _read_strides(attrs)
    dilations = _int_list(attrs, "dilations", 2, "[dilation_h, dilation_w]")
    _require_positive(dilations, "dilations")
    pads = _read_pads(attrs)
    groups = int(attrs["groups"])
    if groups < 1:
        raise VerifyError(f"attribute 'groups' must be positive, got {groups}")
    _require_static(w, (2, 3), "operand w")
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    if 0 in (kh, kw):  # PyTorch: "kernel size should be greater than zero"
        raise VerifyError(f"the kernel of w {w} must have a height and a width of at least 1")
    if c is not None and i is not None and c != i * groups:
        raise VerifyError(
            f"input channels of x {x} ({c}) must equal the per-group channels of w {w} ({i}) times groups ({groups})"
        )
    if o is not None and o % groups != 0:
        raise VerifyError(f"output channels of w {w} ({o}) must be divisible by groups ({groups})")
    oh = _window_out(h, kh, strides[0], dilations[0], pads[0], pads[2], "height", "dilated kernel height")
    ow = _window_out(wd, kw, strides[1], dilations[1], pads[1], pads[3], "width", "dilated kernel width")
    return [TensorSig((n, o, oh, ow), dtype)]


def _conv2d_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, w = xs[:2]
    groups = int(attrs["groups"])
    n = x.shape[0]
    o, i, kh, kw = w.shape
    windows = _windows(_pad_hw(x, attrs["pads"], 0), (kh, kw), attrs["strides"], attrs["dilations"])
    oh, ow = windows.shape[2:4]
    # (N, G, I, OH, OW, kh, kw) x (G, O/G, I, kh, kw) -> (N, G, O/G, OH, OW): one contraction per group.
    windows = windows.reshape(n, groups, i, oh, ow, kh, kw)
    wg = w.reshape(groups, o // groups, i, kh, kw)
    out = np.einsum("ngcyxij,gocij->ngoyx", windows, wg, optimize=True).reshape(n, o, oh, ow)
    if len(xs) == 3:  # the bias joins the sums before they are rounded to the result type
        out = out.astype(np.float32, copy=False) + xs[2].astype(np.float32).reshape(1, o, 1, 1)
    return [out.astype(np.float32, copy=False)]


register_op(OpSpec(
    name="conv2d", group="nn", summary="2-D convolution (cross-correlation), NCHW input and OIHW weights.",
    operands=(ValueSpec("x"), ValueSpec("w"), ValueSpec("bias", "optional")), results=(ValueSpec("result"),),
    attrs=(
        _STRIDES_ATTR,
        _PADS_ATTR,
        AttrSpec("dilations", AttrKind.I64_ARRAY, default=[1, 1], doc="[dilation_h, dilation_w], positive"),
        AttrSpec("groups", AttrKind.I64, default=1, doc="channel groups; C = I * groups and O % groups == 0"),
    ),
    infer=_infer_conv2d, reference=_conv2d_reference,
    doc="`x` is `N x C x H x W`, `w` is `O x I x kh x kw` with `C = I * groups`, `O % groups == 0`. With `x` "
        "zero-padded by `pads` = [top, left, bottom, right] and `g = o / (O / groups)`: `result[n, o, y, x'] = "
        "bias[o] + sum_{c<I, i<kh, j<kw} xpad[n, g*I + c, y*sh + i*dh, x'*sw + j*dw] * w[o, c, i, j]` (no kernel "
        "flip). The optional `bias` (`O` values, ONNX Conv's `B`, the seed's conv + biasAdd) starts each output's "
        "accumulator, before the result is rounded to the result type; without it the sums start at 0. "
        "Output `OH = floor((H + top + bottom - dh*(kh-1) - 1) / sh) + 1`, likewise `OW`; it must be >= 1. "
        "groups == C == O gives a depthwise convolution. Dynamic N, C, H, W are allowed; kh and kw must be static.",
    example=((TensorSig((1, 4, 8, 8), "f32"), TensorSig((6, 2, 3, 3), "f32"), TensorSig((6,), "f32")),
             {"strides": [2, 1], "pads": [1, 1, 1, 1], "dilations": [1, 2], "groups": 2}),
))


def _make_infer_pool(allowed: frozenset[str]) -> InferFn:
    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        (x,) = inputs
        require_dtype(x, allowed, "operand x")
        if x.rank != 4:
            raise VerifyError(f"operand x {x} must have rank 4 (NCHW)")
        kernel = _int_list(attrs, "kernel", 2, "[kh, kw]")
        _require_positive(kernel, "kernel")
        strides = _read_strides(attrs)
        pads = _read_pads(attrs)
        # ONNX's rule: a pad at least the kernel size would give windows holding
        # only padding (-inf for max, 0/0 for an average without the pads).
        if pads[0] >= kernel[0] or pads[2] >= kernel[0] or pads[1] >= kernel[1] or pads[3] >= kernel[1]:
            raise VerifyError(f"attribute 'pads' {pads} must be smaller than the kernel {kernel} in each dim")
        n, c, h, w = x.shape
        oh = _window_out(h, kernel[0], strides[0], 1, pads[0], pads[2], "height", "kernel height")
        ow = _window_out(w, kernel[1], strides[1], 1, pads[1], pads[3], "width", "kernel width")
        return [TensorSig((n, c, oh, ow), x.dtype)]

    return infer


def _max_pool2d_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    (x,) = xs
    fill = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
    windows = _windows(_pad_hw(x, attrs["pads"], fill), attrs["kernel"], attrs["strides"], (1, 1))
    return [windows.max(axis=(-2, -1))]


def _avg_pool2d_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    (x,) = xs
    kernel, strides, pads = attrs["kernel"], attrs["strides"], attrs["pads"]
    total = _windows(_pad_hw(x, pads, 0), kernel, strides, (1, 1)).sum(axis=(-2, -1))
    if attrs["count_include_pad"]:
        count = np.float32(kernel[0] * kernel[1])
    else:
        # Real (unpadded) cells per window: the same pooling applied to a mask.
        mask = _pad_hw(np.ones((1, 1, *x.shape[2:]), np.float32), pads, 0)
        count = _windows(mask, kernel, strides, (1, 1)).sum(axis=(-2, -1))
    return [(total / count).astype(np.float32, copy=False)]


_POOL_DOC = (
    "`x` is `N x C x H x W`; windows of `kernel` = [kh, kw] every `strides` = [sh, sw] over `x` padded by `pads` = "
    "[top, left, bottom, right], each pad smaller than the kernel in its dim. Output `OH = floor((H + top + bottom - "
    "kh) / sh) + 1`, likewise `OW`; it must be >= 1. "
)

register_op(OpSpec(
    name="max_pool2d", group="nn", summary="2-D max pooling over NCHW.",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(AttrSpec("kernel", AttrKind.I64_ARRAY, default=REQUIRED, doc="[kh, kw], positive"), _STRIDES_ATTR,
           _PADS_ATTR),
    infer=_make_infer_pool(NUMERIC_DTYPES), reference=_max_pool2d_reference,
    doc=_POOL_DOC + "`result` is the maximum of each window; padding never wins (it is -inf for floats, the "
    "type's minimum for i8/i32/i64, which are accepted too). A NaN in a window gives NaN.",
    example=((TensorSig((1, 2, 7, 7), "f32"),), {"kernel": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
))

register_op(OpSpec(
    name="avg_pool2d", group="nn", summary="2-D average pooling over NCHW.",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(
        AttrSpec("kernel", AttrKind.I64_ARRAY, default=REQUIRED, doc="[kh, kw], positive"),
        _STRIDES_ATTR,
        _PADS_ATTR,
        AttrSpec("count_include_pad", AttrKind.BOOL, default=False,
                 doc="divide by kh*kw (true) or by the number of unpadded cells in the window (false)"),
    ),
    infer=_make_infer_pool(FLOAT_DTYPES), reference=_avg_pool2d_reference,
    doc=_POOL_DOC + "`result` is the window sum (padding counts as 0) divided by `kh * kw` when "
    "`count_include_pad` is true, else by the number of cells of the window inside the unpadded input (ONNX "
    "semantics). Computed in f32.",
    example=((TensorSig((1, 2, 6, 6), "f32"),),
             {"kernel": [2, 3], "strides": [2, 1], "pads": [0, 1, 1, 1], "count_include_pad": True}),
))


RESIZE_MODES = ("nearest", "nearest_exact", "bilinear")

#: One tap of a resize along one dimension: the operand position each result position reads, and its weight
#: (None for the nearest modes, which read one position unweighted).
Tap = tuple[np.ndarray, np.ndarray | None]


def resize_taps(size: int, out_size: int, mode: str, align_corners: bool, ratio: float) -> list[Tap]:
    """The taps of ``graph.resize`` along one dimension of ``size`` resized to ``out_size`` (one for the nearest
    modes, two for bilinear), computed in f32 (double where PyTorch's CPU kernels compute in double) so that
    the positions and the weights are PyTorch's bit for bit."""
    f32 = np.float32
    result = np.arange(out_size)
    if align_corners:
        step = f32(size - 1) / f32(out_size - 1) if out_size > 1 else f32(0)
    else:
        step = f32(ratio) if ratio > 0 else f32(size) / f32(out_size)
    last = size - 1
    if mode == "nearest":
        if out_size in (size, 2 * size):  # PyTorch's shortcuts, which take precedence over a given ratio
            return [(result if out_size == size else result >> 1, None)]
        return [(np.minimum(np.floor(result.astype(f32) * step).astype(np.int64), last), None)]
    if mode == "nearest_exact":  # the centre of each result cell, (p + 0.5) * step in double, rounded to f32
        return [(np.minimum(np.floor(((result + 0.5) * np.float64(step)).astype(f32)).astype(np.int64), last), None)]
    if out_size == size:  # PyTorch copies: weights 1 and 0 (so an infinity still meets 0 * inf = NaN)
        return [(result, np.ones(out_size, f32)), (result, np.zeros(out_size, f32))]
    if align_corners:
        source = result.astype(f32) * step
    else:  # half-pixel centres, clamped at 0
        source = np.maximum(((result + 0.5) * np.float64(step) - 0.5).astype(f32), f32(0))
    first = np.minimum(np.floor(source).astype(np.int64), last)
    far = np.clip(source - first.astype(f32), f32(0), f32(1)).astype(f32)
    return [(first, (f32(1) - far).astype(f32)), (first + (first < last), far)]


def _infer_resize(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (x,) = inputs
    size, mode = [int(s) for s in attrs["size"]], attrs["mode"]
    if mode not in RESIZE_MODES:  # the parser checks choices; evaluate_op passes Python values straight through
        raise VerifyError(f"attribute 'mode' must be one of {', '.join(RESIZE_MODES)}, got {mode!r}")
    require_dtype(x, FLOAT_DTYPES if mode == "bilinear" else ALL_DTYPES, "operand x")
    if len(size) not in (1, 2):
        raise VerifyError(f"attribute 'size' {size} must have 1 or 2 entries (the sizes of the last dims)")
    if x.rank < len(size):
        raise VerifyError(f"operand x {x} must have rank >= {len(size)} to resize its last {len(size)} dims")
    _require_positive(size, "size")
    resized = x.shape[x.rank - len(size):]
    if any(d is None or d < 1 for d in resized):
        raise VerifyError(f"the resized dims of operand x {x} must be static and non-empty")
    if attrs["align_corners"] and mode != "bilinear":
        raise VerifyError(f'attribute \'align_corners\' is for mode "bilinear", not "{mode}"')
    ratios = (float(attrs["ratio_h"]), float(attrs["ratio_w"]))
    if not all(np.isfinite(r) and r >= 0 for r in ratios):
        raise VerifyError(f"attributes 'ratio_h' and 'ratio_w' must be finite and >= 0, got {list(ratios)}")
    if attrs["align_corners"] and any(ratios):
        raise VerifyError("attributes 'ratio_h' and 'ratio_w' must be 0 with align_corners (it fixes the ratio)")
    if len(size) == 1 and ratios[0]:
        raise VerifyError("attribute 'ratio_h' must be 0 when only the last dim is resized")
    return [x.with_shape(x.shape[:x.rank - len(size)] + tuple(size))]


def _resize_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    size = [int(s) for s in attrs["size"]]
    ratios = (attrs["ratio_h"], attrs["ratio_w"])[2 - len(size):]
    axes = range(x.ndim - len(size), x.ndim)
    # The last dim first, then the one before: PyTorch's order, each product and sum rounded to f32.
    for axis, out_size, ratio in reversed(list(zip(axes, size, ratios, strict=True))):
        taps = resize_taps(x.shape[axis], out_size, attrs["mode"], attrs["align_corners"], ratio)
        if attrs["mode"] != "bilinear":
            x = np.take(x, taps[0][0], axis=axis)
            continue
        along = [-1 if d == axis else 1 for d in range(x.ndim)]
        (near, near_weight), (far, far_weight) = taps
        with np.errstate(invalid="ignore"):  # 0 * inf
            x = (np.take(x, near, axis=axis) * near_weight.reshape(along)
                 + np.take(x, far, axis=axis) * far_weight.reshape(along))
    return [x]


register_op(OpSpec(
    name="resize", group="nn", summary="Resize the last one or two dims: nearest or bilinear (PyTorch's "
                                       "F.interpolate).",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(
        AttrSpec("size", AttrKind.I64_ARRAY, default=REQUIRED,
                 doc="the result sizes of the last dims ([W] or [H, W]), positive"),
        AttrSpec("mode", AttrKind.STRING, default="nearest", choices=RESIZE_MODES, doc="how a result cell is read"),
        AttrSpec("align_corners", AttrKind.BOOL, default=False,
                 doc="bilinear: the corner cells' centres coincide (ratio (n - 1) / (out - 1))"),
        AttrSpec("ratio_h", AttrKind.F32, default=0.0,
                 doc="input cells per result cell along H (PyTorch's 1 / scale_factor); 0: H / OH"),
        AttrSpec("ratio_w", AttrKind.F32, default=0.0,
                 doc="input cells per result cell along W, the last dim (1 / scale_factor); 0: W / OW"),
    ),
    infer=_infer_resize, reference=_resize_reference,
    doc="The dims before the resized ones are kept. Along a resized dim of size n with ratio r: `nearest` reads "
        "`min(floor(p * r), n - 1)` (a copy when the size stays, `p / 2` when it doubles, as PyTorch), "
        "`nearest_exact` `min(floor((p + 0.5) * r), n - 1)`; `bilinear` weighs the two cells around `s = (p + "
        "0.5) * r - 0.5` (clamped at 0; `s = p * r` with align_corners) by their distance, along W first, then "
        "along H: `t = x[.., w0] * a0 + x[.., w1] * a1`, `result = t[h0] * b0 + t[h1] * b1` in f32 (a size that "
        "stays is read with weights 1 and 0). Positions and weights are PyTorch's CPU kernels' bit for bit; "
        "PyTorch's own sums may round differently (it contracts them into FMAs). The resized dims must be "
        "static. nearest takes any element type, bilinear floats (f16/bf16 computed in f32).",
    example=((TensorSig((1, 2, 5, 6), "f32"),), {"size": [8, 9], "mode": "bilinear"}),
))
