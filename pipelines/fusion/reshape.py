"""Shape clean-up passes: shape_reshape, shape_reshape_2 and split_concat_fusion (MindSpore).

All three only remove data movement, so the results are the same bits:

- ``shape_reshape``: ``reshape(reshape(x))`` => one ``reshape(x)`` (or ``x`` when the final type is x's),
  and a reshape whose result type is its operand's type => the operand;
- ``shape_reshape_2``: ``reshape(transpose(reshape(x)))`` and ``reshape(transpose(x))`` where the
  transpose moves only size-1 dims => one ``reshape(x)`` (or ``x``);
- ``split_concat_fusion``: ``concat`` of results of one ``split``, along the split's axis, that are a
  contiguous in-order run of its results => the split's operand (all results) or a ``slice`` of it.

Reshapes (row-major, like numpy) move no element, and neither does a transpose
whose dims of size other than 1 keep their relative order, so an inner op with
other users is left to them rather than blocking the rewrite: nothing is
computed twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

from graphfuse.dialect.matching import attributes, erase_dead, producer, replace_with_new, sig
from graphfuse.dialect.shape_utils import normalize_axis
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.fusion.matmul import result_index


def _reshape_from(op: ir.Operation, source: ir.Value, absorbed: list[ir.Operation], rw: Any) -> str | None:
    """Replace the reshape ``op`` by ``source`` when it already has op's type, else by reshape(source)."""
    if source.type == op.results[0].type:
        rw.replace_op(op, [source])
        return None
    return replace_with_new(rw, op, "reshape", [source], [*absorbed, op], declared=[sig(op.results[0])])


# --------------------------------------------------------------------------
# shape_reshape


def reshape_reshape(op: ir.Operation, rw: Any) -> bool | str:
    """reshape(x) with x's type => x; reshape(reshape(x)) => reshape(x) or x."""
    if len(op.operands) > 1:
        return "the reshape takes its sizes from an operand: its operand's type does not tell them"
    if op.operands[0].type == op.results[0].type:
        rw.replace_op(op, [op.operands[0]])
        return True
    inner = producer(op.operands[0], "graph.reshape")
    if inner is None:
        return False
    if len(inner.operands) > 1:
        return "the inner reshape takes its sizes from an operand: the outer one reads them from its type"
    reason = _reshape_from(op, inner.operands[0], [inner], rw)
    if reason:
        return reason
    erase_dead(rw, [inner])
    return True


@dataclass(frozen=True)
class ShapeReshape(FusionPass):
    """reshape(reshape(x)) => one reshape of x (x itself when the types match); same-type reshape => operand."""

    name: ClassVar[str] = "shape_reshape"
    priority: ClassVar[int] = 10
    summary: ClassVar[str] = "reshape(reshape(x)) => reshape(x); a reshape to the operand's own type is removed"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @flatten(%x: tensor<2x4x8xf32>) -> tensor<8x8xf32> {
  %0 = "graph.reshape"(%x) : (tensor<2x4x8xf32>) -> tensor<64xf32>
  %1 = "graph.reshape"(%0) : (tensor<64xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("ReshapeReshape", "graph.reshape", reshape_reshape),)


# --------------------------------------------------------------------------
# shape_reshape_2


def moves_only_unit_dims(shape: tuple[int | None, ...], perm: list[int]) -> bool:
    """Whether transposing ``shape`` by ``perm`` keeps the row-major order of the elements.

    True when the dims other than 1 keep their relative order; a dynamic dim
    counts as other than 1 (it might not be 1 at run time).
    """
    moved = [p for p in perm if shape[p] != 1]
    return moved == sorted(moved)


def reshape_transpose_reshape(op: ir.Operation, rw: Any) -> bool | str:
    """reshape(transpose(reshape(x))) or reshape(transpose(x)), the transpose moving only size-1 dims => reshape(x)."""
    transpose = producer(op.operands[0], "graph.transpose")
    if transpose is None:
        return False
    source = transpose.operands[0]
    perm = list(attributes(transpose)["perm"])
    if not moves_only_unit_dims(sig(source).shape, perm):
        return f"the transpose (perm {perm} of {sig(source)}) reorders dims of size other than 1: it moves data"
    inner = producer(source, "graph.reshape")
    absorbed = [transpose]
    if len(op.operands) > 1 or (inner is not None and len(inner.operands) > 1):
        return "a reshape takes its sizes from an operand: its operand's type does not tell them"
    if inner is not None:
        source = inner.operands[0]
        absorbed = [inner, transpose]
    reason = _reshape_from(op, source, absorbed, rw)
    if reason:
        return reason
    erase_dead(rw, [transpose, inner])
    return True


@dataclass(frozen=True)
class ShapeReshape2(FusionPass):
    """reshape -> transpose -> reshape (or transpose -> reshape) that is an identity on the data => one reshape.

    Covers a ``reshape`` whose operand is a ``transpose`` whose operand is
    ``x`` or ``reshape(x)``, when the transpose moves only dims of static size
    1 (the other dims, dynamic ones included, keep their relative order): the
    chain then keeps the row-major element order and equals ``reshape(x)`` to
    the final type, or ``x`` itself when that is x's type.  A transpose that
    reorders two dims of other sizes is a real data movement and stays (the
    reason is logged).  A reshape -> transpose with no reshape after it is not
    rewritten.
    """

    name: ClassVar[str] = "shape_reshape_2"
    priority: ClassVar[int] = 20
    summary: ClassVar[str] = "[reshape ->] transpose moving only size-1 dims -> reshape => one reshape"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @heads(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<4x1x64xf32>) -> tensor<1x4x64xf32>
  %2 = "graph.reshape"(%1) : (tensor<1x4x64xf32>) -> tensor<4x64xf32>
  return %2 : tensor<4x64xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("ReshapeTransposeReshape", "graph.reshape", reshape_transpose_reshape),
    )


