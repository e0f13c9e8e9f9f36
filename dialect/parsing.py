"""Parse graph-dialect text into a verified module, with diagnostics located in the user's file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc, from_mlir_error
from graphfuse.dialect.verifier import verify_operation

#: The bindings name every string they parse "-"; diagnostics are renamed to the real file.
PARSER_BUFFER = "-"


def relocate(diag: Diagnostic, display_name: str) -> Diagnostic:
    """``diag`` with the parser's buffer name replaced by ``display_name``."""
    loc = diag.location
    if loc is not None and loc.file == PARSER_BUFFER:
        loc = SourceLoc(display_name, loc.line, loc.col)
    return dataclasses.replace(diag, location=loc, notes=[relocate(n, display_name) for n in diag.notes])


def is_blank(text: str) -> bool:
    """True when ``text`` holds nothing but whitespace and comments."""
    return all(not line.strip() or line.strip().startswith("//") for line in text.splitlines())


def parse_module(
    text: str,
    filename: str = "<string>",
    context: ir.Context | None = None,
    first_line: int = 0,
) -> ir.Module:
    """Parse and verify ``text`` (MLIR's verifier, then graph-verify).

    ``first_line`` is the 0-based line of ``text`` within ``filename`` (for a
    chunk of a split file): reported line numbers are those of the whole file.
    Raises GraphfuseError with located diagnostics.
    """
    context = context or make_context()
    if is_blank(text):
        where = SourceLoc(filename, first_line + 1, 1)
        raise GraphfuseError([Diagnostic("error", "empty input: expected a module or a list of operations", where)])
    try:
        with context:
            # Pad with newlines so the parser's line numbers are those of the whole file.
            module = ir.Module.parse("\n" * first_line + text)
    except ir.MLIRError as error:
        raise GraphfuseError([relocate(d, filename) for d in from_mlir_error(error)]) from None
    diagnostics = verify_operation(module.operation)
    if diagnostics:
        raise GraphfuseError([relocate(d, filename) for d in diagnostics])
    return module


def load_module(path: str | Path, context: ir.Context | None = None) -> ir.Module:
    """Parse and verify the graph-dialect file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise GraphfuseError(f"could not open input file '{path}': no such file or directory") from None
    except (OSError, UnicodeDecodeError) as error:
        raise GraphfuseError(f"could not read input file '{path}': {error}") from None
    return parse_module(text, str(path), context)
