"""Static quantization: ``quantize`` (Ascend QuantV2 with fixed scale and offset); the quantized batch matmul
``quant_batch_matmul`` (Ascend QuantBatchMatmul).

``dynamic_quant`` (scale computed from the data) lives with the nn ops; this
module holds the static form, whose scale and offset are operands, so that
normalization + quantization chains (``rms_norm_quant``...) can be fused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, register_op
from graphfuse.dialect.shape_utils import dims_equal, require_dtype
from graphfuse.dialect.types import FLOAT_DTYPES, TensorSig


def check_quant_params(x: TensorSig, scale: TensorSig, offset: TensorSig) -> None:
    """scale and offset: f32, 1-D of length 1 (per tensor) or x.shape[-1] (per channel), independently."""
    if x.rank < 1:
        raise VerifyError(f"operand x {x} must have rank >= 1")
    last = x.shape[-1]
    for sig, name in ((scale, "scale"), (offset, "offset")):
        require_dtype(sig, {"f32"}, f"operand {name}")
        if sig.rank != 1 or not (sig.shape[0] == 1 or dims_equal(sig.shape[0], last)):
            size = "?" if last is None else str(last)
            raise VerifyError(
                f"operand {name} {sig} must be 1-D of length 1 (per tensor) or {size} (per channel, the last dim of "
                f"x {x})"
            )


def quantize_array(x: np.ndarray, scale: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """saturate_int8(round_half_even(x * scale + offset)), in f32; NaN -> 0."""
    x = x.astype(np.float32, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        # Two f32 roundings (a product, then a sum), not a fused multiply-add.
        v = x * scale.astype(np.float32, copy=False) + offset.astype(np.float32, copy=False)
        v = np.nan_to_num(np.rint(v), nan=0.0, posinf=127.0, neginf=-128.0)
    return np.clip(v, -128, 127).astype(np.int8)


def _infer_quantize(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, scale, offset = inputs
    require_dtype(x, FLOAT_DTYPES, "operand x")
    check_quant_params(x, scale, offset)
    return [TensorSig(x.shape, "i8")]


def _quantize_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x, scale, offset = xs
    return [quantize_array(x, scale, offset)]


QUANTIZE_DOC = (
    "`q = saturate_int8(round_half_to_even(x * scale + offset))`, computed in f32 (x widened from f16/bf16 exactly; "
    "the product and the sum each rounded to f32, no fused multiply-add). `scale` and `offset` are f32 and each 1-D "
    "of length 1 (per tensor) or `x.shape[-1]` (per channel along the last axis); saturation clamps to [-128, 127], "
    "+-inf saturate and NaN gives 0. This is Ascend's QuantV2 (AscendQuantV2) with `sqrt_mode = false` and "
    "`round_mode = \"round\"`, the static counterpart of `dynamic_quant` (whose scale divides instead of "
    "multiplies)."
)

register_op(OpSpec(
    name="quantize", group="quantization", summary="Static int8 quantization with a given scale and offset.",
    operands=(ValueSpec("x"), ValueSpec("scale"), ValueSpec("offset")), results=(ValueSpec("q"),),
    infer=_infer_quantize, reference=_quantize_reference,
    doc=QUANTIZE_DOC,
    example=((TensorSig((4, 16), "f16"), TensorSig((16,), "f32"), TensorSig((1,), "f32")), {}),
))


# --------------------------------------------------------------------------
# quant_batch_matmul: int8 x int8 -> int32 products, dequantized to a float type (Ascend's QuantBatchMatmul).

_QBMM_DTYPES = ("f16", "bf16", "f32")


def _qbmm_matmul(x1: TensorSig, x2: TensorSig, attrs: dict[str, Any]) -> TensorSig:
    """The int32 product's signature (matmul's checks and messages, its transpose flags)."""
    from graphfuse.dialect.catalog import OPS

    (product,) = OPS["matmul"].infer([TensorSig(x1.shape, "i32"), TensorSig(x2.shape, "i32")],
                                     {"transpose_a": attrs["transpose_x1"], "transpose_b": attrs["transpose_x2"]},
                                     None)
    return product


def _infer_qbmm(inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None) -> list[TensorSig]:
    x1, x2, scale, *bias = inputs
    require_dtype(x1, {"i8"}, "operand x1")
    require_dtype(x2, {"i8"}, "operand x2")
    require_dtype(scale, {"f32"}, "operand scale")
    product = _qbmm_matmul(x1, x2, attrs)
    if product.rank < 1:
        raise VerifyError(f"the product {product} has no last axis to scale")
    n = product.shape[-1]
    if scale.rank != 1 or not (scale.shape[0] == 1 or dims_equal(scale.shape[0], n)):
        raise VerifyError(f"operand scale {scale} must be 1-D of length 1 (per tensor) or {n} (per output channel)")
    if bias:
        require_dtype(bias[0], {"f32", attrs["dtype"]}, "operand bias")
        if bias[0].rank != 1 or not dims_equal(bias[0].shape[0], n):
            raise VerifyError(f"operand bias {bias[0]} must be 1-D of length {n} (the product's last dim)")
    return [TensorSig(product.shape, attrs["dtype"])]


def qbmm_f32(x1: np.ndarray, x2: np.ndarray, scale: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """f32(x1 @ x2) * scale: int8 products summed exactly in int32 (K below 2^17 cannot overflow), one f32 rounding
    of the product and one of the scaling."""
    a = np.asarray(x1, np.int32)
    b = np.asarray(x2, np.int32)
    if attrs["transpose_x1"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_x2"]:
        b = np.swapaxes(b, -1, -2)
    product = np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(np.int32)
    return product.astype(np.float32) * np.asarray(scale, np.float32)


def _qbmm_reference(xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]) -> list[np.ndarray]:
    x1, x2, scale, *bias = xs
    y = qbmm_f32(x1, x2, scale, attrs)
    if bias:
        y = y + np.asarray(bias[0], np.float32)
    return [y]  # rounded to the result type once, by the interpreter


_QBMM_ATTRS = (
    AttrSpec("transpose_x1", AttrKind.BOOL, default=False, doc="swap the last two dims of x1 first"),
    AttrSpec("transpose_x2", AttrKind.BOOL, default=False, doc="swap the last two dims of x2 first"),
    AttrSpec("dtype", AttrKind.STRING, default="f16", choices=_QBMM_DTYPES, doc="the result's float type"),
)

register_op(OpSpec(
    name="quant_batch_matmul", group="quantization",
    summary="int8 x int8 batch matmul, dequantized by a scale (Ascend's QuantBatchMatmul), optional float bias.",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("scale"), ValueSpec("bias", "optional")),
    results=(ValueSpec("y"),), attrs=_QBMM_ATTRS,
    infer=_infer_qbmm, reference=_qbmm_reference, widen_inputs=False,
    doc=("`y = dtype(f32(x1 @ x2) * scale [+ bias])`: the int8 operands' products summed exactly in int32 "
         "(matmul's transpose flags and batching), converted to f32 and multiplied by `scale` (f32, 1-D: one "
         "value, or one per output channel), then the optional `bias` (1-D, f32 or the result type, one per "
         "output channel) added in f32, and the sum rounded once to `dtype` (f16, bf16 or f32). "
         "inference_qbmm_add_fusion folds an add of a bias into it."),
    example=((TensorSig((2, 4, 16), "i8"), TensorSig((16, 8), "i8"), TensorSig((8,), "f32"), TensorSig((8,), "f32")),
             {}),
))
