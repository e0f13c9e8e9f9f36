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

import bisect
import ctypes
import hashlib
import heapq
import math
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import linalg
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager

from graphfuse.dialect.context import new_context
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, from_mlir_error, source_loc
from graphfuse.dialect.matching import nested_ops, op_id
from graphfuse.dialect.parsing import located_asm
from graphfuse.lowering.concat_buffers import copy_long_concats
from graphfuse.lowering.contraction import block_contractions
from graphfuse.lowering.parallel import default_threads, jit_openmp_libraries, openmp_library
from graphfuse.lowering.run_checks import CheckSite, bind_status_word, failed_check
from graphfuse.lowering.streaming import (
    BUFFER_ALIGNMENT,
    prefetch_next_rows,
    stream_large_stores,
    stream_min_bytes,
)

__all__ = [
    "BUFFERIZE",
    "TO_LLVM",
    "ArgSpec",
    "ArgumentChecks",
    "CompiledFunction",
    "LoweredEntry",
    "aligned_empty",
    "arg_spec",
    "clear_cache",
    "compile_linalg",
    "lower_entry",
    "pipeline_text",
]

_MLIR_LIB_DIR = os.path.join(next(iter(__import__("mlir").__path__)), "lib")
C_RUNNER_UTILS = os.path.join(_MLIR_LIB_DIR, "libmlir_c_runner_utils.so")

#: Before bufferization: let results be computed directly into the output arguments.
PRE_BUFFERIZE = "eliminate-empty-tensors"
BUFFERIZE = (
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
    "drop-equivalent-buffer-results,func.func(buffer-loop-hoisting)"
)
#: f16/bf16 arithmetic in f32; bf16 <-> f32 conversions as integer ops (no libcalls needed).
LOOPS = (
    "func.func(convert-linalg-to-loops,"
    "arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32},arith-expand{include-bf16=true})"
)
#: The function-local steps nested per function (one pass over each function while it is in cache, in parallel
#: where the context allows); the dialects left after the memref, vector and math conversions go to LLVM in one
#: convert-to-llvm walk instead of one walk of the whole module per dialect (same output, a quarter less time).
TO_LLVM = (
    "func.func(convert-vector-to-scf{full-unroll},expand-strided-metadata,lower-affine,convert-scf-to-cf),"
    "finalize-memref-to-llvm,"
    "convert-vector-to-llvm{reassociate-fp-reductions=1},convert-math-to-llvm,convert-math-to-funcs,"
    "convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts"
)


def pipeline_text() -> str:
    """The full pass pipeline applied after the DPS rewrite (bufferize + lower to LLVM)."""
    return f"builtin.module({PRE_BUFFERIZE},{BUFFERIZE},{LOOPS},{TO_LLVM})"


# --------------------------------------------------------------------------- element types


@dataclass(frozen=True)
class ArgSpec:
    """One tensor argument (input or output) of the entry function."""

    shape: tuple[int | None, ...]  # None for a dynamic dimension
    dtype: np.dtype  # the numpy dtype callers pass
    type_str: str  # the MLIR type, for messages

    @property
    def rank(self) -> int:
        return len(self.shape)

    def shape_str(self) -> str:
        return (
            "("
            + ", ".join("?" if d is None else str(d) for d in self.shape)
            + ("," if len(self.shape) == 1 else "")
            + ")"
        )


def _numpy_dtype(element: ir.Type, where: str) -> np.dtype:
    if isinstance(element, ir.F32Type):
        return np.dtype(np.float32)
    if isinstance(element, ir.F64Type):
        return np.dtype(np.float64)
    if isinstance(element, ir.F16Type):
        return np.dtype(np.float16)
    if isinstance(element, ir.BF16Type):
        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(element, ir.IntegerType):
        it = ir.IntegerType(element)
        if it.is_signless or it.is_signed:
            found = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}.get(it.width)
            if found is not None:
                return np.dtype(found)
    raise GraphfuseError(
        f"{where}: unsupported element type {element} (supported: f32, f64, f16, bf16, i1, i8, i16, i32, i64)"
    )


def arg_spec(t: ir.Type, where: str) -> ArgSpec:
    """The spec of a ranked tensor type, or an error naming ``where`` it was found."""
    if not isinstance(t, ir.RankedTensorType):
        raise GraphfuseError(f"{where}: expected a ranked tensor type, got {t}")
    rt = ir.RankedTensorType(t)
    if rt.encoding is not None:
        raise GraphfuseError(f"{where}: tensors with an encoding are not supported: {t}")
    shape = tuple(None if rt.is_dynamic_dim(i) else rt.get_dim_size(i) for i in range(rt.rank))
    return ArgSpec(shape, _numpy_dtype(rt.element_type, where), str(t))


# --------------------------------------------------------------------------- memory