# --------------------------------------------------------------------------
# split_concat_fusion


def split_concat(op: ir.Operation, rw: Any) -> bool | str:
    """concat(split(x)#i, ..., split(x)#j) along the split axis => x (all results) or slice(x)."""
    split = producer(op.operands[0], "graph.split")
    # An operand that is a block argument has no producer: it cannot come from the split.
    if split is None or any(producer(v) is None or producer(v) != split for v in op.operands):
        return False
    indices = [result_index(v) for v in op.operands]
    first = indices[0]
    if indices != list(range(first, first + len(indices))):
        return f"the concat takes split results {indices}, not a contiguous run in order"
    x = split.operands[0]
    split_attrs = attributes(split)
    rank = sig(x).rank
    split_axis = normalize_axis(split_attrs["axis"], rank)
    concat_axis = normalize_axis(attributes(op)["axis"], rank)
    if concat_axis != split_axis:
        return f"the concat joins axis {concat_axis}, the split cut axis {split_axis}"
    sizes = list(split_attrs["sizes"])
    if len(indices) == len(sizes):
        if x.type != op.results[0].type:
            return f"the concat result {sig(op.results[0])} is not typed like the split operand {sig(x)}"
        rw.replace_op(op, [x])
    else:
        shape = sig(x).shape
        if any(d is None for i, d in enumerate(shape) if i != split_axis):
            return f"the split operand {sig(x)} has a dynamic dim: the slice bounds are unknown"
        start = [0] * rank
        limit = list(shape)
        start[split_axis] = sum(sizes[:first])
        limit[split_axis] = start[split_axis] + sum(sizes[first : first + len(indices)])
        reason = replace_with_new(rw, op, "slice", [x], [split, op], start=start, limit=limit)
        if reason:
            return reason
    erase_dead(rw, [split])
    return True


@dataclass(frozen=True)
class SplitConcatFusion(FusionPass):
    """concat of a contiguous in-order run of one split's results along its axis => the operand or a slice of it."""

    name: ClassVar[str] = "split_concat_fusion"
    priority: ClassVar[int] = 30
    summary: ClassVar[str] = "concat of a split's pieces in order along its axis => x, or slice(x) for a run"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @pieces(%x: tensor<4x12xf32>) -> (tensor<4x12xf32>, tensor<4x8xf32>) {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4, 4>}
      : (tensor<4x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
  %1 = "graph.concat"(%0#0, %0#1, %0#2) {axis = 1 : i64}
      : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  %2 = "graph.concat"(%0#1, %0#2) {axis = -1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x12xf32>, tensor<4x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("SplitConcat", "graph.concat", split_concat),)
