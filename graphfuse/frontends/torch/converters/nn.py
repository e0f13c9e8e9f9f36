"""Converters of neural-network ops: products, convolutions, batch, layer, RMS, group and weight norms."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.torch.converters.elementwise import _scaled
from graphfuse.frontends.torch.converters.shapes import _axis
from graphfuse.frontends.torch.dtypes import _LOW_PRECISION, _TORCH_DTYPES
from graphfuse.frontends.torch.importer import _Importer, _Missing
from graphfuse.frontends.torch.registry import _converts


def _matmul_operands(imp: _Importer, node: fx.Node, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    dtype = imp.out_dtype(node)
    return imp.tensor(a, dtype), imp.tensor(b, dtype)


@_converts(
    "aten.matmul.default",
    "aten.mm.default",
    "aten.bmm.default",
    graph="`matmul`",
    notes="numpy.matmul semantics (1-D operands, batch broadcasting) as torch.matmul",
)
def _matmul(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    lhs, rhs = _matmul_operands(imp, node, a["self"], a.get("other", a.get("mat2")))
    return imp.emit("matmul", lhs, rhs)


def _weight_transposed(imp: _Importer, weight: Any, dtype: str) -> tuple[Tensor, bool]:
    """W^T for x @ W^T: a transposed constant when W is known, else W with matmul's transpose_b flag."""
    known = imp.constant_value(weight)
    if known is not None and known.dim() == 2:
        return imp.materialize(f"{weight.name}^T", known.t().contiguous(), dtype), False
    return imp.tensor(weight, dtype), True


def _plus_bias(imp: _Importer, node: fx.Node, lhs: Any, rhs: Any | Tensor, bias: Any, alpha: Any = 1,
               beta: Any = 1, **flags: bool) -> Tensor:
    """``beta * bias + alpha * (lhs @ rhs)`` as PyTorch's CPU addmm/baddbmm/linear compute it.

    In f32 the product and the sum are each rounded to f32 (PyTorch's order of the two is within that
    rounding).  In f16/bf16 PyTorch adds the bias to the f32 accumulator and rounds once: rounding the
    product first, as a bf16 ``matmul`` then ``add`` would, changes about a quarter of the results by one
    step.  So there the operands are widened (exactly), multiplied and summed in f32 and rounded once.
    ``rhs`` may be a graph value already (a linear's transposed weight)."""
    dtype = imp.out_dtype(node)
    work = "f32" if dtype in _LOW_PRECISION else dtype
    rhs = rhs if isinstance(rhs, Tensor) else imp.tensor(rhs, work)
    if rhs.dtype != work:
        rhs = imp.emit("cast", rhs, work)
    product = _scaled(imp, imp.emit("matmul", imp.tensor(lhs, work), rhs, **flags), alpha)
    if beta == 0:  # PyTorch ignores the bias then, NaN in it too
        total = product
    else:
        total = imp.emit("add", product, _scaled(imp, imp.tensor(bias, work), beta))
    return total if work == dtype else imp.emit("cast", total, dtype)


