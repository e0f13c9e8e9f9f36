"""Indexing ops: gather, gather_elements, scatter_update (in the shape group of the op table)."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.ops.shape import _GROUP
from graphfuse.dialect.run_checks import IndexOutOfRangeError, check_failed
from graphfuse.dialect.shape_utils import normalize_axis, require_dtype
from graphfuse.dialect.types import TensorSig

#: Element types of gather's indices.
_INDEX_DTYPES = frozenset({"i32", "i64"})
#: The attributes of the ops that index an axis: gather, gather_elements, scatter_update.
_INDEXING_ATTRS = (
    AttrSpec("axis", AttrKind.I64, default=0, doc="axis of data indexed; negative counts from the end"),
    AttrSpec("negative_indices", AttrKind.BOOL, default=True,
             doc="a negative index counts from the end of the axis; false: it is out of range"),
)
#: What the indexing ops do with their indices (the end of their docs).
_INDEX_RULE = (
    "Indices are i32 or i64. A negative index counts from the end of the axis (numpy, ONNX, PyTorch's `x[i]`), "
    "unless `negative_indices` is false (PyTorch's index_select, embedding, gather and index_copy): it is then out "
    "of range. An index out of range raises IndexOutOfRangeError (an IndexError and a RuntimeError, as eager "
    "PyTorch's), in the reference interpreter and in compiled code (docs/lowering.md); compiled code never reads "
    "or writes outside data meanwhile."
)


def _infer_gather(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    data, indices = inputs
    require_dtype(indices, _INDEX_DTYPES, "operand indices")
    if data.rank == 0:
        raise VerifyError(f"operand data {data} must have at least one dimension")
    axis = normalize_axis(attrs["axis"], data.rank)
    if data.shape[axis] == 0 and indices.num_elements != 0:
        raise VerifyError(f"dimension {axis} of operand data {data} is empty: there is nothing to gather")
    return [data.with_shape(data.shape[:axis] + indices.shape + data.shape[axis + 1:])]


def _index_positions(indices: np.ndarray, size: int, axis: int, attrs: dict[str, Any]) -> np.ndarray:
    """The positions ``indices`` point at along ``axis`` of ``size`` (int64): negative ones count from the end when
    ``negative_indices`` says so; any index outside the axis raises IndexOutOfRangeError."""
    positions = indices.astype(np.int64)
    if attrs["negative_indices"]:
        positions = np.where(positions < 0, positions + size, positions)
    outside = (positions < 0) | (positions >= size)
    if np.any(outside):
        index = int(indices.reshape(-1)[np.argmax(outside.reshape(-1))])
        low = -size if attrs["negative_indices"] else 0
        raise check_failed(IndexOutOfRangeError, detail=f"index {index} is not in [{low}, {size}) (axis {axis})")
    return positions


def _gather_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    data, indices = xs
    axis = normalize_axis(attrs["axis"], data.ndim)
    positions = _index_positions(indices, data.shape[axis], axis, attrs)
    return [np.take(data, positions, axis=axis)]  # empty indices: empty result


register_op(
    OpSpec(
        name="gather",
        group=_GROUP,
        summary="Take slices of data along an axis at the given indices (ONNX Gather, embedding lookup).",
        operands=(ValueSpec("data"), ValueSpec("indices")),
        results=(ValueSpec("result"),),
        attrs=_INDEXING_ATTRS,
        infer=_infer_gather,
        reference=_gather_reference,
        doc=(
            "`result[a..., i..., b...] = data[a..., indices[i...], b...]`, the result's shape `data.shape[:axis] + "
            "indices.shape + data.shape[axis + 1:]` (ONNX Gather, numpy.take; an embedding lookup is axis 0). "
            f"Any element type for data. {_INDEX_RULE}"
        ),
        example=((TensorSig((10, 4), "f32"), TensorSig((2, 3), "i64")), {"axis": 0}),
    )
)


def _infer_gather_elements(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    data, indices = inputs
    require_dtype(indices, _INDEX_DTYPES, "operand indices")
    if data.rank == 0:
        raise VerifyError(f"operand data {data} must have at least one dimension")
    if indices.rank != data.rank:
        raise VerifyError(f"operand indices {indices} must have the rank of operand data {data}")
    axis = normalize_axis(attrs["axis"], data.rank)
    for d, (size, count) in enumerate(zip(data.shape, indices.shape, strict=True)):
        if d == axis and size == 0 and count != 0:
            raise VerifyError(f"dimension {axis} of operand data {data} is empty: there is nothing to gather")
        if d != axis and size is not None and count is not None and count > size:
            raise VerifyError(f"dimension {d} of operand indices {indices} is larger than that of data {data}")
    return [data.with_shape(indices.shape)]


def _gather_elements_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    data, indices = xs
    axis = normalize_axis(attrs["axis"], data.ndim)
    # Outside the axis the indices' grid reads data's leading corner (torch.gather's rule).
    corner = data[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(indices.shape))]
    return [np.take_along_axis(corner, _index_positions(indices, data.shape[axis], axis, attrs), axis=axis)]


register_op(
    OpSpec(
        name="gather_elements",
        group=_GROUP,
        summary="Take one element of data per index along an axis (ONNX GatherElements, torch.gather).",
        operands=(ValueSpec("data"), ValueSpec("indices")),
        results=(ValueSpec("result"),),
        attrs=_INDEXING_ATTRS,
        infer=_infer_gather_elements,
        reference=_gather_elements_reference,
        doc=(
            "`result[i] = data[i with i[axis] replaced by indices[i]]`: indices has data's rank, the result "
            "indices' shape (ONNX GatherElements, torch.gather, numpy.take_along_axis). Outside the axis an index "
            "dimension may be shorter than data's (torch.gather's rule: the leading part is read). Any element "
            f"type for data. {_INDEX_RULE}"
        ),
        example=((TensorSig((3, 5), "f32"), TensorSig((3, 2), "i64")), {"axis": 1}),
    )
)


def _infer_scatter_update(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    data, indices, updates = inputs
    require_dtype(indices, _INDEX_DTYPES, "operand indices")
    if data.rank == 0:
        raise VerifyError(f"operand data {data} must have at least one dimension")
    if updates.dtype != data.dtype:
        raise VerifyError(f"operand updates {updates} must have the element type of operand data {data}")
    axis = normalize_axis(attrs["axis"], data.rank)
    want = data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    if len(want) != updates.rank or any(
        w is not None and u is not None and w != u for w, u in zip(want, updates.shape, strict=True)
    ):
        shape = "x".join("?" if d is None else str(d) for d in want)
        raise VerifyError(
            f"operand updates {updates} must have the shape data.shape[:axis] + indices.shape + "
            f"data.shape[axis + 1:] ({shape or 'rank 0'})"
        )
    return [data]


def _scatter_update_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    data, indices, updates = xs
    axis = normalize_axis(attrs["axis"], data.ndim)
    out = np.array(data, copy=True)
    flat = _index_positions(indices, data.shape[axis], axis, attrs).reshape(-1)
    # The updates with the index dims as one: slice k of it goes where flat[k] points.
    rows = updates.reshape((*data.shape[:axis], flat.size, *data.shape[axis + 1:]))
    for k, position in enumerate(flat):  # in order: of equal indices the last one wins
        out[(slice(None),) * axis + (position,)] = rows[(slice(None),) * axis + (k,)]
    return [out]


register_op(
    OpSpec(
        name="scatter_update",
        group=_GROUP,
        summary="Write slices of updates into a copy of data along an axis at the given indices (index_copy).",
        operands=(ValueSpec("data"), ValueSpec("indices"), ValueSpec("updates")),
        results=(ValueSpec("result"),),
        attrs=_INDEXING_ATTRS,
        infer=_infer_scatter_update,
        reference=_scatter_update_reference,
        doc=(
            "The inverse of gather: `result` is `data` with `result[a..., indices[i...], b...] = "
            "updates[a..., i..., b...]`, updates having the shape `data.shape[:axis] + indices.shape + "
            "data.shape[axis + 1:]` (torch index_copy, MindSpore ScatterUpdate along an axis; a KV cache written "
            "at the new positions). Of two equal indices the later one in row-major order wins. Any element type. "
            f"{_INDEX_RULE}"
        ),
        example=((TensorSig((4, 8, 2), "f32"), TensorSig((3,), "i64"), TensorSig((4, 3, 2), "f32")), {"axis": 1}),
    )
)
