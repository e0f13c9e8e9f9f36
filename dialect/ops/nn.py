"""Neural-network ops: matmul, normalizations, softmax, convolution, pooling, resizing, quantization.

Every op here is float-only (f32, f16, bf16, all float operands of one op
sharing the element type) except where an op says otherwise: ``matmul`` also
takes integer operands, ``max_pool2d`` integer inputs, ``resize`` in a nearest
mode any element type and ``grouped_matmul`` integer group ends.  Reference
functions run in float32 (the interpreter widens f16/bf16 before calling them
and casts the results back), so they are written once.
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
from graphfuse.dialect.shape_utils import broadcast_shapes, dims_equal, normalize_axis, require_dtype, same_dtype
from graphfuse.dialect.types import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, Dim, Shape, TensorSig

# --------------------------------------------------------------------------
# Shared checks.


def _require_floats(inputs: Sequence[TensorSig], names: Sequence[str]) -> str:
    """Check every operand is float and they share one element type; return it."""
    for sig, name in zip(inputs, names, strict=False):  # names may cover an absent optional operand
        require_dtype(sig, FLOAT_DTYPES, f"operand {name}")
    return same_dtype(inputs)


def _require_min_rank(sig: TensorSig, rank: int, what: str) -> None:
    if sig.rank < rank:
        raise VerifyError(f"{what} {sig} must have rank >= {rank}")


def _require_vector(sig: TensorSig, length: Dim, what: str, expected: str) -> None:
    """``sig`` must be 1-D of ``length`` (``expected`` says where that length comes from)."""
    if sig.rank != 1 or not dims_equal(sig.shape[0], length):
        size = "?" if length is None else str(length)
        raise VerifyError(f"{what} {sig} must be 1-D of length {size} ({expected})")


def _check_epsilon(attrs: dict[str, Any]) -> float:
    # A negative or NaN epsilon turns var + eps into a possibly negative
    # number and the output into NaN; reject it rather than compute garbage.
    eps = float(attrs["epsilon"])
    if not (np.isfinite(eps) and eps >= 0):
        raise VerifyError(f"attribute 'epsilon' must be a finite non-negative float, got {eps}")
    return eps


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


# --------------------------------------------------------------------------
# matmul


def _infer_matmul(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    a, b = inputs
    require_dtype(a, NUMERIC_DTYPES, "operand a")
    require_dtype(b, NUMERIC_DTYPES, "operand b")
    dtype = same_dtype(inputs)
    _require_min_rank(a, 1, "operand a")
    _require_min_rank(b, 1, "operand b")
    for sig, name in ((a, "a"), (b, "b")):
        if sig.rank == 1 and attrs[f"transpose_{name}"]:
            raise VerifyError(f"attribute 'transpose_{name}' needs operand {name} of rank >= 2, got {sig}")
    # Contraction dims after the transposes; a 1-D operand is a row (a) or column (b) vector.
    if a.rank == 1:
        m, k_a = None, a.shape[0]
    else:
        m, k_a = (a.shape[-1], a.shape[-2]) if attrs["transpose_a"] else (a.shape[-2], a.shape[-1])
    if b.rank == 1:
        k_b, n = b.shape[0], None
    else:
        k_b, n = (b.shape[-1], b.shape[-2]) if attrs["transpose_b"] else (b.shape[-2], b.shape[-1])
    if not dims_equal(k_a, k_b):
        raise VerifyError(f"contraction dimensions differ: operand a {a} has {k_a}, operand b {b} has {k_b}")
    try:
        batch = broadcast_shapes(TensorSig(a.shape[:-2], dtype), TensorSig(b.shape[:-2], dtype))
    except VerifyError:
        raise VerifyError(f"batch dimensions of operands {a} and {b} are not broadcast-compatible") from None
    shape: Shape = batch + ((m,) if a.rank >= 2 else ()) + ((n,) if b.rank >= 2 else ())
    return [TensorSig(shape, dtype)]


def _matmul_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    a, b = xs
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    if results[0].dtype in INT_DTYPES:
        # Products summed in int64 then narrowed: two's-complement wrapping, the
        # same value as accumulating in the result type.
        out = np.matmul(a.astype(np.int64), b.astype(np.int64))
        return [np.asarray(out).astype(xs[0].dtype)]
    return [np.asarray(np.matmul(a.astype(np.float32), b.astype(np.float32)))]


register_op(OpSpec(
    name="matmul", group="nn", summary="Batched matrix product with numpy.matmul semantics.",
    operands=(ValueSpec("a"), ValueSpec("b")), results=(ValueSpec("result"),),
    attrs=(
        AttrSpec("transpose_a", AttrKind.BOOL, default=False, doc="swap the last two dims of a first (rank >= 2)"),
        AttrSpec("transpose_b", AttrKind.BOOL, default=False, doc="swap the last two dims of b first (rank >= 2)"),
    ),
    infer=_infer_matmul, reference=_matmul_reference,
    doc=(
        "`result[..., i, j] = sum_k a'[..., i, k] * b'[..., k, j]` where `a'`/`b'` are the operands with their last "
        "two dims swapped when `transpose_a`/`transpose_b` is set. As numpy.matmul: a 1-D `a` is a row vector and a "
        "1-D `b` a column vector, and that dim is dropped from the result; the batch dims (all but the last two) "
        "broadcast. The transpose flags need rank >= 2. Float operands (f32, f16, bf16) are multiplied in f32; "
        "integer operands (i8, i32, i64, both the same type) give that type, wrapping modulo 2^bits on overflow."
    ),
    example=((TensorSig((2, 8, 4), "f32"), TensorSig((16, 4), "f32")), {"transpose_b": True}),
))


# --------------------------------------------------------------------------
# grouped_matmul

#: Element types of grouped_matmul's group ends (PyTorch's offs are i32, cumulative sums i64).
_GROUP_END_DTYPES = frozenset({"i32", "i64"})


def _infer_grouped_matmul(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, weights, ends = inputs
    dtype = _require_floats((x, weights), ("x", "weights"))
    require_dtype(ends, _GROUP_END_DTYPES, "operand group_ends")
    if x.rank != 2:
        raise VerifyError(f"operand x {x} must be 2-D [rows, k]")
    layout = "[groups, n, k]" if attrs["transpose_weights"] else "[groups, k, n]"
    if weights.rank != 3:
        raise VerifyError(f"operand weights {weights} must be 3-D {layout}")
    groups = weights.shape[0]
    k, n = (weights.shape[2], weights.shape[1]) if attrs["transpose_weights"] else weights.shape[1:]
    if not dims_equal(x.shape[1], k):
        raise VerifyError(f"contraction dimensions differ: operand x {x} has {x.shape[1]}, operand weights "
                          f"{weights} ({layout}) has {k}")
    _require_vector(ends, groups, "operand group_ends", f"one end per group of weights {weights}")
    return [TensorSig((x.shape[0], n), dtype)]


def _group_row_ranges(ends: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """(start, end) of each group's rows: the ends read as Python slice bounds (negative ones count from the
    end, then clamped to [0, rows]), each group starting at the previous group's end."""
    bounds = np.clip(np.where(ends < 0, ends.astype(np.int64) + rows, ends), 0, rows).tolist()
    return list(zip([0, *bounds], bounds, strict=False))  # each group from the end before it


