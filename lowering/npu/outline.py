"""npu-outline-ops: every graph op left outside a kernel becomes a kernel of its own, for the NPU target.

On the NPU each kernel reads its arguments from GM and writes its results to
GM; the emulator accounts GM traffic per kernel.  After the graph pipeline,
fused ops and clusters are already ``graph.kernel`` functions; the ops still in
the caller (everything, at opt level 0) are outlined here one kernel per op,
so that the caller is only kernel calls and GM buffers between them.

A ``graph.split`` marked ``_no_task = true`` or ``npu.no_task = true``
(FusionVirtualOpSetSwitch) is no
task: it is not outlined.  Each consumer gets the split's input instead and
takes its slice inside the kernel, so the split costs no kernel, no copy and
no GM bytes of its own (its consumers read just their slice).

All function arguments are then marked ``bufferization.writable = false``:
a kernel never writes into the buffers it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import func

from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import as_operation, op_id
from graphfuse.lowering.kernels import is_kernel
from graphfuse.pipelines import log
from graphfuse.pipelines.graph_kernel.cluster import outline
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["NO_TASK_NAMES", "NpuOutlineOps", "is_view_split"]

#: The discardable attribute FusionVirtualOpSetSwitch sets on a split that is a view of its input (CANN's name),
#: and its dialect-prefixed spelling (the graph verifier accepts unknown attributes only with a dialect prefix).
NO_TASK_NAMES = ("_no_task", "npu.no_task")


def is_view_split(op: ir.Operation) -> bool:
    if op.name != "graph.split":
        return False
    for name in NO_TASK_NAMES:
        if name in op.attributes:
            attr = op.attributes[name]
            if (isinstance(attr, ir.BoolAttr) and ir.BoolAttr(attr).value) or isinstance(attr, ir.UnitAttr):
                return True
    return False


def _owner_op(value: ir.Value) -> ir.Operation | None:
    return None if isinstance(value.owner, ir.Block) else as_operation(value.owner)


def _sink_split_into_callee(call: ir.Operation, operand_number: int, split: ir.Operation,
                            funcs: dict[str, ir.Operation]) -> ir.Operation:
    """Make kernel ``call`` take the split's input instead of one split result; the kernel slices it itself.

    Returns the new call op (the old one is erased).
    """
    callee = funcs[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
    result_number = ir.OpResult(call.operands[operand_number]).result_number
    source = split.operands[0]
    body = callee.regions[0].blocks[0]
    old_arg = body.arguments[operand_number]
    new_arg = body.add_argument(source.type, old_arg.location)
    first = body.operations[0]
    clone = split.clone(ir.InsertionPoint(first))
    clone.operands[0] = new_arg
    old_arg.replace_all_uses_with(clone.results[result_number])
    body.erase_argument(operand_number)
    ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
    inputs = [a.type for a in body.arguments]
    callee.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
    operands = [v for k, v in enumerate(call.operands) if k != operand_number] + [source]
    with call.location, ir.InsertionPoint(call):
        new_call = func.CallOp(list(ftype.results), ir.FlatSymbolRefAttr.get(callee.attributes["sym_name"].value),
                               operands)
    for old, new in zip(call.results, new_call.results, strict=True):
        old.replace_all_uses_with(new)
    call.erase()
    return as_operation(new_call)


def _mark_read_only(func_op: ir.Operation) -> None:
    count = len(func_op.regions[0].blocks[0].arguments)
    read_only = ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)})
    func_op.attributes["arg_attrs"] = ir.ArrayAttr.get([read_only] * count)


@dataclass(frozen=True)
class NpuOutlineOps(GraphPass):
    name: ClassVar[str] = "npu-outline-ops"
    summary: ClassVar[str] = "Outline each graph op outside a kernel as a kernel of its own (NPU: one kernel per task)"
    statistics: ClassVar[dict[str, str]] = {
        "num-outlined": "Number of graph ops outlined as kernels",
        "num-view-splits": "Number of _no_task splits folded into their consumers as views",
    }

    def run(self, module: ir.Module, context: PassContext) -> None:
        funcs = functions(module)
        taken = set(funcs)
        for fn_name, func_op in funcs.items():
            if is_kernel(func_op) or not func_op.regions[0].blocks:
                continue
            block = func_op.regions[0].blocks[0]
            # Kernel calls reading a view split: the kernel takes the split's input and slices it.
            changed = True
            while changed:
                changed = False
                for op in [as_operation(o) for o in block.operations]:
                    if op.name != "func.call":
                        continue
                    for k, operand in enumerate(op.operands):
                        producer = _owner_op(operand)
                        if producer is not None and is_view_split(producer):
                            _sink_split_into_callee(op, k, producer, funcs)
                            changed = True
                            break
                    if changed:
                        break
            anchor = func_op
            ops = [as_operation(o) for o in block.operations]
            for index, op in enumerate(ops):
                if not op.name.startswith("graph.") or is_view_split(op):
                    continue
                members = []
                for operand in op.operands:
                    producer = _owner_op(operand)
                    if producer is not None and is_view_split(producer):
                        if all(op_id(m) != op_id(producer) for m in members):
                            members.append(producer.clone(ir.InsertionPoint(op)))
                        clone = members[-1]
                        operand_numbers = [u.operand_number for u in operand.uses if op_id(u.owner) == op_id(op)]
                        for number in operand_numbers:
                            op.operands[number] = clone.results[ir.OpResult(operand).result_number]
                        context.count("num-view-splits")
                members.append(op)
                kernel_name = f"{fn_name}_{op.name.removeprefix('graph.')}_{index}"
                while kernel_name in taken:
                    kernel_name += "_"
                taken.add(kernel_name)
                log.debug(f"npu-outline-ops: {op.name} -> @{kernel_name}")
                anchor = outline(func_op, members, op.name.removeprefix("graph."), kernel_name, after=anchor)
                context.count("num-outlined")
            for op in [as_operation(o) for o in block.operations]:
                if is_view_split(op) and not any(True for r in op.results for _ in r.uses):
                    op.erase()
        for func_op in functions(module).values():
            if func_op.regions[0].blocks:
                _mark_read_only(func_op)
