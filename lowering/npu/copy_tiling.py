"""Copy kernels (a reshape, a split, a slice, a concat) staged through UB in chunks."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import scf

from graphfuse.dialect.matching import as_operation
from graphfuse.dialect.npu_target import NpuTarget
from graphfuse.lowering.npu.dialect import mem_space
from graphfuse.lowering.npu.kernel_buffers import (
    VIEW_OPS,
    KernelBuffer,
    alloc,
    collapse_view,
    dma,
    element_bytes,
    index_constant,
    reshaped_only,
    root_buffer,
    slot_view,
    tile_slot,
    window_view,
)

__all__ = ["CopyPlan", "plan_copies", "rewrite_copies"]


@dataclass
class _CopyPart:
    """One memref.copy of a copy kernel, staged through UB in chunks of ``chunk`` along ``dim``."""

    copy: ir.Operation
    #: copy between whole contiguous buffers (through reshapes only): chunked over the flat element range
    flat: bool
    shape: list[int]
    dim: int
    chunk: int
    element_bytes: int

    def chunk_bytes(self) -> int:
        """A chunk: one index of each dim before ``dim``, ``chunk`` of ``dim``, every dim after it whole."""
        return math.prod(self.shape[self.dim + 1:]) * self.chunk * self.element_bytes

    @property
    def count(self) -> int:
        """Chunks of the copy."""
        return math.prod(self.shape[:self.dim]) * (self.shape[self.dim] // self.chunk)

    def candidates(self) -> list[int]:
        size = self.shape[self.dim]
        return [d for d in range(size, 0, -1) if size % d == 0]

    def shrink(self) -> bool:
        """The next smaller chunk: the next divisor of ``dim``, or, below one index of it, the whole next dim
        above 1 (the dims before it then taken one index at a time).  False when a chunk is one element."""
        if self.chunk > 1:
            self.chunk = next(c for c in self.candidates() if c < self.chunk)
            return True
        following = [d for d in range(self.dim + 1, len(self.shape)) if self.shape[d] > 1]
        if not following:
            return False
        self.dim = following[0]
        self.chunk = next(c for c in self.candidates() if c < self.shape[self.dim]) if self.shape[self.dim] > 1 \
            else 1
        return True


@dataclass
class CopyPlan:
    """A kernel that only copies GM inputs (whole, reshaped or static slices of them: a reshape, split or
    slice kernel) to GM outputs: each copy staged through UB in chunks."""

    parts: list[_CopyPart]
    peaks: dict[str, int]
    double: bool

    @property
    def tiles(self) -> int:
        return sum(p.count for p in self.parts)


def plan_copies(buffers: list[KernelBuffer], ops: list[ir.Operation], target: NpuTarget, double_buffer: bool
               ) -> CopyPlan | None:
    """Chunks for every copy of a copy kernel that does not fit UB whole, or None when it is not one."""
    compute = [op for op in ops if op.name not in ("func.return", "arith.constant") and op.name not in VIEW_OPS]
    if not compute or any(op.name != "memref.copy" for op in compute):
        return None
    parts = []
    for copy in compute:
        source = next((b for b in buffers if b.value == root_buffer(copy.operands[0])), None)
        dest = next((b for b in buffers if b.value == root_buffer(copy.operands[1])), None)
        if source is None or dest is None or source.kind != "gm_in" or dest.kind != "gm_out":
            return None
        shape = list(ir.MemRefType(copy.operands[0].type).shape)
        if not all(ir.MemRefType(v.type).has_static_shape for v in copy.operands):
            return None
        size = element_bytes(source.type.element_type)
        if reshaped_only(source.value) and reshaped_only(dest.value) and not source.slices:
            total = math.prod(shape)
            parts.append(_CopyPart(copy, True, [total], 0, total, size))
            continue
        views = [as_operation(v.owner) for v in copy.operands if not isinstance(v.owner, ir.Block)]
        if any(v.name != "memref.subview" for v in views):
            return None  # a slice read or written directly: chunk its outer dim
        dim = next((d for d, n in enumerate(shape) if n > 1), 0)
        parts.append(_CopyPart(copy, False, shape, dim, shape[dim], size))
    ub = target.buffer("ub")

    def need() -> int:
        return sum((2 if double_buffer and p.count > 1 else 1) * ub.footprint(p.chunk_bytes()) for p in parts)

    while need() > ub.bytes:  # the largest staging buffers shrink together (next smaller chunk) until all fit
        top = max(p.chunk_bytes() for p in parts)
        shrunk = [part.shrink() for part in parts if part.chunk_bytes() == top]
        if not any(shrunk):
            return None
    return CopyPlan(parts, {"ub": need(), "l1": 0, "l0c": 0}, double_buffer)


def _flat(value: ir.Value) -> ir.Value:
    """A 1-D view of an identity-layout memref."""
    rank = ir.MemRefType(value.type).rank
    return value if rank == 1 else collapse_view(value, [list(range(rank))])


def rewrite_copies(kernel: ir.Operation, plan: CopyPlan) -> int:
    """Each copy as chunks GM -> UB -> GM; returns the number of npu.dma ops."""
    transfers = 0
    with kernel.location:
        for part in plan.parts:
            copy = part.copy
            with ir.InsertionPoint(copy):
                if part.flat:
                    source, dest = _flat(root_buffer(copy.operands[0])), _flat(root_buffer(copy.operands[1]))
                else:
                    source, dest = copy.operands[0], copy.operands[1]
                element = ir.MemRefType(source.type).element_type
                tile = [1] * part.dim + [part.chunk] + part.shape[part.dim + 1:]
                slots = 2 if plan.double and part.count > 1 else 1
                buffer = alloc(ir.MemRefType.get([2, *tile] if slots == 2 else tile, element, None,
                                                  mem_space("ub")))
            # one index at a time of each dim before the chunked one, then the chunks
            offsets: list[ir.Value | int] = [0] * len(part.shape)
            point, nest = copy, []  # nest: each loop's (index, step, trip count), for the chunk's slot
            for d in range(part.dim + 1):
                step = part.chunk if d == part.dim else 1
                if d < part.dim and part.shape[d] == 1:
                    continue
                with ir.InsertionPoint(point):
                    loop = scf.ForOp(index_constant(0), index_constant(part.shape[d]), index_constant(step))
                with ir.InsertionPoint(loop.body):
                    point = scf.YieldOp([]).operation
                nest.append((loop.induction_variable, step, part.shape[d] // step))
                offsets[d] = loop.induction_variable
            with ir.InsertionPoint(point):
                slot = tile_slot(nest) if slots == 2 else None
                staged = slot_view(buffer, slot, "ub") if slot is not None else buffer
                dma(window_view(source, offsets, tile), staged)
                dma(staged, window_view(dest, offsets, tile))
            transfers += 2
            views = [as_operation(v.owner) for v in copy.operands if not isinstance(v.owner, ir.Block)]
            copy.erase()
            for view in views:  # the views the copy read or wrote through, now unused
                if not list(view.results[0].uses):
                    view.erase()
    return transfers
