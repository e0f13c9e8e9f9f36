"""A kernel that no tiling fits whole, split into kernels launched one after another.

Two splits, tried when no plan fits a kernel:

- **at its sequential loops.** A fused kernel holding a scan (``exp`` ->
  ``cumsum`` -> ``add``) runs elementwise ops over whole buffers before and
  after the scan's ``scf.for``; the loop streams slices
  (:mod:`~graphfuse.lowering.npu.sequential_loops`) while the ops around it
  are tiled along rows, and no one schedule does both. Each top-level
  ``scf.for`` is a part, with the ops just before it that use on-chip
  buffers only (the scan's running sum, zeroed); each run of other ops
  between loops is a part;
- **into independent groups.** A horizontally fused kernel (two sums of two
  inputs, ``square_sum_all``) whose groups of ops share no buffer: each
  group is a part, and each part may then be tiled its own way (each sum
  blocked along its own input).

A local buffer that several parts use becomes a GM workspace, allocated by
the caller and passed to each of them.  Each call of the kernel becomes
calls of its parts in order, named ``<kernel>_part<k>``.  A part's results
go through GM to the next: the price of the split, paid only by kernels
that fit no other way.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from graphfuse.dialect.matching import as_operation, nested_ops, op_id
from graphfuse.lowering.npu.kernel_buffers import VIEW_OPS, alloc, memref_accesses, root_buffer

__all__ = ["split_at_loops", "split_independent"]

#: Top-level ops that every part needing them gets its own copy of.
_SHARED = frozenset({"arith.constant", "memref.get_global"})


def _parts(ops: list[ir.Operation], locals_: list[ir.Value]) -> list[list[ir.Operation]]:
    """The kernel's compute ops, in order, cut at its loops (see the module's docstring)."""
    parts: list[list[ir.Operation]] = []
    run: list[ir.Operation] = []
    for op in ops:
        if op.name != "scf.for":
            run.append(op)
            continue
        tail = len(run)  # the run's last ops that touch local buffers only go with the loop
        while tail and all(not isinstance(v.type, ir.MemRefType) or any(root_buffer(v) == local for local in locals_)
                           for v in run[tail - 1].operands):
            tail -= 1
        if run[:tail]:
            parts.append(run[:tail])
        parts.append([*run[tail:], op])
        run = []
    if run:
        parts.append(run)
    return parts


def _gm_type(t: ir.Type) -> ir.MemRefType:
    """A workspace in GM: the local buffer's shape and element type, identity layout, no memory space."""
    m = ir.MemRefType(t)
    return ir.MemRefType.get(list(m.shape), m.element_type)


def _uses_in(value: ir.Value, ops: list[ir.Operation]) -> bool:
    inside = {op_id(o) for op in ops for o in [op, *nested_ops(op)]}
    return any(op_id(as_operation(use.owner)) in inside for use in value.uses)


def _compute_ops(kernel: ir.Operation) -> tuple[list[ir.Operation], list[ir.Operation], list[ir.Value]]:
    """The kernel's top-level ops, its compute ops among them, and its local buffers."""
    top = [as_operation(o) for o in kernel.regions[0].blocks[0].operations]
    locals_ = [op.results[0] for op in top if op.name == "memref.alloc"]
    compute = [op for op in top if op.name not in _SHARED | VIEW_OPS and op.name not in ("memref.alloc", "func.return")]
    return top, compute, locals_


def split_at_loops(module: ir.Module, kernel: ir.Operation) -> list[ir.Operation] | None:
    """Replace ``kernel`` (and its calls) by its parts cut at its loops; returns them, or None (nothing
    changed) when the kernel has no loop or would be a single part."""
    top, compute, locals_ = _compute_ops(kernel)
    if not any(op.name == "scf.for" for op in top):
        return None
    parts = _parts(compute, locals_)
    return _split(module, kernel, top, locals_, parts) if len(parts) > 1 else None