def physical_memory_bytes() -> int:
    """This machine's physical memory (a huge number where the platform cannot tell)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return 2**62


def format_bytes(count: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def spec_bytes(spec: ArgSpec) -> int | None:
    return None if None in spec.shape else math.prod(spec.shape) * spec.dtype.itemsize


def check_fits_in_memory(buffers: list[tuple[str, int | None]], what: str) -> None:
    """Refuse up front buffers (name, bytes or None when dynamic) that cannot fit in memory together.

    numpy's ``empty`` of a few TiB may "succeed" (the pages are not touched
    yet) and the process is killed later, inside compiled code, with no
    message: a clear error before anything is allocated is the only safe answer.
    """
    sizes = [(name, size) for name, size in buffers if size is not None]
    total = sum(size for _, size in sizes)
    limit = physical_memory_bytes()
    if total <= limit:
        return
    name, largest = max(sizes, key=lambda item: item[1])
    raise GraphfuseError(
        f"{what} need {format_bytes(total)} of memory (the largest, {name}, {format_bytes(largest)}); "
        f"this machine has {format_bytes(limit)}"
    )


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


class CompiledFunction(ArgumentChecks):
    """A JIT-compiled entry function; call it with numpy arrays, get numpy arrays back."""

    def __init__(
        self,
        name: str,
        inputs: list[ArgSpec],
        outputs: list[ArgSpec],
        context,
        module,
        engine,
        llvm_ir: str | Callable[[], str],
        workspace: list[ArgSpec] | None = None,
        checks: tuple[CheckSite, ...] = (),
    ):
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        #: buffers for intermediates, allocated once and reused by every call (see _hoist_allocations)
        self.workspace = [aligned_empty(s.shape, s.dtype) for s in workspace or []]
        #: stores into the results that assume BUFFER_ALIGNMENT-aligned result buffers (see __call__)
        self.streamed_stores = 0
        self._context = context  # the engine needs neither; compile_linalg passes None (see _compile)
        self._module = module
        self._engine = engine
        self._llvm_ir = llvm_ir
        func_ptr = engine.raw_lookup("_mlir_ciface_" + name)
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
        if self.static:
            for d, spec in zip(self._descs, inputs + outputs, strict=False):
                _fill_layout(d, spec.shape)
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

    def run_addresses(self, addresses: list[int]) -> None:
        """Run on buffers given by their addresses, the inputs' then the results': for callers holding another
        library's tensors (the torch backend), which need no numpy array made per call (a few microseconds each,
        at every call of every graph).  Statically shaped functions only (:attr:`static`); each buffer must be
        C-contiguous with its spec's shape and dtype and the results 64-byte aligned: nothing is checked.
        """
        descs, bound = self._descs, self._bound
        with self._lock:
            for i, address in enumerate(addresses):
                desc = descs[i]
                if desc.aligned != address:
                    desc.allocated = desc.aligned = address
                    bound[i] = None  # the array bound last no longer is
            failed = self._run_bound()
        if failed:
            raise failed_check(failed, self.checks)

    def empty_outputs(self) -> list[np.ndarray]:
        """Uninitialized, suitably aligned arrays for ``out=`` (statically shaped results only)."""
        return self.new_outputs(BUFFER_ALIGNMENT, "allocate it")


# --------------------------------------------------------------------------- compilation

_CACHE: dict[tuple[str, str, int, int, int | None], CompiledFunction] = {}
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


def _find_func(module: ir.Module, entry: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op
    raise GraphfuseError(f"no function @{entry} in the module")


def _to_dps(module: ir.Module, entry: str) -> tuple[list[ArgSpec], list[ArgSpec]]:
    """Rewrite the entry in place to destination-passing style; return the input and output specs."""
    func = _find_func(module, entry)
    nblocks = len(list(func.regions[0].blocks))
    if nblocks == 0:
        raise GraphfuseError(f"@{entry} is a declaration; it has no body to compile")
    if nblocks != 1:
        raise GraphfuseError(f"@{entry} must have a single block (use structured control flow)")
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = [arg_spec(t, f"@{entry} argument {i}") for i, t in enumerate(ftype.inputs)]
    outputs = [arg_spec(t, f"@{entry} result {k}") for k, t in enumerate(ftype.results)]
    if not outputs:
        raise GraphfuseError(f"@{entry} returns nothing")
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    if ret.operation.name != "func.return":
        raise GraphfuseError(f"@{entry}: expected func.return as the last operation")
    loc = ir.Location.unknown()
    # memref<...xi1> stores do not lower (LLVM 22): i1 crosses the boundary as i8 (numpy bool is one byte)
    in_types = [_boundary_type(t) for t in ftype.inputs]
    out_types = [_boundary_type(t) for t in ftype.results]
    first = block.operations[0]
    for arg, t in zip(block.arguments, in_types, strict=True):
        if t != arg.type:
            orig = arg.type
            arg.set_type(t)
            with ir.InsertionPoint(first):
                conv = _convert_generic(arg, orig, _NONZERO, None)
            arg.replace_all_uses_except(conv.result, conv.operation)
    out_args = [block.add_argument(t, loc) for t in out_types]
    with ir.InsertionPoint(ret):
        new_results = []
        materialized: dict[ir.Value, ir.Value] = {}
        for value, dest in zip(list(ret.operands), out_args, strict=True):
            original = value
            if dest.type != value.type:
                value = _convert_generic(value, dest.type, "arith.extui", None).result
            elif value in materialized:  # returned twice: copy the first output buffer into this one
                value = _convert_generic(materialized[value], dest.type, None, dest).result
            m = ir.Operation.create(
                "bufferization.materialize_in_destination", results=[dest.type], operands=[value, dest], loc=loc
            )
            materialized.setdefault(original, m.result)
            new_results.append(m.result)
    for k, v in enumerate(new_results):
        ret.operands[k] = v
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(in_types + out_types, out_types))
    not_writable = ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)})
    empty = ir.DictAttr.get({})
    func.attributes["arg_attrs"] = ir.ArrayAttr.get([not_writable] * len(inputs) + [empty] * len(outputs))
    func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    if "res_attrs" in func.attributes:
        del func.attributes["res_attrs"]
    return inputs, outputs


def _boundary_type(t: ir.Type) -> ir.Type:
    if isinstance(t.element_type, ir.IntegerType) and t.element_type.width == 1:
        return ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(8))
    return t


#: :func:`_convert_generic`'s cast from bytes to booleans (:func:`nonzero_bytes`)
_NONZERO = "nonzero"


def nonzero_bytes(value: ir.Value) -> ir.Value:
    """The booleans (i1, or a vector of them) of bytes ``value``: true where non-zero, as numpy reads a bool array
    (its bytes may hold other values than 0 and 1: a view of uint8 data).  Truncation would read the low bit."""
    from mlir.dialects import arith

    zero = ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 0)
    if isinstance(value.type, ir.VectorType):
        zero = ir.DenseElementsAttr.get_splat(value.type, zero)
    return arith.cmpi(arith.CmpIPredicate.ne, value, arith.constant(value.type, zero))


def _convert_generic(value: ir.Value, result_type: ir.Type, cast: str | None, dest: ir.Value | None):
    """``linalg.generic`` applying ``cast`` (None: a copy) elementwise to ``value`` (into ``dest``, or a new empty).

    The boolean side becomes bytes too (:func:`store_booleans_as_bytes`); the pair of casts is then a byte copy.
    """
    from mlir.dialects import linalg, tensor

    rt = ir.RankedTensorType(result_type)
    if not rt.has_static_shape:
        raise GraphfuseError(f"i1 tensors at the function boundary must have static shapes, got {rt}")
    if dest is None:
        dest = tensor.EmptyOp(rt.shape, rt.element_type).result
    ident = ir.AffineMap.get_identity(rt.rank)
    generic = linalg.GenericOp(
        [rt],
        [value],
        [dest],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ident)] * 2),
        ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rt.rank),
    )
    in_elt = ir.RankedTensorType(value.type).element_type
    body = generic.regions[0].blocks.append(in_elt, rt.element_type)
    with ir.InsertionPoint(body):
        if cast is None:
            linalg.YieldOp([body.arguments[0]])
        elif cast == _NONZERO:
            linalg.YieldOp([nonzero_bytes(body.arguments[0])])
        else:
            c = ir.Operation.create(cast, results=[rt.element_type], operands=[body.arguments[0]])
            linalg.YieldOp([c.result])
    return generic


def _run(pipeline: str, module: ir.Module, what: str) -> None:
    try:
        PassManager.parse(pipeline).run(module.operation)
    except ir.MLIRError as e:
        raise GraphfuseError([*from_mlir_error(e)]) from None
    except Exception as e:  # e.g. a pipeline string the build does not know
        raise GraphfuseError(f"{what} failed: {e}") from None


#: LLVM's optimization level for compiled code (the JIT's ``jit_opt_level``, the ahead-of-time compiler's
#: ``codegen_opt_level``).  2, not 3: the code reaches LLVM vectorized and tiled, and on the bench's
#: workloads and the zoo's graphs O3 ran no faster (within run-to-run noise) while it compiled 7-40% longer
#: (ResNet's graph 4.2 -> 2.5 s, MobileNetV2's 10.4 -> 8.2 s, Llama's 4.3 -> 4.0 s; docs/performance.md).
DEFAULT_LLVM_OPT_LEVEL = 2


def compile_linalg(module: ir.Module, entry: str, *, opt_level: int = DEFAULT_LLVM_OPT_LEVEL,
                   threads: int | None = None, filename: str | None = None) -> CompiledFunction:
    """JIT-compile ``@entry`` of a tensor-level linalg module; cached per (module text, entry, opt_level, threads).

    ``threads`` (default :func:`~graphfuse.lowering.parallel.default_threads`) is how many threads run each
    ``scf.forall`` (parallelize-kernels); 1 runs them as plain loops.  The caller's module is not modified (it
    is printed with its locations and re-parsed into a private context): errors locate the ops where the module
    came from, its locations in the parser's buffer ("-") naming ``filename`` when given.
    """
    text = str(module)
    threads = default_threads() if threads is None else int(threads)
    if threads < 1:
        raise GraphfuseError(f"the thread count must be at least 1, got {threads}")
    streaming = stream_min_bytes()
    key = (text, entry, int(opt_level), threads, streaming)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    # The key leaves the locations out: the same code from other places of a graph (a repeated layer's launches)
    # is compiled once.
    compiled = _compile(located_asm(module, filename), entry, int(opt_level), threads, streaming)
    with _CACHE_LOCK:
        return _CACHE.setdefault(key, compiled)


def openmp_to_llvm() -> str:
    """TO_LLVM for code with OpenMP loops.

    convert-scf-to-openmp wraps each loop body in a ``memref.alloca_scope``, a
    single-block region: the memrefs are lowered first (which inlines the
    scope between a stack save and restore), then the scf loops inside become
    blocks; the omp ops go to LLVM before the rest.
    """
    pipeline = TO_LLVM.replace(
        ",convert-scf-to-cf),finalize-memref-to-llvm,", "),finalize-memref-to-llvm,func.func(convert-scf-to-cf),")
    pipeline = pipeline.replace("convert-to-llvm,", "convert-openmp-to-llvm,convert-to-llvm,")
    assert pipeline.count("convert-openmp-to-llvm") == 1 and "finalize-memref-to-llvm,func.func(" in pipeline, pipeline
    return pipeline


def parallel_loops(threads: int) -> tuple[str, list[str]]:
    """(the passes lowering scf.forall for ``threads`` threads, the runtime library they need)."""
    library = openmp_library()
    if threads == 1 or library is None:
        return "scf-forall-to-for", []
    return f"scf-forall-to-parallel,convert-scf-to-openmp{{num-threads={threads}}}", [library]


def _compile(text: str, entry: str, opt_level: int, threads: int = 1,
             streaming: int | None = None) -> CompiledFunction:
    if not 0 <= opt_level <= 3:
        raise GraphfuseError(f"opt_level must be 0..3, got {opt_level}")
    start = time.perf_counter()
    lowered = lower_entry(text, entry, threads, streaming)
    timings = {"bufferize": time.perf_counter() - start}
    start = time.perf_counter()
    with lowered.context:
        try:
            engine = ExecutionEngine(lowered.module, opt_level=opt_level,
                                     shared_libs=[*jit_openmp_libraries(lowered.libraries), C_RUNNER_UTILS])
        except Exception as e:
            raise GraphfuseError(f"JIT compilation of @{entry} failed: {e}") from None
    # The LLVM-dialect module (tens of KB per graph op) is not kept: LLVM has its own copy.  Printing it would take
    # seconds on large graphs, so the text is rebuilt from the linalg text only when someone asks for it.
    function = CompiledFunction(entry, lowered.inputs, lowered.outputs, None, None, engine,
                                lambda: str(lower_entry(text, entry, threads, streaming).module), lowered.workspace,
                                lowered.checks)
    timings["llvm"] = time.perf_counter() - start  # the symbol lookup in CompiledFunction generates the code
    function.timings = timings
    function.streamed_stores = lowered.streamed_stores
    return function


@dataclass
class LoweredEntry:
    """An entry function lowered to the LLVM dialect, as the JIT and the ahead-of-time compiler take it.

    The entry takes one ``!llvm.ptr``: a table of memref descriptor addresses, the inputs', the outputs' and the
    workspace buffers' in that order (:func:`pack_arguments`).
    """

    context: ir.Context
    module: ir.Module
    inputs: list[ArgSpec]
    outputs: list[ArgSpec]
    #: the intermediate buffers the caller allocates once (statically shaped)
    workspace: list[ArgSpec]
    #: the runtime libraries the code calls into (the OpenMP runtime of parallel loops)
    libraries: list[str]
    #: vector stores into the results made non-temporal: they need BUFFER_ALIGNMENT-aligned result buffers
    streamed_stores: int
    #: the run-time checks (lowering/run_checks.py); when there are any, the last workspace buffer is their status
    #: word (STATUS_WORD), cleared before a call and non-zero after it when one failed
    checks: tuple[CheckSite, ...] = ()


#: The workspace buffer of the run-time checks' status word (lowering/run_checks.py).
STATUS_WORD = ArgSpec((1,), np.dtype(np.int32), "memref<1xi32>")


def lower_entry(text: str, entry: str, threads: int, streaming: int | None = None) -> LoweredEntry:
    """Parse the linalg text into a new context and lower ``@entry`` to the LLVM dialect.

    ``streaming`` is the loop-nest footprint from which stores into the results are made non-temporal
    (:mod:`graphfuse.lowering.streaming`; None: never).
    """
    context = new_context()
    with context, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise GraphfuseError(from_mlir_error(e)) from None
        if any(o.name.startswith("graph.") for o in nested_ops(module)):
            raise GraphfuseError("compile_linalg expects linalg/tensor/arith/math IR; lower graph ops first")
        inputs, outputs = _to_dps(module, entry)
        block_contractions(module, threads)
        # drop-equivalent-buffer-results leaves public functions alone: hide the entry while it runs
        func = _find_func(module, entry)
        visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
        func.attributes["sym_visibility"] = ir.StringAttr.get("private")
        store_booleans_as_bytes(module)
        _split_shared_empties(module)
        copy_long_concats(module)
        _run(f"builtin.module({PRE_BUFFERIZE})", module, "empty-tensor elimination")
        _drop_redundant_materializations(module)
        _run(f"builtin.module({BUFFERIZE})", module, "bufferization")
        func = _find_func(module, entry)
        if visibility is None:
            del func.attributes["sym_visibility"]
        else:
            func.attributes["sym_visibility"] = visibility
        _align_constants(module)
        _erase_self_copies(func)
        _compute_results_in_outputs(func, list(func.regions[0].blocks[0].arguments)[len(inputs):])
        stacked = stack_loop_buffers(func)
        free_loop_buffers(func)
        _drop_results_in_outputs(func, len(inputs), len(outputs))
        workspace = _hoist_allocations(func, arena=True)
        checks = bind_status_word(module, func)  # after the arena: the word outlives the call, no buffer shares it
        if checks:
            workspace.append(STATUS_WORD)
        check_fits_in_memory(
            [*((f"result {k} {s.type_str}", spec_bytes(s)) for k, s in enumerate(outputs)),
             *((f"intermediate {s.type_str}", spec_bytes(s)) for s in workspace)],
            f"@{entry}: its results and intermediate buffers",
        )
        _reject_i1_buffers(module, entry)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        if len(ftype.results):
            raise GraphfuseError(
                f"@{entry}: result(s) could not be written in place into the output buffers "
                f"(bufferized signature {ftype}); compute each result into a tensor.empty destination"
            )
        forward_loop_results(func)
        arguments = list(func.regions[0].blocks[0].arguments)
        streamed = 0 if streaming is None else stream_large_stores(
            func, arguments[len(inputs):len(inputs) + len(outputs)], streaming)
        if streaming is not None:
            prefetch_next_rows(func, arguments[:len(inputs)], streaming)
        pack_arguments(func)
        _strided_copies_as_loops(module)
        outline_chunks(module, func, entry)
        parallel, libraries = parallel_loops(threads)
        to_llvm = openmp_to_llvm() if libraries else TO_LLVM
        _run(f"builtin.module({LOOPS},{parallel})", module, "lowering the parallel loops")
        if stacked:
            hoist_stack_buffers(module)
        _run(f"builtin.module({to_llvm})", module, "lowering to LLVM")
    return LoweredEntry(context, module, inputs, outputs, workspace, libraries, streamed, checks)


def _align_constants(module: ir.Module) -> None:
    """Start every constant buffer on a cache line, as the workspace's buffers do.

    Bufferization leaves ``memref.global`` without an alignment and LLVM then aligns an array of floats to
    16 bytes: half the 32-byte loads from a matmul's constant packed B would cross a cache line.
    """
    i64 = ir.IntegerType.get_signless(64)
    for op in module.body.operations:
        if op.operation.name == "memref.global" and "alignment" not in op.attributes:
            op.attributes["alignment"] = ir.IntegerAttr.get(i64, _ARENA_ALIGNMENT)


def _bytes_type(t: ir.Type) -> ir.Type | None:
    """tensor<...xi8> for a tensor<...xi1>, else None."""
    if isinstance(t, ir.RankedTensorType) and str(t.element_type) == "i1":
        return ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(8))
    return None


def store_booleans_as_bytes(module: ir.Module) -> None:
    """Retype every boolean tensor (``tensor<...xi1>``) in the module as ``tensor<...xi8>`` holding 0 or 1.

    LLVM 22's memref lowering aborts on ``memref<...xi1>`` stores, and numpy
    keeps booleans in bytes anyway.  Values stay i1 inside linalg bodies and
    in vectors and scalars: a body reading a byte compares it with 0
    (:func:`nonzero_bytes`), a body producing a boolean result zero-extends it
    (``arith.extui``); so do the ops moving elements between a tensor and a
    vector or scalar (``vector.transfer_read``/``transfer_write``,
    ``tensor.extract``/``insert``...), as row tiling and vectorization leave
    them.  Boolean constants are rebuilt as byte constants.  Loops (``scf``)
    carry the byte tensors; other ops with regions are refused when they
    touch a boolean tensor.
    """
    from graphfuse.dialect.constants import array_to_attr, attr_to_array

    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
    for func in module.body.operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        entry_block = func.regions[0].blocks[0]
        for arg in entry_block.arguments:
            wide = _bytes_type(arg.type)
            if wide is not None:
                arg.set_type(wide)
        for op in nested_ops(func):
            if op.name == "arith.constant" and _bytes_type(op.results[0].type) is not None:
                values = attr_to_array(op.attributes["value"]).astype(np.int8)
                with ir.InsertionPoint(op), op.location:
                    new = arith_constant(array_to_attr(values))
                op.results[0].replace_all_uses_with(new)
                op.erase()
                continue
            changed = False
            for result in op.results:
                wide = _bytes_type(result.type)
                if wide is not None:
                    result.set_type(wide)
                    changed = True
            element_access = _BOOLEAN_ELEMENT_ACCESS.get(op.name)
            if element_access is not None:
                element_access(op, i1, i8)
            if not len(op.regions):
                continue
            if op.name.startswith("linalg."):
                _retype_linalg_body(op, i1, i8)
            elif op.name.startswith("scf."):
                _retype_region_tensors(op)
            elif changed or _retype_region_tensors(op, dry_run=True):
                raise GraphfuseError(f"boolean tensors through '{op.name}' are not supported by the CPU runtime")
        ret = entry_block.operations[len(entry_block.operations) - 1]
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = [a.type for a in entry_block.arguments]
        results = [v.type for v in ret.operands] if ret.operation.name == "func.return" else list(ftype.results)
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        raise GraphfuseError(f"storing booleans as bytes failed: {e}") from None


def _retype_region_tensors(op: ir.Operation, dry_run: bool = False) -> bool:
    """Retype the boolean tensor block arguments of ``op``'s regions (a loop's iter_args) as byte tensors.

    Returns whether there were any; ``dry_run`` only looks.
    """
    found = False
    for region in op.regions:
        for block in region.blocks:
            for arg in block.arguments:
                wide = _bytes_type(arg.type)
                if wide is not None:
                    found = True
                    if not dry_run:
                        arg.set_type(wide)
    return found


def _is_boolean(value: ir.Value, i1: ir.Type) -> bool:
    """An i1 scalar or a vector of i1."""
    t = value.type
    if isinstance(t, ir.VectorType):
        return ir.VectorType(t).element_type == i1
    return t == i1


def _byte_version(t: ir.Type, i8: ir.Type) -> ir.Type:
    """i8 for i1, vector<...xi8> for vector<...xi1>."""
    if isinstance(t, ir.VectorType):
        vt = ir.VectorType(t)
        return ir.VectorType.get(vt.shape, i8, scalable=vt.scalable_dims)
    return i8


def _widen_operand(op: ir.Operation, number: int, i1: ir.Type, i8: ir.Type) -> None:
    """Zero-extend operand ``number`` (an i1 scalar or vector) to bytes where ``op`` stores it into a byte tensor."""
    from mlir.dialects import arith

    value = op.operands[number]
    if not _is_boolean(value, i1):
        return
    with ir.InsertionPoint(op), op.location:
        op.operands[number] = arith.extui(_byte_version(value.type, i8), value)


def _narrow_result(op: ir.Operation, i1: ir.Type, i8: ir.Type) -> None:
    """Make ``op``'s i1 (scalar or vector) result, loaded from a byte tensor, a byte one compared with 0 after
    ``op``."""
    result = op.results[0]
    if not _is_boolean(result, i1):
        return
    boolean_type = result.type
    result.set_type(_byte_version(boolean_type, i8))
    with ir.InsertionPoint.after(op), op.location:
        narrow = nonzero_bytes(result)
    result.replace_all_uses_except(narrow, narrow.owner.operation)


def _reads_bytes(op: ir.Operation, i8: ir.Type) -> bool:
    source = op.operands[0].type
    return isinstance(source, ir.ShapedType) and ir.ShapedType(source).element_type == i8


def _transfer_read(op: ir.Operation, i1: ir.Type, i8: ir.Type) -> None:
    """``vector.transfer_read`` of a byte tensor into an i1 vector: read bytes (padding too), then truncate."""
    if not _reads_bytes(op, i8) or not _is_boolean(op.results[0], i1):
        return
    padding = next(k for k, operand in enumerate(op.operands) if operand.type == i1)  # the mask is a vector
    _widen_operand(op, padding, i1, i8)
    _narrow_result(op, i1, i8)


def _extract(op: ir.Operation, i1: ir.Type, i8: ir.Type) -> None:
    """``tensor.extract`` of a byte tensor: extract the byte, then truncate."""
    if _reads_bytes(op, i8):
        _narrow_result(op, i1, i8)


def _store_first_operand(op: ir.Operation, i1: ir.Type, i8: ir.Type) -> None:
    """``vector.transfer_write`` / ``tensor.insert`` of an i1 value into a byte tensor: extend it first."""
    dest = op.operands[1].type
    if isinstance(dest, ir.ShapedType) and ir.ShapedType(dest).element_type == i8:
        _widen_operand(op, 0, i1, i8)


def _build_from_scalars(op: ir.Operation, i1: ir.Type, i8: ir.Type) -> None:
    """``tensor.from_elements`` / ``tensor.splat`` of i1 scalars into a (now) byte tensor: extend each."""
    if ir.ShapedType(op.results[0].type).element_type != i8:
        return
    for number in range(len(op.operands)):
        _widen_operand(op, number, i1, i8)


#: Ops that move boolean elements between a byte tensor and i1 scalars or vectors, and how each is rewritten.
_BOOLEAN_ELEMENT_ACCESS = {
    "vector.transfer_read": _transfer_read,
    "vector.transfer_write": _store_first_operand,
    "tensor.extract": _extract,
    "tensor.insert": _store_first_operand,
    "tensor.from_elements": _build_from_scalars,
    "tensor.splat": _build_from_scalars,
}


def _retype_linalg_body(op: ir.Operation, i1: ir.Type, i8: ir.Type) -> None:
    """Make a linalg op's body read bytes for its byte operands and yield bytes for its byte results."""
    from mlir.dialects import arith

    block = op.regions[0].blocks[0]
    first = block.operations[0]
    for arg, operand in zip(block.arguments, op.operands, strict=False):
        if str(arg.type) != "i1" or not isinstance(operand.type, ir.RankedTensorType):
            continue
        if ir.RankedTensorType(operand.type).element_type != i8:
            continue
        arg.set_type(i8)
        with ir.InsertionPoint(first), op.location:
            narrow = nonzero_bytes(arg)
        arg.replace_all_uses_except(narrow, narrow.owner.operation)
    yield_op = block.operations[len(block.operations) - 1]
    for k, result in enumerate(op.results):
        value = yield_op.operands[k]
        if ir.RankedTensorType(result.type).element_type == i8 and value.type == i1:
            with ir.InsertionPoint(yield_op), op.location:
                yield_op.operands[k] = arith.extui(i8, value)


