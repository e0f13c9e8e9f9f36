"""Reductions over a set of axes: reduce_sum, reduce_mean, reduce_max, reduce_min; the running sum cumsum."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import REQUIRED, AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.shape_utils import normalize_axes, normalize_axis, require_dtype
from graphfuse.dialect.types import FLOAT_DTYPES, NUMERIC_DTYPES, Dim, TensorSig

_ATTRS = (
    AttrSpec(
        "axes",
        AttrKind.I64_ARRAY,
        default=REQUIRED,
        doc="Axes to reduce; negative values count from the end; no duplicates; empty means no reduction.",
    ),
    AttrSpec("keep_dims", AttrKind.BOOL, default=False, doc="Keep each reduced axis as a dimension of size 1."),
)

_COMMON_DOC = (
    "An empty `axes` reduces nothing: the result is a copy of the operand. With keep_dims the reduced axes "
    "stay as size-1 dimensions, otherwise they are removed."
)


def _reduced_shape(sig: TensorSig, axes: list[int], keep_dims: bool) -> tuple[Dim, ...]:
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(sig.shape))
    return tuple(d for i, d in enumerate(sig.shape) if i not in axes)


def _make_infer(name: str, allowed: frozenset[str], needs_elements: bool):
    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        sig = inputs[0]
        require_dtype(sig, allowed, "operand")
        axes = normalize_axes(attrs["axes"], sig.rank)
        if needs_elements and any(sig.shape[a] == 0 for a in axes):
            # max/min have no identity; a dynamic axis that turns out empty is not caught here.
            raise VerifyError(f"cannot reduce an empty axis with {name}")
        return [TensorSig(_reduced_shape(sig, axes, attrs["keep_dims"]), sig.dtype)]

    return infer


def _mean(x: np.ndarray, axes: tuple[int, ...], keep_dims: bool) -> np.ndarray:
    # sum / count rather than np.mean: an empty reduction is NaN without a "mean of empty slice" warning.
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    total = np.sum(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / x.dtype.type(count)).astype(x.dtype)


# Integer sums accumulate in the operand type (dtype=x.dtype), so they wrap like the lowered code.
_KERNELS: dict[str, Callable[[np.ndarray, tuple[int, ...], bool], np.ndarray]] = {
    "reduce_sum": lambda x, axes, keep: np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype),
    "reduce_mean": _mean,
    "reduce_max": lambda x, axes, keep: np.max(x, axis=axes, keepdims=keep),
    "reduce_min": lambda x, axes, keep: np.min(x, axis=axes, keepdims=keep),
}


def _make_reference(kernel: Callable[[np.ndarray, tuple[int, ...], bool], np.ndarray]):
    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        x = xs[0]
        axes = tuple(normalize_axes(attrs["axes"], x.ndim))
        if not axes:
            return [x.copy()]
        with np.errstate(all="ignore"):
            return [np.asarray(kernel(x, axes, attrs["keep_dims"]))]

    return reference


# name -> (allowed operand dtypes, summary, extra doc)
_REDUCTIONS: dict[str, tuple[frozenset[str], str, str]] = {
    "reduce_sum": (
        NUMERIC_DTYPES,
        "Sum over the given axes.",
        "Floats accumulate in the operand type (f16/bf16 in f32); integers accumulate in the operand type and "
        "wrap on overflow. The sum over an empty axis is 0.",
    ),
    "reduce_mean": (
        FLOAT_DTYPES,
        "Arithmetic mean over the given axes.",
        "Computed as sum / count in the operand type (f16/bf16 in f32). The mean over an empty axis is NaN.",
    ),
    "reduce_max": (
        NUMERIC_DTYPES,
        "Maximum over the given axes.",
        "NaN anywhere in a reduced slice gives NaN. Reducing a statically empty axis is an error.",
    ),
    "reduce_min": (
        NUMERIC_DTYPES,
        "Minimum over the given axes.",
        "NaN anywhere in a reduced slice gives NaN. Reducing a statically empty axis is an error.",
    ),
}

for _name, (_allowed, _summary, _doc) in _REDUCTIONS.items():
    register_op(
        OpSpec(
            name=_name,
            group="reduction",
            summary=_summary,
            operands=(ValueSpec("operand"),),
            results=(ValueSpec("result"),),
            attrs=_ATTRS,
            infer=_make_infer(_name, _allowed, _name in ("reduce_max", "reduce_min")),
            reference=_make_reference(_KERNELS[_name]),
            doc=f"{_COMMON_DOC} {_doc}",
            example=((TensorSig((4, 8, 16), "f32"),), {"axes": [-1], "keep_dims": True}),
        )
    )


# --------------------------------------------------------------------------
# cumsum


def _infer_cumsum(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (sig,) = inputs
    require_dtype(sig, NUMERIC_DTYPES, "operand")
    if sig.rank == 0:
        raise VerifyError(f"operand {sig} must have at least one dimension")
    normalize_axis(attrs["axis"], sig.rank)
    return [sig]


def _cumsum_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    axis = normalize_axis(attrs["axis"], x.ndim)
    # f16/bf16 accumulate in f32 and each sum is rounded once, as the lowering does; integers wrap.
    wide = x.astype(np.float32) if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x
    if attrs["reverse"]:
        wide = np.flip(wide, axis)
    with np.errstate(all="ignore"):
        total = np.cumsum(wide, axis=axis, dtype=wide.dtype)
    if attrs["exclusive"]:
        total = np.concatenate([np.zeros_like(np.take(total, [0], axis=axis)),
                                np.take(total, range(total.shape[axis] - 1), axis=axis)], axis=axis)
    if attrs["reverse"]:
        total = np.flip(total, axis)
    return [np.ascontiguousarray(total).astype(x.dtype)]


register_op(
    OpSpec(
        name="cumsum",
        group="reduction",
        summary="Running sum along an axis (ONNX CumSum, torch.cumsum).",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        attrs=(
            AttrSpec("axis", AttrKind.I64, default=REQUIRED, doc="axis summed along; negative counts from the end"),
            AttrSpec("exclusive", AttrKind.BOOL, default=False, doc="each sum leaves out its own element"),
            AttrSpec("reverse", AttrKind.BOOL, default=False, doc="sum from the end of the axis"),
        ),
        infer=_infer_cumsum,
        reference=_cumsum_reference,
        doc=(
            "`result[..., i, ...] = sum(operand[..., j, ...] for j <= i)` along `axis` (`j < i` when exclusive; "
            "`j >= i`, or `j > i`, when reverse), ONNX CumSum's attributes. Floats accumulate in the operand "
            "type (f16/bf16 in f32, each sum rounded once); integers accumulate in the operand type and wrap. "
            "Numeric element types."
        ),
        example=((TensorSig((2, 6), "f32"),), {"axis": 1}),
    )
)


# --------------------------------------------------------------------------
# argmax, argmin


def _make_arg_infer(name: str):
    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        (sig,) = inputs
        require_dtype(sig, NUMERIC_DTYPES, "operand")
        if sig.rank == 0:
            raise VerifyError(f"operand {sig} must have at least one dimension")
        axis = normalize_axis(attrs["axis"], sig.rank)
        if sig.shape[axis] == 0:
            raise VerifyError(f"cannot take {name} along an empty axis")
        return [TensorSig(_reduced_shape(sig, [axis], attrs["keep_dims"]), "i64")]

    return infer


def _make_arg_reference(pick: Callable[..., np.ndarray]):
    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        x = xs[0]
        axis = normalize_axis(attrs["axis"], x.ndim)
        # numpy's argmax/argmin: the first extreme element, the first NaN when there is one
        return [np.asarray(pick(x, axis=axis, keepdims=attrs["keep_dims"])).astype(np.int64)]

    return reference


for _name, _pick, _extreme in (("argmax", np.argmax, "largest"), ("argmin", np.argmin, "smallest")):
    register_op(
        OpSpec(
            name=_name,
            group="reduction",
            summary=f"Position of the {_extreme} element along an axis (i64).",
            operands=(ValueSpec("operand"),),
            results=(ValueSpec("result"),),
            attrs=(
                AttrSpec("axis", AttrKind.I64, default=REQUIRED, doc="axis searched; negative counts from the end"),
                AttrSpec("keep_dims", AttrKind.BOOL, default=False, doc="keep the axis as a dimension of size 1"),
            ),
            infer=_make_arg_infer(_name),
            reference=_make_arg_reference(_pick),
            doc=(
                f"The index along `axis` of the first {_extreme} element; a NaN counts as {_extreme}, so the "
                "first NaN's index when there is one (numpy's and PyTorch's rule). Numeric element types; the "
                "axis must not be empty."
            ),
            example=((TensorSig((4, 8), "f32"),), {"axis": 1}),
        )
    )
