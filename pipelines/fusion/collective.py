"""MatMulAllReduce (MindSpore): a matmul whose result is summed over the ranks, as one communicating op.

- ``MatMulAllReduce``: ``matmul -> all_reduce(sum)`` => ``matmul_all_reduce``,
  and ``matmul_all_reduce -> bias_add`` (last axis) or ``-> add`` of a 1-D
  bias of the last dim => the bias taken in (added once, after the sum).

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
