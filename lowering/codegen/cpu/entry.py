"""The CPU pipeline's decisions, carried as attributes of the entry function.

Some passes of the CPU code generator decide what later passes, and the runtime, need to know: which function is
the entry, its signature as callers see it (after ``to-destination-passing-style`` booleans cross the boundary as
bytes and the results are output arguments), the workspace buffers ``hoist-allocations`` turned into arguments,
the run-time check sites, whether buffers went on the stack, how many stores were streamed.  Each decision is an
attribute of the entry function (``graphfuse.cpu.*``), as IREE's LLVMCPU pipeline carries its decisions on the
function it compiles: the IR printed after any pass holds all the rest of the pipeline needs, so every pass can be
replayed alone from that text.  The attributes survive the conversion to the LLVM dialect (on the entry and on its
C-interface wrapper); the runtime reads them there and removes them before LLVM sees the module.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.codegen.cpu.specs import ArgSpec, arg_spec, numpy_dtype

__all__ = [
    "ARENA", "CHECKS", "ENTRY", "HIDDEN_VISIBILITY", "SIGNATURE", "STACK_BUFFERS", "STREAMED_STORES", "WORKSPACE",
    "add_workspace", "argument_counts", "argument_specs", "count", "entry_function", "entry_name", "find_function",
    "set_count", "signature", "strip_decisions", "workspace_specs", "workspace_types",
]

#: The namespace of every attribute below.
PREFIX = "graphfuse.cpu."
#: (unit) The function the pipeline compiles.
ENTRY = PREFIX + "entry"
#: (type) The entry's function type as written, before destination-passing style: what callers pass and get.
SIGNATURE = PREFIX + "signature"
#: (string) The entry's own ``sym_visibility`` ("" for none) while ``privatize-entry`` has made it private.
HIDDEN_VISIBILITY = PREFIX + "hidden_visibility"
#: (array of types) The buffers the caller allocates once and passes after the inputs and outputs, in order.
WORKSPACE = PREFIX + "workspace"
#: (unit) The first workspace buffer is the arena of bytes the intermediates share.
ARENA = PREFIX + "arena"
#: (array of dictionaries) The run-time check sites, as their failure stores carry them (lowering/run_checks.py).
CHECKS = PREFIX + "checks"
#: (i64) How many loop buffers ``stack-loop-buffers`` put on the stack.
STACK_BUFFERS = PREFIX + "stack_buffers"
#: (i64) How many stores into the results ``stream-large-stores`` made non-temporal.
STREAMED_STORES = PREFIX + "streamed_stores"


def find_function(module: ir.Module, entry: str):
    """The ``func.func`` named ``entry``, or an error."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op
    raise GraphfuseError(f"no function @{entry} in the module")


def entry_function(module: ir.Module, pass_name: str):
    """The ``func.func`` marked as the entry, or an error saying which pass needed it."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ENTRY in op.attributes:
            return op
    raise GraphfuseError(f"{pass_name}: no function is marked {ENTRY}; run to-destination-passing-style"
                         "{entry=NAME} first")


def signature(func) -> ir.FunctionType:
    """The entry's function type as written (its inputs, then its results)."""
    return ir.FunctionType(ir.TypeAttr(func.attributes[SIGNATURE]).value)


def argument_counts(func) -> tuple[int, int]:
    """(inputs, outputs) of the entry: its first arguments, then one output argument per result."""
    written = signature(func)
    return len(written.inputs), len(written.results)


def entry_name(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def argument_specs(func) -> tuple[list[ArgSpec], list[ArgSpec]]:
    """The specs of the entry's inputs and outputs, as callers pass them."""
    name, written = entry_name(func), signature(func)
    return ([arg_spec(t, f"@{name} argument {i}") for i, t in enumerate(written.inputs)],
            [arg_spec(t, f"@{name} result {k}") for k, t in enumerate(written.results)])


def count(func, name: str) -> int:
    """An integer decision of the entry; 0 when it was never recorded."""
    return ir.IntegerAttr(func.attributes[name]).value if name in func.attributes else 0


def set_count(func, name: str, value: int) -> None:
    func.attributes[name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def workspace_types(func) -> list[ir.Type]:
    """The workspace buffers' types, in argument order."""
    if WORKSPACE not in func.attributes:
        return []
    return [ir.TypeAttr(attr).value for attr in ir.ArrayAttr(func.attributes[WORKSPACE])]


def workspace_specs(func) -> list[ArgSpec]:
    """The specs of the workspace buffers: the arena is bytes (uint8), the others have their element types."""
    specs = [ArgSpec(tuple(t.shape), numpy_dtype(t.element_type, "workspace"), str(t))
             for t in map(ir.MemRefType, workspace_types(func))]
    if specs and ARENA in func.attributes:
        specs[0] = ArgSpec(specs[0].shape, np.dtype(np.uint8), specs[0].type_str)
    return specs


def add_workspace(func, types: list[ir.Type]) -> None:
    """Record buffers appended to the entry's arguments as workspace."""
    func.attributes[WORKSPACE] = ir.ArrayAttr.get([ir.TypeAttr.get(t) for t in [*workspace_types(func), *types]])


def strip_decisions(module: ir.Module) -> None:
    """Remove every ``graphfuse.cpu.*`` attribute from the module's functions (the entry and its wrapper)."""
    for op in module.body.operations:
        for name in [name for name in op.attributes if name.startswith(PREFIX)]:
            del op.attributes[name]
