"""MLIR contexts with the graph dialect loaded."""

from __future__ import annotations

import sys
import types
from functools import cache
from pathlib import Path

from mlir import ir
from mlir.dialects import irdl

from graphfuse.dialect.diagnostics import GraphfuseError, from_mlir_error

DIALECT_DIR = Path(__file__).resolve().parent
GRAPH_IRDL_PATH = DIALECT_DIR / "graph.irdl.mlir"
#: The emulated NPU target's memory spaces and transfer op (docs/npu.md).
NPU_IRDL_PATH = DIALECT_DIR / "npu.irdl.mlir"
#: The IRDL-defined dialects (dialect/*.irdl.mlir): they have no Python op classes.
IRDL_DIALECTS = ("graph", "npu")


def register_dialect_modules() -> None:
    """Give each IRDL dialect an empty ``mlir.dialects.<name>`` module.

    Each time the bindings wrap an op (iterating a block, a walk, an operand's
    owner) they import the Python module of its dialect, and they do not
    remember a failed import: every graph op wrapped cost a search of
    sys.path (about 50 us; 90% of the graph pipeline's time on large graphs).
    An empty module is found once and remembered; it registers no op class,
    so ops are wrapped exactly as before.
    """
    for name in IRDL_DIALECTS:
        sys.modules.setdefault(f"mlir.dialects.{name}", types.ModuleType(f"mlir.dialects.{name}"))


# Before any graph op is wrapped (and so before any context exists).
register_dialect_modules()


@cache
def graph_irdl_text() -> str:
    return GRAPH_IRDL_PATH.read_text()


def load_graph_dialect(context: ir.Context) -> None:
    """Register the IRDL-defined graph dialect in ``context`` (idempotent).

    Loading an IRDL dialect twice into one context aborts the process, so this
    checks first.
    """
    if context.is_registered_operation("graph.add"):
        return
    with context, ir.Location.unknown():
        definition = ir.Module.parse(graph_irdl_text())
        irdl.load_dialects(definition)


@cache
def _npu_irdl_text() -> str:
    return NPU_IRDL_PATH.read_text()


def load_npu_dialect(context: ir.Context) -> None:
    """Register the IRDL npu dialect in ``context`` (idempotent, for the same reason)."""
    if context.is_registered_operation("npu.dma"):
        return
    with context, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(_npu_irdl_text()))


#: Dialects registered with :func:`register_irdl_dialects`: (their names, the IRDL text), loaded into every
#: context :func:`make_context` creates.
_USER_DIALECTS: list[tuple[tuple[str, ...], str]] = []


def has_dialect(context: ir.Context, name: str) -> bool:
    try:
        context.get_dialect_descriptor(name)
    except ValueError:
        return False
    return True


def user_dialects() -> list[str]:
    """The names of the dialects registered with :func:`register_irdl_dialects`."""
    return [name for names, _ in _USER_DIALECTS for name in names]


def register_irdl_dialects(source: str | Path, context: ir.Context | None = None) -> list[str]:
    """Register the dialects an IRDL file (a path, or IRDL text) defines; return their names.

    They are loaded into ``context`` now, when given, and into every context :func:`make_context` creates
    from now on, so that graphfuse's tools and compile functions parse and verify their ops (graph passes
    leave ops they do not know alone).  graphfuse's own definitions (dialect/graph.irdl.mlir, npu.irdl.mlir)
    are accepted as they are always loaded; another dialect that already exists (``arith``, ``graph``, one
    registered before with other IRDL) is an error: MLIR would abort the process.
    """
    if not isinstance(source, str | Path):
        raise GraphfuseError(f"register_irdl_dialects takes a path or IRDL text, not {type(source).__name__}")
    if isinstance(source, Path) or "irdl.dialect" not in source:
        filename = str(source)
        try:
            text = Path(filename).read_text()
        except OSError as error:
            raise GraphfuseError(f"could not open IRDL file '{filename}': {error.strerror}") from None
        except UnicodeDecodeError:
            raise GraphfuseError(f"could not read IRDL file '{filename}': it is not UTF-8 text") from None
    else:
        filename, text = "<irdl>", source
    if text in (graph_irdl_text(), _npu_irdl_text()):  # graphfuse's own, as mlir-opt users pass them: loaded
        if context is not None:
            load_graph_dialect(context)
            load_npu_dialect(context)
        return ["graph" if text == graph_irdl_text() else "npu"]
    from graphfuse.dialect.parsing import parse_module  # (it makes its contexts here)

    scratch = make_context()
    definition = parse_module(text, filename, scratch)  # located errors
    names = tuple(ir.StringAttr(op.attributes["sym_name"]).value for op in definition.body.operations
                  if op.operation.name == "irdl.dialect")
    if not names:
        raise GraphfuseError(f"'{filename}' defines no dialect (no irdl.dialect op)")
    for name in names:
        if any(name in known for known, _ in _USER_DIALECTS):
            if (names, text) in _USER_DIALECTS:
                break  # the same file again
            raise GraphfuseError(f"dialect '{name}' of '{filename}' is already registered (by another IRDL file)")
        if has_dialect(scratch, name):
            raise GraphfuseError(f"dialect '{name}' of '{filename}' already exists: IRDL cannot redefine it")
    else:
        _load_irdl(scratch, text)  # checks the definitions before any context the caller uses gets them
        _USER_DIALECTS.append((names, text))
        for name in names:
            sys.modules.setdefault(f"mlir.dialects.{name}", types.ModuleType(f"mlir.dialects.{name}"))
    if context is not None:
        load_user_dialects(context)
    return list(names)


def _load_irdl(context: ir.Context, text: str) -> None:
    with context, ir.Location.unknown():
        try:
            irdl.load_dialects(ir.Module.parse(text))
        except ir.MLIRError as error:
            raise GraphfuseError(from_mlir_error(error)) from None


def load_user_dialects(context: ir.Context) -> None:
    """Load the dialects :func:`register_irdl_dialects` registered into ``context`` (those it lacks)."""
    for names, text in _USER_DIALECTS:
        if not has_dialect(context, names[0]):
            _load_irdl(context, text)


#: The dialects whose ops graphfuse builds from Python (op builders need their dialect loaded; the parser and
#: the pass manager load the others, every upstream dialect being registered, when they first meet them).
BUILT_DIALECTS = ("builtin", "func", "arith", "math", "tensor", "linalg", "memref", "scf", "bufferization",
                  "vector", "llvm", "cf", "affine", "index", "complex", "irdl", "shard")


def new_context() -> ir.Context:
    """A context with every upstream dialect registered and those of :data:`BUILT_DIALECTS` loaded.

    The bindings' default loads every available dialect into each new context (6-10 ms, more than a small pass
    pipeline takes: the transform dialect's extensions alone take 3.5 ms).
    """
    return ir.Context(load_on_create_dialects=BUILT_DIALECTS)


def make_context(allow_unregistered_dialects: bool = False) -> ir.Context:
    """A fresh context in which graph-dialect (and NPU-lowered) IR parses and verifies, and the dialects of
    :func:`register_irdl_dialects`."""
    context = new_context()
    context.allow_unregistered_dialects = allow_unregistered_dialects
    load_graph_dialect(context)
    load_npu_dialect(context)
    load_user_dialects(context)
    return context
