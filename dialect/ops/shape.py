"""Data-movement ops: reshape, broadcast_to, transpose, concat, split, slice, pad; iota, the positions
along one dim of a tensor; one_hot, assign, random_uniform (gathers and scatters are in
:mod:`graphfuse.dialect.ops.indexing`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import REQUIRED, AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.shape_utils import (
    can_broadcast_to,
    normalize_axis,
    require_declared,
    require_dtype,
    reshape_units,
    same_dtype,
)
from graphfuse.dialect.types import Dim, TensorSig

_GROUP = "shape"


def _require_same_dtype(result: TensorSig, operand: TensorSig) -> None:
    if result.dtype != operand.dtype:
        raise VerifyError(f"result type {result} must have the element type of operand {operand}")


def _infer_reshape(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (result,) = require_declared(declared)
    source = inputs[0]
    _require_same_dtype(result, source)
    dynamic = [i for i, d in enumerate(result.shape) if d is None]
    if len(inputs) == 2:  # the sizes operand gives the result's dims where its own are dynamic
        sizes = inputs[1]
        if sizes.rank != result.rank:
            raise VerifyError(f"operand sizes {sizes} must have the rank of result type {result}")
        for i, (given, d) in enumerate(zip(sizes.shape, result.shape, strict=True)):
            if given is None and d is not None:
                raise VerifyError(f"dim {i} of operand sizes {sizes} is dynamic, but the result's ({result}) is not")
        dynamic = [i for i in dynamic if sizes.shape[i] is not None]
        if len(dynamic) > 1:
            raise VerifyError(f"result type {result} may have at most one dynamic dimension where operand sizes "
                              f"{sizes} is static (dims {dynamic})")
        if len(dynamic) < result.shape.count(None):
            return [result]  # sizes known only at run time: the counts are checked then
    elif len(dynamic) > 1:
        # Without sizes, two unknown result dims are recovered only as the operand dims they pair with
        # (the interpreter gives the result the paired sizes before it runs the op)
        if reshape_units(source.shape, result.shape) is None:
            raise VerifyError(f"result type {result} may have at most one dynamic dimension, or several that are "
                              f"dynamic dims of operand {source} in order with the static dims between them "
                              "reshaped among themselves")
        return [result]
    count = source.num_elements
    if count is None:
        return [result]  # element counts cannot be compared
    known = math.prod(d for d in result.shape if d is not None)
    if not dynamic and known != count:
        raise VerifyError(f"operand {source} has {count} elements but result type {result} has {known}")
    if dynamic and (known == 0 or count % known != 0):
        raise VerifyError(f"operand {source} with {count} elements cannot be reshaped to {result}")
    return [result]


def _reshape_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    # numpy's -1 computes the one dynamic dim (infer allows at most one with a static operand) from the count.
    shape = tuple(-1 if d is None else d for d in results[0].shape)
    return [np.reshape(xs[0], shape)]


register_op(
    OpSpec(
        name="reshape",
        group=_GROUP,
        summary="Reinterpret the operand's elements (row-major order) with the result type's shape.",
        operands=(ValueSpec("operand"), ValueSpec("sizes", "optional")),
        results=(ValueSpec("result"),),
        infer=_infer_reshape,
        reference=_reshape_reference,
        result_param="shape",
        doc=(
            "The result type gives the new shape and must keep the element type. Element counts must match when "
            "both are static. The result may have one dynamic dimension, computed from the element count at run "
            "time; with a dynamic operand the counts are not checked. It may have several when each is a dynamic "
            "dim of the operand, in order, and the static dims between two of them (before the first, after the "
            "last) have one element count on both sides: `[?, ?, 256] -> [?, ?, 8, 32]`, "
            "`[?, 4, ?, 32] -> [?, 4, 1, ?, 32]`; each then has the size of the operand dim it pairs with. "
            "Any other dynamic sizes come from the optional operand `sizes`, a tensor of the result's rank whose "
            "elements are not read: each of its dynamic dims gives the result's dim at that position "
            "(`[?, 768] -> [?, ?, 768]` with sizes `tensor<?x?x1xi1>`, a `[b * s, 768]` viewed as `[b, s, 768]`), "
            "and one more dynamic result dim, if any, is the element count over the others. The element counts "
            "are then checked when the graph runs."
        ),
        example=((TensorSig((4, 8), "f32"),), {}),
        example_result=TensorSig((2, 16), "f32"),
    )
)


def _infer_broadcast_to(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    (result,) = require_declared(declared)
    source = inputs[0]
    _require_same_dtype(result, source)
    if not can_broadcast_to(source.shape, result.shape):
        raise VerifyError(f"operand {source} cannot be broadcast to {result}")
    offset = result.rank - source.rank
    for i, d in enumerate(result.shape):
        # A dynamic result dim is only determined when it comes from an operand dim that is not broadcast.
        if d is None and (i < offset or source.shape[i - offset] == 1):
            raise VerifyError(
                f"dynamic dimensions are not supported: dimension {i} of {result} is broadcast, so its size is unknown"
            )
    return [result]


def _broadcast_to_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    offset = len(results[0].shape) - x.ndim
    shape = tuple(x.shape[i - offset] if d is None else d for i, d in enumerate(results[0].shape))
    return [np.broadcast_to(x, shape).copy()]


register_op(
    OpSpec(
        name="broadcast_to",
        group=_GROUP,
        summary="Broadcast the operand to the result type's shape (numpy.broadcast_to rules).",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        infer=_infer_broadcast_to,
        reference=_broadcast_to_reference,
        result_param="shape",
        doc=(
            "Operand dims align with the trailing result dims; each must be 1 or equal the result dim. "
            "A dynamic result dim must come from a dynamic or non-1 operand dim (its size is then the operand's)."
        ),
        example=((TensorSig((1, 8), "f32"),), {}),
        example_result=TensorSig((4, 8), "f32"),
    )
)


def _infer_transpose(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    source = inputs[0]
    perm = list(attrs["perm"])
    if sorted(perm) != list(range(source.rank)):
        raise VerifyError(f"perm {perm} is not a permutation of {list(range(source.rank))}")
    return [source.with_shape(tuple(source.shape[p] for p in perm))]


register_op(
    OpSpec(
        name="transpose",
        group=_GROUP,
        summary="Permute the dimensions: result dim i is operand dim perm[i].",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        attrs=(AttrSpec("perm", AttrKind.I64_ARRAY, default=REQUIRED, doc="A permutation of 0..rank-1."),),
        infer=_infer_transpose,
        reference=lambda xs, attrs, results: [np.transpose(xs[0], attrs["perm"]).copy()],
        doc="`perm` must list every axis 0..rank-1 exactly once; negative axes are not accepted.",
        example=((TensorSig((2, 4, 8), "f32"),), {"perm": [0, 2, 1]}),
    )
)


# IRDL makes every value of a variadic group share one type, so concat's inputs
# and split's results are declared as two single values plus a variadic rest:
# any two shapes, then any number of values of a third shape.
_MIN_PIECES = 2


def _infer_concat(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    if len(inputs) < _MIN_PIECES:
        raise VerifyError(f"expects at least {_MIN_PIECES} operands, got {len(inputs)}")
    if len(set(inputs[_MIN_PIECES:])) > 1:
        raise VerifyError(
            f"operands after the second must all have one type (an IRDL variadic group), got "
            f"{', '.join(str(s) for s in inputs[_MIN_PIECES:])}; nest concats to join more shapes"
        )
    dtype = same_dtype(inputs)
    rank = inputs[0].rank
    for sig in inputs[1:]:
        if sig.rank != rank:
            raise VerifyError(f"operands {inputs[0]} and {sig} must have the same rank")
    axis = normalize_axis(attrs["axis"], rank)
    shape: list[Dim] = []
    for i in range(rank):
        dims = [s.shape[i] for s in inputs]
        if i == axis:
            shape.append(None if None in dims else sum(dims))
            continue
        static = {d for d in dims if d is not None}
        if len(static) > 1:
            names = " and ".join(str(s) for s in inputs if s.shape[i] is not None)
            raise VerifyError(f"operands {names} differ in dimension {i}; only the concat axis {axis} may differ")
        shape.append(static.pop() if static else None)
    return [TensorSig(tuple(shape), dtype)]


def _concat_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    return [np.concatenate(xs, axis=normalize_axis(attrs["axis"], xs[0].ndim))]


register_op(
    OpSpec(
        name="concat",
        group=_GROUP,
        summary="Join the operands along an axis.",
        operands=(ValueSpec("first"), ValueSpec("second"), ValueSpec("rest", "variadic")),
        results=(ValueSpec("result"),),
        attrs=(
            AttrSpec(
                "axis", AttrKind.I64, default=REQUIRED, doc="The axis to join along; negative counts from the end."
            ),
        ),
        infer=_infer_concat,
        reference=_concat_reference,
        doc="At least one operand; all share element type and rank, and every dimension but `axis` must be equal.",
        example=((TensorSig((4, 8), "f32"), TensorSig((4, 2), "f32")), {"axis": -1}),
    )
)


def _infer_split(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    source = inputs[0]
    axis = normalize_axis(attrs["axis"], source.rank)
    sizes = list(attrs["sizes"])
    if len(sizes) < _MIN_PIECES:
        raise VerifyError(
            f"sizes {sizes} must describe at least {_MIN_PIECES} pieces (one piece is the operand itself)"
        )
    if len(set(sizes[_MIN_PIECES:])) > 1:
        raise VerifyError(
            f"sizes {sizes}: pieces after the second must all have one size (an IRDL variadic group); "
            "nest splits to cut more sizes"
        )
    if any(s < 0 for s in sizes):
        raise VerifyError(f"sizes {sizes} must be non-negative")
    dim = source.shape[axis]
    if dim is not None and sum(sizes) != dim:
        raise VerifyError(f"sizes {sizes} sum to {sum(sizes)}, not to the size {dim} of dimension {axis} of {source}")
    if declared is not None and len(declared) != len(sizes):
        raise VerifyError(f"has {len(declared)} results but sizes {sizes} describe {len(sizes)} pieces")
    return [source.with_shape((*source.shape[:axis], s, *source.shape[axis + 1 :])) for s in sizes]


def _split_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    axis = normalize_axis(attrs["axis"], x.ndim)
    bounds = np.cumsum(attrs["sizes"])[:-1]
    return [piece.copy() for piece in np.split(x, bounds, axis=axis)]


register_op(
    OpSpec(
        name="split",
        group=_GROUP,
        summary="Cut the operand along an axis into pieces of the given sizes.",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("first"), ValueSpec("second"), ValueSpec("rest", "variadic")),
        attrs=(
            AttrSpec("axis", AttrKind.I64, default=REQUIRED, doc="The axis to cut; negative counts from the end."),
            AttrSpec("sizes", AttrKind.I64_ARRAY, default=REQUIRED, doc="Size of each piece along `axis`."),
        ),
        infer=_infer_split,
        reference=_split_reference,
        doc=(
            "One result per entry of `sizes`, which must be non-empty and non-negative and sum to the size of "
            "`axis` (checked when that size is static)."
        ),
        example=((TensorSig((4, 8), "f32"),), {"axis": 1, "sizes": [2, 6]}),
    )
)


def _infer_slice(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    source = inputs[0]
    start, limit = list(attrs["start"]), list(attrs["limit"])
    strides = [1] * source.rank if attrs["strides"] is None else list(attrs["strides"])
    for name, values in (("start", start), ("limit", limit), ("strides", strides)):
        if len(values) != source.rank:
            raise VerifyError(f"{name} {values} must have one entry per dimension of {source}")
    shape: list[Dim] = []
    for i, (lo, hi, step, dim) in enumerate(zip(start, limit, strides, source.shape, strict=True)):
        if step < 1:
            raise VerifyError(f"strides {strides} must be positive")
        # A dynamic dim only leaves the upper bound unchecked: the result size depends on the attributes alone.
        if not 0 <= lo <= hi or (dim is not None and hi > dim):
            size = "?" if dim is None else dim
            raise VerifyError(
                f"start {lo} and limit {hi} are out of bounds for dimension {i} of size {size} "
                "(need 0 <= start <= limit <= size)"
            )
        shape.append(-(-(hi - lo) // step))
    return [source.with_shape(tuple(shape))]


def _slice_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    strides = [1] * x.ndim if attrs["strides"] is None else attrs["strides"]
    index = tuple(slice(lo, hi, step) for lo, hi, step in zip(attrs["start"], attrs["limit"], strides, strict=True))
    return [x[index].copy()]


register_op(
    OpSpec(
        name="slice",
        group=_GROUP,
        summary="Take the strided box start:limit:strides of the operand (StableHLO slice).",
        operands=(ValueSpec("operand"),),
        results=(ValueSpec("result"),),
        attrs=(
            AttrSpec("start", AttrKind.I64_ARRAY, default=REQUIRED, doc="First index per dimension."),
            AttrSpec("limit", AttrKind.I64_ARRAY, default=REQUIRED, doc="End index (exclusive) per dimension."),
            AttrSpec("strides", AttrKind.I64_ARRAY, default=None, doc="Step per dimension; all ones when absent."),
        ),
        infer=_infer_slice,
        reference=_slice_reference,
        doc=(
            "Like the XLA/StableHLO slice, not numpy indexing: one entry per dimension, no negative indices, "
            "0 <= start <= limit <= dim and stride >= 1; result dim i is ceil((limit - start) / stride)."
        ),
        example=((TensorSig((4, 8), "f32"),), {"start": [1, 0], "limit": [3, 8], "strides": [1, 2]}),
    )
)


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _check_pad_mode(mode: str, axis: int, size: int, low: int, high: int, source: TensorSig) -> None:
    """The rule of ``mode`` for one padded static dimension (PyTorch's, where its kernels stay inside the
    operand)."""
    where = f"dimension {axis} of {source} padded by {low} and {high}"
    if mode == "reflect" and (low >= size or high >= size):
        raise VerifyError(f"{where}: reflect pads must be smaller than the dimension ({size})")
    if mode == "replicate" and size == 0:
        raise VerifyError(f"{where}: replicate has no element to repeat")
    if mode == "circular":
        kept = size + min(low, 0) + min(high, 0)
        if max(low, 0) > kept or max(high, 0) > kept:
            raise VerifyError(f"{where}: circular pads must be at most the {max(kept, 0)} elements left after "
                              "the negative pads (they would wrap around more than once)")


def _infer_pad(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    source = inputs[0]
    low, high, mode = list(attrs["low"]), list(attrs["high"]), attrs["mode"]
    if mode not in PAD_MODES:  # the parser checks choices; evaluate_op passes Python values straight through
        raise VerifyError(f"attribute 'mode' must be one of {', '.join(PAD_MODES)}, got {mode!r}")
    for name, values in (("low", low), ("high", high)):
        if len(values) != source.rank:
            raise VerifyError(f"{name} {values} must have one entry per dimension of {source}")
    if len(inputs) == 2:
        value = inputs[1]
        if mode != "constant":
            raise VerifyError(f'operand padding_value is only read by mode "constant", not "{mode}"')
        if value.rank != 0 or value.dtype != source.dtype:
            raise VerifyError(f"operand padding_value {value} must be a rank-0 tensor of the element type of {source}")
    shape: list[Dim] = []
    for axis, (lo, hi, size) in enumerate(zip(low, high, source.shape, strict=True)):
        if size is None:  # the mode's rules can only be checked once the size is known
            shape.append(None)
            continue
        if size + lo + hi < 0:
            raise VerifyError(f"dimension {axis} of {source} padded by {lo} and {hi} would have size {size + lo + hi}")
        if lo or hi:
            _check_pad_mode(mode, axis, size, lo, hi, source)
        shape.append(size + lo + hi)
    return [source.with_shape(tuple(shape))]


def pad_positions(size: int, low: int, high: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Along one dimension of ``size`` padded by ``low`` and ``high``: the operand position each result position
    reads, and whether it lies inside the operand (constant mode writes the padding value where it does not)."""
    result = np.arange(size + low + high)
    source = result - low
    inside = (source >= 0) & (source < size)
    if mode == "constant":
        return np.clip(source, 0, max(size - 1, 0)), inside
    if mode == "reflect":  # mirrored at the first and the last element, which are not repeated
        source = np.abs(source)
        return np.where(source >= size, 2 * (size - 1) - source, source), inside
    if mode == "replicate":
        return np.clip(source, 0, size - 1), inside
    # circular: the negative pads crop first, then the positions wrap around what is left
    kept = size + min(low, 0) + min(high, 0)
    return max(-low, 0) + np.mod(result - max(low, 0), kept), inside