@_converts(
    "aten.linear.default",
    graph="`matmul` (`transpose_b`, or a transposed constant weight), `add` of the bias",
    notes="static batched input: `reshape` to rows and back (one 2-D GEMM, as PyTorch computes it); "
          "f16/bf16 with a bias: computed in f32 and rounded once, as PyTorch",
)
def _linear(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """x @ W^T + b.  A static [..., in] input is flattened to [rows, in] first: the fused matmul + bias kernel of a
    batched matmul with a broadcast weight compiles to far slower CPU code than the 2-D one (60x measured on
    [2, 64, 128] x [128, 512])."""
    dtype = imp.out_dtype(node)
    out_shape = imp.out_shape(node)
    x = imp.tensor(a["input"], dtype)
    if len(x.shape) > 2 and x.sig.is_static:
        x = imp.emit("reshape", x, (math.prod(x.shape[:-1]), x.shape[-1]))
    bias = a.get("bias")
    work = "f32" if dtype in _LOW_PRECISION and bias is not None else dtype
    w, transpose_b = _weight_transposed(imp, a["weight"], work)
    flags = {"transpose_b": True} if transpose_b else {}
    y = imp.emit("matmul", x, w, **flags) if bias is None else _plus_bias(imp, node, x, w, bias, **flags)
    if y.shape != out_shape:
        y = imp.emit("reshape", y, out_shape)
    return y


@_converts("aten.addmm.default", graph="`matmul`, `add` (`mul` by alpha/beta)",
           notes="f16/bf16: computed in f32 and rounded once, as PyTorch")
def _addmm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _plus_bias(imp, node, a["mat1"], a["mat2"], a["self"], a["alpha"], a["beta"])


@_converts("aten.baddbmm.default", graph="`matmul`, `mul` by alpha and beta, `add`",
           notes="beta * input + alpha * (batch1 @ batch2); beta = 0 ignores input (NaN in it too), as PyTorch; "
                 "f16/bf16: computed in f32 and rounded once, as PyTorch")
def _baddbmm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """BLOOM's ALiBi scores: the biases plus the scaled batched product."""
    return _plus_bias(imp, node, a["batch1"], a["batch2"], a["self"], a["alpha"], a["beta"])


def _pair(value: Any) -> list[int]:
    values = [value] if isinstance(value, int) else list(value)
    return values * 2 if len(values) == 1 else values


def _conv(
    imp: _Importer,
    node: fx.Node,
    x_arg: Any,
    w_arg: Any,
    bias_arg: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    """conv2d (and conv1d as a conv2d of height 1; unbatched inputs get a batch of 1), bias_add of the bias."""
    dtype = imp.out_dtype(node)
    x, w = imp.tensor(x_arg, dtype), imp.tensor(w_arg, dtype)
    spatial = len(w.shape) - 2
    if spatial not in (1, 2):
        raise imp.unsupported(node, f"{spatial}-D convolution")
    unbatched = len(x.shape) == spatial + 1
    if unbatched:
        x = imp.emit("reshape", x, (1, *x.shape))
    if spatial == 1:
        x = imp.emit("reshape", x, (x.shape[0], x.shape[1], 1, x.shape[2]))
        w = imp.emit("reshape", w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        stride, dilation = [1, *_pair(stride)[:1]], [1, *_pair(dilation)[:1]]
        padding = padding if isinstance(padding, str) else [0, *_pair(padding)[:1]]
    strides, dilations = _pair(stride), _pair(dilation)
    if isinstance(padding, str):
        pads = _string_pads(imp, node, padding, w, strides, dilations)
    else:
        ph, pw = _pair(padding)
        pads = [ph, pw, ph, pw]
    y = imp.emit("conv2d", x, w, strides=strides, pads=pads, dilations=dilations, groups=int(groups))
    if bias_arg is not None:
        y = imp.emit("bias_add", y, imp.tensor(bias_arg, dtype), axis=1)
    out_shape = imp.out_shape(node)
    if y.shape != out_shape:
        y = imp.emit("reshape", y, out_shape)
    return y


def _string_pads(
    imp: _Importer, node: fx.Node, padding: str, w: Tensor, strides: list[int], dilations: list[int]
) -> list[int]:
    if padding == "valid":
        return [0, 0, 0, 0]
    if padding != "same":
        raise imp.unsupported(node, f"padding '{padding}'")
    # PyTorch's "same": total = dilation * (k - 1), the odd extra cell after (bottom/right).
    kh, kw = imp.static_shape(w, "weight")[2:]
    total_h, total_w = dilations[0] * (kh - 1), dilations[1] * (kw - 1)
    return [total_h // 2, total_w // 2, total_h - total_h // 2, total_w - total_w // 2]


@_converts(
    "aten.conv2d.default",
    "aten.conv2d.padding",
    "aten.conv1d.default",
    "aten.conv1d.padding",
    graph="`conv2d`, `bias_add` (axis 1)",
    notes="padding ints, 'valid' or 'same'; conv1d as a conv2d of height 1",
)
def _conv_nd(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _conv(
        imp, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"], a["dilation"], a["groups"]
    )


@_converts("aten.convolution.default", graph="`conv2d`, `bias_add` (axis 1)", notes="1-D/2-D, not transposed")
def _convolution(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    if a["transposed"]:
        raise imp.unsupported(node, "transposed convolution")
    return _conv(
        imp, node, a["input"], a["weight"], a["bias"], a["stride"], a["padding"], a["dilation"], a["groups"]
    )


def _channel_params(imp: _Importer, node: fx.Node, a: dict[str, Any], dtype: str, channels: int) -> list[Tensor]:
    """scale, offset, mean, var of an inference batch_norm (a missing weight is 1, a missing bias 0)."""
    if a["running_mean"] is None or a["running_var"] is None:
        raise imp.unsupported(node, "batch_norm without running statistics")
    defaults = {"weight": 1.0, "bias": 0.0}
    values = []
    for key in ("weight", "bias", "running_mean", "running_var"):
        arg = a[key]
        values.append(imp.const(np.full(channels, defaults[key]), dtype) if arg is None else imp.tensor(arg, dtype))
    return values


def _batch_norm(imp: _Importer, node: fx.Node, a: dict[str, Any], index: int) -> Tensor:
    dtype = imp.out_dtype(node, index)
    x = imp.tensor(a["input"], dtype)
    channels = x.shape[1]
    if channels is None:
        raise imp.unsupported(node, "a dynamic channel count")
    params = _channel_params(imp, node, a, dtype, channels)
    return imp.emit("batch_norm", x, *params, epsilon=float(a["eps"]))


@_converts(
    "aten._native_batch_norm_legit_no_training.default",
    graph="`batch_norm`",
    notes="eval-mode batch_norm; result 0 only",
)
def _native_batch_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    y = _batch_norm(imp, node, a, 0)
    return (y, _Missing("batch_norm's saved mean"), _Missing("batch_norm's saved inverse std"))


def _layer_norm(imp: _Importer, node: fx.Node, a: dict[str, Any], index: int | None) -> Tensor:
    dtype = imp.out_dtype(node, index)
    x = imp.tensor(a["input"], dtype)
    normalized = tuple(a["normalized_shape"])
    begin = len(x.shape) - len(normalized)
    gamma = imp.const(np.ones(normalized), dtype) if a["weight"] is None else imp.tensor(a["weight"], dtype)
    beta = imp.const(np.zeros(normalized), dtype) if a["bias"] is None else imp.tensor(a["bias"], dtype)
    return imp.emit("layer_norm", x, gamma, beta, begin_norm_axis=begin, epsilon=float(a["eps"]))


@_converts("aten.layer_norm.default", graph="`layer_norm`")
def _layer_norm_op(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _layer_norm(imp, node, a, None)


@_converts("aten.native_layer_norm.default", graph="`layer_norm`; the saved mean and inverse std (a training "
           "graph's backward reads them) as `reduce_mean`, `sub`, `mul`, `add`, `rsqrt`",
           notes="mean and rstd keep the normalized dims as size 1, as PyTorch")
def _native_layer_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    y = _layer_norm(imp, node, a, 0)
    # the statistics, in the type PyTorch saves them in; unused ones are removed by graph-dce
    dtype = imp.out_dtype(node, 1)
    x = imp.tensor(a["input"], dtype)
    axes = list(range(len(x.shape) - len(tuple(a["normalized_shape"])), len(x.shape)))
    mean = imp.emit("reduce_mean", x, axes=axes, keep_dims=True)
    centered = imp.emit("sub", x, mean)
    variance = imp.emit("reduce_mean", imp.emit("mul", centered, centered), axes=axes, keep_dims=True)
    rstd = imp.emit("rsqrt", imp.emit("add", variance, imp.const(np.asarray(float(a["eps"])), dtype)))
    return (y, mean, rstd)


@_converts(
    "aten.rms_norm.default",
    graph="`rms_norm` (`reshape` around it when normalizing several trailing dims)",
    notes="eps None: the dtype's machine epsilon, as PyTorch",
)
def _rms_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["input"], dtype)
    normalized = tuple(a["normalized_shape"])
    eps = a["eps"] if a["eps"] is not None else float(torch.finfo(_TORCH_DTYPES[dtype]).eps)
    width = math.prod(normalized)
    gamma = imp.const(np.ones(width), dtype) if a["weight"] is None else imp.tensor(a["weight"], dtype)
    if len(normalized) == 1:
        return imp.emit("rms_norm", x, gamma, epsilon=float(eps))
    lead = x.shape[: len(x.shape) - len(normalized)]
    flat = imp.emit("reshape", x, (*lead, width))
    if a["weight"] is not None:
        gamma = imp.emit("reshape", gamma, (width,))
    y = imp.emit("rms_norm", flat, gamma, epsilon=float(eps))
    return imp.emit("reshape", y, x.shape)


def _affine_or(imp: _Importer, arg: Any, fill: float, channels: int, dtype: str) -> Tensor:
    """A norm's per-channel weight or bias, or ``fill`` repeated when the module has none (affine=False)."""
    return imp.const(np.full(channels, fill), dtype) if arg is None else imp.tensor(arg, dtype)


def _group_norm_of(imp: _Importer, node: fx.Node, x_arg: Any, weight: Any, bias: Any, groups: int, eps: float,
                   index: int | None) -> Tensor:
    dtype = imp.out_dtype(node, index)
    x = imp.tensor(x_arg, dtype)
    channels = x.shape[1] if len(x.shape) > 1 else None
    if channels is None:
        raise imp.unsupported(node, f"an input {x.sig} without a static channel dim")
    gamma, beta = (_affine_or(imp, arg, fill, channels, dtype) for arg, fill in ((weight, 1.0), (bias, 0.0)))
    return imp.emit("group_norm", x, gamma, beta, num_groups=int(groups), epsilon=float(eps))


@_converts("aten.group_norm.default", graph="`group_norm`", notes="without affine: weight 1, bias 0")
def _group_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _group_norm_of(imp, node, a["input"], a["weight"], a["bias"], a["num_groups"], a["eps"], None)


@_converts("aten.native_group_norm.default", graph="`group_norm`; the saved mean and inverse std as `reshape`, "
           "`reduce_mean`, `sub`, `mul`, `add`, `rsqrt`", notes="mean and rstd of shape (N, groups), as PyTorch")
def _native_group_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor, Tensor]:
    groups = int(a["group"])
    y = _group_norm_of(imp, node, a["input"], a["weight"], a["bias"], groups, a["eps"], 0)
    # the statistics, in the type PyTorch saves them in; unused ones are removed by graph-dce
    dtype = imp.out_dtype(node, 1)
    x = imp.tensor(a["input"], dtype)
    shape = imp.static_shape(x)
    grouped = imp.emit("reshape", x, (shape[0], groups, math.prod(shape[1:]) // groups))
    mean = imp.emit("reduce_mean", grouped, axes=[2], keep_dims=True)
    centered = imp.emit("sub", grouped, mean)
    variance = imp.emit("reduce_mean", imp.emit("mul", centered, centered), axes=[2], keep_dims=False)
    rstd = imp.emit("rsqrt", imp.emit("add", variance, imp.const(np.asarray(float(a["eps"])), dtype)))
    return (y, imp.emit("reshape", mean, (shape[0], groups)), rstd)


@_converts("aten._weight_norm.default", graph="`mul`, `reduce_sum`, `sqrt`, `div`",
           notes="v * g / the 2-norm of v over every dim but `dim` (folded when v and g are constants)")
def _weight_norm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    v, g = imp.tensor(a["v"], dtype), imp.tensor(a["g"], dtype)
    rank = len(v.shape)
    kept = None if a["dim"] == -1 else _axis(a["dim"], rank)  # -1: the norm of the whole tensor
    axes = [d for d in range(rank) if d != kept]
    norm = imp.emit("sqrt", imp.emit("reduce_sum", imp.emit("mul", v, v), axes=axes, keep_dims=True))
    return imp.emit("mul", v, imp.emit("div", g, norm))
