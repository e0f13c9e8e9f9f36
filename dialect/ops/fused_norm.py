"""Fused normalization ops: the targets of the add/norm/quant fusion passes.

Each op computes exactly the composition of the basic ops it replaces, so its
reference is that composition, run through the basic ops' own references
(:func:`graphfuse.dialect.evaluate.evaluate_op`) with every intermediate
rounded to the element type it has in the unfused graph.  A fused op is an
optimization of the graph, never a change of its numbers.

``add_rms_norm`` and ``add_rms_norm_cast`` also have a mixed-precision form
(f16/bf16 inputs, f32 gamma) that computes the sum and the normalization in f32:
it is what ``cast(x1) + cast(x2) -> rms_norm (f32) -> cast back`` becomes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphfuse.dialect.catalog import AttrKind, AttrSpec, OpSpec, ValueSpec, VerifyError, lookup_op, register_op
from graphfuse.dialect.evaluate import cast_to, evaluate_op, widen
from graphfuse.dialect.ops.quant import QUANTIZE_DOC, check_quant_params, quantize_array
from graphfuse.dialect.shape_utils import broadcast_shapes, dims_equal, require_dtype
from graphfuse.dialect.types import FLOAT_DTYPES, TensorSig

_GROUP = "fused"
_LOW_PRECISION = frozenset({"f16", "bf16"})

_EPS_LN = AttrSpec("epsilon", AttrKind.F32, default=1e-5, doc="as layer_norm's: added to the variance; >= 0")
_EPS_RMS = AttrSpec("epsilon", AttrKind.F32, default=1e-6, doc="as rms_norm's: added to mean(x^2); >= 0")

def _basic_infer(name: str, inputs: list[TensorSig], attrs: dict[str, Any]) -> list[TensorSig]:
    """The inference of basic op ``name`` (its checks and messages) on the fused op's operands."""
    spec = lookup_op(f"graph.{name}")
    assert spec is not None, name
    return list(spec.infer(inputs, spec.with_defaults(attrs), None))


def _sum_sig(x1: TensorSig, x2: TensorSig, dtype: str) -> TensorSig:
    """x1 + x2 (numpy broadcasting), which must have x1's shape: the fused kernels write the sum in x1's layout."""
    require_dtype(x1, FLOAT_DTYPES, "operand x1")
    require_dtype(x2, FLOAT_DTYPES, "operand x2")
    if x1.dtype != x2.dtype:
        raise VerifyError(f"operands x1 {x1} and x2 {x2} must have the same element type")
    shape = broadcast_shapes(x1, x2)
    if len(shape) != x1.rank or not all(dims_equal(a, b) for a, b in zip(shape, x1.shape, strict=True)):
        raise VerifyError(f"operand x2 {x2} must broadcast to the shape of x1 {x1} (the sum has x1's shape)")
    return TensorSig(x1.shape, dtype)


def _rms_dtypes(x1: TensorSig, gamma: TensorSig, mixed: bool) -> str:
    """The element type the sum and the normalization are computed in: x1's, or f32 in the mixed form."""
    require_dtype(gamma, FLOAT_DTYPES, "operand gamma")
    if gamma.dtype == x1.dtype:
        return x1.dtype
    if mixed and gamma.dtype == "f32" and x1.dtype in _LOW_PRECISION:
        return "f32"
    allowed = " (or f32 with f16/bf16 inputs, to compute in f32)" if mixed else ""
    raise VerifyError(f"operand gamma {gamma} must have the element type of x1 {x1}{allowed}")


def _add(x1: np.ndarray, x2: np.ndarray, dtype: str) -> np.ndarray:
    """graph.add of the operands converted (exactly: they were widened from x's type) to ``dtype``."""
    out = evaluate_op("add", [cast_to(x1, dtype), cast_to(x2, dtype)])[0]
    if out.shape != x1.shape:
        raise VerifyError(f"x2 of shape {x2.shape} broadcasts x1 of shape {x1.shape} to {out.shape} at run time")
    return out


# --------------------------------------------------------------------------
# add_layer_norm


