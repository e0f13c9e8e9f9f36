"""matmul_weight_concat_fusion: matmuls of one input by constant weights become one matmul, then a split.

A transformer layer multiplies the same normalized activations by several
weights: the query, key and value projections, a gated MLP's gate and up
projections.  As separate products each one reads the activations again and
each is a smaller product, which shares the cores less evenly; one product by
the weights concatenated along N computes the same columns in one pass
(256 x 512 activations, Llama-sized: three 512-column products 3.7 ms, one
1536-column product 3.5; two 1360-column products 6.8 ms, one 2720-column 5.8,
both cores).  The pieces come back through a ``split`` along the last axis,
which ``inference_matmul_split_fusion`` then folds into a ``matmul_split``
(the MindSpore form of a fused QKV projection).

What merges: ``graph.matmul`` ops of the same block reading the same A with the
same transpose flags, each B a 2-D ``arith.constant`` of the same element type
and reduction size.  Weights passed as arguments are left alone: concatenating
them would copy every weight on every call.  Every product stays bit for bit
the same (each output column is the same dot product).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.matching import (
    as_operation,
    constant_array,
    create_constant,
    create_op,
    erase_dead,
    fused_location,
    op_id,
    producer,
    sig,
)
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.fusion.matmul import transpose_flags

#: The most weights one merged product takes (a layer's projections are three or four).
MAX_MERGED = 8


def _has_constant_weight(op: ir.Operation) -> bool:
    """Whether B of a matmul is a 2-D dense ``arith.constant``: read from the IR, the weight's values only
    when a group merges (the driver visits every matmul of a group, and a weight may be megabytes)."""
    constant = producer(op.operands[1], "arith.constant")
    return (constant is not None and isinstance(constant.attributes["value"], ir.DenseElementsAttr)
            and ir.RankedTensorType(op.operands[1].type).rank == 2)


def _siblings(op: ir.Operation) -> list[ir.Operation]:
    """The matmuls of ``op``'s block reading its A with its flags and a constant B of its type and K, in
    program order (``op`` included)."""
    flags = transpose_flags(op)
    weight_type = ir.RankedTensorType(op.operands[1].type)
    k_axis = 1 if flags.get("transpose_b") else 0
    found = []
    for use in op.operands[0].uses:
        user = as_operation(use.owner)
        if (user.name != "graph.matmul" or use.operand_number != 0 or user.block != op.block
                or transpose_flags(user) != flags or any(op_id(user) == op_id(f) for f in found)):
            continue
        other = ir.RankedTensorType(user.operands[1].type)
        if (other.rank != 2 or other.element_type != weight_type.element_type
                or other.shape[k_axis] != weight_type.shape[k_axis] or not _has_constant_weight(user)):
            continue
        found.append(user)
    found.sort(key=functools.cmp_to_key(lambda a, b: -1 if a.is_before_in_block(b) else 1))
    return found[:MAX_MERGED]


def merge_weights(op: ir.Operation, rw: Any) -> bool | str:
    """matmul(a, w1), ..., matmul(a, wn), each w a constant => split(matmul(a, concat(w1..wn)))."""
    if not _has_constant_weight(op):
        return False
    group = _siblings(op)
    if len(group) < 2 or op_id(group[0]) != op_id(op):
        return False  # nothing to merge, or the first of the group merges it
    weights = [constant_array(m.operands[1]) for m in group]
    if any(w is None for w in weights):
        return False  # a constant whose values cannot be read as an array
    flags = transpose_flags(op)
    transposed = bool(flags.get("transpose_b"))
    n_axis = 0 if transposed else 1
    merged = np.concatenate(weights, axis=n_axis)
    loc = fused_location(group)
    weight = create_constant(rw, merged, loc)
    product = create_op(rw, "matmul", [op.operands[0], weight], loc, **flags)
    sizes = [w.shape[n_axis] for w in weights]
    pieces = create_op(rw, "split", list(product.results), loc, axis=sig(product.results[0]).rank - 1, sizes=sizes)
    constants = [producer(m.operands[1], "arith.constant") for m in group]
    for matmul, piece in zip(group, pieces.results, strict=True):
        rw.replace_op(matmul, [piece])
    erase_dead(rw, constants)
    return True


@dataclass(frozen=True)
class MatmulWeightConcatFusion(FusionPass):
    """matmuls of one A by constant weights => one matmul by the weights concatenated along N, then a split."""

    name: ClassVar[str] = "matmul_weight_concat_fusion"
    #: before the matmul epilogue and split passes (the split it leaves becomes a matmul_split)
    priority: ClassVar[int] = 195
    summary: ClassVar[str] = "matmuls of one input by constant weights => one matmul by the weights concatenated, split"
    origin: ClassVar[str] = "graphfuse"
    #: the CPU only: on the NPU the projections' bias adds stay matmul epilogues (matmul_bias_add and UB
    #: fusion's matmul + elementwise), which the split pieces would lose (more GM traffic, not less)
    default_backends: ClassVar[frozenset[str]] = frozenset({"cpu"})
    example: ClassVar[str] = """\
func.func @qkv(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>) {
  %wq = arith.constant dense<0.5> : tensor<2x3xf32>
  %wk = arith.constant dense<0.25> : tensor<2x3xf32>
  %wv = arith.constant dense<2.0> : tensor<1x3xf32>
  %q = "graph.matmul"(%x, %wq) {transpose_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %k = "graph.matmul"(%x, %wk) {transpose_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %v = "graph.matmul"(%x, %wv) {transpose_b = true} : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x1xf32>
  return %q, %k, %v : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("MatMulWeightConcat", "graph.matmul", merge_weights),)


__all__ = ["MAX_MERGED", "MatmulWeightConcatFusion", "merge_weights"]
