"""strided-copies-as-loops: copies between non-contiguous views become loops of ``memcpy`` over their long
contiguous runs, or loops LLVM vectorizes."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, linalg, memref, scf

from graphfuse.dialect.matching import ops_named
from graphfuse.lowering.codegen.cpu.buffers import contiguous
from graphfuse.lowering.common import element_bytes
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["MEMCPY_MIN_BYTES", "StridedCopiesAsLoops", "strided_copies_as_loops"]

#: Bytes of a contiguous run (the trailing dims both views lay out without gaps) from which a strided copy is a
#: loop of ``memcpy`` calls, one per run.  Below it the call costs more than the run's copy, and linalg.copy's
#: loops, vectorized by LLVM, are kept.
MEMCPY_MIN_BYTES = 1024
DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


@dataclass(frozen=True)
class StridedCopiesAsLoops(GraphPass):
    name: ClassVar[str] = "strided-copies-as-loops"
    summary: ClassVar[str] = ("Rewrite memref.copy between non-contiguous views as loops of memcpy over their "
                              "contiguous runs of at least memcpy-min-bytes, else as linalg.copy (loops, not "
                              "memrefCopy)")
    memcpy_min_bytes: int = option(MEMCPY_MIN_BYTES, "bytes of a contiguous run from which it is one memcpy")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if self.memcpy_min_bytes < 1:
            context.fail(f"option 'memcpy-min-bytes' of pass '{self.name}' must be at least 1, "
                         f"got {self.memcpy_min_bytes}")
        strided_copies_as_loops(module, self.memcpy_min_bytes)


def strided_copies_as_loops(module: ir.Module, memcpy_min_bytes: int = MEMCPY_MIN_BYTES) -> None:
    """Rewrite each ``memref.copy`` between views that are not contiguous (a slice, a part of a concat).

    Lowered as it is, such a copy calls the runtime library's generic ``memrefCopy``, which copies one
    element at a time through its index arithmetic (a [1, 8, 256, 32] half of [1, 8, 256, 64], the
    slices and concat of a rotary embedding: about 0.3 ms each).  When the trailing dims both views lay out
    without gaps hold at least ``memcpy_min_bytes``, the copy becomes loops over the leading dims copying one
    such run each (a contiguous ``memref.copy``: one ``memcpy``).  Otherwise it becomes ``linalg.copy``, loops
    LLVM vectorizes.  Scalar loops copying long runs cost LLVM much time to vectorize (0.4 s each for the
    [n, 1, 4, 512, 8] blocks of a Mamba layer's scan, which are runs of 64 KB), and the vectorized loop checks
    at run time that its two views do not overlap.
    """
    for op in ops_named(module, "memref.copy"):
        source, target = op.operands
        source_type, target_type = ir.MemRefType(source.type), ir.MemRefType(target.type)
        if contiguous(source_type) and contiguous(target_type):
            continue
        leading = _leading_dims(source_type, target_type)
        with op.location, ir.InsertionPoint(op):
            if leading is not None and _run_bytes(source_type, leading) >= memcpy_min_bytes:
                _copy_runs(source, target, leading)
            else:
                linalg.copy(source, outs=[target])
        op.erase()


def _leading_dims(source: ir.MemRefType, target: ir.MemRefType) -> int | None:
    """How many leading dims are left when the trailing dims both views lay out without gaps are taken as one
    run; None when a shape or a stride is not static."""
    if not source.has_static_shape:
        return None
    strides = [t.get_strides_and_offset()[0] for t in (source, target)]
    if any(s == DYNAMIC for row in strides for s in row):
        return None
    shape = source.shape
    expected, leading = 1, len(shape)
    while leading > 0:
        size = shape[leading - 1]
        if size != 1 and any(row[leading - 1] != expected for row in strides):
            break
        expected *= size
        leading -= 1
    return leading


def _run_bytes(source: ir.MemRefType, leading: int) -> int:
    return math.prod(source.shape[leading:]) * element_bytes(source.element_type)


def _copy_runs(source: ir.Value, target: ir.Value, leading: int) -> None:
    """At the insertion point: loops over the first ``leading`` dims of the copy ``source`` -> ``target``, each
    iteration copying the run of the remaining dims (contiguous in both views: one ``memcpy``)."""
    shape = ir.MemRefType(source.type).shape
    index = ir.IndexType.get()
    offsets: list[ir.Value | int] = [0] * len(shape)
    looped = [dim for dim in range(leading) if shape[dim] != 1]
    zero, one = arith.constant(index, 0), arith.constant(index, 1)  # the bounds, before the loops
    bounds = {dim: arith.constant(index, shape[dim]) for dim in looped}
    inside: ir.Operation | None = None  # the innermost loop's terminator: the loop's body goes before it
    for dim in looped:
        with _before(inside):
            loop = scf.ForOp(zero, bounds[dim], one)
        with ir.InsertionPoint(loop.body):
            inside = scf.YieldOp([]).operation
        offsets[dim] = loop.induction_variable
    with _before(inside):
        memref.copy(_run_view(source, offsets, leading), _run_view(target, offsets, leading))


def _before(op: ir.Operation | None) -> ir.InsertionPoint | contextlib.nullcontext:
    """Insert before ``op``; where the caller inserts when None."""
    return contextlib.nullcontext() if op is None else ir.InsertionPoint(op)


def _run_view(value: ir.Value, offsets: list[ir.Value | int], leading: int) -> ir.Value:
    """The run of ``value`` at ``offsets``: its trailing dims from ``leading`` on, unit dims dropped (at least
    one dim kept), an offset known at run time."""
    value_type = ir.MemRefType(value.type)
    shape = value_type.shape
    strides, _ = value_type.get_strides_and_offset()
    kept = [d for d in range(leading, len(shape)) if shape[d] != 1] or [len(shape) - 1]
    layout = ir.StridedLayoutAttr.get(DYNAMIC, [strides[d] for d in kept])
    view_type = ir.MemRefType.get([shape[d] for d in kept], value_type.element_type, layout)
    sizes = [1] * leading + list(shape[leading:])
    dynamic = [o for o in offsets if isinstance(o, ir.Value)]
    static = [DYNAMIC if isinstance(o, ir.Value) else o for o in offsets]
    return memref.SubViewOp(view_type, value, dynamic, [], [], static, sizes, [1] * len(shape)).result
