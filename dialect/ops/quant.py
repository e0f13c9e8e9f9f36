"""Static quantization: ``quantize`` (Ascend QuantV2 with fixed scale and offset).

``dynamic_quant`` (scale computed from the data) lives with the nn ops; this
module holds the static form, whose scale and offset are operands, so that
normalization + quantization chains (``rms_norm_quant``...) can be fused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphfuse.dialect.catalog import OpSpec, ValueSpec, VerifyError, register_op
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
