"""The C interface of ahead-of-time compiled graph functions, and :func:`load_library` to call one from Python.

graphfuse-compile (:mod:`graphfuse.lowering.aot`) turns one graph function
into an object file or shared library exporting, for a library named
``model`` and an entry ``@forward``::

    int model_forward(const float *arg0, ..., float *out0, ..., void *workspace);
    const char *model_metadata(void);

Arrays are plain pointers to dense row-major data, the inputs first, then
the results, each dynamic dimension (``?``) followed by an ``int64_t
<array>_dim<k>`` parameter.  ``workspace`` is the caller's scratch memory
for intermediates (``<NAME>_<ENTRY>_WORKSPACE_BYTES``, 64-byte aligned) or
NULL: the call then allocates and frees it.  The entry point keeps no state
between calls, so it is thread-safe and reentrant as long as concurrent
calls do not share a workspace.  The status codes are :data:`STATUS`: besides the entry point's own, a
failed run-time check (an integer division by zero, an index out of range: :mod:`graphfuse.lowering.run_checks`)
returns its code, and :class:`Library` raises the error the JIT raises, located at the op that failed.
``<name>_metadata`` returns the JSON description :class:`Library` reads.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.parsing import parse_module
from graphfuse.dialect.run_checks import CHECK_STATUS
from graphfuse.lowering.codegen.cpu.specs import ArgSpec
from graphfuse.lowering.run_checks import CheckSite, failed_check
from graphfuse.lowering.runtime import ArgumentChecks, aligned_empty
from graphfuse.lowering.shape_checks import DynamicShapes

__all__ = ["METADATA_VERSION", "STATUS", "Library", "c_identifier", "library_name", "load_library"]

#: Return codes of a compiled entry point (the header defines them as GRAPHFUSE_<NAME>); the run-time checks' come
#: after the entry point's own.
STATUS = {"OK": 0, "OUT_OF_MEMORY": 1, "MISALIGNED_RESULT": 2, **CHECK_STATUS}
#: The layout of the metadata JSON; a loader refuses other versions.  2: the graph (constants reduced to their
#: types) comes with entries that have dynamic dimensions, for the loader's size checks.
METADATA_VERSION = 2
def c_identifier(text: str) -> str:
    """``text`` made a C identifier: other characters become ``_``, a leading digit gets one in front."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return f"_{name}" if not name or name[0].isdigit() else name


def library_name(path: str | Path) -> str:
    """The symbol prefix graphfuse-compile gives the library written to ``path`` (``libmodel.so`` -> ``model``)."""
    stem = Path(path).name.split(".")[0]
    if stem.startswith("lib") and len(stem) > 3:
        stem = stem[3:]
    return c_identifier(stem)


@dataclass(frozen=True)
class _Call:
    """How ctypes passes one entry's arguments."""

    symbol: str
    #: per array (inputs, then results): the dimensions passed as int64_t parameters after its pointer
    dynamic: list[list[int]]


