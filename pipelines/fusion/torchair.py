"""TorchAir's FX pattern fusion (``config.experimental_config.pattern_fusion_pass``, on by default).

One pass, ``pattern_fusion_pass``, with TorchAir's three default patterns. They
start from ``add_rms_norm`` (torch_npu's npu_add_rms_norm, already a fused op in
the FX graph) and fold what follows it into a bigger fused op:

1. ``AddRmsNormDynamicQuant``: add_rms_norm's y -> dynamic_quant(y, smooth_scales)
   => add_rms_norm_dynamic_quant(x1, x2, gamma, smooth_scales).
2. ``AddRmsNormDynamicQuantFlatten``: y -> reshape flatten(0, 1) -> dynamic_quant
   without smooth scales, whose scale is reshaped to (-1, 1) =>
   add_rms_norm_dynamic_quant(x1, x2, gamma) with the flatten re-applied to q and
   the (-1, 1) view to scale. Quantization is per row over the last axis, which
   flatten(0, 1) keeps (y of rank >= 3), so the rows and their scales are the
   same; every user sees the values and shapes it saw before.
3. ``AddRmsNormCast``: y -> [reshape (-1, h)] -> cast to f32 => add_rms_norm_cast,
   whose y_cast (reshaped again when there was a reshape) replaces the cast and
   whose y and sum replace add_rms_norm's.

As in TorchAir, y may have no other user in patterns 1 and 2 (the fused op
does not return it); the sum may have any users, which then read the fused
op's sum. A dynamic_quant without smooth scales reading y directly is none of
the three patterns and is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

from graphfuse.dialect.matching import attributes, create_op, fused_location, producer, sig, users
from graphfuse.pipelines.fusion.base import GRAPH_FUSION, FusionPass, Pattern
from graphfuse.pipelines.fusion.norm import InsertBefore, Plan, anchor_for, commit, other_users


def _add_rms_norm_y(value: ir.Value) -> ir.Operation | None:
    """The add_rms_norm whose y (result #0) ``value`` is, or None."""
    arn = producer(value, "graph.add_rms_norm")
    return arn if arn is not None and arn.results[0] == value else None


def fuse_dynamic_quant_smooth(dq: ir.Operation, rw: Any) -> bool | str:
    """Pattern 1: add_rms_norm y -> dynamic_quant(y, smooth_scales) => add_rms_norm_dynamic_quant."""
    if len(dq.operands) != 2:
        return False
    arn = _add_rms_norm_y(dq.operands[0])
    if arn is None:
        return False
    if other_users(arn.results[0], dq):
        return "the add_rms_norm y has other users (add_rms_norm_dynamic_quant does not return it)"
    operands = [*arn.operands, dq.operands[1]]
    anchor = anchor_for(dq, [dq, arn], operands)
    if isinstance(anchor, str):
        return anchor
    fused = create_op(
        InsertBefore(anchor), "add_rms_norm_dynamic_quant", operands, fused_location([arn, dq]),
        epsilon=attributes(arn)["epsilon"],
    )
    q, scale, total = fused.results
    return commit(rw, [(dq, {0: q, 1: scale}), (arn, {1: total})], [fused])


def _is_flatten_0_1(source: ir.Value, result: ir.Value) -> bool:
    """Whether reshape(source) -> result merges the first two dims and keeps the others (static)."""
    src, out = sig(source).shape, sig(result).shape
    if len(src) < 2 or len(out) != len(src) - 1:
        return False
    if out[1:] != src[2:] or any(d is None for d in src[2:]):
        return False  # a dynamic trailing dim would not pin down which dims merged
    d0, d1, merged = src[0], src[1], out[0]
    return d0 is None or d1 is None or merged is None or merged == d0 * d1


def _is_column(value: ir.Value, rows: int | None) -> bool:
    """A (-1, 1) view of a 1-D tensor of ``rows`` elements."""
    shape = sig(value).shape
    return len(shape) == 2 and shape[1] == 1 and (shape[0] is None or rows is None or shape[0] == rows)


def fuse_dynamic_quant_flatten(dq: ir.Operation, rw: Any) -> bool | str:
    """Pattern 2: y -> flatten(0, 1) -> dynamic_quant -> scale view(-1, 1) => add_rms_norm_dynamic_quant + reshapes."""
    if len(dq.operands) != 1:
        return False
    flatten = producer(dq.operands[0], "graph.reshape")
    arn = _add_rms_norm_y(flatten.operands[0]) if flatten is not None else None
    if arn is None or not _is_flatten_0_1(flatten.operands[0], flatten.results[0]):
        return False
    q_flat, scale_flat = dq.results
    rows = sig(scale_flat).shape[0] if sig(scale_flat).rank == 1 else None  # rank 0 when y was 2-D
    views = [u for u in users(scale_flat) if u.name == "graph.reshape" and _is_column(u.results[0], rows)]
    if not views:
        return False  # TorchAir's pattern includes the scale's view(-1, 1)
    if sig(flatten.operands[0]).rank < 3:
        return "flatten(0, 1) of a 2-D y merges the quantized axis: its rows differ from y's"
    if other_users(arn.results[0], flatten):
        return "the add_rms_norm y has other users (add_rms_norm_dynamic_quant does not return it)"
    if other_users(flatten.results[0], dq):
        return "the flattened y has other users"
    chain = [dq, *views, flatten, arn]
    anchor = anchor_for(dq, chain, arn.operands)
    if isinstance(anchor, str):
        return anchor
    at = InsertBefore(anchor)
    loc = fused_location([arn, flatten, dq, *views])
    fused = create_op(at, "add_rms_norm_dynamic_quant", list(arn.operands), loc, epsilon=attributes(arn)["epsilon"])
    q, scale, total = fused.results
    created = [fused, create_op(at, "reshape", [q], loc, declared=[sig(q_flat)])]
    plan: Plan = []
    for view in views:
        created.append(create_op(at, "reshape", [scale], loc, declared=[sig(view.results[0])]))
        plan.append((view, {0: created[-1].results[0]}))
    dq_values = {0: created[1].results[0]}
    if other_users(scale_flat, *views):
        created.append(create_op(at, "reshape", [scale], loc, declared=[sig(scale_flat)]))
        dq_values[1] = created[-1].results[0]
    plan += [(dq, dq_values), (flatten, {}), (arn, {1: total})]
    return commit(rw, plan, created)


def fuse_cast(cast: ir.Operation, rw: Any) -> bool | str:
    """Pattern 3: y -> [reshape (-1, h)] -> cast to f32 => add_rms_norm_cast (+ the reshape of y_cast)."""
    if sig(cast.results[0]).dtype != "f32":
        return False
    view = producer(cast.operands[0], "graph.reshape")
    source = view.operands[0] if view is not None else cast.operands[0]
    arn = _add_rms_norm_y(source)
    if arn is None:
        return False
    if view is not None:
        y_shape, out = sig(source).shape, sig(view.results[0]).shape
        if len(out) != 2 or y_shape[-1] is None or out[1] != y_shape[-1]:
            return False  # not view(-1, h) with h = y.size(-1)
    # The reshape stays when something else reads it (it then reads the fused y).
    drop_view = view is not None and not other_users(view.results[0], cast)
    chain = [cast, view, arn] if drop_view else [cast, arn]
    anchor = anchor_for(cast, chain, arn.operands)
    if isinstance(anchor, str):
        return anchor
    at = InsertBefore(anchor)
    loc = fused_location([arn, *([view] if view is not None else []), cast])
    fused = create_op(at, "add_rms_norm_cast", list(arn.operands), loc, epsilon=attributes(arn)["epsilon"])
    y_cast, y, total = fused.results
    created = [fused]
    if view is not None:
        created.append(create_op(at, "reshape", [y_cast], loc, declared=[sig(cast.results[0])]))
        y_cast = created[-1].results[0]
    plan: Plan = [(cast, {0: y_cast})]
    if drop_view:
        plan.append((view, {}))
    plan.append((arn, {0: y, 1: total}))
    return commit(rw, plan, created)


@dataclass(frozen=True)
class PatternFusionPass(FusionPass):
    """TorchAir's default FX pattern fusions around add_rms_norm (see the module docstring).

    Switch: ``config.experimental_config.pattern_fusion_pass`` (default True) in
    TorchAir; here the pass name in pipelines and fusion switches.
    """

    name: ClassVar[str] = "pattern_fusion_pass"
    priority: ClassVar[int] = 190
    summary: ClassVar[str] = (
        "TorchAir: add_rms_norm -> dynamic_quant / flatten+dynamic_quant+view / view+cast => "
        "add_rms_norm_dynamic_quant, add_rms_norm_cast"
    )
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "torchair"
    example: ClassVar[str] = """\
func.func @add_rms_norm_dynamic_quant(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %gamma: tensor<16xf16>,
                                      %smooth: tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>) {
  %y, %sum = "graph.add_rms_norm"(%x1, %x2, %gamma) {epsilon = 1.0e-06 : f32}
    : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %q, %scale = "graph.dynamic_quant"(%y, %smooth)
    : (tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>)
  return %q, %scale : tensor<2x4x16xi8>, tensor<2x4xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("AddRmsNormDynamicQuant", "graph.dynamic_quant", fuse_dynamic_quant_smooth),
        Pattern("AddRmsNormDynamicQuantFlatten", "graph.dynamic_quant", fuse_dynamic_quant_flatten),
        Pattern("AddRmsNormCast", "graph.cast", fuse_cast),
    )
