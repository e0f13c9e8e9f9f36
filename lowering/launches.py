"""``enable_debug_mode``: a fused graph run one kernel launch at a time, with a check before and after each.

MindSpore's ``enable_debug_mode`` inserts synchronization points before and
after every graph-kernel launch and prints debugging information when a launch
fails.  The CPU code of a normal compile has no launches to synchronize: every
kernel is inlined into one function.  In debug mode each top-level op of the
fused entry function (a call of a kernel, or an op no kernel took) is compiled
as a function of its own, a *launch*, and the host runs them in order
(:class:`LaunchRunner`).  Between two launches it knows which one ran last, so

- a launch that raises is reported with its kernel, the source ops it fuses,
  its position and its inputs;
- a float output holding NaN or Inf is recorded against the launch that
  produced it, and whether that launch's inputs were finite: when a result of
  the call is not finite, the error names the first launch that produced
  non-finite values from finite inputs (the compiled code's own values, not
  a reference's);
- at ``--log-level=debug`` each launch is logged before it runs, so even a
  process that dies inside compiled code leaves the name of the kernel it was in.

This module builds the launch modules and runs them; compiling one is the
caller's (:mod:`graphfuse.lowering.compiler`), so the launches are compiled
exactly as a whole graph is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import func

from graphfuse.dialect.constants import attr_to_array
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc, source_loc
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import nested_ops, producer
from graphfuse.dialect.parsing import PARSER_BUFFER
from graphfuse.dialect.types import sig_of_array
from graphfuse.lowering.kernels import is_kernel
from graphfuse.pipelines import log

__all__ = ["LAUNCH_ENTRY", "Launch", "LaunchRunner", "callees", "launches_of"]

#: The public function of every launch module (its kernel, if any, stays private beside it).
LAUNCH_ENTRY = "launch"


@dataclass(frozen=True)
class Launch:
    """One top-level op of the fused entry function, as a module of its own."""

    #: what the errors call it: ``kernel @name``, ``'graph.matmul' at m.mlir:3:8`` or ``call of @f at ...``
    name: str
    #: a located note per source op a kernel or call runs (the errors' notes)
    notes: tuple[Diagnostic, ...]
    #: the launch module: ``@launch`` taking the op's non-constant operands and returning its results
    text: str
    #: position of the op in the entry function, counting launches only
    index: int


def _where(op: ir.Operation, filename: str) -> SourceLoc | None:
    loc = source_loc(op.location)
    if loc is None or loc.file != PARSER_BUFFER:
        return loc
    return SourceLoc(filename, loc.line, loc.col)


def _at(loc: SourceLoc | None) -> str:
    return "an unknown location" if loc is None else str(loc)


def callees(op: ir.Operation, funcs: dict[str, ir.Operation]) -> list[str]:
    """The functions ``op`` calls, directly or through other calls, in first-call order."""
    found: list[str] = []
    pending = [op]
    while pending:
        current = pending.pop()
        for inner in [current, *nested_ops(current)]:
            if inner.name != "func.call":
                continue
            callee = ir.FlatSymbolRefAttr(inner.attributes["callee"]).value
            if callee not in found and callee in funcs:
                found.append(callee)
                pending.append(funcs[callee])
    return found


def _describe_launch(op: ir.Operation, funcs: dict[str, ir.Operation], filename: str) -> tuple[str, tuple]:
    """(what a launch is called, a note per source op behind it) for a top-level op of the entry function."""
    if op.name != "func.call":
        return f"'{op.name}' at {_at(_where(op, filename))}", ()
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    name = f"kernel @{callee}" if is_kernel(funcs[callee]) else f"call of @{callee} at {_at(_where(op, filename))}"
    body = funcs[callee].regions[0].blocks[0].operations
    members = [o.operation for o in body if o.operation.name not in ("func.return", "arith.constant")]
    notes = tuple(Diagnostic("note", f"{name} runs this {o.name}", _where(o, filename)) for o in members)
    return name, notes


def _is_constant(value: ir.Value) -> bool:
    return producer(value, "arith.constant") is not None


def _launch_inputs(op: ir.Operation) -> list[ir.Value]:
    """The op's distinct non-constant operands, in operand order: the launch function's arguments."""
    inputs: list[ir.Value] = []
    for value in op.operands:
        if not _is_constant(value) and value not in inputs:
            inputs.append(value)
    return inputs


def _launch_module(op: ir.Operation, funcs: dict[str, ir.Operation]) -> str:
    """``op`` alone in ``@launch``, beside copies of the functions it calls; printed with its locations."""
    with op.context, op.location:
        module = ir.Module.create()
        inputs = _launch_inputs(op)
        with ir.InsertionPoint(module.body):
            for callee in callees(op, funcs):
                funcs[callee].clone()
            wrapper = func.FuncOp(LAUNCH_ENTRY, ([v.type for v in inputs], [r.type for r in op.results]))
            block = wrapper.add_entry_block()
        with ir.InsertionPoint(block):
            constants: dict[ir.Value, ir.Value] = {}
            for value in op.operands:
                if _is_constant(value) and value not in constants:
                    constants[value] = producer(value).clone().results[0]
            copy = op.clone()
            for k, value in enumerate(op.operands):
                copy.operands[k] = constants[value] if value in constants else block.arguments[inputs.index(value)]
            func.ReturnOp(list(copy.results))
        return module.operation.get_asm(enable_debug_info=True)


def launches_of(module: ir.Module, entry: str, filename: str) -> list[Launch]:
    """The launches of function ``entry`` of a fused graph module, in program order."""
    funcs = functions(module)
    block = funcs[entry].regions[0].blocks[0]
    launches = []
    for op in block.operations:
        op = op.operation
        if op.name in ("func.return", "arith.constant"):
            continue
        name, notes = _describe_launch(op, funcs, filename)
        launches.append(Launch(name, notes, _launch_module(op, funcs), len(launches)))
    return launches


def _describe(arrays: list[np.ndarray]) -> str:
    """The arrays' types as MLIR writes them: ``tensor<4x8xf32>, tensor<i64>``."""
    return ", ".join(str(sig_of_array(a) or f"{a.dtype} array of shape {a.shape}") for a in arrays)