def arith_constant(attr: ir.Attribute) -> ir.Value:
    from mlir.dialects import arith

    return arith.ConstantOp(attr.type, attr).result


def _reject_i1_buffers(module: ir.Module, entry: str) -> None:
    """Refuse IR with an i1 buffer left after bufferization.

    finalize-memref-to-llvm asserts (aborting the process) on stores to
    memref<...xi1>; boolean intermediates that elementwise fusion could not
    remove (e.g. a comparison with two users) would get there.
    """
    for op in nested_ops(module):
        for result in op.results:
            t = result.type
            if isinstance(t, ir.MemRefType) and str(t.element_type) == "i1":
                raise GraphfuseError(
                    f"@{entry}: a boolean (i1) intermediate would be stored in memory ({t}, from "
                    f"{op.name}); the CPU lowering cannot store i1 buffers yet"
                )


def _destination_of(value: ir.Value) -> ir.Value | None:
    """The value a result is computed into: a linalg op's init, an ``scf.for`` result's iter_args init."""
    if isinstance(value.owner, ir.Block):
        return None
    producer = value.owner.operation
    index = ir.OpResult(value).result_number
    if producer.name == "scf.for":
        return producer.operands[3 + index]  # lower bound, upper bound, step, then the iter_args inits
    if producer.name.startswith("linalg."):
        return producer.operands[len(producer.operands) - len(producer.results) + index]
    return None


