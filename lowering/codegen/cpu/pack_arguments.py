"""pack-arguments: the entry takes one pointer to a table of memref descriptors instead of its memref arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import op_id
from graphfuse.lowering.codegen.cpu.buffers import VIEWS, top_level_op
from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["PackArguments", "pack_arguments"]


@dataclass(frozen=True)
class PackArguments(GraphPass):
    name: ClassVar[str] = "pack-arguments"
    summary: ClassVar[str] = ("Make the entry take one pointer to a table of its arguments' memref descriptors, "
                              "loaded before each op that uses them")

    def run(self, module: ir.Module, context: PassContext) -> None:
        pack_arguments(entry_function(module, self.name))


def pack_arguments(func: ir.Operation) -> None:
    """Make the entry take one pointer to a table of memref descriptor addresses instead of its memref arguments.

    Lowered to LLVM, each memref argument is 3 + 2 * rank scalars, and the
    C-interface wrapper passes them all to the entry on the stack: with
    thousands of arguments (inputs, outputs, intermediates) instruction
    selection of that one call is quadratic (the DAG combiner's store
    merging compares every stack store with every other).  The entry
    instead loads each descriptor from the table the runtime fills
    (``CompiledFunction.__call__`` in the runtime) right before each top-level op that
    uses it, and views of the arguments (``memref.expand_shape``,
    ``subview``...) are rebuilt there too: loaded once at the top, thousands
    of descriptors would stay live across the whole entry (register
    allocation spilling them grew faster than the graph), and each top-level
    op now depends on the table alone (``outline-chunks`` relies on it).
    """
    from mlir.dialects import builtin, llvm

    block = func.regions[0].blocks[0]
    count = len(block.arguments)
    ptr = ir.Type.parse("!llvm.ptr")
    location = ir.Location.unknown()
    table = block.add_argument(ptr, location)
    cache: dict[tuple[int, int, int], ir.Value] = {}  # (kind, id, user) -> the value rebuilt before that user

    def rebuild(value: ir.Value, user: ir.Operation) -> ir.Value:
        """``value`` (an argument or a view of one) loaded or recomputed right before top-level op ``user``."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            if owner != block or ir.BlockArgument(value).arg_number >= count:
                return value
            number = ir.BlockArgument(value).arg_number
            key = (0, number, op_id(user))
            if key not in cache:
                with ir.InsertionPoint(user), location:
                    slot = llvm.getelementptr(ptr, table, [], [number], ptr, llvm.GEPNoWrapFlags.inbounds)
                    descriptor = llvm.load(_descriptor_type(value.type), llvm.load(ptr, slot))
                    cache[key] = builtin.unrealized_conversion_cast([value.type], [descriptor])
            return cache[key]
        view = owner.operation
        if view.name not in VIEWS or view.block != block:
            return value
        key = (1, op_id(view), op_id(user))
        if key not in cache:
            operands = [rebuild(v, user) for v in view.operands]
            copy = view.clone(ir.InsertionPoint(user))
            for k, operand in enumerate(operands):
                copy.operands[k] = operand
            cache[key] = copy
        return cache[key].results[ir.OpResult(value).result_number]

    views = [op.operation for op in block.operations if op.operation.name in VIEWS]
    for value in [*list(block.arguments)[:count], *(r for view in views for r in view.results)]:
        for use in list(value.uses):
            owner = use.owner.operation
            if owner.name in VIEWS and owner.block == block:
                continue  # rebuilt with its users
            owner.operands[use.operand_number] = rebuild(value, top_level_op(owner, block))
    for view in reversed(views):
        if not any(True for r in view.results for _ in r.uses):
            view.erase()
    for k in reversed(range(count)):
        block.erase_argument(k)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([ptr], []))
    if "arg_attrs" in func.attributes:
        del func.attributes["arg_attrs"]


def _descriptor_type(t: ir.Type) -> ir.Type:
    """The LLVM struct finalize-memref-to-llvm gives a ranked memref (the runtime fills descriptors of this layout)."""
    rank = ir.MemRefType(t).rank
    arrays = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arrays})>")
