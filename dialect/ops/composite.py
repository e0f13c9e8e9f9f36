"""Composite ops of MindSpore's expander list that have no other home: add_n, tile, squared_difference.

Like gelu or softmax, these are "composite" in graph-kernel terms: the
``graph-kernel-expand`` pass rewrites them into basic ops (adds; reshape +
broadcast_to; sub + mul) before clustering.  Their references are exactly
those compositions, each intermediate rounded to the operand element type as
the basic ops round it, so expanding them never changes a bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphfuse.dialect.catalog import REQUIRED, AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.shape_utils import broadcast_shapes, require_dtype, same_dtype
from graphfuse.dialect.types import NUMERIC_DTYPES, Dim, TensorSig, numpy_dtype

_GROUP = "composite"
_LOW_PRECISION = frozenset({"f16", "bf16"})


def _round_to(array: np.ndarray, dtype: str) -> np.ndarray:
    """``array`` (f32 for a widened f16/bf16 value) rounded to ``dtype`` as a basic op's result is."""
    if dtype in _LOW_PRECISION:
        return array.astype(numpy_dtype(dtype)).astype(np.float32)
    return array


# --------------------------------------------------------------------------
# add_n


def _infer_add_n(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    first = inputs[0]
    require_dtype(first, NUMERIC_DTYPES, "operand first")
    for i, sig in enumerate(inputs[1:], start=1):
        if sig != first:
            raise VerifyError(f"operand #{i} {sig} must have the type of operand #0 {first} (add_n does not broadcast)")
    return [first]


def _add_n_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    dtype = results[0].dtype
    total = xs[0]
    with np.errstate(all="ignore"):  # integer wrap-around and inf - inf are the intended answers
        for x in xs[1:]:
            total = _round_to(np.add(total, x), dtype)
    return [total]


register_op(OpSpec(
    name="add_n", group=_GROUP, summary="Sum of two or more tensors of one type (MindSpore AddN).",
    operands=(ValueSpec("first"), ValueSpec("second"), ValueSpec("rest", "variadic")),
    results=(ValueSpec("result"),),
    infer=_infer_add_n, reference=_add_n_reference,
    doc="`result = ((first + second) + rest[0]) + ...`, summed left to right, each partial sum rounded to the "
        "element type as `graph.add` rounds it (exactly a chain of adds). Every operand has the same type (no "
        "broadcasting); numeric element types; integers wrap on overflow.",
    example=((TensorSig((4, 8), "f32"),) * 3, {}),
))


# --------------------------------------------------------------------------
# tile


def _infer_tile(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (x,) = inputs
    multiples = [int(m) for m in attrs["multiples"]]
    if len(multiples) != x.rank:
        raise VerifyError(f"attribute 'multiples' {multiples} must have one value per dimension of {x} ({x.rank})")
    if any(m < 0 for m in multiples):
        raise VerifyError(f"attribute 'multiples' must contain only non-negative values, got {multiples}")
    # A zero multiple empties the dim even when its size is unknown.
    shape: list[Dim] = [0 if m == 0 else None if d is None else d * m for d, m in zip(x.shape, multiples, strict=True)]
    return [TensorSig(tuple(shape), x.dtype)]


register_op(OpSpec(
    name="tile", group=_GROUP, summary="Repeat the operand along each dimension (numpy.tile).",
    operands=(ValueSpec("operand"),), results=(ValueSpec("result"),),
    attrs=(AttrSpec("multiples", AttrKind.I64_ARRAY, default=REQUIRED,
                    doc="repetitions per dimension, one per operand dim, non-negative"),),
    infer=_infer_tile,
    reference=lambda xs, attrs, results: [np.tile(xs[0], [int(m) for m in attrs["multiples"]])],
    doc="`result[i0, ..., in] = operand[i0 % d0, ..., in % dn]` with result dim `k` = `dk * multiples[k]`: "
        "numpy.tile with exactly one multiple per dimension. Any element type.",
    example=((TensorSig((2, 3), "f32"),), {"multiples": [2, 1]}),
))


# --------------------------------------------------------------------------
# squared_difference


def _infer_squared_difference(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    dtype = same_dtype(inputs)
    require_dtype(inputs[0], NUMERIC_DTYPES, "operands")
    return [TensorSig(broadcast_shapes(*inputs), dtype)]


def _squared_difference_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        d = _round_to(np.subtract(xs[0], xs[1]), results[0].dtype)
        return [np.multiply(d, d)]


register_op(OpSpec(
    name="squared_difference", group=_GROUP, summary="Elementwise (a - b)^2 (MindSpore SquaredDifference).",
    operands=(ValueSpec("a"), ValueSpec("b")), results=(ValueSpec("result"),),
    infer=_infer_squared_difference, reference=_squared_difference_reference,
    doc="`d = a - b` rounded to the element type, then `result = d * d`: exactly `graph.sub` then `graph.mul`. "
        "Operands broadcast like numpy and share a numeric element type; integers wrap on overflow.",
    example=((TensorSig((4, 8), "f32"), TensorSig((8,), "f32")), {}),
))