def _drop_redundant_materializations(module: ir.Module) -> None:
    """Remove ``materialize_in_destination %v in %out`` where %v is already computed in %out.

    After empty-tensor elimination, a result's producer often has the output
    argument itself as its destination (a linalg op's init, an ``scf.for``'s
    iter_args init).  The materialization is then a no-op, and for loops it
    even makes one-shot bufferization report a read-after-write conflict.
    """
    for op in nested_ops(module):
        if op.name != "bufferization.materialize_in_destination":
            continue
        source, dest = op.operands[0], op.operands[1]
        destination = _destination_of(source)
        if destination is not None and destination == dest:
            op.results[0].replace_all_uses_with(source)
            op.erase()


def _split_shared_empties(module: ir.Module) -> None:
    """Give every use of a ``tensor.empty`` its own copy.

    CSE merges identical ``tensor.empty`` ops; one-shot bufferization then
    sees several ops writing into "the same" tensor, and inside tiled loops
    (``scf.for`` iter_args) that is a read-after-write conflict it refuses
    instead of copying around.  An empty tensor has no contents, so separate
    ones are always correct.
    """
    for op in nested_ops(module):
        if op.name != "tensor.empty":
            continue
        uses = [(use.owner, use.operand_number) for use in op.results[0].uses]
        for owner, number in uses[1:]:
            copy = op.clone(ir.InsertionPoint(op))
            owner.operands[number] = copy.results[0]


