"""Parse graph-dialect text into a verified module, with diagnostics located in the user's file."""

from __future__ import annotations

import dataclasses
import faulthandler
import io
import os
import re
import signal
import sys
import time
from pathlib import Path

from mlir import ir

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, SourceLoc, from_mlir_error, source_loc
from graphfuse.dialect.nesting import alias_too_deep, line_col, nesting_message, too_deep
from graphfuse.dialect.types import NUMPY_DTYPES
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


#: Sizes, offsets and strides are signed 64-bit integers everywhere below (MLIR, LLVM, numpy): a tensor
#: with more bytes than that cannot even be addressed, and computing its size would overflow.
MAX_TENSOR_BYTES = 2**63 - 1


def _too_big(t: ir.Type) -> str | None:
    """Why a statically shaped tensor type is too big to exist, or None."""
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    count = 1
    for i in range(t.rank):
        count *= t.get_dim_size(i)
    itemsize = NUMPY_DTYPES[str(t.element_type)].itemsize if str(t.element_type) in NUMPY_DTYPES else 1
    if count * itemsize <= MAX_TENSOR_BYTES:
        return None
    return f"{t} has {count} elements ({count * itemsize} bytes), more than a 64-bit size can count"


def values_defined_by(op: ir.Operation) -> list[tuple[ir.Value, ir.Location]]:
    """The op's results and its regions' block arguments, each with the location to report it at."""
    values = [(v, op.location) for v in op.results]
    for region in op.regions:
        for block in region.blocks:
            values.extend((arg, arg.location) for arg in block.arguments)
    return values


def unsupported_input(root: ir.Operation) -> list[Diagnostic]:
    """What the MLIR verifier accepts but graphfuse cannot process safely, located at the op.

    - tensor types whose byte size overflows 64 bits (``tensor<100000000000x100000000000xf32>``):
      every size computation on them would wrap around;
    - tensors with an encoding on graph ops: the ops' semantics and lowerings are those of plain tensors;
    - tensor constants not written as ``dense<...>`` (``dense_resource<blob>``): neither the reference
      interpreter nor the folders can read their values;
    - an empty symbol name (``func.func @""``): MLIR prints it as ``@<<INVALID EMPTY SYMBOL>>``, which does
      not parse again.
    """
    found: list[Diagnostic] = []
    reported: set[str] = set()  # one error per oversized type, at its first appearance

    def report(message: str, location: ir.Location) -> None:
        found.append(Diagnostic("error", message, source_loc(location)))

    def visit(op: ir.Operation) -> ir.WalkResult:
        for value, location in values_defined_by(op):
            why = _too_big(value.type)
            if why is not None and str(value.type) not in reported:
                reported.add(str(value.type))
                report(f"tensor type {why}", location)
        if op.name.startswith("graph."):
            for value in [*op.operands, *op.results]:
                if isinstance(value.type, ir.RankedTensorType) and value.type.encoding is not None:
                    report(f"'{op.name}' does not take tensors with an encoding, got {value.type}", op.location)
                    break
        elif op.name == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType):
            value = op.attributes["value"]
            if not isinstance(value, ir.DenseElementsAttr):
                report(f"tensor constants must be written dense<...>; graphfuse cannot read {value}", op.location)
        if "sym_name" in op.attributes:
            try:
                empty = not ir.StringAttr(op.attributes["sym_name"]).value
            except RuntimeError:  # the bindings cannot hand over a name that is not UTF-8
                report(f"'{op.name}' has a symbol name that is not UTF-8 text", op.location)
            else:
                if empty:
                    report(f"'{op.name}' has an empty symbol name", op.location)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def parse_module(
    text: str,
    filename: str = "<string>",
    context: ir.Context | None = None,
    first_line: int = 0,
) -> ir.Module:
    """Parse and verify ``text`` (MLIR's verifier, then graph-verify).

    ``first_line`` is the 0-based line of ``text`` within ``filename`` (for a
    chunk of a split file): reported line numbers are those of the whole file.
    ``text`` may also be bytes: MLIR bytecode (told by its content, not by a
    file's extension) or UTF-8 text.  Raises GraphfuseError with located
    diagnostics.
    """
    if isinstance(text, bytes | bytearray) and is_bytecode(text):
        return _parse_bytecode(bytes(text), filename, context or make_context())
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode()
        except UnicodeDecodeError as error:
            raise GraphfuseError(f"{filename}: MLIR text must be UTF-8: {error}") from None
    if not isinstance(text, str):
        raise GraphfuseError(f"parse_module takes MLIR text (str), not {type(text).__name__}")
    context = context or make_context()
    if is_blank(text):
        where = SourceLoc(filename, first_line + 1, 1)
        raise GraphfuseError([Diagnostic("error", "empty input: expected a module or a list of operations", where)])
    deep = too_deep(text, "mlir")
    if deep is not None:  # MLIR's recursive parser would overflow the stack (a segfault, not an error)
        line, col = line_col(text, deep)
        raise GraphfuseError([Diagnostic("error", nesting_message(), SourceLoc(filename, first_line + line, col))])
    deep = alias_too_deep(text)
    if deep is not None:
        line, col = line_col(text, deep)
        raise GraphfuseError([Diagnostic("error", f"aliases chained {nesting_message()}",
                                         SourceLoc(filename, first_line + line, col))])
    try:
        with context:
            # Pad with newlines so the parser's line numbers are those of the whole file.
            module = ir.Module.parse("\n" * first_line + text)
    except ir.MLIRError as error:
        diagnostics = from_mlir_error(error) if error.error_diagnostics else _silent_failure(text, first_line)
        raise GraphfuseError([relocate(d, filename) for d in diagnostics]) from None
    diagnostics = unsupported_input(module.operation) or verify_operation(module.operation)
    if diagnostics:
        raise GraphfuseError([relocate(d, filename) for d in diagnostics])
    return module