def _pad_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x = xs[0]
    mode = attrs["mode"]
    inside = np.ones((), dtype=bool)
    for axis, (lo, hi) in enumerate(zip(attrs["low"], attrs["high"], strict=True)):
        if not lo and not hi:
            continue
        positions, kept = pad_positions(x.shape[axis], lo, hi, mode)
        if x.shape[axis] == 0:  # nothing to read: every position is padding
            x = np.zeros((*x.shape[:axis], positions.size, *x.shape[axis + 1:]), x.dtype)
        else:
            x = np.take(x, positions, axis=axis)
        inside = inside & kept.reshape([-1 if d == axis else 1 for d in range(x.ndim)])
    if mode != "constant":
        return [x]
    value = xs[1] if len(xs) == 2 else np.zeros((), x.dtype)
    return [np.where(inside, x, value.astype(x.dtype))]


register_op(
    OpSpec(
        name="pad",
        group=_GROUP,
        summary="Pad (or crop, by negative pads) every dimension with a constant, or with the operand reflected, "
                "replicated or wrapped around (PyTorch's F.pad).",
        operands=(ValueSpec("operand"), ValueSpec("padding_value", "optional")),
        results=(ValueSpec("result"),),
        attrs=(
            AttrSpec("low", AttrKind.I64_ARRAY, default=REQUIRED,
                     doc="Elements added before each dimension; negative removes them."),
            AttrSpec("high", AttrKind.I64_ARRAY, default=REQUIRED,
                     doc="Elements added after each dimension; negative removes them."),
            AttrSpec("mode", AttrKind.STRING, default="constant", choices=PAD_MODES,
                     doc="What the added elements hold: the padding value or the operand's elements."),
        ),
        infer=_infer_pad,
        reference=_pad_reference,
        doc=(
            "Result dimension d has size `n + low[d] + high[d] >= 0` (`n` the operand's); its position p reads "
            "the operand at `s = p - low[d]` when `0 <= s < n`. Elsewhere: `constant` gives `padding_value` (a "
            "rank-0 tensor of the operand's type; 0 when absent); `reflect` mirrors at the first and the last "
            "element without repeating them (`|s|`, and `2(n - 1) - s` past the end; each pad smaller than n); "
            "`replicate` repeats the edge element (`s` clamped to `[0, n - 1]`); `circular` first removes what "
            "the negative pads remove, then wraps around the m elements left (`s` modulo m; each positive pad "
            "at most m). Negative pads crop in every mode; reflect and replicate still read relative to the "
            "operand's own edges, as PyTorch does. Only constant takes `padding_value`. Any element type; a "
            "dynamic dimension's rules are not checked."
        ),
        example=((TensorSig((2, 3, 5), "f32"),), {"low": [0, 1, -1], "high": [0, 2, 2], "mode": "reflect"}),
    )
)


