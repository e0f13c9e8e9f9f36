"""Ahead-of-time compilation: a graph function as LLVM IR, assembly, an object file or a shared library.

The code is the JIT's.  :func:`compile_library` runs the same stages as
:func:`graphfuse.compile` (:func:`~graphfuse.lowering.compiler.fuse_graph`,
:func:`~graphfuse.lowering.compiler.lower_to_linalg`,
:func:`~graphfuse.lowering.codegen.cpu.lower.lower_entry`, the one function that lowers
an entry to the LLVM dialect for both), then hands the LLVM IR to the pinned
LLVM tools instead of the ExecutionEngine: ``opt`` with the module pipeline
the ExecutionEngine runs (``default<O2>`` by default, loop and SLP vectorization on)
for the same CPU (the host's, features detected by LLVM, unless
``target_cpu`` says otherwise), ``llc`` at the same code-generation level,
position-independent so the object also links into a shared library,
``llvm-mc`` to assemble, and the system C compiler (``$CC``, else ``cc``) as
the linker.

A C entry point (:class:`CInterface`, the ABI described in
:mod:`graphfuse.lowering.library`) is added to the module before LLVM
optimizes it: it builds the memref descriptors of the plain pointers it is
given, allocates the workspace when the caller passes none, and calls the
entry.  After optimization every other symbol is internalized, so several
compiled graphs link into one program.  The weights stay in the library as
read-only data; in object code the large ones are assembled from their raw
bytes rather than passed through LLVM IR text (lowering/detached_constants.py).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlir.dialects import llvm

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.files import atomic_output, check_distinct_files, write_output, write_synced
from graphfuse.dialect.parsing import located_asm
from graphfuse.lowering.codegen.cpu.lower import LoweredEntry, lower_entry
from graphfuse.lowering.codegen.cpu.specs import ArgSpec, dtype_name, spec_bytes
from graphfuse.lowering.compile_cache import compile_key
from graphfuse.lowering.compiler import FusedGraph, fuse_graph, lower_to_linalg, source_text
from graphfuse.lowering.detached_constants import DetachedConstant, constants_assembly, detach_constants
from graphfuse.lowering.disk_cache import default_cache
from graphfuse.lowering.host import check_thread_count
from graphfuse.lowering.library import METADATA_VERSION, STATUS, c_identifier, library_name
from graphfuse.lowering.linker import (
    c_compiler,
    have_c_compiler,
    host_triple,
    link_shared_library,
    llvm_tool,
    run_tool,
)
from graphfuse.lowering.options import DEFAULT_LLVM_OPT_LEVEL, CompileOptions, resolve_options
from graphfuse.lowering.run_checks import SITE_SHIFT, CheckSite
from graphfuse.lowering.shape_checks import shape_graph_text
from graphfuse.lowering.streaming import BUFFER_ALIGNMENT

__all__ = ["EMIT_KINDS", "CInterface", "CompiledLibrary", "compile_library", "emit_kind_of", "llvm_tool"]

#: What graphfuse-compile writes, by --emit.
EMIT_KINDS = ("llvm-ir", "asm", "obj", "shared")
_SUFFIXES = {".ll": "llvm-ir", ".s": "asm", ".o": "obj", ".so": "shared", ".dylib": "shared"}
#: Alignment of the workspace and of each buffer in it (a cache line, as the JIT's arena).
WORKSPACE_ALIGNMENT = 64
#: C types of the element types (f16 and bf16 are passed as their 16-bit patterns).
_C_TYPES = {"float32": "float", "float64": "double", "float16": "uint16_t", "bfloat16": "uint16_t",
            "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t"}


def emit_kind_of(output: str, emit: str | None) -> str:
    """``emit`` when given, else what the output file's suffix says (a shared library by default; assembly for
    standard output, ``-``, which is text unless asked otherwise, as graphfuse-opt's)."""
    if emit is not None:
        if emit not in EMIT_KINDS:
            raise GraphfuseError(f"unknown --emit kind '{emit}' (expected one of {', '.join(EMIT_KINDS)})")
        return emit
    return "asm" if output == "-" else _SUFFIXES.get(Path(output).suffix, "shared")


