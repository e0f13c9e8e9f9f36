"""MindSpore's fusions of matmuls with their all-reduce, and of the quantized batch matmul.

- ``MatMulAllReduce``: ``matmul -> all_reduce(sum)`` => ``matmul_all_reduce``,
  and ``matmul_all_reduce -> bias_add`` (last axis) or ``-> add`` of a 1-D
  bias of the last dim => the bias taken in (added once, after the sum).
- ``inference_qbmm_add_fusion``: ``quant_batch_matmul -> add`` of a 1-D bias
  => ``quant_batch_matmul`` with the bias (added before the one rounding).
- ``inference_qbmm_allreduce_add_fusion``: ``quant_batch_matmul ->
  all_reduce(sum) -> add`` => ``quant_batch_matmul_all_reduce``.

The fused op is what tensor parallelism's row-parallel linear layer computes
(graph-shard-partition makes the unfused pair); its compiled form overlaps
the all-reduce of each row block with the matmul of the next
(:mod:`graphfuse.distributed`).  The matmul result must have the all-reduce
as its only user, and the sum its bias as its only user; results are the
unfused graph's bit for bit in the reference (the fused op rounds as the pair
does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

from graphfuse.dialect.matching import attributes, erase_dead, producer, replace_with_new, sig, sole_use_reason
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.fusion.matmul import is_last_axis, transpose_flags


def _group(op: ir.Operation) -> dict[str, Any]:
    """The collective's group attributes (the default group left unwritten, as the source wrote it)."""
    values = attributes(op)
    return {"group_size": values["group_size"], **({"group": values["group"]} if values["group"] != "world" else {})}


def matmul_all_reduce(op: ir.Operation, rw: Any) -> bool | str:
    """all_reduce(matmul(a, b), sum) => matmul_all_reduce(a, b)."""
    matmul = producer(op.operands[0], "graph.matmul")
    if matmul is None:
        return False
    if attributes(op)["reduction"] != "sum":
        return f"the all_reduce takes the {attributes(op)['reduction']}, not the sum"
    reason = sole_use_reason(matmul.results[0], op, "the matmul result")
    if reason:
        return reason
    reason = replace_with_new(rw, op, "matmul_all_reduce", list(matmul.operands), [matmul, op],
                              **transpose_flags(matmul), **_group(op))
    if reason:
        return reason
    erase_dead(rw, [matmul])
    return True


def _take_bias(root: ir.Operation, fused: ir.Operation, bias: ir.Value, rw: Any) -> bool | str:
    if len(fused.operands) == 3:
        return "the matmul_all_reduce has a bias already"
    reason = sole_use_reason(fused.results[0], root, "the matmul_all_reduce result")
    if reason:
        return reason
    values = attributes(fused)
    flags = {name: True for name in ("transpose_a", "transpose_b") if values[name]}
    chunks = {"chunks": values["chunks"]} if values["chunks"] else {}
    reason = replace_with_new(rw, root, "matmul_all_reduce", [*fused.operands, bias], [fused, root], **flags,
                              **_group(fused), **chunks)
    if reason:
        return reason
    erase_dead(rw, [fused])
    return True


def matmul_all_reduce_bias_add(op: ir.Operation, rw: Any) -> bool | str:
    """bias_add(matmul_all_reduce(a, b), bias) along the last axis => matmul_all_reduce(a, b, bias)."""
    fused = producer(op.operands[0], "graph.matmul_all_reduce")
    if fused is None:
        return False
    axis, rank = attributes(op)["axis"], sig(op.operands[0]).rank
    if not is_last_axis(axis, rank):
        return f"the bias_add runs along axis {axis}, not the last axis of the rank-{rank} result"
    return _take_bias(op, fused, op.operands[1], rw)


def matmul_all_reduce_add_bias(op: ir.Operation, rw: Any) -> bool | str:
    """add(matmul_all_reduce(a, b), bias) (either order), bias 1-D of the last dim => the bias taken in."""
    reasons = []
    for i in (0, 1):
        fused = producer(op.operands[i], "graph.matmul_all_reduce")
        if fused is None:
            continue
        result, bias = sig(fused.results[0]), sig(op.operands[1 - i])
        if bias.rank == 1 and bias.shape[0] is not None and bias.shape[0] == result.shape[-1]:
            return _take_bias(op, fused, op.operands[1 - i], rw)
        reasons.append("the add's other operand is not a 1-D bias of the result's last dim")
    return reasons[0] if reasons else False


_EXAMPLE = """\
func.func @row_parallel(%x: tensor<16x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<16x32xf32>, tensor<64x32xf32>) -> tensor<16x64xf32>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %2 = "graph.bias_add"(%1, %b) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}
"""


@dataclass(frozen=True)
class MatMulAllReduce(FusionPass):
    """matmul -> all_reduce(sum) [-> bias] => matmul_all_reduce (MindSpore's MatMulAllReduce)."""

    name: ClassVar[str] = "MatMulAllReduce"
    priority: ClassVar[int] = 215  # before the matmul epilogues: a matmul -> all_reduce is never one of theirs
    summary: ClassVar[str] = "matmul -> all_reduce(sum) [-> bias_add] => matmul_all_reduce (overlapped when compiled)"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = _EXAMPLE
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("MatMulAllReduce", "graph.all_reduce", matmul_all_reduce),
        Pattern("MatMulAllReduceBiasAdd", "graph.bias_add", matmul_all_reduce_bias_add),
        Pattern("MatMulAllReduceAddBias", "graph.add", matmul_all_reduce_add_bias),
    )


# --------------------------------------------------------------------------
# The quantized batch matmul's fusions (MindSpore's inference passes).