def _infer_iota(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (like,) = inputs
    if like.rank == 0:
        raise VerifyError(f"operand {like} must have at least one dimension")
    return [TensorSig((like.shape[normalize_axis(attrs["axis"], like.rank)],), "i64")]


def _iota_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    like = xs[0]
    return [np.arange(like.shape[normalize_axis(attrs["axis"], like.ndim)], dtype=np.int64)]


register_op(
    OpSpec(
        name="iota",
        group=_GROUP,
        summary="The positions 0, 1, ... along one dimension of a tensor (arange over a dynamic size).",
        operands=(ValueSpec("like"),),
        results=(ValueSpec("result"),),
        attrs=(AttrSpec("axis", AttrKind.I64, default=REQUIRED, doc="the dimension of `like` counted"),),
        infer=_infer_iota,
        reference=_iota_reference,
        doc=(
            "`result = [0, 1, ..., like.shape[axis] - 1]` as i64: only the size of `like`'s dimension is read, "
            "never its elements, so a dynamic dimension gives a dynamic length (PyTorch's `arange(x.shape[1])` "
            "under a symbolic sequence length; StableHLO's iota with its size taken from a tensor)."
        ),
        example=((TensorSig((2, 7), "f32"),), {"axis": 1}),
    )
)


def _infer_dimension_size(inputs: list[TensorSig], attrs: dict[str, Any],
                          declared: list[TensorSig] | None) -> list[TensorSig]:
    (source,) = inputs
    if source.rank == 0:
        raise VerifyError(f"operand {source} must have at least one dimension")
    normalize_axis(attrs["axis"], source.rank)
    return [TensorSig((), "i64")]


def _dimension_size_reference(xs: list[np.ndarray], attrs: dict[str, Any],
                              results: list[TensorSig]) -> list[np.ndarray]:
    source = xs[0]
    return [np.array(source.shape[normalize_axis(attrs["axis"], source.ndim)], dtype=np.int64)]


register_op(
    OpSpec(
        name="dimension_size",
        group=_GROUP,
        summary="The size of one dimension of a tensor, as a rank-0 i64 tensor (a symbolic size used as a value).",
        operands=(ValueSpec("source"),),
        results=(ValueSpec("result"),),
        attrs=(AttrSpec("axis", AttrKind.I64, default=REQUIRED, doc="the dimension of `source` measured"),),
        infer=_infer_dimension_size,
        reference=_dimension_size_reference,
        doc=(
            "`result = source.shape[axis]`: only the size is read, never the elements (StableHLO's "
            "get_dimension_size; PyTorch's `x.shape[1]` used in arithmetic under a symbolic size, as "
            "`arange(n) + past_length`)."
        ),
        example=((TensorSig((2, 7), "f32"),), {"axis": 1}),
    )
)


def _infer_one_hot(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    indices, on_value, off_value = inputs
    require_dtype(indices, frozenset({"i32", "i64"}), "indices")
    dtype = same_dtype([on_value, off_value], "on and off values")
    for name, sig in (("on_value", on_value), ("off_value", off_value)):
        if sig.rank != 0:
            raise VerifyError(f"{name} {sig} must be a scalar (rank 0)")
    depth = attrs["depth"]
    if depth < 0:
        raise VerifyError(f"depth must be >= 0, got {depth}")
    axis = normalize_axis(attrs["axis"], indices.rank + 1)
    shape = list(indices.shape)
    shape.insert(axis, depth)
    return [TensorSig(tuple(shape), dtype)]


def _one_hot_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    indices, on_value, off_value = xs
    axis = normalize_axis(attrs["axis"], indices.ndim + 1)
    positions = np.arange(attrs["depth"]).reshape([-1 if i == axis else 1 for i in range(indices.ndim + 1)])
    hot = np.expand_dims(indices, axis) == positions
    return [np.where(hot, on_value, off_value).astype(on_value.dtype)]


register_op(
    OpSpec(
        name="one_hot",
        group=_GROUP,
        summary="One-hot encoding: on_value where the position along the new axis is the index, else off_value.",
        operands=(ValueSpec("indices"), ValueSpec("on_value"), ValueSpec("off_value")),
        results=(ValueSpec("result"),),
        attrs=(
            AttrSpec("depth", AttrKind.I64, default=REQUIRED, doc="size of the new axis"),
            AttrSpec("axis", AttrKind.I64, default=-1, doc="position of the new axis in the result"),
        ),
        infer=_infer_one_hot,
        reference=_one_hot_reference,
        doc=(
            "`result` has the indices' shape with an axis of `depth` inserted at `axis`; "
            "`result[..., d, ...] = on_value if indices[...] == d else off_value`. An index outside "
            "[0, depth) gives off_value all along the axis (MindSpore's OneHot; no wrapping of negative "
            "indices). Indices i32 or i64; on and off values scalars of one element type."
        ),
        example=((TensorSig((4,), "i64"), TensorSig((), "f32"), TensorSig((), "f32")), {"depth": 6}),
    )
)


def _infer_assign(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    variable, value = inputs
    if variable.dtype != value.dtype or not can_broadcast_to(value.shape, variable.shape):
        raise VerifyError(f"value {value} must have the element type of variable {variable} and broadcast to its "
                          "shape")
    return [variable]


def _assign_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    variable, value = xs
    return [np.array(np.broadcast_to(value, variable.shape), dtype=variable.dtype)]


register_op(
    OpSpec(
        name="assign",
        group=_GROUP,
        summary="The new value of a variable (MindSpore's Assign): value, broadcast to the variable's shape.",
        operands=(ValueSpec("variable"), ValueSpec("value")),
        results=(ValueSpec("result"),),
        infer=_infer_assign,
        reference=_assign_reference,
        doc=(
            "Graphs here are functional: the variable is not written in place. The result is the variable's "
            "new value (an optimizer's updated weight), which the caller stores back, as the PyTorch front "
            "end's `input_mutations=\"results\"` does for mutated inputs."
        ),
        example=((TensorSig((4, 8), "f32"), TensorSig((4, 8), "f32")), {}),
    )
)


#: The counter hash's constants: the golden-ratio increment spreading consecutive counters, a multiplier for
#: the seed's high half, and the two multipliers of the "lowbias32" integer mix (every output bit depends on
#: every input bit).
RANDOM_GOLDEN, RANDOM_SEED_HIGH, RANDOM_MIX = 0x9E3779B9, 0x85EBCA6B, (0x7FEB352D, 0x846CA68B)


def random_seed_bits(seed: int) -> int:
    """The 64-bit seed folded into the 32 bits the hash mixes in: low half xor high half * RANDOM_SEED_HIGH."""
    return (seed & 0xFFFFFFFF) ^ ((((seed >> 32) & 0xFFFFFFFF) * RANDOM_SEED_HIGH) & 0xFFFFFFFF)


def random_uniform_array(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """The values graph.random_uniform defines: element i (row-major) from the uint32 hash of (seed, i)."""
    with np.errstate(over="ignore"):
        counter = np.arange(math.prod(shape), dtype=np.uint64).astype(np.uint32)
        x = counter * np.uint32(RANDOM_GOLDEN) ^ np.uint32(random_seed_bits(seed))
        x ^= x >> np.uint32(16)
        x *= np.uint32(RANDOM_MIX[0])
        x ^= x >> np.uint32(15)
        x *= np.uint32(RANDOM_MIX[1])
        x ^= x >> np.uint32(16)
    return ((x >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24)).reshape(shape)


def _infer_random_uniform(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
                          ) -> list[TensorSig]:
    if attrs["seed"] < 0:
        raise VerifyError(f"seed must be >= 0, got {attrs['seed']}")
    return [TensorSig(inputs[0].shape, "f32")]


def _random_uniform_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
                              ) -> list[np.ndarray]:
    return [random_uniform_array(tuple(xs[0].shape), attrs["seed"])]


register_op(
    OpSpec(
        name="random_uniform",
        group=_GROUP,
        summary="Pseudo-random f32 values in [0, 1) of `like`'s shape: a counter-based hash of (seed, position).",
        operands=(ValueSpec("like"),),
        results=(ValueSpec("result"),),
        attrs=(AttrSpec("seed", AttrKind.I64, default=0, doc="the stream; the same seed gives the same values"),),
        infer=_infer_random_uniform,
        reference=_random_uniform_reference,
        doc=(
            "Only `like`'s shape is read. Element i (row-major) is (h >> 8) * 2^-24 with h the lowbias32 mix of "
            "the uint32 i * 0x9E3779B9 xor the seed's bits: a pure function of the seed and the position, so the "
            "interpreter and the compiled code give the same bits, on any number of threads. Not a "
            "cryptographic generator; for dropout masks and initialisations."
        ),
        example=((TensorSig((4, 8), "f32"),), {"seed": 7}),
    )
)
