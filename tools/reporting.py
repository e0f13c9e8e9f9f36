"""Print diagnostics the way mlir-opt does, and turn failures into exit codes."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, printable
from graphfuse.pipelines.runner import PipelineFailure, Reproducer, default_repro_dir

#: --repro-dir's help, the same in every tool
REPRO_DIR_HELP = ("write the reproducer of a failing pipeline (the module before it) into this directory "
                  "(default: graphfuse-repro/ under the temp dir)")


class UsageError(Exception):
    """Bad command line: printed as ``<tool>: error: <message>``, exit 1."""


class DiagnosticPrinter:
    """Writes ``file:line:col: severity: message`` plus the source line and a caret."""

    def __init__(self, tool: str, stream: TextIO | None = None):
        self.tool = tool
        self.stream = stream or sys.stderr
        self.sources: dict[str, list[str]] = {}

    def add_source(self, name: str, text: str) -> None:
        self.sources[name] = text.splitlines()

    def format(self, diag: Diagnostic) -> str:
        # Messages and source lines echo user text: control characters are escaped (see printable).
        if diag.location is None:
            out = f"{self.tool}: {diag.severity}: {printable(diag.message)}\n"
        else:
            out = f"{diag.location}: {diag.severity}: {printable(diag.message)}\n"
            lines = self.sources.get(diag.location.file)
            if lines is not None and 1 <= diag.location.line <= len(lines):
                line = lines[diag.location.line - 1]
                caret = " " * len(printable(line[: max(diag.location.col - 1, 0)])) + "^"
                out += f"{printable(line)}\n{caret}\n"
        return out + "".join(self.format(note) for note in diag.notes)

    def print(self, diag: Diagnostic) -> None:
        self.stream.write(self.format(diag))
        self.stream.flush()

    def error(self, message: str) -> None:
        self.print(Diagnostic("error", message))


def run_tool(tool: str, body: Callable[[list[str]], int], argv: list[str] | None = None) -> int:
    """Run a CLI body, mapping every failure to a message and exit code 1.

    A Python exception that escapes is a graphfuse bug: it is reported as an
    internal error in one line (set GRAPHFUSE_DEBUG=1 for the traceback).
    """
    printer = DiagnosticPrinter(tool)
    try:
        return body(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        printer.error(str(error))
    except GraphfuseError as error:
        for diag in error.diagnostics:
            printer.print(diag)
    except KeyboardInterrupt:
        printer.error("interrupted")
    except BrokenPipeError:
        pass
    except Exception as error:
        if os.environ.get("GRAPHFUSE_DEBUG"):
            traceback.print_exc()
        detail = "".join(traceback.format_exception_only(error)).strip()
        printer.error(f"internal error: {detail} (set GRAPHFUSE_DEBUG=1 for a traceback)")
    return 1


def save_reproducer(failure: PipelineFailure, directory: str | Path | None, stem: str,
                    options: Sequence[str] = ()) -> PipelineFailure:
    """Write ``failure``'s reproducer into ``directory`` (default :func:`default_repro_dir`); note its command.

    ``options`` are graphfuse-opt flags the rerun needs besides the pipeline (switches, plugins).
    """
    if failure.reproducer is None:
        return failure
    return failure.with_note(write_reproducer(failure.reproducer, directory, stem, options))


def write_reproducer(reproducer: Reproducer, directory: str | Path | None, stem: str,
                     options: Sequence[str] = ()) -> str:
    """Write ``reproducer`` into ``directory`` (default :func:`default_repro_dir`); the note to print."""
    where = Path(directory) if directory else default_repro_dir()
    try:
        path = reproducer.write(where, stem, options)
    except OSError as error:
        return f"could not write the reproducer into '{where}': {error.strerror or error}"
    return f"reproduce with: {reproducer.command(str(path), options)}"


def reproducer_stem(input_path: str) -> str:
    """What a tool's reproducer files are named after: its input file's stem, ``stdin`` for standard input."""
    return "stdin" if input_path == "-" else Path(input_path).stem


@contextlib.contextmanager
def reproducers_saved(directory: str | Path | None, stem: str, options: Sequence[str] = ()) -> Iterator[None]:
    """A PipelineFailure raised inside is re-raised with its reproducer written (see :func:`save_reproducer`)."""
    try:
        yield
    except PipelineFailure as failure:
        raise save_reproducer(failure, directory, stem, options) from None
