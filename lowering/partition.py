"""A fused graph function cut at its collectives: compute stages the JIT compiles, collectives the host runs.

A collective is not CPU code: its ranks meet through a communication engine
(:mod:`graphfuse.distributed` calls ``torch.distributed``).  The entry function
is split, in program order, into maximal runs of other ops (a *compute stage*:
a function of its own, compiled as a whole graph is) and the collectives
between them.  A stage takes the values it uses that an earlier stage, a
collective or the caller produced, and returns those a later stage, a
collective or the caller uses.  Constants are copied into each stage that
uses them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import op_id, producer
from graphfuse.dialect.ops.collective import COLLECTIVE_OPS
from graphfuse.lowering.launches import callees as called_functions

__all__ = ["STAGE_ENTRY", "CollectiveStep", "ComputeStage", "split_at_collectives"]

#: The public function of every compute stage's module.
STAGE_ENTRY = "stage"


@dataclass(frozen=True)
class ComputeStage:
    """A run of non-collective ops, as a module whose ``@stage`` maps ``inputs`` to ``outputs``."""

    text: str
    inputs: tuple[ir.Value, ...]
    outputs: tuple[ir.Value, ...]


@dataclass(frozen=True)
class CollectiveStep:
    """One collective op of the entry function (its operands and results are values of that function)."""

    op: ir.Operation


def _is_constant(value: ir.Value) -> bool:
    return producer(value, "arith.constant") is not None


def split_at_collectives(module: ir.Module, entry: str) -> list[ComputeStage | CollectiveStep]:
    """The stages of function ``entry`` of a fused graph module, in program order."""
    funcs = functions(module)
    block = funcs[entry].regions[0].blocks[0]
    runs: list[list[ir.Operation]] = [[]]
    steps: list[ir.Operation | None] = []  # None: the next compute run
    for op in block.operations:
        op = op.operation
        if op.name in ("func.return", "arith.constant"):
            continue
        if op.name in COLLECTIVE_OPS:
            steps += [None, op]
            runs.append([])
        else:
            runs[-1].append(op)
    steps.append(None)
    stage_of = {op_id(op): k for k, run in enumerate(runs) for op in run}
    stages: list[ComputeStage | CollectiveStep] = []
    run_index = 0
    for step in steps:
        if step is not None:
            stages.append(CollectiveStep(step))
            continue
        ops = runs[run_index]
        run_index += 1
        if ops:
            stages.append(_stage(ops, run_index - 1, stage_of, funcs))
    return stages


def _stage(ops: list[ir.Operation], index: int, stage_of: dict[int, int],
           funcs: dict[str, ir.Operation]) -> ComputeStage:
    inside = {op_id(op) for op in ops}
    inputs: list[ir.Value] = []
    for op in ops:
        for value in op.operands:
            owner = value.owner
            defined_inside = not isinstance(owner, ir.Block) and op_id(owner.operation) in inside
            if not defined_inside and not _is_constant(value) and value not in inputs:
                inputs.append(value)
    outputs: list[ir.Value] = []
    for op in ops:
        for result in op.results:
            if any(_used_outside(use.owner, inside) for use in result.uses):
                outputs.append(result)
    return ComputeStage(_stage_module(ops, inputs, outputs, funcs), tuple(inputs), tuple(outputs))


def _used_outside(user: ir.Operation, inside: set[int]) -> bool:
    return op_id(user.operation) not in inside


def _stage_module(ops: list[ir.Operation], inputs: list[ir.Value], outputs: list[ir.Value],
                  funcs: dict[str, ir.Operation]) -> str:
    """``ops`` in ``@stage(inputs) -> outputs`` beside copies of the functions they call; with locations."""
    first = ops[0]
    with first.context, first.location:
        module = ir.Module.create()
        callees: list[str] = []
        for op in ops:
            callees += [c for c in called_functions(op, funcs) if c not in callees]
        with ir.InsertionPoint(module.body):
            for callee in callees:
                funcs[callee].clone()
            wrapper = func.FuncOp(STAGE_ENTRY, ([v.type for v in inputs], [v.type for v in outputs]))
            block = wrapper.add_entry_block()
        mapping: dict[ir.Value, ir.Value] = dict(zip(inputs, block.arguments, strict=True))
        with ir.InsertionPoint(block):
            for op in ops:
                for value in op.operands:
                    if value not in mapping and _is_constant(value):
                        mapping[value] = producer(value).clone().results[0]
                copy = op.clone()
                for k, value in enumerate(op.operands):
                    copy.operands[k] = mapping[value]
                for old, new in zip(op.results, copy.results, strict=True):
                    mapping[old] = new
            func.ReturnOp([mapping[v] for v in outputs])
        return module.operation.get_asm(enable_debug_info=True)