def _grouped_matmul_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    x, weights, ends = xs
    if attrs["transpose_weights"]:
        weights = np.swapaxes(weights, 1, 2)
    out = np.zeros((x.shape[0], weights.shape[2]), np.float32)
    for group, (start, end) in enumerate(_group_row_ranges(ends, x.shape[0])):
        if end > start:  # in order: a row of two groups (decreasing ends) keeps the later group's product
            out[start:end] = np.matmul(x[start:end], weights[group])  # f32: f16/bf16 come widened
    return [out]


register_op(OpSpec(
    name="grouped_matmul", group="nn", summary="Rows sorted by group, each group's rows times its own matrix.",
    operands=(ValueSpec("x"), ValueSpec("weights"), ValueSpec("group_ends")), results=(ValueSpec("result"),),
    attrs=(AttrSpec("transpose_weights", AttrKind.BOOL, default=False,
                    doc="weights are [groups, n, k] (each group's matrix transposed, a linear layer's layout)"),),
    infer=_infer_grouped_matmul, reference=_grouped_matmul_reference,
    doc=(
        "`result[r] = x[r] @ weights[g]` for the rows `group_ends[g - 1] <= r < group_ends[g]` of each group "
        "`g` (from row 0 for the first group): the mixture-of-experts product of PyTorch's "
        "`torch._grouped_mm(x, w, offs=ends)` and transformers' `grouped_mm_fallback`, rows sorted by expert "
        "and `group_ends` the cumulative row counts. `x` is [rows, k], `weights` [groups, k, n] (or "
        "[groups, n, k] with `transpose_weights`), `group_ends` 1-D i32 or i64 with one end per group; the "
        "result is [rows, n]. The ends are read as Python slice bounds, as the fallback reads them: a negative "
        "end counts back from the end (`rows + end`), then every end is clamped to [0, rows], so nothing "
        "outside `x` is read or written. A group whose end is not after the previous one is empty; with "
        "decreasing ends a row can fall in two groups and gets the later one's product (as both PyTorch "
        "versions compute it). Rows in no group (past the last end) are 0 (the fallback's zeros; "
        "`torch._grouped_mm` leaves them undefined). Float operands of one element type, multiplied in f32 and "
        "rounded once."
    ),
    example=((TensorSig((8, 4), "f32"), TensorSig((3, 4, 5), "f32"), TensorSig((3,), "i64")), {}),
))


