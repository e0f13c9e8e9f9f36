"""reshape-dynamic-expands: a ``tensor.expand_shape`` splitting one dim into several of dynamic size becomes a
``tensor.reshape`` to its output shape.

A product over a ``[batch, tokens, k]`` operand with both leading sizes dynamic is a matmul of the rows
collapsed to ``[batch * tokens, k]``, its result expanded back with ``output_shape [%batch, %tokens, n]``.
Once bufferized, upstream's ``expand-strided-metadata`` computes the strides of such a ``memref.expand_shape``
from its source's sizes alone, and aborts the process on a group with more than one dynamic size.  A
``tensor.reshape`` to the same shape (a ``tensor.from_elements`` of the output sizes, as i64) holds the
same values and bufferizes to a ``memref.reshape`` of the contiguous buffer, whose descriptor is built from
those sizes.  Expansions with at most one dynamic size per group keep their form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, tensor

from graphfuse.dialect.matching import ops_named
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["ReshapeDynamicExpands", "reshape_dynamic_expands"]


@dataclass(frozen=True)
class ReshapeDynamicExpands(GraphPass):
    name: ClassVar[str] = "reshape-dynamic-expands"
    summary: ClassVar[str] = ("Make each tensor.expand_shape with several dynamic sizes in one group a tensor.reshape "
                              "(before bufferization: expand-strided-metadata takes one per group)")
    statistics: ClassVar[dict[str, str]] = {"num-reshaped": "Number of expand_shape ops made tensor.reshape"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        context.count("num-reshaped", reshape_dynamic_expands(module))


def _several_dynamic_sizes_in_a_group(expand: ir.Operation) -> bool:
    shape = ir.RankedTensorType(expand.results[0].type).shape
    for group in ir.ArrayAttr(expand.attributes["reassociation"]):
        dims = [ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)]
        if sum(1 for d in dims if shape[d] == ir.ShapedType.get_dynamic_size()) > 1:
            return True
    return False


def reshape_dynamic_expands(module: ir.Module) -> int:
    """Rewrite the expansions of ``module`` that have a group of several dynamic sizes; how many there were."""
    rewritten = 0
    with module.context:
        i64 = ir.IntegerType.get_signless(64)  # not index: the shape's buffer is a workspace of a numpy dtype
        for op in ops_named(module, "tensor.expand_shape"):
            if not _several_dynamic_sizes_in_a_group(op):
                continue
            expand = op.opview
            result_type = ir.RankedTensorType(op.results[0].type)
            with ir.InsertionPoint(op), op.location:
                sizes = []
                dynamic = iter(expand.output_shape)
                for size in result_type.shape:
                    if size == ir.ShapedType.get_dynamic_size():
                        sizes.append(arith.IndexCastOp(i64, next(dynamic)).result)
                    else:
                        sizes.append(arith.ConstantOp(i64, ir.IntegerAttr.get(i64, size)).result)
                shape = tensor.FromElementsOp(ir.RankedTensorType.get([len(sizes)], i64), sizes).result
                reshaped = tensor.ReshapeOp(result_type, op.operands[0], shape).result
            op.results[0].replace_all_uses_with(reshaped)
            op.erase()
            rewritten += 1
    return rewritten
