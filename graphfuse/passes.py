"""graphfuse passes inside a pass manager of your own.

An upstream ``mlir.passmanager.PassManager`` takes Python passes as
callables (``pm.add(run)``, ``run(op, pass_)``).  :func:`external_pass` makes
one of any graphfuse pass or pipeline, so that a toolchain mixes them with
upstream passes in one pass manager::

    from mlir.passmanager import PassManager
    from graphfuse import passes

    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.add(passes.external_pass("graph-fusion{opt-level=2},graph-kernel-fusion"))
    pm.add(passes.external_pass(passes.GraphToLinalg(strict=True)))
    pm.add("cse")
    pm.run(module.operation)

The context must have the graph dialect loaded (``graphfuse.make_context()``,
or ``graphfuse.dialect.context.load_graph_dialect(context)`` on your own).
Each pass class of the registry is an attribute of this module under its
class name (``passes.GraphFusion``), built with its options as keywords.
A graphfuse pass runs on a ``builtin.module``; a failure is reported through
the context's diagnostic handlers at its location and fails the pass
manager's run, as an upstream pass's failure does.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError
from graphfuse.pipelines.pass_base import GraphPass
from graphfuse.pipelines.registry import all_passes
from graphfuse.pipelines.runner import run_pipeline

__all__ = ["external_pass"]

ExternalPass = Callable[[ir.Operation, object], None]


def external_pass(pipeline: str | GraphPass) -> ExternalPass:
    """``pipeline`` (pipeline text of graphfuse and upstream passes, or a pass object) as a pass for
    ``PassManager.add``: it runs on the ``builtin.module`` the pass manager hands it, in place."""
    text = pipeline.to_text() if isinstance(pipeline, GraphPass) else pipeline

    def run(op: ir.Operation, pass_: object) -> None:
        if op.name != "builtin.module":
            op.location.emit_error(f"graphfuse pass '{text}' runs on a builtin.module, not on '{op.name}'")
            pass_.signal_pass_failure()
            return
        # graphfuse passes take an ir.Module: the module's ops move into one for the run and back after it
        body = op.regions[0].blocks[0]
        module = ir.Module.create(op.location)
        for inner in list(body.operations):
            module.body.append(inner)
        try:
            run_pipeline(module, text)
        except GraphfuseError as error:
            for diagnostic in error.diagnostics:
                _emit(diagnostic, op.location)
            pass_.signal_pass_failure()
        finally:
            for inner in list(module.body.operations):
                body.append(inner)

    run.__name__ = text
    return run


def _emit(diagnostic: Diagnostic, fallback: ir.Location) -> None:
    where = diagnostic.location
    location = ir.Location.file(where.file, where.line, where.col) if where is not None else fallback
    notes = "".join(f"\nnote: {note.message}" for note in diagnostic.notes)
    location.emit_error(diagnostic.message + notes)


def __getattr__(name: str) -> type[GraphPass]:
    """A pass class of the registry by its class name (``passes.GraphFusion``)."""
    for cls in all_passes():
        if cls.__name__ == name:
            return cls
    raise AttributeError(f"module 'graphfuse.passes' has no pass class '{name}'")
