"""CPU runtime: JIT-compile tensor-level linalg IR and call it with numpy arrays.

:func:`compile_linalg` takes a module whose functions use tensors and
linalg/tensor/arith/math ops (no graph ops). The entry function takes its
inputs as ranked tensors and returns ranked tensors, e.g.::

    func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
      %e = tensor.empty() : tensor<4x8xf32>
      %r = linalg.generic ... ins(%x, %b : ...) outs(%e : tensor<4x8xf32>) {...}
      return %r : tensor<4x8xf32>
    }

The caller does not write destination-passing style: :func:`compile_linalg`
appends one output tensor argument ``%outK`` per result, wraps each returned
value in ``bufferization.materialize_in_destination %rK in %outK`` and runs
``eliminate-empty-tensors``, so the op producing a result (from a
``tensor.empty`` init) writes straight into the caller's numpy buffer. A result
that is not computed into a ``tensor.empty`` (an input returned unchanged, a
constant) is copied into its output buffer. Inputs are marked
``bufferization.writable = false``: the JIT code never writes into the caller's
input arrays. After bufferization (identity layouts, function boundaries) every
result must be equivalent to its output argument and is dropped
(``drop-equivalent-buffer-results``), so the compiled entry returns nothing and
allocates no result buffers: nothing leaks.

Supported element types: f32, f64, f16, bf16 (``ml_dtypes.bfloat16``; f16/bf16
arithmetic is computed in f32), i1 (``bool``, one byte per element), i8, i32,
i64. Result shapes must be static unless ``out=`` buffers are passed; input
dimensions that are dynamic (``?``) accept any size.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.parsing import located_asm
from graphfuse.lowering.buffer_pool import buffer_pool_library
from graphfuse.lowering.codegen.cpu.lower import LoweredEntry, lower_entry
from graphfuse.lowering.codegen.cpu.specs import (
    ArgSpec,
)
from graphfuse.lowering.host import codegen_jobs, default_threads, dot_products, stream_min_bytes, vector_bits
from graphfuse.lowering.options import DEFAULT_LLVM_OPT_LEVEL
from graphfuse.lowering.parallel import jit_openmp_libraries
from graphfuse.lowering.run_checks import CheckSite, failed_check
from graphfuse.lowering.split_codegen import SplitLibrary, compile_split
from graphfuse.lowering.streaming import BUFFER_ALIGNMENT
from graphfuse.pipelines import log

__all__ = [
    "ArgumentChecks",
    "CompiledFunction",
    "aligned_empty",
    "clear_cache",
    "compile_linalg",
    "jit_lowered",
    "load_code_library",
]

_MLIR_LIB_DIR = os.path.join(next(iter(__import__("mlir").__path__)), "lib")
C_RUNNER_UTILS = os.path.join(_MLIR_LIB_DIR, "libmlir_c_runner_utils.so")


# --------------------------------------------------------------------------- memref descriptors

_DESC_CLASSES: dict[int, type] = {}


def _descriptor_class(rank: int) -> type:
    """A ctypes struct with the layout of MLIR's ranked memref descriptor.

    Same layout as ``mlir.runtime.get_ranked_memref_descriptor``'s structs, but
    with untyped pointers so one class serves every element type (bf16 and i1
    included) and filling it costs less than the generic helper.
    """
    cls = _DESC_CLASSES.get(rank)
    if cls is None:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_longlong)]
        if rank:
            fields += [("shape", ctypes.c_longlong * rank), ("strides", ctypes.c_longlong * rank)]
        cls = type(f"MemRefDescriptor{rank}D", (ctypes.Structure,), {"_fields_": fields})
        _DESC_CLASSES[rank] = cls
    return cls


def _fill_layout(desc, shape: tuple[int, ...]) -> None:
    """The sizes and C-contiguous strides of a descriptor (its pointers are left alone)."""
    desc.offset = 0
    if shape:
        desc.shape[:] = shape
        strides, step = [], 1
        for size in reversed(shape):
            strides.append(step)
            step *= size
        desc.strides[:] = strides[::-1]


def _fill_descriptor(desc, array: np.ndarray) -> None:
    addr = array.ctypes.data
    desc.allocated = addr
    desc.aligned = addr
    desc.offset = 0
    if array.ndim:
        item = array.itemsize
        desc.shape[:] = array.shape
        desc.strides[:] = [s // item for s in array.strides]


# --------------------------------------------------------------------------- compiled function


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype, alignment: int = 64) -> np.ndarray:
    """``np.empty`` starting on an ``alignment``-byte boundary (numpy guarantees 16)."""
    size = math.prod(shape) * dtype.itemsize
    raw = np.empty(size + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + size].view(dtype).reshape(shape)


def _dtype_text(dtype: np.dtype) -> str:
    """A dtype for messages; byte order spelled out, or '>f4' would read as the float32 it is not."""
    if dtype.byteorder in ("=", "|"):  # native, or not applicable (one byte)
        return dtype.name
    return f"{dtype.name} in non-native byte order ({dtype.str})"


class ArgumentChecks:
    """The argument checks of a compiled function: ``name``, ``inputs`` and ``outputs`` (ArgSpecs) describe it."""

    name: str
    inputs: list[ArgSpec]
    outputs: list[ArgSpec]

    def _check_input(self, i: int, spec: ArgSpec, a) -> np.ndarray:
        if type(a) is np.ndarray and a.shape == spec.shape and a.dtype == spec.dtype and a.flags.c_contiguous:
            return a  # the common case, first (a model's hundreds of parameters at every call)
        if not isinstance(a, np.ndarray):
            if np.isscalar(a) and spec.rank == 0:
                a = np.asarray(a, dtype=spec.dtype)
            else:
                raise GraphfuseError(
                    f"@{self.name}: argument {i}: expected a numpy array ({spec.type_str}), got {type(a).__name__}"
                )
        if a.dtype != spec.dtype:
            raise GraphfuseError(
                f"@{self.name}: argument {i}: expected dtype {spec.dtype.name} ({spec.type_str}), "
                f"got {_dtype_text(a.dtype)}"
            )
        if a.ndim != spec.rank or any(d is not None and d != n for d, n in zip(spec.shape, a.shape, strict=True)):
            raise GraphfuseError(
                f"@{self.name}: argument {i}: expected shape {spec.shape_str()} ({spec.type_str}), got {a.shape}"
            )
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        return a

    def _check_out(self, k: int, spec: ArgSpec, o, inputs: list[np.ndarray]) -> np.ndarray:
        if not isinstance(o, np.ndarray):
            raise GraphfuseError(f"@{self.name}: out[{k}]: expected a numpy array, got {type(o).__name__}")
        if o.dtype != spec.dtype:
            raise GraphfuseError(
                f"@{self.name}: out[{k}]: expected dtype {spec.dtype.name} ({spec.type_str}), "
                f"got {_dtype_text(o.dtype)}"
            )
        if o.ndim != spec.rank or any(d is not None and d != n for d, n in zip(spec.shape, o.shape, strict=True)):
            raise GraphfuseError(
                f"@{self.name}: out[{k}]: expected shape {spec.shape_str()} ({spec.type_str}), got {o.shape}"
            )
        if not (o.flags.c_contiguous and o.flags.writeable):
            raise GraphfuseError(f"@{self.name}: out[{k}]: output buffers must be writeable and C-contiguous")
        for i, a in enumerate(inputs):
            if np.may_share_memory(o, a):
                raise GraphfuseError(f"@{self.name}: out[{k}] overlaps argument {i}; outputs must not alias inputs")
        return o

    def new_outputs(self, alignment: int, otherwise: str) -> list[np.ndarray]:
        """Uninitialized result arrays starting on ``alignment``-byte boundaries; an error (ending in
        ``otherwise``) for a result with a dynamic shape."""
        for k, s in enumerate(self.outputs):
            if None in s.shape:
                raise GraphfuseError(f"@{self.name}: result {k} has a dynamic shape ({s.type_str}); {otherwise}")
        return [aligned_empty(s.shape, s.dtype, alignment) for s in self.outputs]

    def check_inputs(self, arrays) -> list[np.ndarray]:
        """The arguments as the compiled code takes them (C-contiguous), or an error naming the first wrong one."""
        if len(arrays) != len(self.inputs):
            raise GraphfuseError(f"@{self.name}: expected {len(self.inputs)} argument(s), got {len(arrays)}")
        return [self._check_input(i, s, a) for i, (s, a) in enumerate(zip(self.inputs, arrays, strict=True))]

    def check_outs(self, out, ins: list[np.ndarray]) -> list[np.ndarray]:
        """The ``out=`` buffers as a list, or an error naming the first wrong or overlapping one."""
        if isinstance(out, np.ndarray):
            out = [out]
        out = list(out)
        if len(out) != len(self.outputs):
            raise GraphfuseError(f"@{self.name}: expected {len(self.outputs)} out= buffer(s), got {len(out)}")
        outs = [self._check_out(k, s, o, ins) for k, (s, o) in enumerate(zip(self.outputs, out, strict=True))]
        for k in range(len(outs)):
            for j in range(k):
                if np.may_share_memory(outs[k], outs[j]):
                    raise GraphfuseError(f"@{self.name}: out[{k}] overlaps out[{j}]")
        return outs


def _entry_address(code: ExecutionEngine | ctypes.CDLL, name: str) -> int | None:
    """The address of the packed-arguments wrapper of ``@name``'s C interface in ``code`` (the engine's lookup
    adds the wrapper's ``_mlir_`` prefix itself)."""
    symbol = "_mlir_ciface_" + name
    if isinstance(code, ExecutionEngine):
        return code.raw_lookup(symbol)
    try:
        return ctypes.cast(getattr(code, "_mlir_" + symbol), ctypes.c_void_p).value
    except AttributeError:
        return None


