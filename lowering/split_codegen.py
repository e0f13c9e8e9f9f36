"""LLVM code generation on all the CPUs: a large module is split by functions, each piece optimized and compiled
in its own process, and the pieces linked into a shared library this process loads.

The ExecutionEngine optimizes a module and generates its code on one thread.  On a graph of thousands of ops
that is most of the compile: the 5,000-op elementwise chain has 12 MB of LLVM IR, and the engine takes 7.2 s
of the 18 s compile on it (the greedy register allocator and instruction selection over functions of some
8,000 instructions each).  The module's functions are independent units for LLVM's code generator, so from
:data:`SPLIT_MIN_BYTES` of LLVM IR on, ``llvm-split`` divides the module into :data:`PIECES_PER_JOB` pieces per
job, handed out to the jobs as they finish, and each piece runs through ``opt`` (the engine's module pipeline,
``default<On>``) and ``llc`` (the engine's code-generation level, position-independent code for the host CPU)
in its own process.  The objects are linked with the C
compiler's driver into ``code.so``, loaded as the on-disk compile cache loads its libraries.

A function calling one in another piece keeps the call: nothing is lost on graphfuse's modules, whose entry
calls each kernel or chunk once and whose kernels share no code to inline.  Large constants (a model's
weights) do not go through the LLVM IR text, which spells each element out: they are detached into files
assembled with ``.incbin`` (lowering/detached_constants.py), as graphfuse-compile's libraries take them.  A
module with more than :data:`CONSTANT_LIMIT_BYTES` of constants that cannot be detached (splats, bf16) stays
with the engine: parsing their text would cost more than the split saves.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import tempfile
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mlir import ir
from mlir.dialects import llvm

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.common import element_bytes
from graphfuse.lowering.detached_constants import (
    DETACHED_MIN_BYTES,
    DetachedConstant,
    constants_assembly,
    detach_constants,
)
from graphfuse.lowering.linker import have_c_compiler, host_triple, link_shared_library, llvm_tool, run_tool
from graphfuse.pipelines import log

__all__ = [
    "CONSTANT_LIMIT_BYTES",
    "PIECES_PER_JOB",
    "SPLIT_MIN_BYTES",
    "SplitLibrary",
    "compile_split",
]

#: LLVM IR text from which a module is split.  Starting the tools and linking costs about 0.1 s; the engine
#: takes about 0.6 s per MB, so at 1 MB two jobs save some 0.2 s.
SPLIT_MIN_BYTES = 1 << 20
#: Bytes of initializers left in the LLVM IR (small constants, splats, bf16 ones: large ones are detached)
#: above which a module stays with the engine (see the module's docstring).
CONSTANT_LIMIT_BYTES = 1 << 20
#: Pieces per job: functions differ in size, and two pieces for two jobs did not balance (the chain's halves:
#: 2.5 and 4.1 s); with four each, a job that finishes early takes the next.
PIECES_PER_JOB = 4


def _constant_bytes(module: ir.Operation) -> int:
    """Bytes of the initializers of the module's globals (top-level ops only: cheap on any module)."""
    return sum(_constant_bytes_of(op.operation) for op in module.regions[0].blocks[0].operations)


def _constant_bytes_of(op: ir.Operation) -> int:
    """Bytes of the initializer of ``op`` when it is a global with an array or tensor initializer, else 0."""
    if op.name != "llvm.mlir.global" or "value" not in op.attributes:
        return 0
    try:
        shaped = ir.ShapedType(op.attributes["value"].type)
    except (ValueError, TypeError):
        return 0  # a scalar or a string: small
    if not shaped.has_static_shape:
        return 0
    try:
        size = element_bytes(shaped.element_type)
    except AttributeError:
        size = 16  # complex: no wider
    return math.prod(shaped.shape) * size


class SplitLibrary:
    """The shared library :func:`compile_split` built and loaded.  Its file lives in a private directory removed
    when the object is collected (the compile cache copies the file while the library is alive)."""

    def __init__(self, directory: Path, path: Path, handle: ctypes.CDLL, pieces: int):
        self.path = path
        self.handle = handle
        #: how many pieces the module was split into
        self.pieces = pieces
        weakref.finalize(self, shutil.rmtree, directory, True)


def _packed_wrapper(entry: str) -> str:
    """The ExecutionEngine's packed-arguments wrapper of ``@_mlir_ciface_<entry>``, which takes one pointer (the
    descriptor table): ``args[0]`` points at that pointer."""
    ciface = f"_mlir_ciface_{entry}"
    return (f"\ndefine void @_mlir_{ciface}(ptr %args) {{\n"
            "  %slot = load ptr, ptr %args, align 8\n"
            "  %table = load ptr, ptr %slot, align 8\n"
            f"  call void @{ciface}(ptr %table)\n"
            "  ret void\n}\n")


