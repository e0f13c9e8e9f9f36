"""narrow-contraction-operands: f32 matmuls of widened bf16 operands read the bf16 values, for pair dot products.

PyTorch computes a bf16 ``linear`` with a bias in f32 and rounds once; the importers write that as f32 products of
operands cast up from bf16 (a model's bf16 weight may be imported as an f32 constant holding bf16 values).  Each
such operand is an exact widening of bf16, so the product of the bf16 values summed in f32 is the same product:
the matmul then reads them as bf16 (``linalg.matmul`` of bf16 into f32), which the contraction strategy computes
on the host's bf16 pair dot products (:mod:`graphfuse.lowering.contraction.pairs`) reading half the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import arith

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import ops_named, producer
from graphfuse.lowering.contraction.layout import replace_operands
from graphfuse.lowering.contraction.pairs import contraction_depth
from graphfuse.lowering.contraction.panels import _erase_unused_producers
from graphfuse.lowering.host import chosen_dot_products, dot_product_choice_problem
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["NarrowContractionOperands", "narrow_contraction_operands"]

@dataclass(frozen=True)
class NarrowContractionOperands(GraphPass):
    name: ClassVar[str] = "narrow-contraction-operands"
    summary: ClassVar[str] = ("Make f32 matmuls whose operands are both widened bf16 (an extf generic, or a "
                              "constant of bf16 values) read the bf16 values, where bf16 dot products are used")
    dot_products: str = option("host", "the dot products to compute on: host (the machine's), bf16 or none")

    def run(self, module: ir.Module, context: PassContext) -> None:
        problem = dot_product_choice_problem(self.name, self.dot_products)
        if problem is not None:
            context.fail(problem)
        if "bf16" in chosen_dot_products(self.dot_products):
            narrow_contraction_operands(module)


def narrow_contraction_operands(module: ir.Module) -> int:
    """Rewrite every static f32 ``linalg.matmul`` of ``module`` whose two operands are widened bf16
    (:func:`_bf16_source`) and whose K is even (whole pairs) to read the bf16 values; the number rewritten.  The
    widenings left unread are erased."""
    rewritten = 0
    for op in ops_named(module, "linalg.matmul"):
        if not all(isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).has_static_shape
                   for v in op.operands):
            continue
        if not isinstance(ir.RankedTensorType(op.operands[2].type).element_type, ir.F32Type):
            continue
        if contraction_depth(op) % 2:
            continue  # no whole pairs of K: the f32 product's packed schedule is the faster
        widened = [op.operands[0], op.operands[1]]
        sources = [_bf16_source(v) for v in widened]
        if any(s is None for s in sources):
            continue  # nothing built: a constant is narrowed only once both operands are
        with op.location, ir.InsertionPoint(op):
            narrow = [_built(source, value) for source, value in zip(sources, widened, strict=True)]
        replace_operands(op, *narrow)
        for value in widened:
            _erase_unused_producers(value, _WIDENINGS)
        rewritten += 1
    return rewritten


#: What an erased widening leaves unread: the widening itself, its init, a constant narrowed anew.
_WIDENINGS = frozenset({"linalg.generic", "tensor.empty", "arith.constant"})


def _bf16_source(value: ir.Value) -> ir.Value | np.ndarray | None:
    """What f32 ``value`` exactly widens: the bf16 input of an all-parallel generic whose body is one
    ``arith.extf`` from bf16 through identity maps, or, for an f32 constant every value of which is a bf16 value
    (NaN payloads included), those values as a bf16 array; else None."""
    generic = producer(value, "linalg.generic")
    if generic is not None:
        return _extf_input(generic)
    constant = producer(value, "arith.constant")
    if constant is None or not isinstance(ir.RankedTensorType(value.type).element_type, ir.F32Type):
        return None
    bits = np.ascontiguousarray(attr_to_array(ir.DenseElementsAttr(constant.attributes["value"])),
                                np.float32).view(np.uint32)
    if np.any(bits & 0xFFFF):
        return None  # some value has bits below bf16's: narrowing would round it
    return (bits >> 16).astype(np.uint16).view(ml_dtypes.bfloat16)


def _built(source: ir.Value | np.ndarray, value: ir.Value) -> ir.Value:
    """``source`` (:func:`_bf16_source`) as a value: a narrowed constant built of ``value``'s shape."""
    if isinstance(source, ir.Value):
        return source
    shape = list(ir.RankedTensorType(value.type).shape)
    return arith.constant(ir.RankedTensorType.get(shape, ir.BF16Type.get()), array_to_attr(source))


def _extf_input(generic: ir.Operation) -> ir.Value | None:
    if len(generic.operands) != 2 or len(generic.results) != 1:
        return None
    source = generic.operands[0]
    if not isinstance(source.type, ir.RankedTensorType) or \
            not isinstance(ir.RankedTensorType(source.type).element_type, ir.BF16Type):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if not all(m.is_permutation and list(m.results) == list(ir.AffineMap.get_identity(m.n_dims).results)
               for m in maps):
        return None
    body = generic.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 2 or ops[0].name != "arith.extf" or ops[0].operands[0] != body.arguments[0]:
        return None
    if ops[1].operands[0] != ops[0].results[0]:
        return None
    return source