#: A quoted string of printed MLIR, and the escapes its printer writes (two hex digits, or a backslash or quote).
_QUOTED = re.compile(rb'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(rb"\\([0-9A-Fa-f]{2}|.)")


def _holds_text_not_utf8(module: ir.Module) -> bool:
    """Whether a name or string of the module (an attribute or symbol name, a string attribute, a location's file)
    is not UTF-8.  Reading one through the bindings raises inside the C++ frames of a walk, which aborts the
    process; the printer writes them escaped, so the printed module is searched instead."""
    printed = module.operation.get_asm(binary=True, large_elements_limit=16, enable_debug_info=True)
    for quoted in _QUOTED.finditer(printed):
        raw = _ESCAPE.sub(lambda m: bytes([int(m[1], 16)]) if len(m[1]) == 2 else m[1], quoted[1])
        try:
            raw.decode()
        except UnicodeDecodeError:
            return True
    return False


def _file_bytes(path: str | Path) -> bytes:
    """The bytes of the input file ``path``, or a GraphfuseError saying why not."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise GraphfuseError(f"could not open input file '{path}': no such file or directory") from None
    except IsADirectoryError:
        raise GraphfuseError(f"could not open input file '{path}': it is a directory") from None
    except OSError as error:
        raise GraphfuseError(f"could not read input file '{path}': {error.strerror or error}") from None


def load_module(path: str | Path, context: ir.Context | None = None) -> ir.Module:
    """Parse and verify the graph-dialect file at ``path``: MLIR text or bytecode."""
    path = Path(path)
    data = _file_bytes(path)
    if is_bytecode(data):
        return parse_module(data, str(path), context)
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise GraphfuseError(f"could not read input file '{path}': neither UTF-8 text nor MLIR bytecode") from None
    return parse_module(text, str(path), context)


#: What the tools' input file ``-`` (standard input) is called in diagnostics, as mlir-opt calls it.
STDIN_NAME = "<stdin>"


@dataclasses.dataclass(frozen=True)
class SourceText:
    """MLIR text and the name its diagnostics give it (standard input's ``<stdin>``, a file's path)."""

    text: str
    filename: str


def read_input(path: str) -> SourceText:
    """The text of the tools' input file ``path``, ``-`` for standard input.  MLIR bytecode (told by its content)
    is read as the text of its module, with the locations it carries."""
    data = sys.stdin.buffer.read() if path == "-" else _file_bytes(path)
    name = STDIN_NAME if path == "-" else path
    if is_bytecode(data):
        try:
            module = parse_module(data, name)
        except GraphfuseError as error:
            raise GraphfuseError(f"could not read input file '{path}': {error.diagnostics[0].message}") from None
        return SourceText(module.operation.get_asm(enable_debug_info=True), name)
    try:
        return SourceText(data.decode(), name)
    except UnicodeDecodeError:
        raise GraphfuseError(f"could not read input file '{path}': neither UTF-8 text nor MLIR bytecode") from None


def input_source(path: str) -> Path | SourceText:
    """What a tool compiles for its input file argument: the file's path, or for ``-`` standard input's text."""
    return read_input(path) if path == "-" else Path(path)


#: The first bytes of every MLIR bytecode file.
BYTECODE_MAGIC = b"ML\xefR"


def is_bytecode(data: bytes | bytearray) -> bool:
    """Whether ``data`` is MLIR bytecode (by its magic number)."""
    return bytes(data[:4]) == BYTECODE_MAGIC


def _reader_crash(data: bytes) -> str | None:
    """How MLIR's bytecode reader dies on ``data`` (the name of the signal), or None when it returns.

    The reader checks corrupted input with assertions that abort the process (about 5% of 1-8 byte mutations of
    a small file), and a corrupted size can make it allocate until the machine runs out of memory: it reads
    ``data`` first in a forked child, limited to :data:`READER_MEMORY` more memory (at least 64 bytes per byte
    read), :data:`READER_SECONDS` of CPU time and twice that of wall time, whose death (or silence) is then an
    error instead.  Where ``fork`` does not exist the reader runs unguarded.
    """
    if not hasattr(os, "fork"):
        return None
    pid = os.fork()
    if pid == 0:  # the child: read, and say nothing either way
        status = 0
        try:
            faulthandler.disable()  # its report of the child's death would go to the parent's stderr
            silent = os.open(os.devnull, os.O_WRONLY)  # the reader's last words ("LLVM ERROR: out of memory")
            os.dup2(silent, 2)
            _limit_child(len(data))
            with make_context():
                ir.Module.parse(data)
        except BaseException:  # an error is a clean failure; the parent reports it when it reads the file itself
            status = 1
        os._exit(status)
    status = _wait(pid, 2 * READER_SECONDS)
    if status is None:
        return "no answer in time"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"
    return None


#: What the child reading bytecode may allocate beyond what it inherits (or 64 bytes per byte of input, if more).
READER_MEMORY = 2 << 30
#: The CPU seconds it may take.
READER_SECONDS = 60


def _wait(pid: int, seconds: float) -> int | None:
    """The child's exit status, or None (the child killed) when it has not ended within ``seconds`` of wall time:
    a child that sleeps (a lock another thread held when it was forked) would not reach its CPU-time limit."""
    deadline = time.monotonic() + seconds
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _limit_child(size: int) -> None:
    import resource

    with open("/proc/self/statm") as statm:  # the address space the child starts with (PyTorch maps gigabytes)
        mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = mapped + max(READER_MEMORY, 64 * size)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (READER_SECONDS, READER_SECONDS + 1))


def _parse_bytecode(data: bytes, filename: str, context: ir.Context) -> ir.Module:
    crash = _reader_crash(data)
    if crash is not None:
        raise GraphfuseError([Diagnostic("error", f"invalid MLIR bytecode: MLIR's reader fails on it ({crash})",
                                         SourceLoc(filename, 1, 1))])
    try:
        with context:
            module = ir.Module.parse(data)
    except ir.MLIRError as error:
        messages = "; ".join(d.message for d in error.error_diagnostics) or str(error)
        raise GraphfuseError([Diagnostic("error", f"invalid MLIR bytecode: {messages}", SourceLoc(filename, 1, 1))]) \
            from None
    except RuntimeError:  # the bindings cannot pass on a diagnostic that quotes bytes which are not UTF-8
        raise GraphfuseError([Diagnostic("error", "invalid MLIR bytecode: MLIR's reader rejects it (its message "
                                         "quotes bytes that are not UTF-8 text)", SourceLoc(filename, 1, 1))]) from None
    if _holds_text_not_utf8(module):
        raise GraphfuseError([Diagnostic("error", "invalid MLIR bytecode: it holds a name or string that is not "
                                         "UTF-8 text", SourceLoc(filename, 1, 1))])
    diagnostics = unsupported_input(module.operation) or verify_operation(module.operation)
    if diagnostics:
        raise GraphfuseError([relocate(d, filename) for d in diagnostics])
    return module


#: A file location in the parser's buffer, which it always names "-": quoted, or in the pretty form.
_PARSED_BUFFER_LOC = re.compile(r'"-":(\d+):(\d+)')
_PRETTY_PARSED_BUFFER_LOC = re.compile(r'(?<![\w"])-:(\d+):(\d+)')


def name_parsed_buffer(asm: str, filename: str) -> str:
    """Assembly printed with locations, its locations in the parser's buffer ("-") naming ``filename``
    instead: the file the module was read from, as mlir-opt prints them."""
    quoted = filename.replace("\\", "\\\\").replace('"', '\\"')
    asm = _PARSED_BUFFER_LOC.sub(lambda m: f'"{quoted}":{m.group(1)}:{m.group(2)}', asm)
    return _PRETTY_PARSED_BUFFER_LOC.sub(lambda m: f"{filename}:{m.group(1)}:{m.group(2)}", asm)


def located_asm(module: ir.Module, filename: str | None = None) -> str:
    """``module`` printed with its locations; with ``filename``, those in the parser's buffer name that file.

    Text printed without locations and parsed again locates every op in that text, a stage's output the user
    never sees: a later error would point there (``-:12:5``) instead of at the op of the user's file.
    """
    asm = module.operation.get_asm(enable_debug_info=True)
    return asm if filename is None else name_parsed_buffer(asm, filename)


def module_bytecode(module: ir.Module, filename: str | None = None) -> bytes:
    """``module`` as MLIR bytecode (what ``graphfuse-opt --emit-bytecode`` writes); with ``filename``, its
    locations in the parser's buffer name that file."""
    if filename is not None:
        module = ir.Module.parse(located_asm(module, filename), module.context)
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()