def _not_finite(arrays: list[np.ndarray]) -> list[int]:
    return [k for k, a in enumerate(arrays) if a.dtype.kind == "f" and not np.isfinite(a).all()]


@dataclass(frozen=True)
class _NonFinite:
    """A launch output holding NaN or Inf."""

    launch: Launch
    output: int
    from_finite_inputs: bool

    def __str__(self) -> str:
        origin = "from finite inputs" if self.from_finite_inputs else "(its inputs already were not finite)"
        return f"{self.launch.name} output {self.output} {origin}"


class LaunchRunner:
    """Runs the entry function of a fused graph launch by launch (host-side), checking around each launch."""

    def __init__(self, module: ir.Module, entry: str, launches: list[Launch],
                 compiled: list[Callable[..., list[np.ndarray]]]):
        self.entry = entry
        self.launches = launches
        self._compiled = compiled
        self._module = module  # owns the values the run is keyed by
        self._block = functions(module)[entry].regions[0].blocks[0]

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        values: dict[ir.Value, np.ndarray] = dict(zip(self._block.arguments, arrays, strict=True))
        non_finite: list[_NonFinite] = []  # in launch order
        launches = iter(self.launches)
        for op in self._block.operations:
            op = op.operation
            if op.name == "func.return":
                results = [values[v] for v in op.operands]
                self._check_results(results, non_finite, arrays)
                return results
            if op.name == "arith.constant":
                values[op.results[0]] = attr_to_array(op.attributes["value"])
                continue
            launch = next(launches)
            inputs = [values[v] for v in _launch_inputs(op)]
            position = f"launch {launch.index + 1} of {len(self.launches)}"
            if log.enabled("debug"):
                log.debug(f"enable_debug_mode: {position}: {launch.name}, inputs {_describe(inputs)}")
            try:
                outputs = self._compiled[launch.index](*inputs)
            except GraphfuseError as error:
                raise GraphfuseError([Diagnostic(
                    "error", f"enable_debug_mode: @{self.entry}: {position} failed: {launch.name}, inputs "
                    f"{_describe(inputs)}: {error}", notes=list(launch.notes))]) from None
            inputs_finite = not _not_finite(inputs)
            non_finite += [_NonFinite(launch, k, inputs_finite) for k in _not_finite(outputs)]
            for result, array in zip(op.results, outputs, strict=True):
                values[result] = array
        raise GraphfuseError(f"enable_debug_mode: @{self.entry} has no func.return")

    def _check_results(self, results: list[np.ndarray], non_finite: list[_NonFinite],
                       arrays: list[np.ndarray]) -> None:
        """An error when a result is not finite, naming the launches that first produced NaN or Inf."""
        bad = _not_finite(results)
        if not bad:
            return
        found = ", ".join(f"result {k}: {int(np.isnan(results[k]).sum())} NaN, {int(np.isinf(results[k]).sum())} Inf"
                          for k in bad)
        first = [n for n in non_finite if n.from_finite_inputs] or non_finite
        if first:
            raise GraphfuseError([Diagnostic(
                "error", f"enable_debug_mode: @{self.entry} {found}; first produced by "
                f"{'; '.join(str(n) for n in first[:5])}", notes=list(first[0].launch.notes))])
        inputs = ", ".join(str(k) for k in _not_finite(arrays))
        raise GraphfuseError(f"enable_debug_mode: @{self.entry} {found}; no launch produced them"
                             + (f": they come from input {inputs}" if inputs else ""))