# --------------------------------------------------------------------------
# bias_add


def _infer_bias_add(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, bias = inputs
    dtype = _require_floats(inputs, ("x", "bias"))
    axis = normalize_axis(attrs["axis"], x.rank)
    _require_vector(bias, x.shape[axis], "operand bias", f"x.shape[{axis}] of {x}")
    return [TensorSig(x.shape, dtype)]


def _bias_add_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, bias = xs
    axis = normalize_axis(attrs["axis"], x.ndim)
    shape = [1] * x.ndim
    shape[axis] = bias.shape[0]
    return [x + bias.reshape(shape)]


register_op(OpSpec(
    name="bias_add", group="nn", summary="Add a 1-D bias along one axis.",
    operands=(ValueSpec("x"), ValueSpec("bias")), results=(ValueSpec("result"),),
    attrs=(AttrSpec("axis", AttrKind.I64, default=-1, doc="axis of x the bias runs along (1 for NCHW)"),),
    infer=_infer_bias_add, reference=_bias_add_reference,
    doc="`result[..., c, ...] = x[..., c, ...] + bias[c]` with `c` indexing `axis`; `bias` is 1-D of length "
        "`x.shape[axis]`.",
    example=((TensorSig((2, 3, 4, 4), "f32"), TensorSig((3,), "f32")), {"axis": 1}),
))


# --------------------------------------------------------------------------
# softmax, log_softmax


def _infer_softmax(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (x,) = inputs
    dtype = _require_floats(inputs, ("x",))
    normalize_axis(attrs["axis"], x.rank)
    return [TensorSig(x.shape, dtype)]


def _shifted(x: np.ndarray, axis: int) -> np.ndarray:
    # initial=-inf keeps a zero-length axis legal (np.max would raise on it).
    return x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)


def _softmax_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    (x,) = xs
    axis = normalize_axis(attrs["axis"], x.ndim)
    with np.errstate(invalid="ignore"):  # rows of all -inf or with +inf: NaN is the answer
        e = np.exp(_shifted(x, axis))
        return [e / np.sum(e, axis=axis, keepdims=True)]


def _safe_softmax_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                            ) -> list[np.ndarray]:
    (x,) = xs
    axis = normalize_axis(attrs["axis"], x.ndim)
    (probs,) = _softmax_reference(xs, attrs, results)
    masked_rows = np.max(x, axis=axis, keepdims=True, initial=-np.inf) == -np.inf
    return [np.where(masked_rows, np.zeros((), probs.dtype), probs)]


def _log_softmax_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    (x,) = xs
    axis = normalize_axis(attrs["axis"], x.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = _shifted(x, axis)
        return [s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))]


_AXIS_ATTR = AttrSpec("axis", AttrKind.I64, default=-1, doc="axis to normalize; negative counts from the end")

register_op(OpSpec(
    name="softmax", group="nn", summary="Softmax along one axis (numerically stable).",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(_AXIS_ATTR,),
    infer=_infer_softmax, reference=_softmax_reference,
    doc="`m = max(x, axis)`, `result = exp(x - m) / sum(exp(x - m), axis)`, computed in f32. Subtracting the "
        "maximum keeps large inputs finite; a slice of all -inf or containing +inf gives NaN.",
    example=((TensorSig((2, 8), "f32"),), {"axis": -1}),
))

