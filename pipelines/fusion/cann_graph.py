"""Rewrites of the CANN data-movement and softmax passes (see :mod:`graphfuse.pipelines.fusion.cann`).

- :func:`merge_concats`: ZConcatv2dFusionPass;
- :func:`small_op_softmax`: SoftmaxSmallOpFusionPass.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from graphfuse.dialect.matching import (
    attributes,
    create_op,
    erase_dead,
    fused_location,
    has_one_use,
    producer,
    sig,
)
from graphfuse.dialect.shape_utils import normalize_axis

# graph.concat declares its operands as two single values and a variadic rest:
# IRDL gives every value of the rest one type.
_FIXED_OPERANDS = 2


# --------------------------------------------------------------------------
# ZConcatv2dFusionPass


def _variadic_rule_holds(values: list[ir.Value]) -> bool:
    return len({str(v.type) for v in values[_FIXED_OPERANDS:]}) <= 1


def _flatten(operands: list[ir.Value], merged: dict[int, list[ir.Value]]) -> list[ir.Value]:
    out: list[ir.Value] = []
    for i, value in enumerate(operands):
        out.extend(merged.get(i, [value]))
    return out


def merge_concats(outer: ir.Operation, rw: Any) -> bool | str:
    """concat(a, concat(b, c), d) -> concat(a, b, c, d) on one axis.

    Joining along one axis is associative, so an operand that is itself a
    concat on the same axis (with no other user) can be replaced by its
    operands.  Inner concats are merged left to right, each one only when the
    merged operand list still satisfies graph.concat's IRDL rule (operands
    after the second share one type); the others stay nested.
    """
    operands = list(outer.operands)
    rank = sig(outer.results[0]).rank
    axis = normalize_axis(attributes(outer)["axis"], rank)
    reasons: list[str] = []
    merged: dict[int, list[ir.Value]] = {}
    inners: list[ir.Operation] = []
    for i, value in enumerate(operands):
        inner = producer(value, "graph.concat")
        if inner is None:
            continue
        inner_axis = normalize_axis(attributes(inner)["axis"], rank)
        if inner_axis != axis:
            reasons.append(f"operand {i} is a concat along axis {inner_axis}, not {axis}")
            continue
        if not has_one_use(value):
            reasons.append(f"the concat at operand {i} has other users")
            continue
        trial = {**merged, i: list(inner.operands)}
        flat = _flatten(operands, trial)
        if not _variadic_rule_holds(flat):
            types = ", ".join(str(v.type) for v in flat[_FIXED_OPERANDS:])
            reasons.append(
                f"merging the concat at operand {i} would give operands of different types after the second "
                f"({types}), which graph.concat's IRDL variadic group forbids"
            )
            continue
        merged = trial
        inners.append(inner)
    if not merged:
        return "; ".join(reasons) if reasons else False
    loc = fused_location([*inners, outer])
    new = create_op(rw, "concat", _flatten(operands, merged), loc, axis=attributes(outer)["axis"])
    rw.replace_op(outer, [new.results[0]])
    erase_dead(rw, inners)
    return True


# --------------------------------------------------------------------------
# SoftmaxSmallOpFusionPass


def _single_axis(op: ir.Operation, rank: int) -> tuple[int, int] | None:
    """(axis as written, normalized) of a one-axis reduction, or None."""
    axes = list(attributes(op)["axes"])
    if len(axes) != 1:
        return None
    return axes[0], normalize_axis(axes[0], rank)


def small_op_softmax(div: ir.Operation, rw: Any) -> bool | str:
    """div(e, reduce_sum(e)) with e = exp(sub(x, reduce_max(x))) -> softmax(x) along the reduced axis.

    The softmax reference computes exactly this composition in f32, so the
    rewrite is bit-exact for f32; for f16/bf16 the unfused chain rounds every
    intermediate to the narrow type and the fused op rounds once.
    """
    exp_value, sum_value = div.operands[0], div.operands[1]
    exp_op = producer(exp_value, "graph.exp")
    sum_op = producer(sum_value, "graph.reduce_sum")
    if exp_op is None or sum_op is None or sum_op.operands[0] != exp_value:
        return False
    sub_op = producer(exp_op.operands[0], "graph.sub")
    if sub_op is None:
        return False
    x, max_value = sub_op.operands[0], sub_op.operands[1]
    max_op = producer(max_value, "graph.reduce_max")
    if max_op is None or max_op.operands[0] != x:
        return False
    rank = sig(x).rank
    max_attrs, sum_attrs = attributes(max_op), attributes(sum_op)
    if not (max_attrs["keep_dims"] and sum_attrs["keep_dims"]):
        return "reduce_max and reduce_sum must keep the reduced dim (keep_dims = true) to broadcast back"
    max_axis, sum_axis = _single_axis(max_op, rank), _single_axis(sum_op, rank)
    if max_axis is None or sum_axis is None:
        return "reduce_max and reduce_sum must reduce exactly one axis"
    if max_axis[1] != sum_axis[1]:
        return f"reduce_max reduces axis {max_axis[1]} but reduce_sum axis {sum_axis[1]}"
    if sig(div.results[0]) != sig(x) or sig(sub_op.results[0]) != sig(x):
        return "the sub or div result type differs from x's (broadcasting or a dtype change)"
    if len(list(exp_value.uses)) != 2:
        return "the exp result has users besides the reduce_sum and the div"
    for op, what in ((max_op, "reduce_max"), (sub_op, "sub"), (sum_op, "reduce_sum")):
        if not has_one_use(op.results[0]):
            return f"the {what} result has other users"
    loc = fused_location([max_op, sub_op, exp_op, sum_op, div])
    new = create_op(rw, "softmax", [x], loc, axis=max_axis[0])
    rw.replace_op(div, [new.results[0]])
    erase_dead(rw, [sum_op, exp_op, sub_op, max_op])
    return True