def _without_initializers(module: ir.Operation) -> ir.Operation:
    """``module`` (a copy) with its large constants made external declarations: its LLVM IR is the code's."""
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "llvm.mlir.global" and "value" in op.attributes and _constant_bytes_of(op) >= DETACHED_MIN_BYTES:
            del op.attributes["value"]
            op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
    return module


def compile_split(module: ir.Module, entry: str, opt_level: int, jobs: int,
                  load: Callable[[Path], ctypes.CDLL]) -> SplitLibrary | None:
    """Compile the LLVM-dialect ``module`` of ``@entry`` in ``jobs`` processes into a shared library, loaded with
    ``load(path)`` (which loads the runtime libraries first); None when the module is not worth splitting (or
    the tools are missing), a GraphfuseError when a tool fails.  ``module`` is not modified."""
    if jobs < 2 or not have_c_compiler():
        return None
    try:
        for tool in ("llvm-split", "opt", "llc", "llvm-mc"):
            llvm_tool(tool)
    except GraphfuseError:
        return None
    with module.context:
        has_constants = _constant_bytes(module.operation) >= DETACHED_MIN_BYTES
        # With constants, the code alone is sized first (a copy without initializers): most modules stay with
        # the engine, and their weights are not written out for nothing.
        probe = _without_initializers(module.operation.clone()) if has_constants else module.operation
        module_ir = llvm.translate_module_to_llvmir(probe.operation)
    if len(module_ir) < SPLIT_MIN_BYTES:
        return None
    directory = Path(tempfile.mkdtemp(prefix="graphfuse-codegen-"))
    try:
        constants: list[DetachedConstant] = []
        if has_constants:
            with module.context:
                detached = module.operation.clone()
                constants = detach_constants(detached.operation, "graphfuse", directory)
                if _constant_bytes(detached.operation) > CONSTANT_LIMIT_BYTES:
                    shutil.rmtree(directory, ignore_errors=True)
                    return None
                module_ir = llvm.translate_module_to_llvmir(detached.operation)
        pieces = jobs * PIECES_PER_JOB
        library = _build(module_ir, constants, entry, opt_level, jobs, pieces, directory)
        handle = load(library)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    log.debug(f"@{entry}: code generated in {pieces} pieces ({len(module_ir) >> 10} KB of LLVM IR)")
    return SplitLibrary(directory, library, handle, pieces)


def _build(module_ir: str, constants: list[DetachedConstant], entry: str, opt_level: int, jobs: int, pieces: int,
           directory: Path) -> Path:
    """Split into ``pieces``, optimize and generate them in ``jobs`` processes, link; the library's path."""
    source = directory / "module.ll"
    source.write_text(module_ir + _packed_wrapper(entry))
    run_tool([llvm_tool("llvm-split"), f"-j{pieces}", "--round-robin", "-o",
              str(directory / "piece."), str(source)], "llvm-split (splitting the module for code generation)")
    source.unlink()
    split = sorted(directory.glob("piece.*"), key=lambda path: int(path.suffix[1:]))
    target = [f"-mtriple={host_triple()}", "-mcpu=native"]

    def generate(piece: Path) -> Path:
        optimized, obj = piece.with_suffix(piece.suffix + ".opt.bc"), piece.with_suffix(piece.suffix + ".o")
        # A piece of a large module can take minutes: the tools die with this process (a timeout's SIGKILL).
        run_tool([llvm_tool("opt"), *target, f"-passes=default<O{opt_level}>", "-o", str(optimized), str(piece)],
                 "opt (LLVM's optimizer)", die_with_starter=True)
        run_tool([llvm_tool("llc"), *target, f"-O{opt_level}", "-relocation-model=pic", "-filetype=obj",
                  "-o", str(obj), str(optimized)], "llc (LLVM's code generator)", die_with_starter=True)
        return obj

    # The threads only wait for the processes: the tools run in parallel.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        objects = list(pool.map(generate, split))
    if constants:
        objects.append(directory / "constants.o")
        run_tool([llvm_tool("llvm-mc"), f"-triple={host_triple()}", "-filetype=obj", "-o", str(objects[-1]), "-"],
                 "llvm-mc (LLVM's assembler)", constants_assembly(constants))
    library = directory / "code.so"
    link_shared_library(objects, library, what="linking the split code generator's pieces")
    for leftover in directory.iterdir():
        if leftover != library:
            leftover.unlink()
    return library