@dataclass(frozen=True)
class _Array:
    """One array of the C entry point."""

    name: str
    spec: ArgSpec
    is_input: bool

    @property
    def dynamic(self) -> list[int]:
        return [k for k, d in enumerate(self.spec.shape) if d is None]

    def dim_parameter(self, k: int) -> str:
        return f"{self.name}_dim{k}"


@dataclass(frozen=True)
class CInterface:
    """The C entry point of one compiled entry: its LLVM IR, its header and its metadata."""

    prefix: str
    entry: str
    inputs: list[ArgSpec]
    outputs: list[ArgSpec]
    workspace: list[ArgSpec]
    #: stores into the results that need BUFFER_ALIGNMENT-aligned result buffers
    streamed_stores: int
    threads: int
    libraries: list[str]
    #: the graph with its constants reduced to their types (shape_checks.shape_graph_text) when an array has a
    #: dynamic dimension: load_library checks a call's sizes on it as the JIT does
    shape_graph: str | None = None
    #: the graph's file name, for the locations of those checks' errors
    source_name: str = "<module>"
    #: the run-time checks (lowering/run_checks.py): their status word is the last workspace buffer, and the entry
    #: point returns the status code of the first that failed
    checks: tuple[CheckSite, ...] = ()

    def as_json(self) -> dict:
        """The interface for the compile cache (:meth:`from_json` reads it back)."""
        return {"prefix": self.prefix, "entry": self.entry, "inputs": [s.as_json() for s in self.inputs],
                "outputs": [s.as_json() for s in self.outputs], "workspace": [s.as_json() for s in self.workspace],
                "streamed_stores": self.streamed_stores, "threads": self.threads, "libraries": self.libraries,
                "shape_graph": self.shape_graph, "source_name": self.source_name,
                "checks": [site.as_json() for site in self.checks]}

    @staticmethod
    def from_json(described: dict) -> CInterface:
        return CInterface(str(described["prefix"]), str(described["entry"]),
                          [ArgSpec.from_json(s) for s in described["inputs"]],
                          [ArgSpec.from_json(s) for s in described["outputs"]],
                          [ArgSpec.from_json(s) for s in described["workspace"]], int(described["streamed_stores"]),
                          int(described["threads"]), list(described["libraries"]), described["shape_graph"],
                          str(described["source_name"]),
                          tuple(CheckSite.from_json(site) for site in described["checks"]))

    def __post_init__(self) -> None:
        if self.symbol == self.metadata_symbol:
            raise GraphfuseError(f"the entry point {self.symbol} would be the metadata accessor's name: rename "
                                 f"@{self.entry} or choose another --name")

    @property
    def symbol(self) -> str:
        return f"{self.prefix}_{c_identifier(self.entry)}"

    @property
    def metadata_symbol(self) -> str:
        return f"{self.prefix}_metadata"

    @property
    def result_alignment(self) -> int:
        return BUFFER_ALIGNMENT if self.streamed_stores else 1

    def arrays(self) -> list[_Array]:
        return ([_Array(f"arg{k}", s, True) for k, s in enumerate(self.inputs)]
                + [_Array(f"out{k}", s, False) for k, s in enumerate(self.outputs)])

    def workspace_offsets(self) -> tuple[list[int], int]:
        """Each workspace buffer's byte offset, and the total size (a multiple of the alignment)."""
        offsets, end = [], 0
        for spec in self.workspace:
            offsets.append(end)
            end += -(-max(spec_bytes(spec), 1) // WORKSPACE_ALIGNMENT) * WORKSPACE_ALIGNMENT
        return offsets, end

    def metadata(self) -> dict:
        def describe(array: _Array) -> dict:
            return {"name": array.name, **array.spec.as_json()}

        arrays = self.arrays()
        return {
            "version": METADATA_VERSION,
            "entry": self.entry,
            "symbol": self.symbol,
            "inputs": [describe(a) for a in arrays if a.is_input],
            "outputs": [describe(a) for a in arrays if not a.is_input],
            "workspace_bytes": self.workspace_offsets()[1],
            "result_alignment": self.result_alignment,
            "threads": self.threads,
            **({"graph": self.shape_graph, "source": self.source_name} if self.shape_graph is not None else {}),
            **({"checks": [site.as_json(self.source_name) for site in self.checks],
                "status_offset": self.workspace_offsets()[0][-1]} if self.checks else {}),
        }

    # ------------------------------------------------------------------ LLVM IR

    def llvm_ir(self, module_ir: str) -> str:
        """The C entry point and the metadata accessor, to append to ``module_ir`` (the entry's module)."""
        for symbol in (self.symbol, self.metadata_symbol):
            if re.search(rf'^(define|declare)[^@\n]*@"?{re.escape(symbol)}"?\(', module_ir, re.M):
                raise GraphfuseError(f"the compiled module already defines @{symbol}; choose another --name")
        body = _EntryBuilder(self).build()
        declarations = [d for d, name in (("declare ptr @aligned_alloc(i64, i64)", "aligned_alloc"),
                                          ("declare void @free(ptr)", "free"))
                        if self.workspace and not re.search(rf"^declare [^@\n]*@{name}\(", module_ir, re.M)]
        text = json.dumps(self.metadata(), separators=(",", ":")).encode() + b"\0"
        metadata = (f"@{self.metadata_symbol}.json = private unnamed_addr constant [{len(text)} x i8] "
                    f'c"{_llvm_string(text)}", align 1\n\n'
                    f"define ptr @{self.metadata_symbol}() {{\n  ret ptr @{self.metadata_symbol}.json\n}}\n")
        return "\n".join(["", *declarations, "", body, metadata])

    # ------------------------------------------------------------------ header

    def header(self, guard: str, source: str) -> str:
        upper = self.symbol.upper()
        lines = [
            f"/* {self.prefix}: @{self.entry} of {source}, compiled by graphfuse-compile. */",
            f"#ifndef {guard}",
            f"#define {guard}",
            "",
            "#include <stdbool.h>",
            "#include <stddef.h>",
            "#include <stdint.h>",
            "",
            "#ifdef __cplusplus",
            'extern "C" {',
            "#endif",
            "",
            "#ifndef GRAPHFUSE_STATUS_CODES",
            "#define GRAPHFUSE_STATUS_CODES",
            "/* What a compiled entry point returns. */",
            "enum graphfuse_status {",
            *(f"  GRAPHFUSE_{name} = {code}," for name, code in STATUS.items()),
            "};",
            "#endif",
            "",
            f"/* Scratch memory one call of {self.symbol} uses (pass it 64-byte aligned, or NULL). */",
            f"#define {upper}_WORKSPACE_BYTES ((size_t){self.workspace_offsets()[1]})",
            "/* Byte alignment the result buffers need (above 1: results are written with aligned streaming"
            " stores). */",
            f"#define {upper}_RESULT_ALIGNMENT {self.result_alignment}",
            "",
        ]
        for array in self.arrays():
            if not array.dynamic:
                count = math.prod(array.spec.shape)
                lines.append(f"#define {upper}_{array.name.upper()}_ELEMENTS ((size_t){count})")
        lines += ["", *self._prototype_comment(), self._prototype() + ";", "",
                  "/* JSON description of the entry point: arrays, shapes, dtypes, workspace (graphfuse.load_library"
                  " reads it). */",
                  f"const char *{self.metadata_symbol}(void);", "",
                  "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
        return "\n".join(lines)

    def _prototype(self) -> str:
        parameters = []
        for array in self.arrays():
            c_type = _C_TYPES[dtype_name(array.spec.dtype)]
            parameters.append(f"{'const ' if array.is_input else ''}{c_type} *{array.name}")
            parameters.extend(f"int64_t {array.dim_parameter(k)}" for k in array.dynamic)
        parameters.append("void *workspace")
        return f"int {self.symbol}({', '.join(parameters)})"

    def _prototype_comment(self) -> list[str]:
        lines = [f"/* Runs @{self.entry}.  Arrays are dense and row-major; results must not overlap the inputs or",
                 " * each other."]
        for array in self.arrays():
            dims = ", ".join(array.dim_parameter(k) if d is None else str(d) for k, d in enumerate(array.spec.shape))
            role = "read" if array.is_input else "written"
            lines.append(f" *   {array.name}: [{dims}] {dtype_name(array.spec.dtype)} ({array.spec.type_str}), {role}")
        lines += [
            f" *   workspace: {self.symbol.upper()}_WORKSPACE_BYTES bytes, 64-byte aligned, or NULL (then allocated",
            " *     and freed by the call).",
            " * Returns GRAPHFUSE_OK, GRAPHFUSE_OUT_OF_MEMORY (NULL workspace, allocation failed) or",
            f" * GRAPHFUSE_MISALIGNED_RESULT (a result not {self.symbol.upper()}_RESULT_ALIGNMENT-aligned).",
            " * Thread-safe and reentrant: concurrent calls need distinct workspaces (or NULL).",
        ]
        if self.checks:
            statuses = " or ".join(f"GRAPHFUSE_{name}" for name in sorted({site.status for site in self.checks}))
            lines += [f" * Returns {statuses} when a run-time check fails (the first to fail;",
                      " * the results are then unspecified). Which op failed: the int32 at byte \"status_offset\" of",
                      f" * the workspace is site << {SITE_SHIFT} | status, and the metadata's \"checks\" name each "
                      "site's op.",
                      ]
        if self.shape_graph is not None:
            lines += [" * The dynamic sizes must agree as the graph's shapes require (operands of one elementwise op,",
                      " * results as large as the inputs make them): the entry point trusts them (load_library",
                      " * checks them against the graph)."]
        if self.threads > 1:
            lines.append(f" * Runs its parallel loops on {self.threads} threads (the OpenMP runtime libiomp5).")
        lines.append(" */")
        return lines


class _EntryBuilder:
    """The LLVM IR of a :class:`CInterface`'s entry point."""

    def __init__(self, interface: CInterface):
        self.interface = interface
        self.lines: list[str] = []
        self.counter = 0

    def value(self, instruction: str) -> str:
        self.counter += 1
        name = f"%v{self.counter}"
        self.lines.append(f"  {name} = {instruction}")
        return name

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def build(self) -> str:
        interface = self.interface
        arrays = interface.arrays()
        offsets, workspace_bytes = interface.workspace_offsets()
        parameters = []
        for array in arrays:
            parameters.append(f"ptr noundef %{array.name}")
            parameters.extend(f"i64 noundef %{array.dim_parameter(k)}" for k in array.dynamic)
        parameters.append("ptr noundef %workspace")
        self.emit(f"define i32 @{interface.symbol}({', '.join(parameters)}) {{")
        self.emit("entry:")
        count = len(arrays) + len(interface.workspace)
        self.emit(f"  %table = alloca [{count} x ptr], align 8")
        specs = [array.spec for array in arrays] + interface.workspace
        for k, spec in enumerate(specs):
            self.emit(f"  %descriptor{k} = alloca {_descriptor_type(len(spec.shape))}, align 8")
        if interface.streamed_stores:
            bits = "0"
            for array in arrays:
                if not array.is_input:
                    address = self.value(f"ptrtoint ptr %{array.name} to i64")
                    bits = self.value(f"or i64 {bits}, {address}")
            low = self.value(f"and i64 {bits}, {BUFFER_ALIGNMENT - 1}")
            misaligned = self.value(f"icmp ne i64 {low}, 0")
            self.emit(f"  br i1 {misaligned}, label %misaligned, label %start")
            self.emit("misaligned:")
            self.emit(f"  ret i32 {STATUS['MISALIGNED_RESULT']}")
            self.emit("start:")
        workspace = "%workspace"
        if workspace_bytes:
            self.emit("  %no_workspace = icmp eq ptr %workspace, null")
            self.emit("  br i1 %no_workspace, label %allocate, label %run")
            self.emit("allocate:")
            self.emit(f"  %fresh = call ptr @aligned_alloc(i64 {WORKSPACE_ALIGNMENT}, i64 {workspace_bytes})")
            self.emit("  %failed = icmp eq ptr %fresh, null")
            self.emit("  br i1 %failed, label %out_of_memory, label %run")
            self.emit("out_of_memory:")
            self.emit(f"  ret i32 {STATUS['OUT_OF_MEMORY']}")
            self.emit("run:")
            previous = "%start" if interface.streamed_stores else "%entry"
            self.emit(f"  %buffer = phi ptr [ %workspace, {previous} ], [ %fresh, %allocate ]")
            workspace = "%buffer"
        for k, array in enumerate(arrays):
            sizes = [str(d) if d is not None else f"%{array.dim_parameter(j)}" for j, d in enumerate(array.spec.shape)]
            self.descriptor(k, f"%{array.name}", sizes, len(specs))
        for j, (spec, offset) in enumerate(zip(interface.workspace, offsets, strict=True)):
            base = self.value(f"getelementptr inbounds i8, ptr {workspace}, i64 {offset}")
            self.descriptor(len(arrays) + j, base, [str(d) for d in spec.shape], len(specs))
        status = str(STATUS["OK"])
        if interface.checks:  # the status word, the last workspace buffer: cleared, then its low byte returned
            word = self.value(f"getelementptr inbounds i8, ptr {workspace}, i64 {offsets[-1]}")
            self.emit(f"  store i32 0, ptr {word}, align 4")
        self.emit(f"  call void {_global(interface.entry)}(ptr %table)")
        if interface.checks:
            status = self.value(f"and i32 {self.value(f'load i32, ptr {word}, align 4')}, {(1 << SITE_SHIFT) - 1}")
        if workspace_bytes:
            self.emit("  br i1 %no_workspace, label %release, label %done")
            self.emit("release:")
            self.emit(f"  call void @free(ptr {workspace})")
            self.emit("  br label %done")
            self.emit("done:")
        self.emit(f"  ret i32 {status}")
        self.emit("}")
        return "\n".join(self.lines) + "\n"

    def descriptor(self, k: int, pointer: str, sizes: list[str], count: int) -> None:
        """Fill descriptor ``k`` (a dense row-major view of ``pointer``) and store its address in the table."""
        rank = len(sizes)
        t = _descriptor_type(rank)
        struct = self.value(f"insertvalue {t} poison, ptr {pointer}, 0")
        struct = self.value(f"insertvalue {t} {struct}, ptr {pointer}, 1")
        struct = self.value(f"insertvalue {t} {struct}, i64 0, 2")
        strides = ["1"] * rank
        for d in reversed(range(rank - 1)):
            a, b = strides[d + 1], sizes[d + 1]
            strides[d] = str(int(a) * int(b)) if a.isdigit() and b.isdigit() else self.value(f"mul i64 {a}, {b}")
        for d in range(rank):
            struct = self.value(f"insertvalue {t} {struct}, i64 {sizes[d]}, 3, {d}")
            struct = self.value(f"insertvalue {t} {struct}, i64 {strides[d]}, 4, {d}")
        self.emit(f"  store {t} {struct}, ptr %descriptor{k}, align 8")
        slot = self.value(f"getelementptr inbounds [{count} x ptr], ptr %table, i64 0, i64 {k}")
        self.emit(f"  store ptr %descriptor{k}, ptr {slot}, align 8")


def _descriptor_type(rank: int) -> str:
    """The LLVM struct of a rank-``rank`` memref descriptor (allocated, aligned, offset, sizes, strides)."""
    if rank == 0:
        return "{ ptr, ptr, i64 }"
    return f"{{ ptr, ptr, i64, [{rank} x i64], [{rank} x i64] }}"


def _global(name: str) -> str:
    return "@" + (name if re.fullmatch(r"[A-Za-z$._][A-Za-z$._0-9]*", name) else f'"{_llvm_string(name.encode())}"')


def _llvm_string(data: bytes) -> str:
    """``data`` as the inside of an LLVM ``c"..."`` constant."""
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)


# ---------------------------------------------------------------------- compile_library


@dataclass(frozen=True)
class CompiledLibrary:
    """What :func:`compile_library` wrote."""

    output: str
    emit: str
    interface: CInterface
    header: str | None
    #: the library came from the on-disk compile cache (docs/compile-cache.md), not from a compile
    from_cache: bool = False


def compile_library(
    source,
    output: str | Path,
    *,
    emit: str | None = None,
    header: str | Path | None = None,
    name: str | None = None,
    entry: str | None = None,
    pipeline: str | None = None,
    opt_level: int | None = None,
    graph_kernel_flags: str | None = None,
    fusion_switch_file: str | Path | None = None,
    strict_flags: bool = False,
    num_threads: int = 1,
    fast_math: bool = True,
    codegen_opt_level: int = DEFAULT_LLVM_OPT_LEVEL,
    target_cpu: str = "native",
) -> CompiledLibrary:
    """Compile ``entry`` of the graph module ``source`` ahead of time into ``output``.

    ``emit`` is ``llvm-ir``, ``asm``, ``obj`` or ``shared`` (default: by the suffix of ``output``); ``header``
    writes the C header.  ``-`` for ``output`` or ``header`` writes standard output (the output: assembly unless
    ``emit`` says otherwise).  ``name`` prefixes the exported symbols (default: from the output file's name,
    ``libmodel.so`` -> ``model``).  The graph options are :func:`graphfuse.compile`'s; ``num_threads`` is fixed
    at compile time (above 1 the library needs the OpenMP runtime), ``codegen_opt_level`` is
    ``jit_opt_level``'s counterpart and ``target_cpu`` an LLVM CPU name (default: this machine's).
    """
    kind = emit_kind_of(str(output), emit)
    header_to_stdout = header is not None and str(header) == "-"
    if header_to_stdout and str(output) == "-":
        raise GraphfuseError("the library and the C header cannot both go to standard output: name a file for one")
    check_distinct_files([("input file", source)] if isinstance(source, Path) else [],
                         [("output file", output), *([("C header", header)] if header is not None else [])])
    check_thread_count(num_threads)
    if codegen_opt_level not in (0, 1, 2, 3):
        raise GraphfuseError(f"the code-generation opt level must be 0..3, got {codegen_opt_level}")
    options = resolve_options(pipeline=pipeline, opt_level=opt_level, graph_kernel_flags=graph_kernel_flags,
                              fusion_switch_file=fusion_switch_file, strict_flags=strict_flags,
                              jit_opt_level=codegen_opt_level, num_threads=num_threads, fast_math=fast_math)
    prefix = c_identifier(name) if name else _default_prefix(output)
    text, filename = source_text(source)
    key = compile_key(text, filename, entry, options, options.switches().flags.enable_debug_mode, kind=kind,
                      prefix=prefix, codegen_opt_level=codegen_opt_level, target_cpu=target_cpu,
                      linker=c_compiler() if kind == "shared" and have_c_compiler() else None)
    # Every output is made in full before any replaces its file; a failure leaves the old ones.
    with tempfile.TemporaryDirectory(prefix="graphfuse-compile-") as scratch, contextlib.ExitStack() as outputs:
        # The header's file first: an unwritable one is reported before the compile.
        header_file = outputs.enter_context(atomic_output(header, "C header")) \
            if header is not None and not header_to_stdout else None
        stored = None if key is None else _load_library(key)
        if stored is None:
            built = Path(scratch) / "output"
            interface = _build_library(text, filename, entry, options, prefix, kind, codegen_opt_level, target_cpu,
                                       built, Path(scratch))
            if key is not None:
                _store_library(key, built, interface)
        else:
            built, interface = stored
        header_text = None
        if header is not None:
            guard = c_identifier(f"{prefix}.h" if header_to_stdout else Path(header).name).upper()
            header_text = interface.header(f"{guard}_", Path(interface.source_name).name)
        if header_file is not None:
            write_synced(header_file, header_text.encode())
        content = built.read_bytes()
        if str(output) == "-":
            write_output("-", content if kind in ("obj", "shared") else content.decode())
        else:
            write_synced(outputs.enter_context(atomic_output(output)), content)
    if header_to_stdout:
        write_output("-", header_text)
    return CompiledLibrary(str(output), kind, interface, header_text, from_cache=stored is not None)


def _build_library(text: str, filename: str, entry: str | None, options: CompileOptions, prefix: str, kind: str,
                   codegen_opt_level: int, target_cpu: str, built: Path, scratch: Path) -> CInterface:
    """Compile the library of kind ``kind`` into the file ``built``; its C interface."""
    fused = fuse_graph(text, filename, entry=entry, options=options)
    lower_to_linalg(fused.module, fused.filename, options.fast_math)
    # Printed with its locations: an error of the lowering names the op in the graph's file.
    lowered = lower_entry(located_asm(fused.module, fused.filename), fused.entry, options.threads, options.streaming)
    interface = _interface(prefix, fused, lowered, options.threads)
    # Object code takes the large constants as raw bytes; LLVM IR and assembly outputs keep them inline.
    weights = detach_constants(lowered.module.operation, prefix, scratch) if kind in ("obj", "shared") else []
    with lowered.context:
        module_ir = llvm.translate_module_to_llvmir(lowered.module.operation)
    module_ir += interface.llvm_ir(module_ir)
    optimized = _optimize(module_ir, interface, codegen_opt_level, target_cpu)
    _write_output(optimized, built, kind, interface, _Codegen(codegen_opt_level, target_cpu), weights, scratch)
    return interface


_LIBRARY = "library"
_INTERFACE = "interface.json"


def _store_library(key: str, built: Path, interface: CInterface) -> None:
    """Keep a library graphfuse-compile made in the on-disk compile cache (nothing when it cannot be written)."""
    store = default_cache()
    if store is not None:
        store.put(key, {_LIBRARY: built, _INTERFACE: json.dumps(interface.as_json()).encode()},
                  {"kind": "library", "entry": interface.entry, "symbol": interface.symbol})


def _load_library(key: str) -> tuple[Path, CInterface] | None:
    """The library stored under ``key`` and its C interface, or None."""
    store = default_cache()
    entry = None if store is None else store.get(key)
    if entry is None:
        return None
    try:
        return entry.file(_LIBRARY), CInterface.from_json(json.loads(entry.file(_INTERFACE).read_text()))
    except (OSError, ValueError, KeyError, TypeError, GraphfuseError):
        return None


def _default_prefix(output: str | Path) -> str:
    return library_name(output) if str(output) != "-" else "graph"


def _interface(prefix: str, fused: FusedGraph, lowered: LoweredEntry, threads: int) -> CInterface:
    dynamic = any(None in spec.shape for spec in lowered.inputs + lowered.outputs)
    with fused.context:
        shape_graph = shape_graph_text(fused.source) if dynamic else None
    return CInterface(prefix, fused.entry, lowered.inputs, lowered.outputs, lowered.workspace,
                      lowered.streamed_stores, threads if lowered.libraries else 1, lowered.libraries, shape_graph,
                      Path(fused.filename).name, lowered.checks)


def _optimize(module_ir: str, interface: CInterface, opt_level: int, cpu: str) -> str:
    """LLVM's module pipeline of ``opt_level`` (the ExecutionEngine's), then everything but the C interface
    made internal and unused code dropped."""
    public = f"{interface.symbol},{interface.metadata_symbol}"
    return run_tool([llvm_tool("opt"), f"-mtriple={host_triple()}", f"-mcpu={cpu}",
                     f"-passes=default<O{opt_level}>,internalize,globaldce", f"-internalize-public-api-list={public}",
                     "-S", "-o", "-", "-"], "opt (LLVM's optimizer)", module_ir)


@dataclass(frozen=True)
class _Codegen:
    opt_level: int
    cpu: str

    def llc(self) -> list[str]:
        return [llvm_tool("llc"), f"-mtriple={host_triple()}", f"-mcpu={self.cpu}", f"-O{self.opt_level}",
                "-relocation-model=pic"]


def _write_output(text: str, output: Path, kind: str, interface: CInterface, codegen: _Codegen,
                  weights: list[DetachedConstant], scratch: Path) -> None:
    """Write the library of kind ``kind`` of the optimized LLVM IR ``text`` to the file ``output``."""
    if kind == "llvm-ir":
        output.write_text(text)
        return
    assembly = run_tool([*codegen.llc(), "-filetype=asm", "-o", "-", "-"], "llc (LLVM's code generator)", text)
    if kind == "asm":
        output.write_text(assembly)
        return
    obj = str(scratch / "module.o") if kind == "shared" else str(output)
    assembly += constants_assembly(weights)
    run_tool([llvm_tool("llvm-mc"), f"-triple={host_triple()}", f"-mcpu={codegen.cpu}", "-filetype=obj", "-o", obj,
              "-"], "llvm-mc (LLVM's assembler)", assembly)
    if kind == "shared":
        link_shared_library([obj], output, interface.libraries)