class CompiledFunction(ArgumentChecks):
    """A JIT-compiled entry function; call it with numpy arrays, get numpy arrays back."""

    def __init__(
        self,
        name: str,
        inputs: list[ArgSpec],
        outputs: list[ArgSpec],
        context,
        module,
        code: ExecutionEngine | ctypes.CDLL,
        llvm_ir: str | Callable[[], str],
        workspace: list[ArgSpec] | None = None,
        checks: tuple[CheckSite, ...] = (),
    ):
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        #: buffers for intermediates, allocated once and reused by every call (see hoist-allocations)
        self.workspace = [aligned_empty(s.shape, s.dtype) for s in workspace or []]
        self.workspace_specs = list(workspace or [])
        #: stores into the results that assume BUFFER_ALIGNMENT-aligned result buffers (see __call__)
        self.streamed_stores = 0
        self._context = context  # the engine needs neither; compile_linalg passes None (see _compile)
        self._module = module
        #: the compiled code: a JIT's ExecutionEngine, or a shared library (built by the split code generator, or
        #: loaded from the compile cache)
        self.code = code
        #: the split code generator's library (its file, for the compile cache), when it built ``code``
        self.split_library: SplitLibrary | None = None
        #: the runtime libraries the code calls into (LoweredEntry.libraries)
        self.libraries: list[str] = []
        self._llvm_ir = llvm_ir
        func_ptr = _entry_address(code, name)
        if not func_ptr:
            raise GraphfuseError(f"compiled module has no C interface for @{name}")
        self._fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(func_ptr)
        specs = inputs + outputs + list(workspace or [])
        # One descriptor per argument, kept across calls and refilled only when its array's address or shape
        # changes (a model's parameters are the same arrays at every call); the workspace's are filled once.
        self._descs = [_descriptor_class(s.rank)() for s in specs]
        #: per argument, the array its descriptor describes: (a weak reference to it, its shape, its address)
        self._bound: list[tuple[weakref.ref, tuple[int, ...], int] | None] = [None] * len(specs)
        self._table = (ctypes.c_void_p * len(specs))(*[ctypes.addressof(d) for d in self._descs])
        self._table_address = ctypes.c_void_p(ctypes.addressof(self._table))
        self._packed = (ctypes.c_void_p * 1)(ctypes.addressof(self._table_address))  # packed calling convention
        for d, a in zip(self._descs[len(inputs) + len(outputs):], self.workspace, strict=True):
            _fill_descriptor(d, a)
        #: every argument and result has a static shape: :meth:`run_addresses` can take bare addresses
        self.static = all(None not in spec.shape for spec in inputs + outputs)
        #: the inputs and results (numbered inputs first) with a dynamic dim, whose shapes :meth:`run_addresses`
        #: takes at each call
        self.dynamic_arguments = tuple(k for k, spec in enumerate(inputs + outputs) if None in spec.shape)
        #: per argument, the shape its descriptor's layout was last filled for
        self._layouts: list[tuple[int, ...] | None] = [None] * len(specs)
        for k, (d, spec) in enumerate(zip(self._descs, inputs + outputs, strict=False)):
            if None not in spec.shape:
                _fill_layout(d, spec.shape)
                self._layouts[k] = spec.shape
        #: the run-time checks of the code (lowering/run_checks.py); their status word is the last workspace buffer
        self.checks = checks
        self._status_word = self.workspace[-1] if checks else None
        #: one call at a time: the workspace and the descriptors are shared by every call
        self._lock = threading.Lock()
        #: seconds per compile stage (set by compile_linalg): bufferize (to the LLVM dialect), llvm (JIT)
        self.timings: dict[str, float] = {}

    @property
    def llvm_dialect_ir(self) -> str:
        """The module as handed to LLVM (printed, or rebuilt, on request)."""
        if callable(self._llvm_ir):
            self._llvm_ir = self._llvm_ir()
        return self._llvm_ir

    def __repr__(self) -> str:
        ins = ", ".join(s.type_str for s in self.inputs)
        outs = ", ".join(s.type_str for s in self.outputs)
        return f"<CompiledFunction @{self.name}({ins}) -> ({outs})>"

    def __call__(self, *arrays, out=None) -> list[np.ndarray]:
        ins = self.check_inputs(arrays)
        # streamed stores need aligned results
        outs = self.new_outputs(BUFFER_ALIGNMENT, "pass out= buffers") if out is None else self.check_outs(out, ins)
        # Streamed stores were compiled for 64-byte aligned result buffers: an out= array that is not gets an
        # aligned stand-in, copied into it after the call (empty_outputs() gives aligned arrays).
        standins = {k: aligned_empty(o.shape, o.dtype, BUFFER_ALIGNMENT) for k, o in enumerate(outs)
                    if self.streamed_stores and o.ctypes.data % BUFFER_ALIGNMENT}
        arguments = ins + [standins.get(k, o) for k, o in enumerate(outs)]
        with self._lock:
            for i, a in enumerate(arguments):
                bound = self._bound[i]
                if bound is not None and bound[0]() is a and bound[1] == a.shape:
                    continue  # the same array object (a parameter's view): the same memory
                address = a.ctypes.data
                if bound is None or bound[2] != address or bound[1] != a.shape:  # C-contiguous: shape fixes strides
                    _fill_descriptor(self._descs[i], a)
                    self._layouts[i] = a.shape
                self._bound[i] = (weakref.ref(a), a.shape, address)
            failed = self._run_bound()
        del arguments  # the arrays stay referenced by the caller / ins until here
        if failed:
            raise failed_check(failed, self.checks)
        for k, standin in standins.items():
            np.copyto(outs[k], standin)
        return outs

    def _run_bound(self) -> int:
        """Run the code on the buffers the descriptors hold (under the lock); the status word after it (0: every
        run-time check passed)."""
        if self._status_word is not None:
            self._status_word[0] = 0
        self._fn(self._packed)
        return 0 if self._status_word is None else int(self._status_word[0])

    def run_addresses(self, addresses: list[int], shapes: Sequence[tuple[int, ...]] = ()) -> None:
        """Run on buffers given by their addresses, the inputs' then the results': for callers holding another
        library's tensors (the torch backend), which need no numpy array made per call (a few microseconds each,
        at every call of every graph).  ``shapes`` are the shapes of the :attr:`dynamic_arguments`, in their
        order (none for a statically shaped function).  Each buffer must be C-contiguous with its spec's shape
        (its dynamic dims as ``shapes`` say) and dtype and the results 64-byte aligned: nothing is checked.
        """
        descs, bound, layouts = self._descs, self._bound, self._layouts
        with self._lock:
            for i, address in enumerate(addresses):
                desc = descs[i]
                if desc.aligned != address:
                    desc.allocated = desc.aligned = address
                    bound[i] = None  # the array bound last no longer is
            for i, shape in zip(self.dynamic_arguments, shapes, strict=True):
                if layouts[i] != shape:
                    _fill_layout(descs[i], shape)
                    layouts[i] = shape
                    bound[i] = None
            failed = self._run_bound()
        if failed:
            raise failed_check(failed, self.checks)

    def empty_outputs(self) -> list[np.ndarray]:
        """Uninitialized, suitably aligned arrays for ``out=`` (statically shaped results only)."""
        return self.new_outputs(BUFFER_ALIGNMENT, "allocate it")


