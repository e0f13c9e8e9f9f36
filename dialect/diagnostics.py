"""Located diagnostics and the error type every graphfuse failure raises.

graphfuse never lets a Python traceback or an MLIR abort reach the user: code
that detects bad input raises :class:`GraphfuseError` carrying
:class:`Diagnostic` objects, and the tools print them the way mlir-opt does
(``file:line:col: error: message``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir

# C0 controls but tab and newline, DEL and the C1 controls: echoed raw, ESC and CSI sequences drive the terminal
# (colours, cursor moves, a cleared screen) and NUL truncates what some tools show.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters written as ``\\xNN`` escapes, safe to echo to a terminal."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{printable(self.file)}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    severity: str  # "error", "warning", "note" or "remark"
    message: str
    location: SourceLoc | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.severity}: {printable(self.message)}"


class GraphfuseError(Exception):
    """A user-facing failure: bad input, a failed pass, a failed check."""

    def __init__(self, diagnostics: list[Diagnostic] | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic("error", diagnostics)]
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


#: The MLIR bindings name every buffer they parse "-"; the file it came from, when known.
_parsed_buffer_name: str | None = None


def set_parsed_buffer_name(name: str | None) -> None:
    """Report locations in "-" (the parser's buffer) as ``name`` from now on (set by parse_module)."""
    global _parsed_buffer_name
    _parsed_buffer_name = name


def source_loc(location: ir.Location) -> SourceLoc | None:
    """The file position of an MLIR location (looking inside name, callsite and fused locations)."""
    try:
        if location.is_a_file():
            filename = location.filename
            if filename == "-" and _parsed_buffer_name is not None:
                filename = _parsed_buffer_name
            return SourceLoc(filename, location.start_line, location.start_col)
        if location.is_a_name():
            return source_loc(location.child_loc)
        if location.is_a_callsite():
            return source_loc(location.callee)
        if location.is_a_fused():
            for inner in location.locations:
                found = source_loc(inner)
                if found is not None:
                    return found
    except (AttributeError, ValueError):
        pass
    return None


_SEVERITY = {"ERROR": "error", "WARNING": "warning", "NOTE": "note", "REMARK": "remark"}


def from_mlir_diagnostic(diag) -> Diagnostic:
    """Convert an ``ir.DiagnosticInfo`` (from MLIRError.error_diagnostics or a handler)."""
    severity = _SEVERITY.get(str(diag.severity).rsplit(".", 1)[-1], "error")
    return Diagnostic(
        severity,
        diag.message,
        source_loc(diag.location),
        [from_mlir_diagnostic(n) for n in diag.notes],
    )


def from_mlir_error(error: ir.MLIRError) -> list[Diagnostic]:
    diags = [from_mlir_diagnostic(d) for d in (error.error_diagnostics or [])]
    return diags or [Diagnostic("error", error.message if hasattr(error, "message") else str(error))]
