"""The checks a graph makes while it runs, and the errors it raises when one fails.

Eager PyTorch raises on an integer division by zero (``RuntimeError: ZeroDivisionError``) and on an index out of
range (``IndexError``, or ``RuntimeError`` from ``torch.gather``); a graph raises there too, in the reference
interpreter and in compiled code alike.  Each failure is a :class:`RunCheckError` (so a
:class:`~graphfuse.dialect.diagnostics.GraphfuseError`, located at the op that failed) and also an instance of
the exception types eager raises, so code that catches eager's error catches this one.

Each kind of failure has a status code: the C entry point of a compiled library returns it
(``GRAPHFUSE_<NAME>``, after ``lowering.library.STATUS``'s own codes).
"""

from __future__ import annotations

from typing import ClassVar

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc

__all__ = [
    "CHECK_ERRORS",
    "CHECK_STATUS",
    "IndexOutOfRangeError",
    "IntegerDivisionByZeroError",
    "RunCheckError",
    "check_failed",
    "relocated",
]


class RunCheckError(GraphfuseError):
    """A check the graph makes while it runs failed (the results of that run are not returned)."""

    #: the status name (``GRAPHFUSE_<status>`` in C)
    status: ClassVar[str] = ""
    #: what failed, the start of the message
    what: ClassVar[str] = ""
    #: the graph op that failed (None: not known yet, as raised by an op's reference alone)
    op: str | None = None
    #: what the op knows about the failure (the index and the axis), or ""
    detail: str = ""


class IntegerDivisionByZeroError(RunCheckError, ZeroDivisionError, RuntimeError):
    """An integer div, mod, floor_div or floor_mod by zero (eager PyTorch: ``RuntimeError: ZeroDivisionError``)."""

    status = "INTEGER_DIVISION_BY_ZERO"
    what = "integer division by zero"


class IndexOutOfRangeError(RunCheckError, IndexError, RuntimeError):
    """An index of gather, gather_elements or scatter_update outside its axis (eager PyTorch: ``IndexError``, or
    ``RuntimeError`` from ``torch.gather``: this error is both)."""

    status = "INDEX_OUT_OF_RANGE"
    what = "index out of range"


#: status name -> the error raised
CHECK_ERRORS: dict[str, type[RunCheckError]] = {
    error.status: error for error in (IntegerDivisionByZeroError, IndexOutOfRangeError)
}
#: status name -> the code a compiled library's entry point returns (0-2 are lowering.library.STATUS's own)
CHECK_STATUS: dict[str, int] = {"INTEGER_DIVISION_BY_ZERO": 3, "INDEX_OUT_OF_RANGE": 4}


def check_failed(error: type[RunCheckError], op: str | None = None, location: SourceLoc | None = None,
                 detail: str = "") -> RunCheckError:
    """The ``error`` of op ``op`` at ``location``: "integer division by zero in graph.floor_div: detail"."""
    message = error.what + (f" in {op}" if op else "") + (f": {detail}" if detail else "")
    failure = error([Diagnostic("error", message, location)])
    failure.op, failure.detail = op, detail
    return failure


def relocated(error: RunCheckError, display_name: str) -> RunCheckError:
    """``error`` with a location in the parser's buffer ("-", a graph parsed from a string) reported as being in
    ``display_name``, the file the graph came from."""
    where = error.diagnostics[0].location if error.diagnostics else None
    if where is None or where.file != "-":
        return error
    return check_failed(type(error), error.op, SourceLoc(display_name, where.line, where.col), error.detail)