def _infer_add_layer_norm(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x1, x2, gamma, beta = inputs
    total = _sum_sig(x1, x2, x1.dtype)
    (y,) = _basic_infer("layer_norm", [total, gamma, beta], attrs)
    return [y, total]


def _add_layer_norm_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    x1, x2, gamma, beta = xs
    dtype = results[1].dtype
    total = _add(x1, x2, dtype)
    norm_attrs = {"begin_norm_axis": attrs["begin_norm_axis"], "epsilon": attrs["epsilon"]}
    (y,) = evaluate_op("layer_norm", [total, cast_to(gamma, dtype), cast_to(beta, dtype)], norm_attrs)
    return [y, total]


register_op(OpSpec(
    name="add_layer_norm", group=_GROUP, summary="Residual add followed by layer normalization, in one kernel.",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("gamma"), ValueSpec("beta")),
    results=(ValueSpec("y"), ValueSpec("sum")),
    attrs=(
        AttrSpec("begin_norm_axis", AttrKind.I64, default=-1,
                 doc="as layer_norm's: axes [begin_norm_axis, rank) are normalized"),
        _EPS_LN,
    ),
    infer=_infer_add_layer_norm, reference=_add_layer_norm_reference,
    doc="`sum = x1 + x2` (numpy broadcasting, allowed only when the sum has x1's shape; rounded to the element "
        "type like graph.add), `y = layer_norm(sum, gamma, beta)` with `begin_norm_axis` and `epsilon` "
        "(graph.layer_norm's semantics). All operands share one float element type. Replaces `add -> layer_norm` "
        "(MindSpore's AddLayerNorm; passes add_layer_norm_fusion, add_layer_norm_v3_fusion, "
        "add_layer_norm_ext_fusion); `sum` stands for the add's result wherever else it is used.",
    example=((TensorSig((2, 4, 8), "f16"), TensorSig((2, 4, 8), "f16"), TensorSig((8,), "f16"),
              TensorSig((8,), "f16")), {"begin_norm_axis": -1, "epsilon": 1e-5}),
))


# --------------------------------------------------------------------------
# add_rms_norm, add_rms_norm_cast


def _infer_add_rms(inputs: list[TensorSig], attrs: dict[str, Any], mixed: bool) -> tuple[TensorSig, TensorSig]:
    """(y, sum) of add + rms_norm on (x1, x2, gamma, ...)."""
    x1, x2, gamma = inputs[:3]
    compute = _rms_dtypes(x1, gamma, mixed)
    total = _sum_sig(x1, x2, compute)
    _basic_infer("rms_norm", [total, gamma], attrs)
    return TensorSig(x1.shape, x1.dtype), total


def _add_rms(xs: list[np.ndarray], attrs: dict[str, Any], x_dtype: str, compute: str) -> tuple[np.ndarray, np.ndarray]:
    """(y in x's type, sum in the compute type) as graph.add then graph.rms_norm in ``compute``."""
    x1, x2, gamma = xs[:3]
    total = _add(x1, x2, compute)
    (y,) = evaluate_op("rms_norm", [total, cast_to(gamma, compute)], {"epsilon": attrs["epsilon"]})
    return cast_to(y, x_dtype), total


