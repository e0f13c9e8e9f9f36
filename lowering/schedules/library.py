"""The code generator's transform-dialect library (contraction and row-kernel schedules), and how a schedule recorded
on an op is applied.

The schedules are named sequences in the ``.mlir`` files of this folder, one file per op family, each
loadable on its own by upstream's ``transform-preload-library`` (``test/Lowering/apply-contraction-schedules/
upstream.mlir`` runs one so).  A sequence's parameters are ``!transform.param<i64>`` arguments named by their
``graph.parameter`` attribute.

The choice of a schedule is IR: :func:`schedule_attribute` builds ``{sequence = "packed_tiles", task_rows =
48 : i64, ...}``, which the strategy sets as ``graph.schedule`` on each op it schedules.  :func:`apply_schedule`
then runs that sequence on every op carrying the attribute, its parameters the attribute's entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import interpreter, structured

from graphfuse.dialect.diagnostics import GraphfuseError

__all__ = ["SCHEDULE", "SCHEDULES_DIR", "apply_schedule", "apply_sequence", "include", "loaded", "parameter_problem",
           "run_transforms", "schedule_attribute", "schedule_sequence", "schedule_sizes", "scheduled_ops",
           "sequence_parameters"]

#: The attribute recording an op's schedule (:func:`schedule_attribute`).
SCHEDULE = "graph.schedule"
#: The folder of the library's ``.mlir`` files.
SCHEDULES_DIR = Path(__file__).parent
#: Names a sequence argument after the schedule attribute's entry that sets it.
_PARAMETER = "graph.parameter"
_MAIN = "__transform_main"


def schedule_attribute(sequence: str, **parameters: int) -> ir.DictAttr:
    """The schedule running library sequence ``@sequence`` with ``parameters`` (sizes, in the current context)."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.DictAttr.get({"sequence": ir.StringAttr.get(sequence),
                            **{name: ir.IntegerAttr.get(i64, value) for name, value in parameters.items()}})


def schedule_sequence(schedule: ir.Attribute) -> str:
    """The library sequence ``schedule`` (a :func:`schedule_attribute`) runs."""
    return ir.StringAttr(ir.DictAttr(schedule)["sequence"]).value


def schedule_sizes(schedule: ir.Attribute) -> dict[str, int]:
    """The parameters ``schedule`` gives its sequence, by name."""
    return {entry.name: ir.IntegerAttr(entry.attr).value for entry in ir.DictAttr(schedule)
            if entry.name != "sequence"}


def scheduled_ops(module: ir.Module) -> dict[ir.Attribute, list[ir.Operation]]:
    """The ops of ``module`` carrying a schedule, by schedule, in the order the schedules first appear."""
    found: dict[ir.Attribute, list[ir.Operation]] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if SCHEDULE in op.attributes:
            found.setdefault(op.attributes[SCHEDULE], []).append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def apply_schedule(payload: ir.Module | ir.Operation, schedule: ir.Attribute, what: str) -> None:
    """Run ``schedule``'s sequence on the ops of ``payload`` that carry it (as ``graph.schedule``); ``what`` names
    the step in errors."""
    sequence = schedule_sequence(schedule)

    def build(target: ir.Value) -> None:
        ops = structured.MatchOp(transform.AnyOpType.get(), target,
                                 op_attrs=ir.DictAttr.get({SCHEDULE: schedule})).result
        include(sequence, ops, what, **schedule_sizes(schedule))

    run_transforms(payload, f"{what} failed in @{sequence}", build)


def apply_sequence(payload: ir.Module | ir.Operation, sequence: str, what: str, **parameters: int) -> None:
    """Run library sequence ``@sequence`` on ``payload`` itself (a sequence that finds its own ops)."""
    run_transforms(payload, f"{what} failed in @{sequence}",
                   lambda target: include(sequence, target, what, **parameters))


def include(sequence: str, target: ir.Value, what: str, **parameters: int) -> None:
    """Include library sequence ``@sequence`` on the handle ``target``, its parameters ``parameters``: a step of
    the script a :func:`run_transforms` builder writes.  A sequence the library lacks or parameters it does not
    take are an error naming ``what``."""
    library = _library(target.context)
    problem = _parameter_problem(library, sequence, parameters)
    if problem is not None:
        raise GraphfuseError(f"{what} failed: {problem}")
    names = _parameter_names(library, sequence)
    assert names is not None
    i64 = ir.IntegerType.get_signless(64)
    param = transform.ParamType.get(i64)
    values = [transform.ParamConstantOp(param, ir.IntegerAttr.get(i64, parameters[name])).result for name in names]
    transform.IncludeOp([], ir.FlatSymbolRefAttr.get(sequence), transform.FailurePropagationMode.Propagate,
                        [target, *values])


