"""Fused matmul and attention ops: the targets of the matmul, swiglu and attention fusion passes.

Each op computes exactly what the unfused graph it replaces computes, rounding
included: the references run the basic ops' references one after the other
(:func:`graphfuse.dialect.evaluate.evaluate_op`), so an f16 intermediate is
rounded to f16 between the matmul and its epilogue just as it is in the
unfused graph.  The fusion passes therefore keep results bit for bit, except
FlashAttentionFusionV2, whose unfused graphs scale by a division or scale q
first (equal up to rounding).  A backend is free to keep intermediates in f32
(more accurate, not bit-identical).

Ops that absorb a matmul carry matmul's ``transpose_a`` / ``transpose_b`` flags
and its numpy batching; their shape errors read like matmul's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphfuse.dialect.catalog import (
    OPS,
    REQUIRED,
    AttrKind,
    AttrSpec,
    OpSpec,
    ValueSpec,
    VerifyError,
    register_op,
)
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.shape_utils import (
    broadcast_shapes,
    dims_equal,
    normalize_axis,
    require_dtype,
    same_dtype,
)
from graphfuse.dialect.types import FLOAT_DTYPES, NUMERIC_DTYPES, Dim, TensorSig, numpy_dtype

_GROUP = "fused"

_TRANSPOSE_ATTRS = (
    AttrSpec("transpose_a", AttrKind.BOOL, default=False, doc="as matmul: swap the last two dims of a first"),
    AttrSpec("transpose_b", AttrKind.BOOL, default=False, doc="as matmul: swap the last two dims of b first"),
)

# --------------------------------------------------------------------------
# Shared pieces.


def _matmul_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {"transpose_a": bool(attrs["transpose_a"]), "transpose_b": bool(attrs["transpose_b"])}


def _infer_matmul_part(a: TensorSig, b: TensorSig, attrs: dict[str, Any]) -> TensorSig:
    """The signature of the absorbed matmul (matmul's own checks and messages)."""
    (result,) = OPS["matmul"].infer([a, b], _matmul_attrs(attrs), None)
    return result


def _narrow(xs: Sequence[np.ndarray], dtype: str) -> list[np.ndarray]:
    """The reference inputs back in the op's element type.

    The interpreter widens f16/bf16 to f32 before calling a reference; that is
    exact, so narrowing back is too, and ``evaluate_op`` then rounds every
    intermediate as the unfused graph does.
    """
    target = numpy_dtype(dtype)
    return [np.asarray(x).astype(target) for x in xs]


def _matmul(a: np.ndarray, b: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    return evaluate_op("matmul", [a, b], _matmul_attrs(attrs))[0]


# --------------------------------------------------------------------------
# matmul_bias_add


def _infer_matmul_bias_add(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    a, b, bias = inputs
    for sig, name in ((a, "a"), (b, "b"), (bias, "bias")):
        require_dtype(sig, FLOAT_DTYPES, f"operand {name}")
    same_dtype(inputs)
    result = _infer_matmul_part(a, b, attrs)
    if result.rank == 0:
        raise VerifyError(f"the matmul result {result} has no last axis to add the bias along")
    last = result.shape[-1]
    if bias.rank != 1 or not dims_equal(bias.shape[0], last):
        size = "?" if last is None else str(last)
        raise VerifyError(
            f"operand bias {bias} must be 1-D of length {size} (the last dim of the matmul result {result})"
        )
    return [result]  # as bias_add: the result has the shape of the matmul result


def _matmul_bias_add_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    a, b, bias = _narrow(xs, results[0].dtype)
    return evaluate_op("bias_add", [_matmul(a, b, attrs), bias], {"axis": -1})


register_op(OpSpec(
    name="matmul_bias_add", group=_GROUP, summary="Matmul followed by a bias along the last axis.",
    operands=(ValueSpec("a"), ValueSpec("b"), ValueSpec("bias")), results=(ValueSpec("result"),),
    attrs=_TRANSPOSE_ATTRS,
    infer=_infer_matmul_bias_add, reference=_matmul_bias_add_reference,
    doc=(
        "`result = bias_add(matmul(a, b), bias, axis = -1)`: `matmul` with its `transpose_a`/`transpose_b` flags "
        "and numpy batching, then `bias` (1-D, the length of the result's last dim) added along the last axis. "
        "Float operands of one element type; the matmul result is rounded to that type before the bias is added, "
        "as in the unfused graph. Replaces `matmul -> bias_add(axis = -1)` and `matmul -> add` of a 1-D bias "
        "(matmul_elem_biasadd_fusion, MatMulBiasAddFusionPass)."
    ),
    example=((TensorSig((2, 8, 4), "f32"), TensorSig((16, 4), "f32"), TensorSig((16,), "f32")),
             {"transpose_b": True}),
))

# --------------------------------------------------------------------------
# matmul_add


def _infer_matmul_add(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    a, b, c = inputs
    for sig, name in ((a, "a"), (b, "b"), (c, "c")):
        require_dtype(sig, NUMERIC_DTYPES, f"operand {name}")
    same_dtype(inputs)
    result = _infer_matmul_part(a, b, attrs)
    fits = c.rank <= result.rank and all(
        d == 1 or dims_equal(d, r) for d, r in zip(reversed(c.shape), reversed(result.shape), strict=False)
    )
    if not fits:
        raise VerifyError(
            f"operand c {c} must broadcast to the matmul result {result} without changing its shape"
        )
    return [TensorSig(broadcast_shapes(result, c), result.dtype)]


def _matmul_add_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    a, b, c = _narrow(xs, results[0].dtype)
    return evaluate_op("add", [_matmul(a, b, attrs), c])


register_op(OpSpec(
    name="matmul_add", group=_GROUP, summary="Matmul followed by the addition of a tensor broadcast to its result.",
    operands=(ValueSpec("a"), ValueSpec("b"), ValueSpec("c")), results=(ValueSpec("result"),),
    attrs=_TRANSPOSE_ATTRS,
    infer=_infer_matmul_add, reference=_matmul_add_reference,
    doc=(
        "`result = add(matmul(a, b), c)`: `matmul` with its flags and batching, then `c` added with numpy "
        "broadcasting; `c` must broadcast to the matmul result without enlarging it (every dim of `c`, aligned "
        "from the right, is 1 or the result's). Numeric operands of one element type (integers wrap); the "
        "matmul result is rounded to that type before the addition. Replaces `matmul -> add` "
        "(matmul_elem_add_fusion; either operand order)."
    ),
    example=((TensorSig((4, 8), "f32"), TensorSig((8, 16), "f32"), TensorSig((4, 16), "f32")), {}),
))

# --------------------------------------------------------------------------
# matmul_relu, matmul_gelu


def _make_infer_matmul_act(allowed: frozenset[str]):
    def infer(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
        a, b = inputs
        require_dtype(a, allowed, "operand a")
        require_dtype(b, allowed, "operand b")
        if "approximate" in attrs and attrs["approximate"] not in _GELU_APPROXIMATIONS:
            raise VerifyError(f'attribute \'approximate\' must be "none" or "tanh", got {attrs["approximate"]!r}')
        return [_infer_matmul_part(a, b, attrs)]

    return infer


def _make_matmul_act_reference(activation: str):
    def reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
        a, b = _narrow(xs, results[0].dtype)
        act_attrs = {"approximate": attrs["approximate"]} if activation == "gelu" else {}
        return evaluate_op(activation, [_matmul(a, b, attrs)], act_attrs)

    return reference


_GELU_APPROXIMATIONS = ("none", "tanh")

register_op(OpSpec(
    name="matmul_relu", group=_GROUP, summary="Matmul followed by relu.",
    operands=(ValueSpec("a"), ValueSpec("b")), results=(ValueSpec("result"),),
    attrs=_TRANSPOSE_ATTRS,
    infer=_make_infer_matmul_act(NUMERIC_DTYPES), reference=_make_matmul_act_reference("relu"),
    doc=(
        "`result = relu(matmul(a, b))` = `max(matmul(a, b), 0)` (NaN stays NaN), with matmul's flags and "
        "batching; numeric operands of one element type, the matmul result rounded to it first. Replaces "
        "`matmul -> relu` (matmul_elem_relu_fusion)."
    ),
    example=((TensorSig((4, 8), "f32"), TensorSig((16, 8), "f32")), {"transpose_b": True}),
))

register_op(OpSpec(
    name="matmul_gelu", group=_GROUP, summary="Matmul followed by gelu.",
    operands=(ValueSpec("a"), ValueSpec("b")), results=(ValueSpec("result"),),
    attrs=(
        *_TRANSPOSE_ATTRS,
        AttrSpec("approximate", AttrKind.STRING, default="none", choices=_GELU_APPROXIMATIONS,
                 doc="as gelu: 'none' (erf) or 'tanh'"),
    ),
    infer=_make_infer_matmul_act(FLOAT_DTYPES), reference=_make_matmul_act_reference("gelu"),
    doc=(
        "`result = gelu(matmul(a, b), approximate)`, with matmul's flags and batching and gelu's formula "
        "(erf for `\"none\"`, the tanh approximation for `\"tanh\"`); float operands of one element type, the "
        "matmul result rounded to it first. Replaces `matmul -> gelu` (matmul_elem_gelu_fusion)."
    ),
    example=((TensorSig((2, 4, 8), "f16"), TensorSig((8, 16), "f16")), {"approximate": "tanh"}),
))

# --------------------------------------------------------------------------
# swiglu


def _infer_swiglu(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    (x,) = inputs
    require_dtype(x, FLOAT_DTYPES, "operand x")
    axis = normalize_axis(attrs["axis"], x.rank)
    size = x.shape[axis]
    if size is not None and size % 2 != 0:
        raise VerifyError(f"dimension {axis} of operand x {x} has odd size {size}; it must split into two equal halves")
    half: Dim = None if size is None else size // 2
    return [x.with_shape((*x.shape[:axis], half, *x.shape[axis + 1 :]))]


def _swiglu_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    (x,) = _narrow(xs, results[0].dtype)
    axis = normalize_axis(attrs["axis"], x.ndim)
    first, second = np.split(x, 2, axis=axis)
    return evaluate_op("mul", [evaluate_op("silu", [first])[0], second])


register_op(OpSpec(
    name="swiglu", group=_GROUP, summary="SwiGLU: silu of the first half times the second half.",
    operands=(ValueSpec("x"),), results=(ValueSpec("result"),),
    attrs=(AttrSpec("axis", AttrKind.I64, default=-1, doc="axis cut in two halves; negative counts from the end"),),
    infer=_infer_swiglu, reference=_swiglu_reference,
    doc=(
        "`first, second = split(x, 2 equal halves, axis)`, `result = silu(first) * second` with "
        "`silu(t) = t * sigmoid(t)`; the size of `axis` must be even, the result has half of it. Float element "
        "types; `silu(first)` is rounded to the element type before the product, as in the unfused graph. "
        "Replaces `split -> silu -> mul` and its two-slice form (inference_swiglu_fusion)."
    ),
    example=((TensorSig((4, 16), "f32"),), {"axis": -1}),
))

# --------------------------------------------------------------------------
# matmul_split


def _infer_matmul_split(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    a, b = inputs
    result = _infer_matmul_part(a, b, attrs)
    try:
        # graph.split's checks (sizes sum, the IRDL rule that pieces after the second share a size, result count).
        return OPS["split"].infer([result], {"axis": -1, "sizes": attrs["sizes"]}, declared)
    except VerifyError as error:
        raise VerifyError(f"{error.message} (splitting the matmul result {result} along its last axis)") from None


def _matmul_split_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    a, b = _narrow(xs, results[0].dtype)
    return evaluate_op("split", [_matmul(a, b, attrs)], {"axis": -1, "sizes": list(attrs["sizes"])})


register_op(OpSpec(
    name="matmul_split", group=_GROUP, summary="Matmul whose result is split along its last axis.",
    operands=(ValueSpec("a"), ValueSpec("b")),
    results=(ValueSpec("first"), ValueSpec("second"), ValueSpec("rest", "variadic")),
    attrs=(
        *_TRANSPOSE_ATTRS,
        AttrSpec("sizes", AttrKind.I64_ARRAY, default=REQUIRED, doc="size of each piece along the last axis"),
    ),
    infer=_infer_matmul_split, reference=_matmul_split_reference,
    doc=(
        "`split(matmul(a, b), axis = -1, sizes)`: one result per entry of `sizes`, with `graph.split`'s rules "
        "(at least two pieces, non-negative sizes summing to the last dim of the matmul result, and, because "
        "IRDL gives every value of a variadic group one type, pieces after the second all of one size). "
        "Numeric operands of one element type. Replaces `matmul -> split(axis = -1)` "
        "(inference_matmul_split_fusion), e.g. a fused QKV projection."
    ),
    example=((TensorSig((4, 8), "f32"), TensorSig((8, 24), "f32")), {"sizes": [8, 8, 8]}),
))

# --------------------------------------------------------------------------
# flash_attention


def _batch(sig: TensorSig) -> TensorSig:
    return sig.with_shape(sig.shape[:-2])


def _infer_flash_attention(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    q, k, v = inputs[:3]
    mask = inputs[3] if len(inputs) > 3 else None
    names = ("q", "k", "v", "mask")
    for sig, name in zip(inputs, names, strict=False):
        require_dtype(sig, FLOAT_DTYPES, f"operand {name}")
    dtype = same_dtype(inputs)
    for sig, name in ((q, "q"), (k, "k"), (v, "v")):
        if sig.rank < 2:
            raise VerifyError(f"operand {name} {sig} must have rank >= 2 ([..., rows, cols])")
    scale = float(attrs["scale"])
    if not np.isfinite(scale):
        raise VerifyError(f"attribute 'scale' must be a finite float, got {scale}")
    if not dims_equal(q.shape[-1], k.shape[-1]):
        raise VerifyError(f"operands q {q} and k {k} must have the same head dim (last dim)")
    if not dims_equal(k.shape[-2], v.shape[-2]):
        raise VerifyError(f"operands k {k} and v {v} must have the same sequence length (dim -2)")
    try:
        score_batch = broadcast_shapes(_batch(q), _batch(k))
        batch = broadcast_shapes(TensorSig(score_batch, dtype), _batch(v))
    except VerifyError:
        raise VerifyError(f"batch dimensions of operands {q}, {k} and {v} are not broadcast-compatible") from None
    scores = TensorSig((*score_batch, q.shape[-2], k.shape[-2]), dtype)
    if mask is not None:
        fits = mask.rank <= scores.rank and all(
            d == 1 or dims_equal(d, s) for d, s in zip(reversed(mask.shape), reversed(scores.shape), strict=False)
        )
        if not fits:
            raise VerifyError(f"operand mask {mask} must broadcast to the scores {scores} without changing their shape")
    return [TensorSig((*batch, q.shape[-2], v.shape[-1]), dtype)]


def _flash_attention_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    dtype = results[0].dtype
    q, k, v, *mask = _narrow(xs, dtype)
    scores = evaluate_op("matmul", [q, k], {"transpose_b": True})[0]
    # The scale in f32, rounded once to the element type: for a scale the element type holds exactly
    # this is the unfused graph's mul, bit for bit (the product of two f16/bf16 values is exact in f32).
    with np.errstate(all="ignore"):
        scaled = (scores.astype(np.float32) * np.float32(attrs["scale"])).astype(numpy_dtype(dtype))
    if mask:
        scaled = evaluate_op("add", [scaled, mask[0]])[0]
    probs = evaluate_op("safe_softmax" if attrs.get("safe_softmax") else "softmax", [scaled], {"axis": -1})[0]
    return evaluate_op("matmul", [probs, v])


register_op(OpSpec(
    name="flash_attention", group=_GROUP, summary="Scaled dot-product attention in one op.",
    operands=(ValueSpec("q"), ValueSpec("k"), ValueSpec("v"), ValueSpec("mask", "optional")),
    results=(ValueSpec("result"),),
    attrs=(AttrSpec("scale", AttrKind.F32, default=REQUIRED, doc="factor applied to q k^T (e.g. 1/sqrt(head dim))"),
           AttrSpec("safe_softmax", AttrKind.BOOL, default=False,
                    doc="the probabilities are safe_softmax's: a query row whose every score is -inf gives 0")),
    infer=_infer_flash_attention, reference=_flash_attention_reference,
    doc=(
        "`result = softmax(matmul(q, k, transpose_b) * scale + mask, axis = -1) @ v` with `q [..., Sq, D]`, "
        "`k [..., Sk, D]`, `v [..., Sk, Dv]` and the optional `mask` broadcastable to the scores "
        "`[..., Sq, Sk]` without enlarging them; batch dims broadcast like matmul's and the result is "
        "`[..., Sq, Dv]`. Float operands of one element type; each step is rounded to it as in the unfused graph "
        "(the scaled scores are `scores * scale` computed in f32, then rounded). `scale` must be finite. "
        "Replaces the attention subgraph of FlashAttentionFusionV1 (scores multiplied by a constant) exactly, "
        "and those of FlashAttentionFusionV2 (scores divided by a constant c, scale = 1/c; or q scaled before "
        "the first matmul) up to rounding. With `safe_softmax` the probabilities are `safe_softmax`'s, as in "
        "PyTorch's `scaled_dot_product_attention`: a query row whose mask hides every key gives 0."
    ),
    example=((TensorSig((2, 4, 8, 16), "f32"), TensorSig((2, 4, 8, 16), "f32"), TensorSig((2, 4, 8, 16), "f32"),
              TensorSig((1, 1, 8, 8), "f32")), {"scale": 0.25}),
))