def split_independent(module: ir.Module, kernel: ir.Operation) -> list[ir.Operation] | None:
    """Replace ``kernel`` (and its calls) by its groups of ops that share no buffer, one part each (in the
    order of their first ops); None (nothing changed) when it is one group."""
    top, compute, locals_ = _compute_ops(kernel)
    group: dict[int, int] = {}  # op position -> its group's first op position (union-find)

    def find(k: int) -> int:
        while group.setdefault(k, k) != k:
            k = group[k]
        return k

    # ops are joined by the buffers some op writes (an input only read, a weight shared by two matmuls,
    # joins nothing)
    uses = [[(root_buffer(v), writes) for inner in [op, *nested_ops(op)] for v, _, writes in memref_accesses(inner)]
            for op in compute]
    written = [root for op_uses in uses for root, writes in op_uses if writes]
    owner: list[tuple[ir.Value, int]] = []  # each written root buffer seen -> an op using it
    for k, op_uses in enumerate(uses):
        for root, _ in op_uses:
            if not any(root == w for w in written):
                continue
            other = next((j for r, j in owner if r == root), None)
            if other is None:
                owner.append((root, k))
            else:
                a, b = sorted((find(k), find(other)))
                group[b] = a
    heads = sorted({find(k) for k in range(len(compute))})
    if len(heads) < 2:
        return None
    parts = [[op for k, op in enumerate(compute) if find(k) == head] for head in heads]
    return _split(module, kernel, top, locals_, parts)


def _split(module: ir.Module, kernel: ir.Operation, top: list[ir.Operation], locals_: list[ir.Value],
           parts: list[list[ir.Operation]]) -> list[ir.Operation]:
    """Outline each of ``parts`` (compute ops of ``kernel``, in order) as a kernel of its own and call them in
    turn where ``kernel`` was called; ``kernel`` is erased."""
    block = kernel.regions[0].blocks[0]
    views = [op for op in top if op.name in VIEW_OPS]
    # each part gets copies of the views it uses (views of views: their chain); several parts may use one
    owned: list[list[ir.Operation]] = []
    for part in parts:
        mine: list[ir.Operation] = []
        for view in reversed(views):
            if _uses_in(view.results[0], part + mine):
                mine.insert(0, view)
        owned.append(mine)
    owned_ids = [{op_id(v) for v in mine} for mine in owned]
    workspaces = [v for v in locals_ if sum(_uses_in(v, p + w) for p, w in zip(parts, owned, strict=True)) > 1]
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    arguments = list(block.arguments)
    calls = [op for op in nested_ops(module) if op.name == "func.call"
             and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name]
    created: list[tuple[ir.Operation, list[int], list[int]]] = []  # (part, kernel args used, workspaces used)
    with kernel.location:
        point = kernel
        for k, (part, mine) in enumerate(zip(parts, owned, strict=True)):
            ops = mine + part  # what the part uses, its views included
            used_args = [i for i, a in enumerate(arguments) if _uses_in(a, ops)]
            used_spaces = [i for i, w in enumerate(workspaces) if _uses_in(w, ops)]
            inputs = [arguments[i].type for i in used_args] + [_gm_type(workspaces[i].type) for i in used_spaces]
            with ir.InsertionPoint.after(point):
                new = func.FuncOp(f"{name}_part{k}", ir.FunctionType.get(inputs, []))
            for attr in ("sym_visibility", "graph.kernel", "graph.fusion_kind", "graph.kernel_ops"):
                if attr in kernel.attributes:
                    new.attributes[attr] = kernel.attributes[attr]
            entry = new.add_entry_block()
            with ir.InsertionPoint(entry):
                end = func.ReturnOp([]).operation
            values = [arguments[i] for i in used_args] + [workspaces[i] for i in used_spaces]
            replacements = list(zip(values, entry.arguments, strict=True))
            for op in top:  # constants, globals, views and the part's own local buffers: copies of them
                copied = op.name in _SHARED or op_id(op) in owned_ids[k] or (
                    op.name == "memref.alloc" and not any(op.results[0] == w for w in workspaces))
                if copied and (op_id(op) in owned_ids[k] or _uses_in(op.results[0], ops)):
                    copy = op.clone(ip=ir.InsertionPoint(end))
                    replacements.append((op.results[0], copy.results[0]))
            for op in part:
                op.move_before(end)
            inside = {op_id(o) for o in nested_ops(new)}
            for old, fresh in replacements:
                for use in list(old.uses):
                    if op_id(as_operation(use.owner)) in inside:
                        as_operation(use.owner).operands[use.operand_number] = fresh
            created.append((new.operation, used_args, used_spaces))
            point = new.operation
        for call in calls:
            with ir.InsertionPoint(call), call.location:
                spaces = [alloc(_gm_type(w.type)) for w in workspaces]
                for new, used_args, used_spaces in created:
                    operands = [call.operands[i] for i in used_args] + [spaces[i] for i in used_spaces]
                    func.CallOp([], ir.StringAttr(new.attributes["sym_name"]).value, operands)
            call.erase()
    # What stayed behind (constants, workspaces' allocations) is erased op by op, so that no Python handle
    # outlives its op, then the kernel.
    for op in reversed([as_operation(o) for o in block.operations]):
        op.erase()
    kernel.erase()
    return [new for new, _, _ in created]