register_op(OpSpec(
    name="safe_softmax", group="nn", summary="Softmax along one axis, 0 for a slice of all -inf (PyTorch's SDPA).",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(_AXIS_ATTR,),
    infer=_infer_softmax, reference=_safe_softmax_reference,
    doc="softmax's `result`, except that a slice whose maximum is -inf (every element -inf: a query row whose "
        "mask hides every key) gives 0 instead of NaN, as PyTorch's `aten._safe_softmax`, the probabilities of "
        "`scaled_dot_product_attention`. A slice with NaN or +inf still gives NaN.",
    example=((TensorSig((2, 8), "f32"),), {"axis": -1}),
))

register_op(OpSpec(
    name="log_softmax", group="nn", summary="Log of the softmax along one axis (numerically stable).",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(_AXIS_ATTR,),
    infer=_infer_softmax, reference=_log_softmax_reference,
    doc="`m = max(x, axis)`, `result = x - m - log(sum(exp(x - m), axis))`, computed in f32. A slice of all "
        "-inf or containing +inf gives NaN.",
    example=((TensorSig((2, 8), "f32"),), {"axis": 0}),
))


# --------------------------------------------------------------------------
# layer_norm, rms_norm, batch_norm

_EPS_DOC = "added to the variance before the square root; finite and >= 0"


