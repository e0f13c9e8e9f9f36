"""Parse graph-dialect text into a verified module, with diagnostics located in the user's file."""

from __future__ import annotations

import dataclasses
import re
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


_CUSTOM_FORM_OP = re.compile(r"(?<![\"\w.])graph\.(\w+)")


def _silent_failure(text: str, first_line: int) -> list[Diagnostic]:
    """Diagnose a parse failure for which MLIR emitted no diagnostic.

    The MLIR parser fails without a message on a graph op written in custom
    form (``graph.exp %a : ...``): IRDL ops have only the generic form.
    """
    for number, line in enumerate(text.splitlines(), start=first_line + 1):
        code = line.split("//", 1)[0]
        match = _CUSTOM_FORM_OP.search(code)
        if match:
            name = match.group(1)
            return [Diagnostic(
                "error",
                f"'graph.{name}' must be written in MLIR's generic form, e.g. "
                f'%0 = "graph.{name}"(%x) : (tensor<4xf32>) -> tensor<4xf32>',
                SourceLoc(PARSER_BUFFER, number, match.start() + 1),
            )]
    return [Diagnostic("error", "unable to parse the input (the MLIR parser gave no reason)")]


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
        diagnostics = from_mlir_error(error) if error.error_diagnostics else _silent_failure(text, first_line)
        raise GraphfuseError([relocate(d, filename) for d in diagnostics]) from None
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