# --------------------------------------------------------------------------- compilation

_CACHE: dict[tuple[str, str, int, int, int | None, int, frozenset[str]], CompiledFunction] = {}
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


#: :func:`compile_linalg`'s streaming when not given: ``GRAPHFUSE_STREAM_MIN_BYTES``, else the last-level cache.
HOST_STREAMING = -1


def compile_linalg(module: ir.Module, entry: str, *, opt_level: int = DEFAULT_LLVM_OPT_LEVEL,
                   threads: int | None = None, filename: str | None = None,
                   streaming: int | None = HOST_STREAMING, jobs: int | None = None) -> CompiledFunction:
    """JIT-compile ``@entry`` of a tensor-level linalg module; cached per (module text, entry, opt_level, threads,
    streaming).

    ``threads`` (default :func:`~graphfuse.lowering.parallel.default_threads`) is how many threads run each
    ``scf.forall`` (parallelize-kernels); 1 runs them as plain loops.  ``streaming`` is the loop-nest footprint
    from which stores into the results are made non-temporal (None: never; default: :data:`HOST_STREAMING`).
    The caller's module is not modified (it is printed with its locations and re-parsed into a private
    context): errors locate the ops where the module came from, its locations in the parser's buffer ("-")
    naming ``filename`` when given.  ``jobs`` (default :func:`~graphfuse.lowering.host.codegen_jobs`) is how many
    processes generate a large module's code (lowering/split_codegen.py); it is not part of the key.
    """
    text = str(module)
    threads = default_threads() if threads is None else int(threads)
    if threads < 1:
        raise GraphfuseError(f"the thread count must be at least 1, got {threads}")
    if streaming == HOST_STREAMING:
        streaming = stream_min_bytes()
    key = (text, entry, int(opt_level), threads, streaming, vector_bits(), dot_products())
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    # The key leaves the locations out: the same code from other places of a graph (a repeated layer's launches)
    # is compiled once.
    jobs = codegen_jobs() if jobs is None else jobs
    compiled = _compile(located_asm(module, filename), entry, int(opt_level), threads, streaming, jobs)
    with _CACHE_LOCK:
        return _CACHE.setdefault(key, compiled)


