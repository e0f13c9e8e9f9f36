"""Neural-network ops: matmul, normalizations, softmax, quantization (convolution, pooling and resizing are
in :mod:`graphfuse.dialect.ops.spatial`).

Every op here is float-only (f32, f16, bf16, all float operands of one op
sharing the element type) except where an op says otherwise: ``matmul`` also
takes integer operands and ``grouped_matmul`` integer group ends.  Reference
functions run in float32 (the interpreter widens f16/bf16 before calling them
and casts the results back), so they are written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import (
    REQUIRED,
    AttrKind,
    AttrSpec,
    OpSpec,
    ValueSpec,
    VerifyError,
    register_op,
)
from graphfuse.dialect.shape_utils import broadcast_shapes, dims_equal, normalize_axis, require_dtype, same_dtype
from graphfuse.dialect.types import FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, Dim, Shape, TensorSig

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
