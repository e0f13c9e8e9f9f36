"""widen-contraction-operands: matmuls of bf16 or f16 operands summed in f32 that no dot instruction computes read
f32 copies of their operands.

A ``linalg.matmul`` or ``linalg.batch_matmul`` of bf16/f16 operands into f32 (a bf16 product as PyTorch computes
it) runs on the host's bf16 pair dot products where :mod:`graphfuse.lowering.contraction.pairs` applies (a 2-D
bf16 product of whole pairs of K, on a CPU with AVX512_BF16).  Any other such product would keep the plain
register tiles, whose vectors widen each element as they read it and which LLVM leaves largely scalar (a bf16
batched matmul of attention took 6% of a BLOOM layer's time, serially).  Its operands are widened to f32 first
(exactly: every bf16 and f16 value is an f32 value, and their products are exact in f32), and the product is the
f32 one, with its packed panels, row blocks and batch tasks.  So is a matmul whose rows alone are counted at run
time (a prompt's tokens), which the f32 products of dynamic rows compute.

A static ``linalg.contract`` of such operands (what graph-to-linalg writes for a batched product of rank 4:
attention's scores and weighted values where the model computes them itself, as Gemma 2 does) is first rewritten
as the named matmul the contraction strategy would make of it (:func:`~graphfuse.lowering.contraction.layout.
as_named_matmul`), so that the rules above take it: left as it was, its bf16 loops were scalar and ran on one
core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, tensor

from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.dot_products import dot_products_option, resolved_dot_products
from graphfuse.lowering.common import PARALLEL, build_generic
from graphfuse.lowering.contraction.dynamic_rows import rows_alone_dynamic
from graphfuse.lowering.contraction.layout import as_named_matmul, replace_operands
from graphfuse.lowering.contraction.pairs import pair_product_applies
from graphfuse.lowering.contraction.strategy import rows_schedule
from graphfuse.lowering.host import vector_bits
from graphfuse.lowering.schedules.library import SCHEDULE
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["WidenContractionOperands", "widen_contraction_operands"]

_PRODUCTS = ("linalg.matmul", "linalg.batch_matmul")


@dataclass(frozen=True)
class WidenContractionOperands(GraphPass):
    name: ClassVar[str] = "widen-contraction-operands"
    summary: ClassVar[str] = ("Make matmuls of bf16/f16 operands into f32 that no dot instruction computes read f32 "
                              "copies of their operands")
    dot_products: str = dot_products_option()

    def run(self, module: ir.Module, context: PassContext) -> None:
        widen_contraction_operands(module, resolved_dot_products(self, context))


def _narrow(value: ir.Value) -> bool:
    t = value.type
    return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, (ir.BF16Type, ir.F16Type))


def _sums_narrow_in_f32(op: ir.Operation) -> bool:
    a, b, c = op.operands
    return _narrow(a) and _narrow(b) and isinstance(ir.RankedTensorType(c.type).element_type, ir.F32Type)


def widen_contraction_operands(module: ir.Module, dots: frozenset[str]) -> int:
    """Widen the operands of every static matmul and batched matmul of ``module`` reading bf16/f16 into f32 that
    the dot products ``dots`` do not compute (:func:`pair_product_applies`), a static ``linalg.contract`` of such
    operands first rewritten as one; the number widened."""
    for op in ops_named(module, "linalg.contract"):
        if len(op.operands) == 3 and _sums_narrow_in_f32(op):
            as_named_matmul(op)  # False (left as it is) for a dynamic shape or a contraction no named op computes
    rewritten = 0
    for op in ops_named(module, *_PRODUCTS):
        a, b, c = op.operands
        if not _sums_narrow_in_f32(op):
            continue
        static = all(ir.RankedTensorType(v.type).has_static_shape for v in (a, b, c))
        if not static and not (op.name == "linalg.matmul" and rows_alone_dynamic(a, b, c)):
            continue  # other products of sizes known at run time keep their own schedules
        if static and op.name == "linalg.matmul" and pair_product_applies(op, dots):
            continue
        with op.location, ir.InsertionPoint(op):
            wide = [_widened(v) for v in (a, b)]
        replace_operands(op, *wide)
        rewritten += 1
    return rewritten


def _widened(value: ir.Value) -> ir.Value:
    """``value`` (a bf16/f16 tensor) as f32, by an elementwise generic."""
    t = ir.RankedTensorType(value.type)
    f32 = ir.F32Type.get()
    sizes = [tensor.dim(value, arith.constant(ir.IndexType.get(), d)) if t.is_dynamic_dim(d) else size
             for d, size in enumerate(t.shape)]
    init = tensor.empty(sizes, f32)
    identity = ir.AffineMap.get_identity(t.rank)
    generic = build_generic([ir.RankedTensorType.get(list(t.shape), f32)], [value], [init], [identity, identity],
                            [PARALLEL] * t.rank, lambda args: [arith.extf(f32, args[0])])
    if t.rank == 2 and t.has_static_shape:  # a weight: its rows shared out across the cores, as an epilogue's
        generic.attributes[SCHEDULE] = rows_schedule(max(1, vector_bits() // 32))
    return generic.results[0]