def _infer_layer_norm(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, gamma, beta = inputs
    dtype = _require_floats(inputs, ("x", "gamma", "beta"))
    begin = normalize_axis(attrs["begin_norm_axis"], x.rank, "begin_norm_axis")
    _check_epsilon(attrs)
    norm_shape = x.shape[begin:]
    for sig, name in ((gamma, "gamma"), (beta, "beta")):
        if sig.rank != len(norm_shape) or not all(dims_equal(g, d) for g, d in zip(sig.shape, norm_shape, strict=True)):
            expected = TensorSig(norm_shape, dtype)
            raise VerifyError(
                f"operand {name} {sig} must have the normalized shape of x {x} from axis {begin} ({expected})"
            )
    return [TensorSig(x.shape, dtype)]


def _layer_norm_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, gamma, beta = xs
    begin = normalize_axis(attrs["begin_norm_axis"], x.ndim, "begin_norm_axis")
    axes = tuple(range(begin, x.ndim))
    # Two passes (mean, then mean of squared deviations) rather than E[x^2] - E[x]^2,
    # which cancels catastrophically in f32 when |mean| >> std.
    mean = np.mean(x, axis=axes, keepdims=True)
    dev = x - mean
    var = np.mean(dev * dev, axis=axes, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # eps = 0 on a constant slice: 0/0 is NaN
        return [dev / np.sqrt(var + np.float32(attrs["epsilon"])) * gamma + beta]


register_op(OpSpec(
    name="layer_norm", group="nn", summary="Layer normalization over the trailing axes.",
    operands=(ValueSpec("x"), ValueSpec("gamma"), ValueSpec("beta")), results=(ValueSpec("result"),),
    attrs=(
        AttrSpec("begin_norm_axis", AttrKind.I64, default=-1,
                 doc="first normalized axis; axes [begin_norm_axis, rank) are normalized"),
        AttrSpec("epsilon", AttrKind.F32, default=1e-5, doc=_EPS_DOC),
    ),
    infer=_infer_layer_norm, reference=_layer_norm_reference,
    doc="Over the axes `A = [begin_norm_axis, rank)`: `mean = mean(x, A)`, `var = mean((x - mean)^2, A)` (biased, "
        "population variance, two passes), `result = (x - mean) / sqrt(var + epsilon) * gamma + beta`. `gamma` and "
        "`beta` have exactly the shape `x.shape[begin_norm_axis:]`. Statistics are computed in f32.",
    example=((TensorSig((2, 4, 8), "f32"), TensorSig((4, 8), "f32"), TensorSig((4, 8), "f32")),
             {"begin_norm_axis": 1, "epsilon": 1e-5}),
))


def _infer_rms_norm(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, gamma = inputs
    dtype = _require_floats(inputs, ("x", "gamma"))
    _require_min_rank(x, 1, "operand x")
    _check_epsilon(attrs)
    _require_vector(gamma, x.shape[-1], "operand gamma", f"the last dim of x {x}")
    return [TensorSig(x.shape, dtype)]


def _rms_norm_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, gamma = xs
    ms = np.mean(x * x, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # eps = 0 on an all-zero row: 0/0 is NaN
        return [x / np.sqrt(ms + np.float32(attrs["epsilon"])) * gamma]


register_op(OpSpec(
    name="rms_norm", group="nn", summary="Root-mean-square normalization over the last axis.",
    operands=(ValueSpec("x"), ValueSpec("gamma")), results=(ValueSpec("result"),),
    attrs=(AttrSpec("epsilon", AttrKind.F32, default=1e-6, doc="added to mean(x^2) before the square root; >= 0"),),
    infer=_infer_rms_norm, reference=_rms_norm_reference,
    doc="`result = x / sqrt(mean(x^2, -1) + epsilon) * gamma` with `gamma` of shape `(x.shape[-1],)`; no mean "
        "subtraction and no offset. Computed in f32.",
    example=((TensorSig((2, 8), "f32"), TensorSig((8,), "f32")), {"epsilon": 1e-6}),
))


def _infer_batch_norm(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    names = ("x", "scale", "offset", "mean", "var")
    dtype = _require_floats(inputs, names)
    x = inputs[0]
    _require_min_rank(x, 2, "operand x")
    _check_epsilon(attrs)
    for sig, name in zip(inputs[1:], names[1:], strict=True):
        _require_vector(sig, x.shape[1], f"operand {name}", f"the channel dim 1 of x {x}")
    return [TensorSig(x.shape, dtype)]


def _batch_norm_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, scale, offset, mean, var = xs
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    scale, offset, mean, var = (p.reshape(shape) for p in (scale, offset, mean, var))
    with np.errstate(invalid="ignore", divide="ignore"):  # var + eps may be 0 when eps = 0
        return [(x - mean) / np.sqrt(var + np.float32(attrs["epsilon"])) * scale + offset]


register_op(OpSpec(
    name="batch_norm", group="nn", summary="Inference-mode batch normalization over channel axis 1.",
    operands=(ValueSpec("x"), ValueSpec("scale"), ValueSpec("offset"), ValueSpec("mean"), ValueSpec("var")),
    results=(ValueSpec("result"),),
    attrs=(AttrSpec("epsilon", AttrKind.F32, default=1e-5, doc=_EPS_DOC),),
    infer=_infer_batch_norm, reference=_batch_norm_reference,
    doc="With given running statistics (inference mode), per channel `c` on axis 1 of `x` (rank >= 2): "
        "`result = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + offset[c]`. The four parameters are 1-D of "
        "length `x.shape[1]`. Computed in f32.",
    example=((TensorSig((2, 3, 4, 4), "f32"),) + (TensorSig((3,), "f32"),) * 4, {"epsilon": 1e-5}),
))


def _infer_group_norm(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, gamma, beta = inputs
    dtype = _require_floats(inputs, ("x", "gamma", "beta"))
    _require_min_rank(x, 2, "operand x")
    _check_epsilon(attrs)
    groups = int(attrs["num_groups"])
    channels = x.shape[1]
    if groups < 1:
        raise VerifyError(f"attribute 'num_groups' must be positive, got {groups}")
    if channels is not None and channels % groups:
        raise VerifyError(f"the channels of x {x} ({channels}) must be divisible by num_groups ({groups})")
    for sig, name in ((gamma, "gamma"), (beta, "beta")):
        _require_vector(sig, channels, f"operand {name}", f"the channel dim 1 of x {x}")
    return [TensorSig(x.shape, dtype)]


def _group_norm_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, gamma, beta = xs
    channels, groups = x.shape[1], int(attrs["num_groups"])
    # Each sample's channels in num_groups groups, every group with its spatial positions as one row.
    grouped = x.reshape(x.shape[0], groups, channels // groups * int(np.prod(x.shape[2:], dtype=np.int64)))
    # an infinity makes its group NaN (inf - inf); eps = 0 on a constant group gives 0/0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.mean(grouped, axis=-1, keepdims=True)  # two passes, as layer_norm
        dev = grouped - mean
        var = np.mean(dev * dev, axis=-1, keepdims=True)
        normalized = (dev / np.sqrt(var + np.float32(attrs["epsilon"]))).reshape(x.shape)
    per_channel = (channels,) + (1,) * (x.ndim - 2)
    return [normalized * gamma.reshape(per_channel) + beta.reshape(per_channel)]


register_op(OpSpec(
    name="group_norm", group="nn", summary="Group normalization: each sample's channels normalized in groups.",
    operands=(ValueSpec("x"), ValueSpec("gamma"), ValueSpec("beta")), results=(ValueSpec("result"),),
    attrs=(
        AttrSpec("num_groups", AttrKind.I64, default=REQUIRED, doc="channel groups; divides the channel count"),
        AttrSpec("epsilon", AttrKind.F32, default=1e-5, doc=_EPS_DOC),
    ),
    infer=_infer_group_norm, reference=_group_norm_reference,
    doc="`x` is `N x C x ...` (rank >= 2); its channels form `num_groups` groups of `C / num_groups` consecutive "
        "channels. Over each sample's group (its channels and every position after them): `mean`, `var` (biased, "
        "two passes), `result = (x - mean) / sqrt(var + epsilon) * gamma[c] + beta[c]` with `gamma` and `beta` "
        "of length C (PyTorch's GroupNorm; ones and zeros without its affine parameters). num_groups == C "
        "normalizes each channel alone, num_groups == 1 the whole sample. Statistics are computed in f32.",
    example=((TensorSig((2, 6, 5), "f32"), TensorSig((6,), "f32"), TensorSig((6,), "f32")),
             {"num_groups": 3, "epsilon": 1e-5}),
))


# --------------------------------------------------------------------------
# conv2d

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


# --------------------------------------------------------------------------
# max_pool2d, avg_pool2d


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


# --------------------------------------------------------------------------
# resize

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


# --------------------------------------------------------------------------
# dynamic_quant


def _infer_dynamic_quant(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x = inputs[0]
    _require_floats(inputs, ("x", "smooth_scales"))
    _require_min_rank(x, 1, "operand x")
    if len(inputs) == 2:
        _require_vector(inputs[1], x.shape[-1], "operand smooth_scales", f"the last dim of x {x}")
    return [TensorSig(x.shape, "i8"), TensorSig(x.shape[:-1], "f32")]


def _dynamic_quant_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0].astype(np.float32, copy=False)
    if len(xs) == 2:
        x = x * xs[1].astype(np.float32, copy=False)
    # initial=0 makes a zero-length last axis give scale 0 instead of raising.
    scale = np.max(np.abs(x), axis=-1, initial=np.float32(0)) / np.float32(127)
    scale = scale.astype(np.float32, copy=False)
    s = scale[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(s == 0, np.float32(0), x / np.where(s == 0, np.float32(1), s))
    # NaN quotients (NaN inputs, or inf / inf) would make the int cast undefined.
    q = np.nan_to_num(np.rint(q), nan=0.0, posinf=127.0, neginf=-128.0)
    return [np.clip(q, -128, 127).astype(np.int8), scale]


register_op(OpSpec(
    name="dynamic_quant", group="nn", summary="Per-row symmetric int8 quantization with a computed scale.",
    operands=(ValueSpec("x"), ValueSpec("smooth_scales", "optional")),
    results=(ValueSpec("y"), ValueSpec("scale")),
    infer=_infer_dynamic_quant, reference=_dynamic_quant_reference,
    doc="Per row over the last axis, in f32: `x' = x * smooth_scales` when `smooth_scales` (shape "
        "`(x.shape[-1],)`) is given, else `x`; `scale = max(|x'|, -1) / 127` (result `scale`, f32, shape "
        "`x.shape[:-1]`); `y = clamp(round_half_to_even(x' / scale), -128, 127)` as i8 with the shape of `x`. "
        "Where `scale` is 0 (an all-zero row, or a maximum so small that `/ 127` underflows) `y` is 0, never NaN. "
        "Saturation at -128/127 only shows when `scale` rounds low (subnormal maxima). A NaN quotient (NaN input, "
        "or an infinite maximum) gives 0.",
    example=((TensorSig((4, 16), "f32"), TensorSig((16,), "f32")), {}),
))