def llvm_dialect_text(linalg: str, entry: str, threads: int, streaming: int | None) -> str:
    """The LLVM-dialect module of ``@entry`` of the linalg text ``linalg``, lowered again (for a compiled
    function's :attr:`~CompiledFunction.llvm_dialect_ir`, which is not kept)."""
    return str(lower_entry(linalg, entry, threads, streaming, buffer_pool_library()).module)


def _compile(text: str, entry: str, opt_level: int, threads: int = 1, streaming: int | None = None,
             jobs: int = 1) -> CompiledFunction:
    if not 0 <= opt_level <= 3:
        raise GraphfuseError(f"opt_level must be 0..3, got {opt_level}")
    start = time.perf_counter()
    lowered = lower_entry(text, entry, threads, streaming, buffer_pool_library())
    timings = {"bufferize": time.perf_counter() - start}
    start = time.perf_counter()
    # The LLVM-dialect module (tens of KB per graph op) is not kept: LLVM has its own copy.  Printing it would take
    # seconds on large graphs, so the text is rebuilt from the linalg text only when someone asks for it.
    function = jit_lowered(lowered, opt_level, lambda: llvm_dialect_text(text, entry, threads, streaming), jobs)
    timings["llvm"] = time.perf_counter() - start  # the symbol lookup in CompiledFunction generates the code
    function.timings = timings
    return function


