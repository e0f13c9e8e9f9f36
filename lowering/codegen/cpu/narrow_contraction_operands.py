"""narrow-contraction-operands: matmuls of widened bf16 or int8 operands read the narrow values, for dot products.

PyTorch computes a bf16 ``linear`` with a bias in f32 and rounds once; the importers write that as f32 products of
operands cast up from bf16 (a model's bf16 weight may be imported as an f32 constant holding bf16 values).  A
quantized product (``quant_batch_matmul``) is decomposed into i32 products of operands sign-extended from int8.
Each such operand is an exact widening, so the product of the narrow values summed in the wide type is the same
product: the matmul then reads them (``linalg.matmul`` of bf16 into f32, of i8 into i32), which the contraction
strategy computes on the host's dot products (:mod:`graphfuse.lowering.contraction.pairs`) reading a half or a
quarter of the bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import arith

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.matching import ops_named, producer
from graphfuse.lowering.codegen.cpu.dot_products import dot_products_option, resolved_dot_products
from graphfuse.lowering.contraction.layout import replace_operands
from graphfuse.lowering.contraction.pairs import contraction_depth
from graphfuse.lowering.contraction.panels import _erase_unused_producers
from graphfuse.lowering.contraction.strategy import row_dot_operands
from graphfuse.lowering.contraction.widenings import cast_chain
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["NarrowContractionOperands", "narrow_contraction_operands"]

@dataclass(frozen=True)
class NarrowContractionOperands(GraphPass):
    name: ClassVar[str] = "narrow-contraction-operands"
    summary: ClassVar[str] = ("Make f32 (i32) matmuls whose operands are both widened bf16 (int8): an extf (extsi) "
                              "generic or a constant of such values, read the narrow values, where dot products "
                              "compute them")
    dot_products: str = dot_products_option()

    def run(self, module: ir.Module, context: PassContext) -> None:
        narrow_contraction_operands(module, resolved_dot_products(self, context))


def narrow_contraction_operands(module: ir.Module, dots: frozenset[str]) -> int:
    """Rewrite every static ``linalg.matmul`` of ``module`` that the dot products ``dots`` can compute once narrowed
    to read the narrow values: f32 of two widened bf16 (:func:`_bf16_source`, ``bf16``, K even: whole pairs), i32
    of two widened int8 (:func:`_int8_source`, ``int8``, K a multiple of 4: whole quads); the number rewritten.
    The widenings left unread are erased.  A product of a few rows by a weight read at run time is left to the
    row dots, which read the narrow weight themselves (:func:`graphfuse.lowering.contraction.strategy.
    row_dot_operands`)."""
    rewritten = 0
    for op in ops_named(module, "linalg.matmul"):
        if not all(isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).has_static_shape
                   for v in op.operands):
            continue
        kind = _narrowing(ir.RankedTensorType(op.operands[2].type).element_type, dots)
        if kind is None or contraction_depth(op) % kind.group:
            continue  # no whole groups of K: the wide product's packed schedule is the faster
        if row_dot_operands(op) is not None:
            continue  # a few rows by a weight read at run time: the row dots read the weight narrow as it is
        widened = [op.operands[0], op.operands[1]]
        sources = [kind.source(v) for v in widened]
        if any(s is None for s in sources):
            continue  # nothing built: a constant is narrowed only once both operands are
        with op.location, ir.InsertionPoint(op):
            narrow = [_built(source, value, kind.narrow()) for source, value in zip(sources, widened, strict=True)]
        replace_operands(op, *narrow)
        for value in widened:
            _erase_unused_producers(value, _WIDENINGS)
        rewritten += 1
    return rewritten


#: What an erased widening leaves unread: the widening itself, its init, a constant narrowed anew.
_WIDENINGS = frozenset({"linalg.generic", "tensor.empty", "arith.constant"})


@dataclass(frozen=True)
class _Narrowing:
    """A product the dot products compute narrowed: its K steps in groups of ``group``, its operands' sources."""
    group: int
    source: Callable[[ir.Value], ir.Value | np.ndarray | None]
    narrow: Callable[[], ir.Type]


def _narrowing(accumulator: ir.Type, dots: frozenset[str]) -> _Narrowing | None:
    """How a product summed in ``accumulator`` narrows with the dot products ``dots``, or None."""
    if isinstance(accumulator, ir.F32Type) and "bf16" in dots:
        return _Narrowing(2, _bf16_source, ir.BF16Type.get)
    if isinstance(accumulator, ir.IntegerType) and ir.IntegerType(accumulator).width == 32 and "int8" in dots:
        return _Narrowing(4, _int8_source, lambda: ir.IntegerType.get_signless(8))
    return None


def _bf16_source(value: ir.Value) -> ir.Value | np.ndarray | None:
    """What f32 ``value`` exactly widens: the bf16 input of an all-parallel generic whose body is one
    ``arith.extf`` from bf16 through identity maps, or, for an f32 constant every value of which is a bf16 value
    (NaN payloads included), those values as a bf16 array; else None."""
    if producer(value, "linalg.generic") is not None:
        return _single_cast_source(value, "arith.extf", lambda element: isinstance(element, ir.BF16Type))
    constant = producer(value, "arith.constant")
    if constant is None or not isinstance(ir.RankedTensorType(value.type).element_type, ir.F32Type):
        return None
    bits = np.ascontiguousarray(attr_to_array(ir.DenseElementsAttr(constant.attributes["value"])),
                                np.float32).view(np.uint32)
    if np.any(bits & 0xFFFF):
        return None  # some value has bits below bf16's: narrowing would round it
    return (bits >> 16).astype(np.uint16).view(ml_dtypes.bfloat16)


def _int8_source(value: ir.Value) -> ir.Value | np.ndarray | None:
    """What i32 ``value`` exactly widens: the i8 input of an all-parallel generic whose body is one
    ``arith.extsi`` from i8 through identity maps, or, for an i32 constant all of whose values lie in [-128, 127],
    those values as an int8 array; else None."""
    if producer(value, "linalg.generic") is not None:
        return _single_cast_source(value, "arith.extsi", lambda element: isinstance(element, ir.IntegerType)
                                   and ir.IntegerType(element).width == 8)
    constant = producer(value, "arith.constant")
    if constant is None:
        return None
    values = np.asarray(attr_to_array(ir.DenseElementsAttr(constant.attributes["value"])))
    if values.dtype != np.int32 or np.any((values < -128) | (values > 127)):
        return None
    return values.astype(np.int8)


def _built(source: ir.Value | np.ndarray, value: ir.Value, element: ir.Type) -> ir.Value:
    """``source`` (a narrow value, or the array of a narrowed constant) as a value of ``value``'s shape."""
    if isinstance(source, ir.Value):
        return source
    shape = list(ir.RankedTensorType(value.type).shape)
    return arith.constant(ir.RankedTensorType.get(shape, element), array_to_attr(source))


def _single_cast_source(value: ir.Value, cast: str, narrow: Callable[[ir.Type], bool]) -> ir.Value | None:
    """The tensor a widening generic (:func:`graphfuse.lowering.contraction.widenings.cast_chain`) computes
    ``value`` from by one ``cast``, when ``narrow`` holds for its element type; else None."""
    source, casts = cast_chain(value)
    if len(casts) != 1 or casts[0][0] != cast or not narrow(ir.RankedTensorType(source.type).element_type):
        return None
    return source