def run_transforms(payload: ir.Module | ir.Operation, failure: str, build: Callable[[ir.Value], None]) -> None:
    """Run on ``payload`` the transform script ``build`` writes, given the handle of ``payload``; the script may
    :func:`include` the library's sequences.  A step that fails raises an error starting with ``failure``."""
    context = payload.context
    library = _library(context)
    any_op = transform.AnyOpType.get(context)
    with ir.Location.unknown(context), ir.InsertionPoint(library.body):
        main = transform.NamedSequenceOp(_MAIN, [any_op], [], arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}])
    try:
        with ir.Location.unknown(context), ir.InsertionPoint(main.body):
            build(main.bodyTarget)
            transform.YieldOp([])
        interpreter.apply_named_sequence(payload, main, library)
    except (ir.MLIRError, ValueError) as error:
        raise GraphfuseError(f"{failure}: {_reason(error)}") from None
    finally:
        main.operation.erase()


def _reason(error: Exception) -> str:
    """The interpreter's diagnostics of ``error``, one line each: they go on to print the payload op whole."""
    found = re.findall(r"Diagnostic message at loc\([^)]*\): ([^\n]*)", str(error))
    reasons = [re.sub(r"\s+of$", "", line.strip()) for line in found]
    return "; ".join(reasons) or str(error).split("\n", 1)[0]


def parameter_problem(context: ir.Context, sequence: str, given: Iterable[str]) -> str | None:
    """Why the parameters ``given`` cannot run library schedule ``@sequence`` (an unknown schedule, parameters
    missing or unknown), or None."""
    return _parameter_problem(_library(context), sequence, given)


def _parameter_problem(library: ir.Module, sequence: str, given: Iterable[str]) -> str | None:
    expected = _parameter_names(library, sequence)
    if expected is None:
        return f"{SCHEDULE} names no sequence of the schedule library: '{sequence}'"
    missing, unknown = sorted(set(expected) - set(given)), sorted(set(given) - set(expected))
    if not missing and not unknown:
        return None
    return (f"@{sequence} takes the parameters {', '.join(expected) or 'none'}; "
            + "; ".join(part for part in (missing and f"missing {', '.join(missing)}",
                                          unknown and f"unknown {', '.join(unknown)}") if part))


def sequence_parameters(context: ir.Context, sequence: str) -> list[str] | None:
    """The parameters of library schedule ``@sequence`` in the order it takes them; None when there is none."""
    return _parameter_names(_library(context), sequence)


def _parameter_names(library: ir.Module, name: str) -> list[str] | None:
    """``None`` also for a step of the schedules (a sequence with an argument besides the first that no
    ``graph.parameter`` names): it is included by the schedules, not run on its own."""
    for op in library.body.operations:
        if isinstance(op, transform.NamedSequenceOp) and op.sym_name.value == name:
            arguments = [ir.DictAttr(a) for a in ir.ArrayAttr(op.attributes["arg_attrs"])][1:]
            if not all(_PARAMETER in a for a in arguments):
                return None
            return [ir.StringAttr(a[_PARAMETER]).value for a in arguments]
    return None


#: The library of the context whose schedules are being applied (:func:`loaded`), and that context.
_LOADED: list[tuple[ir.Context, ir.Module]] = []


@contextmanager
def loaded(context: ir.Context) -> Iterator[None]:
    """Parse the library into ``context`` once for the schedules applied inside the block, instead of once per
    schedule (a block inside another of the same context uses the outer one's); released after it (the
    library's module would keep the context alive)."""
    _LOADED.append((context, _library(context)))
    try:
        yield
    finally:
        _LOADED.pop()


def _library(context: ir.Context) -> ir.Module:
    for owner, library in reversed(_LOADED):
        if owner is context:
            return library
    return _parse(context)


def _parse(context: ir.Context) -> ir.Module:
    """The library's sequences in one module of ``context``."""
    library = ir.Module.parse('module attributes {transform.with_named_sequence} {}', context)
    for path in sorted(SCHEDULES_DIR.glob("*.mlir")):
        part = ir.Module.parse(path.read_text(), context)
        for op in list(part.body.operations):
            if len(op.regions[0].blocks):  # declarations of another file's sequences are dropped
                library.body.append(op)
    return library