_LOAD_LOCK = threading.Lock()


def load_code_library(path: str | os.PathLike, libraries: Sequence[str]) -> ctypes.CDLL:
    """Load the shared library of compiled code at ``path`` after the runtime libraries the JIT would resolve its
    calls in (``libraries``, the OpenMP runtime as :func:`jit_openmp_libraries` picks it, the C runner utils)."""
    with _LOAD_LOCK:
        for library in [*jit_openmp_libraries(list(libraries)), C_RUNNER_UTILS]:
            ctypes.CDLL(library, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
        return ctypes.CDLL(str(path), mode=os.RTLD_LOCAL | os.RTLD_NOW)


def jit_lowered(lowered: LoweredEntry, opt_level: int, llvm_ir: str | Callable[[], str] | None = None,
                jobs: int = 1) -> CompiledFunction:
    """JIT-compile an entry the CPU pipeline lowered; ``llvm_ir`` is its LLVM-dialect text, or a function giving
    it (default: the module printed now).  With ``jobs`` > 1, a large module is compiled by the split code
    generator in that many processes (lowering/split_codegen.py); others by the ExecutionEngine."""
    entry = lowered.entry
    split = _compile_split(lowered, opt_level, jobs)
    if split is not None:
        code = split.handle
    else:
        with lowered.context:
            try:
                # Position-independent code: the compile cache links the engine's object code into a shared
                # library.
                code = ExecutionEngine(lowered.module, opt_level=opt_level,
                                       shared_libs=[*jit_openmp_libraries(lowered.libraries), C_RUNNER_UTILS],
                                       enable_pic=True)
            except Exception as e:
                raise GraphfuseError(f"JIT compilation of @{entry} failed: {e}") from None
    function = CompiledFunction(entry, lowered.inputs, lowered.outputs, None, None, code,
                                str(lowered.module) if llvm_ir is None else llvm_ir, lowered.workspace,
                                lowered.checks)
    function.split_library = split
    function.streamed_stores = lowered.streamed_stores
    function.libraries = list(lowered.libraries)
    return function


def _compile_split(lowered: LoweredEntry, opt_level: int, jobs: int) -> SplitLibrary | None:
    """The split code generator's library of ``lowered``; None when the module is small (or keeps large
    constants in its LLVM IR), or when the tools fail: the engine compiles it then."""
    try:
        return compile_split(lowered.module, lowered.entry, opt_level, jobs,
                             lambda path: load_code_library(path, lowered.libraries))
    except (GraphfuseError, OSError) as error:
        log.warning(f"@{lowered.entry}: the split code generator failed, the ExecutionEngine compiles it: {error}")
        return None