def _infer_add_rms_norm(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    return list(_infer_add_rms(inputs, attrs, mixed=True))


def _add_rms_norm_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    return list(_add_rms(xs, attrs, results[0].dtype, results[1].dtype))


_MIXED_DOC = (
    " Mixed precision: with f16/bf16 `x1`, `x2` and an f32 `gamma` the op computes in f32 internally: `sum = "
    "f32(x1) + f32(x2)` stays f32 (result `sum` is f32) and `y = cast(rms_norm(sum, gamma), x1's type)`, exactly "
    "what `cast(x1) + cast(x2)` (to f32) `-> rms_norm -> cast` back computes (add_cast_rms_norm_cast_fusion)."
)

register_op(OpSpec(
    name="add_rms_norm", group=_GROUP, summary="Residual add followed by RMS normalization, in one kernel.",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("gamma")),
    results=(ValueSpec("y"), ValueSpec("sum")),
    attrs=(_EPS_RMS,),
    infer=_infer_add_rms_norm, reference=_add_rms_norm_reference,
    doc="`sum = x1 + x2` (numpy broadcasting, allowed only when the sum has x1's shape; rounded to the element type "
        "like graph.add), `y = rms_norm(sum, gamma)` with `epsilon` (graph.rms_norm's semantics: gamma is 1-D of "
        "the last dim). Replaces `add -> rms_norm` (Ascend AddRmsNorm / TorchAir npu_add_rms_norm, whose rstd "
        "output is not modelled); `sum` stands for the add's result wherever else it is used." + _MIXED_DOC,
    example=((TensorSig((2, 4, 8), "bf16"), TensorSig((2, 4, 8), "bf16"), TensorSig((8,), "f32")),
             {"epsilon": 1e-6}),
))


def _infer_add_rms_norm_cast(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    y, total = _infer_add_rms(inputs, attrs, mixed=True)
    return [y.with_dtype("f32"), y, total]


def _add_rms_norm_cast_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    y, total = _add_rms(xs, attrs, results[1].dtype, results[2].dtype)
    (y_cast,) = evaluate_op("cast", [y], declared=[results[0]])
    return [y_cast, y, total]


register_op(OpSpec(
    name="add_rms_norm_cast", group=_GROUP,
    summary="add_rms_norm that also returns its normalized output cast to f32.",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("gamma")),
    results=(ValueSpec("y_cast"), ValueSpec("y"), ValueSpec("sum")),
    attrs=(_EPS_RMS,),
    infer=_infer_add_rms_norm_cast, reference=_add_rms_norm_cast_reference,
    doc="`(y, sum) = add_rms_norm(x1, x2, gamma)` and `y_cast = cast(y)` to f32 (exact: every f16/bf16 value is an "
        "f32). TorchAir's npu_add_rms_norm_cast (Ascend AddRmsNormCast, rstd not modelled); it replaces "
        "`add_rms_norm -> [reshape(-1, h)] -> cast(f32)` (pattern_fusion_pass), the reshape re-applied to "
        "`y_cast`. Same operand rules as add_rms_norm, mixed-precision form included.",
    example=((TensorSig((2, 4, 8), "f16"), TensorSig((2, 4, 8), "f16"), TensorSig((8,), "f16")), {}),
))


# --------------------------------------------------------------------------
# rms_norm_quant, add_rms_norm_quant