#: Buffers allocated inside a loop body up to this size go on the stack (see stack_loop_buffers): a matmul
#: task's block of C (up to 288 rows of 8 panels of 16 floats with AVX2, of 32 with AVX-512: 288 KiB) fits;
#: each OpenMP thread has MiBs (libiomp5's default stack is 4 MiB; libgomp's threads, which JIT code uses beside
#: PyTorch, get the pthread default: 8 MiB under the usual stack limit), the calling thread 8.
STACK_BUFFER_MAX_BYTES = 512 << 10
_LOOPS = frozenset({"scf.for", "scf.forall", "scf.parallel", "scf.while"})


def _in_loop_body(op: ir.Operation) -> bool:
    """Whether ``op`` is in a loop body, directly or in a branch (``scf.if``) there: a grouped matmul's
    blocks of a size the group may not have are such branches."""
    parent = op.parent
    while parent is not None and parent.name == "scf.if":
        parent = parent.parent
    return parent is not None and parent.name in _LOOPS


def stack_loop_buffers(func) -> int:
    """Small static buffers allocated in a loop body (a row's scratch) become stack buffers.

    Such a ``memref.alloc`` (row_chunks' stash of a row value the row's write reads back) becomes a
    ``memref.alloca`` where it is; :func:`hoist_stack_buffers` moves it out of the loops once they are
    lowered to threads or to plain loops.  Larger or dynamic allocations in loops are left for
    :func:`_hoist_allocations` to refuse.  Returns how many buffers it put on the stack.
    """
    stacked = 0
    for op in nested_ops(func):
        if op.name != "memref.alloc" or len(op.operands) or not _in_loop_body(op):
            continue
        t = ir.MemRefType(op.results[0].type)
        bits = getattr(t.element_type, "width", 64)  # index and other widthless types: at most 64 bits
        if not t.has_static_shape or math.prod(t.shape) * max(1, bits // 8) > STACK_BUFFER_MAX_BYTES:
            continue
        with ir.InsertionPoint(op), op.location:
            stack = ir.Operation.create("memref.alloca", results=[t], operands=[],
                                        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])})
        op.results[0].replace_all_uses_with(stack.results[0])
        op.erase()
        stacked += 1
    return stacked


def free_loop_buffers(func) -> int:
    """Free at the end of its loop body each buffer still allocated in one (too large for the stack).

    A ``memref.alloc`` in a loop body (a task's scratch larger than :data:`STACK_BUFFER_MAX_BYTES`: Whisper's
    attention over 1500 frames) gets a ``memref.dealloc`` before the body's terminator, so each iteration frees
    what it allocated; the cost, a malloc and a free per task, is small beside the task's work.  A buffer the
    terminator reads (yielded out of the iteration, itself or a view of it) is left for
    :func:`_hoist_allocations` to refuse.  Returns how many buffers it frees.
    """
    freed = 0
    for op in nested_ops(func):
        if op.name != "memref.alloc" or not _in_loop_body(op):
            continue
        block = op.block
        terminator = block.operations[len(block.operations) - 1]
        if any(op_id(user) == op_id(terminator) for user in _buffer_users(op.results[0])):
            continue
        with ir.InsertionPoint(terminator), op.location:
            ir.Operation.create("memref.dealloc", operands=[op.results[0]])
        freed += 1
    return freed


def _buffer_users(buffer: ir.Value) -> list[ir.Operation]:
    """The ops using ``buffer`` or a view of it (subviews, casts, reshapes), transitively."""
    found, pending = [], [buffer]
    while pending:
        for use in pending.pop().uses:
            user = use.owner
            found.append(user)
            if user.name in _VIEWS:
                pending.extend(user.results)
    return found


def hoist_stack_buffers(module: ir.Module) -> None:
    """Move each stack buffer out of the loops around it, to the start of the block that owns its lifetime.

    An ``alloca`` inside a loop would take more stack on every iteration (a row's 4 KB, 8192 rows: past the
    stack's end).  It goes to the start of the nearest enclosing ``memref.alloca_scope`` (convert-scf-to-openmp
    wraps each parallel loop body in one: one buffer per iteration of each thread), OpenMP region or function
    (plain loops: one buffer per call).
    """
    for op in [o for o in nested_ops(module) if o.name == "memref.alloca"]:
        owner, crossed_loop = op.parent, False
        while owner is not None and owner.name not in {"memref.alloca_scope", "func.func", "llvm.func"} \
                and not owner.name.startswith("omp."):
            crossed_loop = crossed_loop or owner.name in _LOOPS
            owner = owner.parent
        if owner is None or not crossed_loop:
            continue
        block = owner.regions[0].blocks[0]
        op.move_before(block.operations[0])


def _hoist_allocations(func, arena: bool = False) -> list[ArgSpec]:
    """Turn the entry's statically shaped intermediate buffers into arguments the runtime allocates once.

    Bufferization gives every intermediate a ``memref.alloc``; allocating them
    on every call costs page faults (a fresh 4 MiB buffer costs more than
    the loop that fills it) and they would need deallocation.  Each top-level
    static ``memref.alloc`` becomes a trailing function argument instead: a
    workspace array owned by the CompiledFunction and reused by every call
    (calls are serialized by its lock).  With ``arena``, the buffers are
    views of one byte array instead, buffers whose lifetimes do not overlap
    sharing its bytes (:func:`_pack_buffers`).  Allocations with dynamic
    sizes or nested in loops are refused: nothing may leak.
    """
    block = func.regions[0].blocks[0]
    for op in list(block.operations):
        if op.operation.name == "memref.dealloc":  # the runtime owns the buffers; a dealloc would end no lifetime
            op.operation.erase()
    specs: list[ArgSpec] = []
    types: list[ir.Type] = []
    if arena:
        specs, types = _pack_buffers(block)
    for op in list(block.operations):
        if op.operation.name != "memref.alloc":
            continue
        t = ir.MemRefType(op.results[0].type)
        if len(op.operands) or not t.has_static_shape:
            raise GraphfuseError([Diagnostic(
                "error", f"intermediate buffer {t} has a dynamic size; the CPU runtime needs static shapes",
                source_loc(op.location))])
        specs.append(ArgSpec(tuple(t.shape), _numpy_dtype(t.element_type, "workspace"), str(t)))
        types.append(ir.MemRefType.get(t.shape, t.element_type))
        arg = block.add_argument(types[-1], op.location)
        op.results[0].replace_all_uses_with(arg)
        op.operation.erase()
    for op in nested_ops(func):
        if op.name == "memref.alloc" and not any(use.owner.name == "memref.dealloc" for use in op.results[0].uses):
            raise GraphfuseError([Diagnostic(
                "error", f"a buffer is allocated inside a loop ({op.results[0].type}); this would leak",
                source_loc(op.location))])
    if specs:
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = [*ftype.inputs, *types]
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        if "arg_attrs" in func.attributes:
            attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})] * len(specs))
    return specs


_CONSTANTS = frozenset({"arith.constant", "ub.poison"})
#: Ops that only describe a buffer (no memory access): rebuilt where used rather than kept live across the entry.
_VIEWS = frozenset({
    "memref.cast", "memref.collapse_shape", "memref.expand_shape", "memref.reinterpret_cast", "memref.subview",
    "memref.view",
})
#: Loop nests per outlined function of the entry (see outline_chunks).  One: identical loop nests are then identical
#: functions, compiled once; on 2,000- and 5,000-op graphs LLVM took 40% less time than with 8 nests per function.
CHUNK_LOOP_NESTS = 1