def _qbmm_flags(op: ir.Operation) -> dict[str, Any]:
    values = attributes(op)
    flags: dict[str, Any] = {name: True for name in ("transpose_x1", "transpose_x2") if values[name]}
    return {**flags, "dtype": values["dtype"]}


def qbmm_add(op: ir.Operation, rw: Any) -> bool | str:
    """add(quant_batch_matmul(x1, x2, scale), bias) (either order), bias 1-D of the last dim, f32 or the result
    type => quant_batch_matmul(x1, x2, scale, bias)."""
    reasons = []
    for i in (0, 1):
        qbmm = producer(op.operands[i], "graph.quant_batch_matmul")
        if qbmm is None:
            continue
        bias, result = op.operands[1 - i], sig(qbmm.results[0])
        b = sig(bias)
        if len(qbmm.operands) == 4:
            reasons.append("the quant_batch_matmul has a bias already")
        elif b.rank != 1 or b.shape[0] is None or b.shape[0] != result.shape[-1]:
            reasons.append("the add's other operand is not a 1-D bias of the product's last dim")
        elif b.dtype not in ("f32", result.dtype):
            reasons.append(f"the bias is {b.dtype}, not f32 or the product's {result.dtype}")
        else:
            reason = sole_use_reason(qbmm.results[0], op, "the quant_batch_matmul result")
            if reason:
                reasons.append(reason)
                continue
            reason = replace_with_new(rw, op, "quant_batch_matmul", [*qbmm.operands, bias], [qbmm, op],
                                      **_qbmm_flags(qbmm))
            if reason:
                return reason
            erase_dead(rw, [qbmm])
            return True
    return reasons[0] if reasons else False


def qbmm_all_reduce_add(op: ir.Operation, rw: Any) -> bool | str:
    """add(all_reduce(quant_batch_matmul(x1, x2, scale), sum), x3) (either order), x3 not enlarging the result
    => quant_batch_matmul_all_reduce(x1, x2, scale, x3)."""
    reasons = []
    for i in (0, 1):
        reduce = producer(op.operands[i], "graph.all_reduce")
        qbmm = producer(reduce.operands[0], "graph.quant_batch_matmul") if reduce is not None else None
        if qbmm is None:
            continue
        x3 = op.operands[1 - i]
        if len(qbmm.operands) == 4:
            reasons.append("the quant_batch_matmul has a bias (summed over the ranks it would count once per rank)")
        elif attributes(reduce)["reduction"] != "sum":
            reasons.append(f"the all_reduce takes the {attributes(reduce)['reduction']}, not the sum")
        elif sig(op.results[0]).shape != sig(reduce.results[0]).shape:
            reasons.append("the add broadcasts the sum to a larger shape")
        else:
            reason = (sole_use_reason(qbmm.results[0], reduce, "the quant_batch_matmul result")
                      or sole_use_reason(reduce.results[0], op, "the all_reduce result"))
            if reason:
                reasons.append(reason)
                continue
            reason = replace_with_new(rw, op, "quant_batch_matmul_all_reduce", [*qbmm.operands, x3],
                                      [qbmm, reduce, op], **_qbmm_flags(qbmm), **_group(reduce))
            if reason:
                return reason
            erase_dead(rw, [reduce, qbmm])
            return True
    return reasons[0] if reasons else False


_QBMM_ADD_EXAMPLE = """\
func.func @quantized_linear(%x: tensor<4x32xi8>, %w: tensor<32x16xi8>, %scale: tensor<16xf32>, %b: tensor<16xf16>)
    -> tensor<4x16xf16> {
  %0 = "graph.quant_batch_matmul"(%x, %w, %scale)
      : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>) -> tensor<4x16xf16>
  %1 = "graph.add"(%0, %b) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  return %1 : tensor<4x16xf16>
}
"""

_QBMM_ALL_REDUCE_EXAMPLE = """\
func.func @row_parallel(%x: tensor<4x32xi8>, %w: tensor<32x16xi8>, %scale: tensor<16xf32>, %r: tensor<4x16xf16>)
    -> tensor<4x16xf16> {
  %0 = "graph.quant_batch_matmul"(%x, %w, %scale)
      : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<16xf32>) -> tensor<4x16xf16>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %2 = "graph.add"(%1, %r) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  return %2 : tensor<4x16xf16>
}
"""


@dataclass(frozen=True)
class InferenceQbmmAddFusion(FusionPass):
    """quant_batch_matmul -> add of a 1-D bias => quant_batch_matmul with the bias (MindSpore's
    inference_qbmm_add_fusion).

    The bias is added in f32 to the dequantized product before the one rounding to the result type, where the
    unfused graph rounds the product and then the sum: the results differ by at most an ulp of the result type.
    """

    name: ClassVar[str] = "inference_qbmm_add_fusion"
    priority: ClassVar[int] = 217
    summary: ClassVar[str] = "quant_batch_matmul -> add of a 1-D bias => quant_batch_matmul with its bias"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = _QBMM_ADD_EXAMPLE
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("QbmmAdd", "graph.add", qbmm_add),)


@dataclass(frozen=True)
class InferenceQbmmAllReduceAddFusion(FusionPass):
    """quant_batch_matmul -> all_reduce(sum) -> add => quant_batch_matmul_all_reduce (MindSpore's
    inference_qbmm_allreduce_add_fusion); the same numerics as the unfused chain in the reference."""

    name: ClassVar[str] = "inference_qbmm_allreduce_add_fusion"
    priority: ClassVar[int] = 216  # before inference_qbmm_add_fusion (it never matches the all_reduce's add)
    summary: ClassVar[str] = "quant_batch_matmul -> all_reduce(sum) -> add => quant_batch_matmul_all_reduce"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = _QBMM_ALL_REDUCE_EXAMPLE
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("QbmmAllReduceAdd", "graph.add", qbmm_all_reduce_add),)