class Library(ArgumentChecks):
    """A compiled graph function loaded from a shared library: call it with numpy arrays, get numpy arrays back.

    Arguments are checked as :class:`~graphfuse.Executable` checks them; results with dynamic dimensions need
    ``out=`` buffers.  Each calling thread keeps one workspace, so concurrent calls are safe.
    """

    def __init__(self, path: str | Path, name: str | None = None):
        self.path = str(path)
        if name is not None and not _C_IDENTIFIER.fullmatch(name):
            raise GraphfuseError(f"load_library: name {name!r} is not a C identifier (graphfuse-compile --name "
                                 "makes one of its argument: letters, digits and '_', not starting with a digit)")
        self.prefix = name or library_name(path)
        if not Path(path).is_file():
            raise GraphfuseError(f"could not load library '{path}': "
                                 f"{'a directory' if Path(path).is_dir() else 'no such file'}")
        self._library = _open(Path(path))
        try:
            describe = getattr(self._library, f"{self.prefix}_metadata")
        except AttributeError:
            raise GraphfuseError(
                f"'{path}' has no function {self.prefix}_metadata: not a graphfuse library named '{self.prefix}' "
                "(pass name= as graphfuse-compile --name)") from None
        describe.restype = ctypes.c_char_p
        try:
            metadata = json.loads(describe().decode())
        except (UnicodeDecodeError, ValueError):
            raise GraphfuseError(f"'{path}': {self.prefix}_metadata does not return graphfuse's JSON") from None
        if not isinstance(metadata, dict) or metadata.get("version") != METADATA_VERSION:
            version = metadata.get("version") if isinstance(metadata, dict) else None
            raise GraphfuseError(f"'{path}': metadata version {version} is not "
                                 f"{METADATA_VERSION}; recompile it with this graphfuse")
        self.metadata = metadata
        self.name = metadata["entry"]
        self.inputs = [ArgSpec.from_json(a) for a in metadata["inputs"]]
        self.outputs = [ArgSpec.from_json(a) for a in metadata["outputs"]]
        self.workspace_bytes: int = metadata["workspace_bytes"]
        self.result_alignment: int = metadata["result_alignment"]
        symbol = metadata["symbol"]
        if not _C_IDENTIFIER.fullmatch(symbol) or symbol == f"{self.prefix}_metadata":
            raise GraphfuseError(f"'{path}': its metadata names the entry point {symbol!r}, not a function to call")
        self._function = getattr(self._library, symbol)
        self._function.restype = ctypes.c_int
        self._call = _Call(symbol, [[k for k, d in enumerate(s.shape) if d is None]
                                    for s in self.inputs + self.outputs])
        self._workspaces = threading.local()
        #: the size checks of entries with dynamic dimensions (the graph the metadata carries)
        self._dynamic_shapes = _dynamic_shapes(metadata) if "graph" in metadata else None
        #: the run-time checks, and where their status word is in the workspace
        self._checks = tuple(CheckSite.from_json(site) for site in metadata.get("checks", ()))
        self._status_offset: int | None = metadata.get("status_offset")

    def __repr__(self) -> str:
        ins = ", ".join(s.type_str for s in self.inputs)
        outs = ", ".join(s.type_str for s in self.outputs)
        return f"<Library {self.path}: {self._call.symbol}({ins}) -> ({outs})>"

    def _workspace(self) -> ctypes.c_void_p:
        if not self.workspace_bytes:
            return ctypes.c_void_p(None)
        buffer = getattr(self._workspaces, "buffer", None)
        if buffer is None:
            buffer = self._workspaces.buffer = aligned_empty((self.workspace_bytes,), np.dtype(np.uint8))
        return ctypes.c_void_p(buffer.ctypes.data)

    def __call__(self, *arrays, out=None) -> list[np.ndarray]:
        ins = self.check_inputs(arrays)
        if self._dynamic_shapes is not None:
            out = self._dynamic_shapes.out_buffers(ins, out, self.outputs, self.result_alignment, aligned_empty)
        outs = (self.new_outputs(self.result_alignment, "pass out= buffers") if out is None
                else self.check_outs(out, ins))
        standins = {k: aligned_empty(o.shape, o.dtype, self.result_alignment) for k, o in enumerate(outs)
                    if o.ctypes.data % self.result_alignment}
        parameters: list[object] = []
        for array, dynamic in zip(ins + [standins.get(k, o) for k, o in enumerate(outs)], self._call.dynamic,
                                  strict=True):
            parameters.append(ctypes.c_void_p(array.ctypes.data))
            parameters.extend(ctypes.c_int64(array.shape[d]) for d in dynamic)
        parameters.append(self._workspace())
        status = self._function(*parameters)
        if status in CHECK_STATUS.values() and self._status_offset is not None:
            word = int(self._workspaces.buffer[self._status_offset:self._status_offset + 4].view(np.int32)[0])
            raise failed_check(word, self._checks)
        if status != STATUS["OK"]:
            names = {code: name for name, code in STATUS.items()}
            raise GraphfuseError(f"{self._call.symbol} returned {status} ({names.get(status, 'unknown status')})")
        for k, standin in standins.items():
            np.copyto(outs[k], standin)
        return outs


#: Names dlopen and ctypes take as written (a NUL would end the name early; other characters name nothing).
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Resolved path -> the (device, inode, size, modification time) of the first file this process loaded there.
_FIRST_LOADED: dict[str, tuple[int, int, int, int]] = {}
#: (resolved path, identity of a file loaded there later) -> its private copy, loaded once.
_COPIES: dict[tuple[str, tuple[int, int, int, int]], ctypes.CDLL] = {}
_LOADED_LOCK = threading.Lock()


def _open(path: Path) -> ctypes.CDLL:
    """``dlopen`` the library at ``path``; a private copy when this process loaded another file at that path.

    The dynamic loader hands out the handle it already has for a path (or a file it has mapped), so a library
    compiled again to the same path would still run the old code: the new file is copied under a name of its
    own, loaded, and the copy unlinked (its mapping stays).  Loading that same file again reuses its copy.
    """
    resolved = str(path.resolve())
    status = os.stat(resolved)
    identity = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    with _LOADED_LOCK:
        try:
            if _FIRST_LOADED.setdefault(resolved, identity) == identity:
                return ctypes.CDLL(resolved)
            if (resolved, identity) not in _COPIES:
                with tempfile.TemporaryDirectory(prefix="graphfuse-library-") as private:
                    copy = Path(private) / path.name
                    shutil.copyfile(resolved, copy)
                    _COPIES[resolved, identity] = ctypes.CDLL(str(copy))
            return _COPIES[resolved, identity]
        except OSError as error:
            raise GraphfuseError(f"could not load library '{path}': {error}") from None


def _dynamic_shapes(metadata: dict) -> DynamicShapes:
    """The size checks of a library's entry, on the graph its metadata carries."""
    context = make_context()
    try:
        module = parse_module(metadata["graph"], metadata.get("source", "<library>"), context)
    except GraphfuseError as error:
        raise GraphfuseError(f"the graph in the library's metadata does not parse: {error}") from None
    return DynamicShapes(module, metadata["entry"], metadata.get("source", "<library>"))


def load_library(path: str | Path, name: str | None = None) -> Library:
    """Load a shared library written by graphfuse-compile; ``name`` is its ``--name`` (default: from the file
    name, ``libmodel.so`` -> ``model``)."""
    return Library(path, name)