def _infer_rms_norm_quant(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    x, gamma, scale, offset = inputs
    (y,) = _basic_infer("rms_norm", [x, gamma], attrs)
    check_quant_params(y, scale, offset)
    return [TensorSig(x.shape, "i8")]


def _rms_norm_quant_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    # Unwidened operands (widen_inputs=False): the norm is rounded to x's own dtype, as unfused.
    x, gamma, scale, offset = xs
    (y,) = evaluate_op("rms_norm", [x, gamma], {"epsilon": attrs["epsilon"]})
    return [quantize_array(widen(y), widen(scale), widen(offset))]


register_op(OpSpec(
    name="rms_norm_quant", group=_GROUP, summary="RMS normalization followed by static int8 quantization.",
    operands=(ValueSpec("x"), ValueSpec("gamma"), ValueSpec("scale"), ValueSpec("offset")),
    results=(ValueSpec("q"),),
    attrs=(_EPS_RMS,),
    infer=_infer_rms_norm_quant, reference=_rms_norm_quant_reference, widen_inputs=False,
    doc="`y = rms_norm(x, gamma)` with `epsilon`, rounded to x's element type as graph.rms_norm's result is, then "
        "`q = quantize(y, scale, offset)`. Replaces `rms_norm -> quantize` (Ascend RmsNormQuant; pass "
        "rms_norm_quant_fusion). quantize: " + QUANTIZE_DOC,
    example=((TensorSig((4, 16), "f16"), TensorSig((16,), "f16"), TensorSig((1,), "f32"), TensorSig((1,), "f32")),
             {"epsilon": 1e-6}),
))


def _infer_add_rms_norm_quant(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    y, total = _infer_add_rms(inputs, attrs, mixed=False)
    check_quant_params(y, inputs[3], inputs[4])
    return [y.with_dtype("i8"), total]


def _add_rms_norm_quant_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    dtype = results[1].dtype
    y, total = _add_rms(xs, attrs, dtype, dtype)
    return [quantize_array(y.astype(np.float32), xs[3], xs[4]), total]


register_op(OpSpec(
    name="add_rms_norm_quant", group=_GROUP, summary="Residual add, RMS normalization and static int8 quantization.",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("gamma"), ValueSpec("scale"), ValueSpec("offset")),
    results=(ValueSpec("q"), ValueSpec("sum")),
    attrs=(_EPS_RMS,),
    infer=_infer_add_rms_norm_quant, reference=_add_rms_norm_quant_reference,
    doc="`(y, sum) = add_rms_norm(x1, x2, gamma)` (x1, x2 and gamma of one element type; y rounded to it), then "
        "`q = quantize(y, scale, offset)` (f32 scale and offset, per tensor or per last-axis channel). Replaces "
        "`add -> rms_norm -> quantize` (Ascend AddRmsNormQuant; pass add_rms_norm_quant_fusion); `sum` stands for "
        "the add's result wherever else it is used.",
    example=((TensorSig((2, 4, 16), "bf16"), TensorSig((2, 4, 16), "bf16"), TensorSig((16,), "bf16"),
              TensorSig((16,), "f32"), TensorSig((16,), "f32")), {"epsilon": 1e-6}),
))


# --------------------------------------------------------------------------
# add_rms_norm_dynamic_quant


def _infer_add_rms_norm_dynamic_quant(
    inputs: list[TensorSig], attrs: dict[str, Any], declared: list[TensorSig] | None
) -> list[TensorSig]:
    y, total = _infer_add_rms(inputs, attrs, mixed=False)
    q, scale = _basic_infer("dynamic_quant", [y, *inputs[3:]], {})
    return [q, scale, total]


def _add_rms_norm_dynamic_quant_reference(
    xs: list[np.ndarray], attrs: dict[str, Any], results: list[TensorSig]
) -> list[np.ndarray]:
    dtype = results[2].dtype
    y, total = _add_rms(xs, attrs, dtype, dtype)
    q, scale = evaluate_op("dynamic_quant", [y, *(cast_to(s, dtype) for s in xs[3:])])
    return [q, scale, total]


register_op(OpSpec(
    name="add_rms_norm_dynamic_quant", group=_GROUP,
    summary="Residual add, RMS normalization and per-row dynamic int8 quantization.",
    operands=(ValueSpec("x1"), ValueSpec("x2"), ValueSpec("gamma"), ValueSpec("smooth_scales", "optional")),
    results=(ValueSpec("q"), ValueSpec("scale"), ValueSpec("sum")),
    attrs=(_EPS_RMS,),
    infer=_infer_add_rms_norm_dynamic_quant, reference=_add_rms_norm_dynamic_quant_reference,
    doc="`(y, sum) = add_rms_norm(x1, x2, gamma)` (one element type; y rounded to it), then `(q, scale) = "
        "dynamic_quant(y [, smooth_scales])` (graph.dynamic_quant: per row over the last axis, `scale` f32 of shape "
        "`x1.shape[:-1]`, `q` i8). TorchAir's npu_add_rms_norm_dynamic_quant with `output_mask = [True, False]` "
        "(only the first quantized path; Ascend AddRmsNormDynamicQuant); it replaces `add_rms_norm -> "
        "dynamic_quant` (pattern_fusion_pass, with the flatten(0, 1) / view(-1, 1) reshapes re-applied to its "
        "outputs).",
    example=((TensorSig((2, 4, 16), "f16"), TensorSig((2, 4, 16), "f16"), TensorSig((16,), "f16"),
              TensorSig((16,), "f16")), {"epsilon": 1e-6}),
))