def pack_arguments(func: ir.Operation) -> None:
    """Make the entry take one pointer to a table of memref descriptor addresses instead of its memref arguments.

    Lowered to LLVM, each memref argument is 3 + 2 * rank scalars, and the
    C-interface wrapper passes them all to the entry on the stack: with
    thousands of arguments (inputs, outputs, intermediates) instruction
    selection of that one call is quadratic (the DAG combiner's store
    merging compares every stack store with every other).  The entry
    instead loads each descriptor from the table the runtime fills
    (:meth:`CompiledFunction.__call__`) right before each top-level op that
    uses it, and views of the arguments (``memref.expand_shape``,
    ``subview``...) are rebuilt there too: loaded once at the top, thousands
    of descriptors would stay live across the whole entry (register
    allocation spilling them grew faster than the graph), and each top-level
    op now depends on the table alone (:func:`outline_chunks` relies on it).
    """
    from mlir.dialects import builtin, llvm

    block = func.regions[0].blocks[0]
    count = len(block.arguments)
    ptr = ir.Type.parse("!llvm.ptr")
    location = ir.Location.unknown()
    table = block.add_argument(ptr, location)
    cache: dict[tuple[int, int, int], ir.Value] = {}  # (kind, id, user) -> the value rebuilt before that user

    def rebuild(value: ir.Value, user: ir.Operation) -> ir.Value:
        """``value`` (an argument or a view of one) loaded or recomputed right before top-level op ``user``."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            if owner != block or ir.BlockArgument(value).arg_number >= count:
                return value
            number = ir.BlockArgument(value).arg_number
            key = (0, number, op_id(user))
            if key not in cache:
                with ir.InsertionPoint(user), location:
                    slot = llvm.getelementptr(ptr, table, [], [number], ptr, llvm.GEPNoWrapFlags.inbounds)
                    descriptor = llvm.load(_descriptor_type(value.type), llvm.load(ptr, slot))
                    cache[key] = builtin.unrealized_conversion_cast([value.type], [descriptor])
            return cache[key]
        view = owner.operation
        if view.name not in _VIEWS or view.block != block:
            return value
        key = (1, op_id(view), op_id(user))
        if key not in cache:
            operands = [rebuild(v, user) for v in view.operands]
            copy = view.clone(ir.InsertionPoint(user))
            for k, operand in enumerate(operands):
                copy.operands[k] = operand
            cache[key] = copy
        return cache[key].results[ir.OpResult(value).result_number]

    views = [op.operation for op in block.operations if op.operation.name in _VIEWS]
    for value in [*list(block.arguments)[:count], *(r for view in views for r in view.results)]:
        for use in list(value.uses):
            owner = use.owner.operation
            if owner.name in _VIEWS and owner.block == block:
                continue  # rebuilt with its users
            owner.operands[use.operand_number] = rebuild(value, _top_level_op(owner, block))
    for view in reversed(views):
        if not any(True for r in view.results for _ in r.uses):
            view.erase()
    for k in reversed(range(count)):
        block.erase_argument(k)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([ptr], []))
    if "arg_attrs" in func.attributes:
        del func.attributes["arg_attrs"]


def forward_loop_results(func: ir.Operation) -> None:
    """Read a bufferized row loop's result from the buffer the loop writes in place (its iter_args init).

    The loop result is that buffer; reading the buffer itself leaves no value
    live from the loop to its readers, which may be far down the entry.
    """
    block = func.regions[0].blocks[0]
    for op in block.operations:
        op = op.operation
        if op.name != "scf.for":
            continue
        for result in op.results:
            buffer = _loop_result_buffer(result)
            if buffer != result:
                result.replace_all_uses_with(buffer)


def outline_chunks(module: ir.Module, func: ir.Operation, entry: str, loop_nests: int = CHUNK_LOOP_NESTS) -> int:
    """Split the packed entry into private functions of ``loop_nests`` loop nests each; returns how many remain.

    With the kernels inlined, the entry holds every loop nest of the graph,
    and LLVM's work on one function grows faster than its size (the
    assertion-enabled LLVM of the wheels verifies the whole function after
    each loop it vectorizes): a 5,000-op chain took minutes.  Consecutive
    top-level ops holding ``loop_nests`` loop nests (ops with regions) are
    wrapped in an ``scf.execute_region`` each (values used after it become
    its results) and moved into a ``noinline`` internal function called in
    their place; after :func:`pack_arguments` such a function needs only the
    table pointer, and the slots it reads and the offsets of its views of the
    workspace become arguments (:func:`_parameterize_slots`,
    :func:`_parameterize_view_offsets`), so functions that compute the same
    thing on other buffers are identical: one of each is kept.  Constants are
    cloned into the functions (LLVM folds them; a vector constant passed as
    an argument would go through memory).  MLIR's ``transform.loop.outline``
    does the same one op at a time, in time quadratic in the ops.
    """
    block = func.regions[0].blocks[0]
    # Constants stay in the entry, first (they have no operands): the functions clone those they use.
    first = block.operations[0]
    for op in list(block.operations):
        if op.operation.name in _CONSTANTS:
            op.operation.move_before(first)
    ops = [op.operation for op in block.operations if op.operation.name not in _CONSTANTS][:-1]  # not the return
    position = {op_id(op): k for k, op in enumerate(ops)}
    chunks: list[tuple[int, int]] = []
    begin, nests = 0, 0
    for k, op in enumerate(ops):
        nests += 1 if len(op.regions) else 0
        if nests == loop_nests or (k == len(ops) - 1 and nests):
            chunks.append((begin, k + 1))
            begin, nests = k + 1, 0
    if not chunks:
        return 0
    wrappers = [_wrap_chunk(ops[begin:end], end, position, block) for begin, end in chunks]
    taken = {ir.StringAttr(op.attributes["sym_name"]).value
             for op in module.body.operations if "sym_name" in op.operation.attributes}
    table = block.arguments[len(block.arguments) - 1]
    outlined: list[tuple[ir.Operation, ir.Operation]] = []  # (function, its call)
    for k, (wrapper, captured) in enumerate(zip(wrappers, _captured_values(block, wrappers), strict=True)):
        name = f"{entry}_part_{k}"
        while name in taken:
            name += "_"
        callee, call = _outline(module, wrapper, captured, name)
        call = _parameterize_slots(callee, call, table)
        outlined.append((callee, _parameterize_view_offsets(callee, call)))
    # Identical loop nests (a repeated layer, the same fused kernel again) become one function, compiled once.
    kept: dict[bytes, ir.Attribute] = {}
    for callee, call in outlined:
        name = ir.StringAttr(callee.attributes["sym_name"]).value
        # Printed on its own (local scope): a function printed as part of the module numbers the whole module.
        text = callee.get_asm(use_local_scope=True).replace(f"@{name}(", "@f(", 1)
        key = hashlib.blake2b(text.encode(), digest_size=20).digest()
        symbol = kept.setdefault(key, ir.FlatSymbolRefAttr.get(name))
        if symbol.value != name:
            call.attributes["callee"] = symbol
            callee.erase()
    return len(kept)


def _wrap_chunk(chunk: list[ir.Operation], end: int, position: dict[int, int], block: ir.Block) -> ir.Operation:
    """Move ``chunk`` (top-level ops ending before position ``end``) into an ``scf.execute_region``; return it."""
    escaping = []
    for op in chunk:
        for result in op.results:  # the terminator, not in ``position``, is after every chunk
            if any(position.get(op_id(_top_level_op(use.owner, block)), end) >= end for use in result.uses):
                escaping.append(result)
    with ir.InsertionPoint(chunk[0]), chunk[0].location:
        wrapper = ir.Operation.create("scf.execute_region", results=[v.type for v in escaping], regions=1)
    body = wrapper.regions[0].blocks.append()
    with ir.InsertionPoint(body), chunk[0].location:
        terminator = ir.Operation.create("scf.yield", operands=escaping)
    for op in chunk:
        op.move_before(terminator)
    for value, result in zip(escaping, wrapper.results, strict=True):
        for use in list(value.uses):
            if _top_level_op(use.owner, block) != wrapper:  # the uses after the chunk
                use.owner.operation.operands[use.operand_number] = result
    return wrapper


#: A value a wrapper reads from outside it, and where: (value, [(op, operand number)]).
_Captured = tuple[ir.Value, list[tuple[ir.Operation, int]]]


def _captured_values(block: ir.Block, wrappers: list[ir.Operation]) -> list[list[_Captured]]:
    """For each wrapper, the values of ``block`` it reads (arguments, constants, other wrappers' results).

    Found from the definitions' uses: the values defined outside a wrapper
    are all in ``block``, so no walk of the wrappers' insides is needed.
    """
    index = {op_id(w): k for k, w in enumerate(wrappers)}
    captured: list[dict[int, _Captured]] = [{} for _ in wrappers]
    values = list(block.arguments)
    for op in block.operations:
        values.extend(op.operation.results)
    for number, value in enumerate(values):
        owner = value.owner
        defined_by = None if isinstance(owner, ir.Block) else index.get(op_id(owner))
        for use in value.uses:
            user = index.get(op_id(_top_level_op(use.owner, block)))
            if user is None or user == defined_by:
                continue
            captured[user].setdefault(number, (value, []))[1].append((use.owner.operation, use.operand_number))
    return [list(c.values()) for c in captured]


def _outline(module: ir.Module, wrapper: ir.Operation, captured: list[_Captured],
             name: str) -> tuple[ir.Operation, ir.Operation]:
    """Move ``wrapper`` into a new private noinline function ``name`` called in its place; (function, call)."""
    from mlir.dialects import func as func_dialect

    # The value each use reads now: an earlier wrapper's result has become its call's result meanwhile.
    captured = [(uses[0][0].operands[uses[0][1]], uses) for _, uses in captured]
    passed = [value for value, _ in captured if isinstance(value.owner, ir.Block)
              or value.owner.name not in _CONSTANTS]
    results = [r.type for r in wrapper.results]
    with ir.InsertionPoint(module.body), wrapper.location:
        callee = func_dialect.FuncOp(name, ir.FunctionType.get([v.type for v in passed], results)).operation
    callee.attributes["sym_visibility"] = ir.StringAttr.get("private")
    callee.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
    callee.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
    body = callee.regions[0].blocks.append(*[v.type for v in passed])
    with ir.InsertionPoint(wrapper), wrapper.location:
        call = ir.Operation.create("func.call", results=results, operands=passed,
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    for old, new in zip(wrapper.results, call.results, strict=True):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(body), wrapper.location:
        terminator = ir.Operation.create("func.return", operands=list(wrapper.results))
    wrapper.move_before(terminator)
    arguments = iter(body.arguments)
    for value, uses in captured:
        if isinstance(value.owner, ir.Block) or value.owner.name not in _CONSTANTS:
            inside = next(arguments)
        else:
            inside = value.owner.clone(ir.InsertionPoint(wrapper)).results[ir.OpResult(value).result_number]
        for op, number in uses:
            op.operands[number] = inside
    return callee, call


#: GEPOp's marker of a dynamic index among its constant ones.
_DYNAMIC_INDEX = -(2**31)


def _parameterize_slots(callee: ir.Operation, call: ir.Operation, table: ir.Value) -> ir.Operation:
    """Pass the table slots an outlined function reads as arguments; returns the new call.

    Two loop nests computing the same thing on different buffers then are
    the same function but for its name, and :func:`outline_chunks` keeps one.
    """
    from mlir.dialects import llvm

    entry_block = callee.regions[0].blocks[0]
    positions = [k for k, v in enumerate(call.operands) if v == table]
    if not positions:
        return call
    arg = entry_block.arguments[positions[0]]
    geps = [use.owner.operation for use in arg.uses]
    if not geps or any(gep.name != "llvm.getelementptr" or gep.block != geps[0].block for gep in geps):
        return call
    ptr = arg.type
    i64 = ir.IntegerType.get_signless(64)
    slots: dict[int, ir.Value] = {}  # table slot -> the argument holding it, in order of first use
    for op in list(geps[0].block.operations):
        op = op.operation
        if op.name != "llvm.getelementptr" or op.operands[0] != arg:
            continue
        slot = ir.DenseI32ArrayAttr(op.attributes["rawConstantIndices"])[0]
        if slot not in slots:
            slots[slot] = entry_block.add_argument(i64, op.location)
        with ir.InsertionPoint(op), op.location:
            dynamic = llvm.getelementptr(ptr, arg, [slots[slot]], [_DYNAMIC_INDEX], ptr, llvm.GEPNoWrapFlags.inbounds)
        op.results[0].replace_all_uses_with(dynamic)
        op.erase()
    return _call_with_more_arguments(callee, call, i64, list(slots))


def _parameterize_view_offsets(callee: ir.Operation, call: ir.Operation) -> ir.Operation:
    """Pass the constant byte offsets of the views an outlined function takes as arguments; returns the new call.

    The workspace arena (:func:`_pack_buffers`) puts a repeated layer's
    buffers at other offsets than the first layer's, so without this the
    layers' loop nests differ in those constants alone and each is compiled
    again.  Where one function is left with one call, LLVM propagates the
    constants back into it.
    """
    index = ir.IndexType.get()
    entry_block = callee.regions[0].blocks[0]
    offsets: dict[int, ir.Value] = {}  # byte offset -> the argument holding it, in order of first use

    def parameterize(op: ir.Operation) -> ir.WalkResult:
        if op.name == "memref.view":
            shift = op.operands[1].owner
            if isinstance(shift, ir.Operation | ir.OpView) and shift.name == "arith.constant":
                offset = ir.IntegerAttr(shift.attributes["value"]).value
                if offset not in offsets:
                    offsets[offset] = entry_block.add_argument(index, op.location)
                op.operands[1] = offsets[offset]
        return ir.WalkResult.ADVANCE

    callee.walk(parameterize, ir.WalkOrder.PRE_ORDER)
    if not offsets:
        return call
    for op in list(entry_block.operations):  # the cloned constants the views took: unused ones would tell twins apart
        if op.operation.name == "arith.constant" and not any(True for _ in op.results[0].uses):
            op.operation.erase()
    return _call_with_more_arguments(callee, call, index, list(offsets))


def _call_with_more_arguments(callee: ir.Operation, call: ir.Operation, type_: ir.Type,
                              values: list[int]) -> ir.Operation:
    """Retype ``callee`` after arguments were added to its entry block; replace ``call`` by one passing
    ``values`` (constants of ``type_``) for them; returns the new call."""
    from mlir.dialects import arith

    results = [r.type for r in call.results]
    entry_block = callee.regions[0].blocks[0]
    callee.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in entry_block.arguments], results))
    with ir.InsertionPoint(call), call.location:
        numbers = [arith.constant(type_, value) for value in values]
        direct = ir.Operation.create("func.call", results=results, operands=[*call.operands, *numbers],
                                     attributes={"callee": call.attributes["callee"]})
    for old, new in zip(call.results, direct.results, strict=True):
        old.replace_all_uses_with(new)
    call.erase()
    return direct


#: Byte alignment of the buffers in the workspace arena (a cache line).
_ARENA_ALIGNMENT = 64


#: Terminators that hand a buffer to their parent op's results (an ``scf.if`` takes no buffer operand).
_REGION_EXITS = frozenset({"scf.yield", "scf.condition"})


def _pack_buffers(block: ir.Block) -> tuple[list[ArgSpec], list[ir.Type]]:
    """Make the identity-layout static ``memref.alloc`` ops of ``block`` views of one byte arena argument.

    A buffer is live from the first to the last top-level op that uses it
    or a value derived from it (a view, a loop or ``scf.if`` result; bufferization puts
    the allocations first); a buffer first used after another's last use
    takes its bytes (best fit among the free blocks).  A graph of thousands of intermediates needs a few of them at a
    time, and each call passes one descriptor for all of them.  Returns the
    arena's spec and type (none when there is nothing to pack).
    """
    from mlir.dialects import arith, memref

    ops = [op.operation for op in block.operations]
    position = {op_id(op): k for k, op in enumerate(ops)}
    buffers = []  # (alloc, first, last, bytes)
    for k, op in enumerate(ops):
        if op.name != "memref.alloc" or len(op.operands):
            continue
        t = ir.MemRefType(op.results[0].type)
        identity = isinstance(t.layout, ir.AffineMapAttr) and (
            ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(t.rank))
        if not t.has_static_shape or not identity or t.memory_space is not None:
            continue
        first, last, pending, seen = len(ops), k, [op.results[0]], set()
        while pending:
            for use in pending.pop().uses:
                owner = use.owner.operation
                user = position[op_id(_top_level_op(owner, block))]
                first, last = min(first, user), max(last, user)
                if op_id(owner) not in seen:
                    seen.add(op_id(owner))
                    pending.extend(r for r in owner.results if isinstance(r.type, ir.MemRefType))
                    if owner.name in _REGION_EXITS:  # yielded out of a region: the parent's results are the buffer
                        pending.extend(r for r in owner.parent.results if isinstance(r.type, ir.MemRefType))
        size = math.prod(t.shape) * _numpy_dtype(t.element_type, "workspace").itemsize
        buffers.append((op, min(first, last), last, -(-max(size, 1) // _ARENA_ALIGNMENT) * _ARENA_ALIGNMENT))
    if not buffers:
        return [], []
    buffers.sort(key=lambda buffer: buffer[1])
    free: list[tuple[int, int]] = []  # (bytes, offset), sorted
    live: list[tuple[int, int, int]] = []  # heap of (last use, offset, bytes)
    offsets, end = [], 0
    for _, first, last, size in buffers:
        while live and live[0][0] < first:
            _, offset, freed = heapq.heappop(live)
            bisect.insort(free, (freed, offset))
        k = bisect.bisect_left(free, (size, -1))
        if k < len(free):
            found, offset = free.pop(k)
            if found > size:
                bisect.insort(free, (found - size, offset + size))
        else:
            offset, end = end, end + size
        heapq.heappush(live, (last, offset, size))
        offsets.append(offset)
    arena_type = ir.MemRefType.get([end], ir.IntegerType.get_signless(8))
    arena = block.add_argument(arena_type, ir.Location.unknown())
    index = ir.IndexType.get()
    for (alloc, *_), offset in zip(buffers, offsets, strict=True):
        with ir.InsertionPoint(alloc), alloc.location:
            view = memref.ViewOp(alloc.results[0].type, arena, arith.constant(index, offset), []).result
        alloc.results[0].replace_all_uses_with(view)
        alloc.erase()
    return [ArgSpec((end,), np.dtype(np.uint8), str(arena_type))], [arena_type]


def _descriptor_type(t: ir.Type) -> ir.Type:
    """The LLVM struct finalize-memref-to-llvm gives a ranked memref (the layout of :func:`_descriptor_class`)."""
    rank = ir.MemRefType(t).rank
    arrays = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arrays})>")


def _top_level_op(op: ir.Operation, block: ir.Block) -> ir.Operation:
    """The op of ``block`` that is or holds ``op``."""
    op = op.operation
    while op.block != block:
        op = op.parent.operation
    return op


def _drop_results_in_outputs(func, n_inputs: int, n_outputs: int) -> None:
    """Drop returned buffers that are output arguments (through ``scf.for`` results).

    ``drop-equivalent-buffer-results`` does not see through a tiled loop whose
    iter_args start from the output buffer; the loop result is that buffer.
    It may already have dropped other results (an argument copied into its
    output buffer), so a returned value's position says nothing about its
    output: what counts is that it is one of the output arguments, each of
    which holds its result after the ``materialize_in_destination`` into it.
    """
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    if ret.operation.name != "func.return" or not len(ret.operands):
        return
    keep = []
    for value in ret.operands:
        buffer = _loop_result_buffer(value)
        in_place = isinstance(buffer.owner, ir.Block) and buffer.owner == block and (
            n_inputs <= ir.BlockArgument(buffer).arg_number < n_inputs + n_outputs
        )
        if not in_place:
            keep.append(value)
    if len(keep) == len(ret.operands):
        return
    with ret.location, ir.InsertionPoint(ret):
        ir.Operation.create("func.return", operands=keep)
    ret.operation.erase()
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs), [v.type for v in keep]))


def _loop_result_buffer(value: ir.Value) -> ir.Value:
    """The buffer a bufferized ``scf.for`` result is: its iter_args init, where the body yields that buffer back.

    Followed through nested loops (a loop nest yields its inner loop's result); any other value is returned as it is.
    """
    while not isinstance(value.owner, ir.Block) and value.owner.name == "scf.for":
        loop = value.owner.operation
        index = ir.OpResult(value).result_number
        body = loop.regions[0].blocks[0]
        yielded = body.operations[len(body.operations) - 1].operands[index]
        if _loop_result_buffer(yielded) != body.arguments[1 + index]:  # induction variable, then the iter_args
            break
        value = loop.operands[3 + index]
    return value


def _erase_self_copies(func) -> None:
    """Erase ``memref.copy %a, %a`` (a result, or a tiled loop's row, already computed in place).

    Each would be a call into the runtime library's copy routine, once per row inside a tiled loop.
    Bufferization writes a row loop's result back through a second, identical ``memref.subview`` of
    the same buffer; that copy is a self copy too, and so are the copy of a loop's result (the buffer
    the loop writes in place) into that buffer (a parallel task's block of a tiled matmul) and the copy
    of a buffer viewed with another shape and back (:func:`_unreshaped`).
    """
    for op in nested_ops(func):
        if op.name == "memref.copy" and _same_view(op.operands[0], op.operands[1]):
            op.erase()


def _contiguous(value: ir.Value) -> bool:
    """Whether a memref is static and row-major without gaps (a copy of it is one ``memcpy``)."""
    t = ir.MemRefType(value.type)
    if not t.has_static_shape:
        return False
    strides, _ = t.get_strides_and_offset()
    expected = 1
    for size, stride in zip(reversed(t.shape), reversed(strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _strided_copies_as_loops(module: ir.Module) -> None:
    """Rewrite each ``memref.copy`` between views that are not contiguous (a slice, a part of a concat) as
    ``linalg.copy``, which becomes loops LLVM vectorizes.

    Lowered as it is, such a copy calls the runtime library's generic ``memrefCopy``, which copies one
    element at a time through its index arithmetic (a [1, 8, 256, 32] half of [1, 8, 256, 64], the
    slices and concat of a rotary embedding: about 0.3 ms each).
    """
    copies = [op for op in nested_ops(module) if op.name == "memref.copy"]
    for op in copies:
        source, target = op.operands
        if _contiguous(source) and _contiguous(target):
            continue
        with op.location, ir.InsertionPoint(op):
            linalg.copy(source, outs=[target])
        op.erase()


def _compute_results_in_outputs(func, outputs: list[ir.Value]) -> None:
    """Let a result computed in a buffer of its own and then copied whole into its output be computed there.

    Empty-tensor elimination does not see through reshapes: a result viewed with another shape while it
    is computed (a matmul's C as [M, N / panel, panel]) gets a buffer of its own and one more pass over
    memory to copy it out.  When the copy is the output's only use and its source is, through reshapes
    and the loops writing it in place, an allocation of the output's type (an identity layout), that
    allocation is the output.
    """
    block = func.regions[0].blocks[0]
    for op in list(block.operations):
        op = op.operation
        if op.name != "memref.copy" or op.operands[1] not in outputs:
            continue
        output = op.operands[1]
        if sum(1 for _ in output.uses) != 1:
            continue
        source = _loop_result_buffer(op.operands[0])
        while not isinstance(source.owner, ir.Block) and source.owner.name in ("memref.expand_shape",
                                                                              "memref.collapse_shape"):
            source = _loop_result_buffer(source.owner.operands[0])
        if isinstance(source.owner, ir.Block) or source.owner.name != "memref.alloc" or source.type != output.type:
            continue
        if source.owner.operation.parent != func.operation:  # an allocation of the entry's body, used once
            continue
        op.erase()
        allocation = source.owner.operation
        source.replace_all_uses_with(output)
        allocation.erase()


def _unreshaped(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is, seen through the loops writing it in place and through an expand_shape
    collapsed back to the type it expanded (a matmul's C viewed as panels while it is computed)."""
    while True:
        value = _loop_result_buffer(value)
        if isinstance(value.owner, ir.Block) or value.owner.name != "memref.collapse_shape":
            return value
        expanded = _loop_result_buffer(value.owner.operands[0])
        if isinstance(expanded.owner, ir.Block) or expanded.owner.name != "memref.expand_shape":
            return value
        if expanded.owner.operands[0].type != value.type:
            return value
        value = expanded.owner.operands[0]


def _same_view(a: ir.Value, b: ir.Value) -> bool:
    """Whether ``a`` and ``b`` are one buffer: the same value, or identical subviews of one buffer."""
    a, b = _unreshaped(a), _unreshaped(b)
    if a == b:
        return True
    if isinstance(a.owner, ir.Block) or isinstance(b.owner, ir.Block):
        return False
    x, y = a.owner.operation, b.owner.operation
    if x.name != "memref.subview" or y.name != "memref.subview" or a.type != b.type:
        return False
    if list(x.operands) != list(y.operands):
        return False
    return all(x.attributes[name] == y.attributes[name]
               for name in ("static_offsets", "static_sizes", "static_strides"))
