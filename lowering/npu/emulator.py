"""The NPU emulator: run NPU-lowered kernels on the CPU, counting GM bytes per kernel; the cost model.

Input: the module ``npu-buffer-assign`` produced (kernels with staging
buffers in ``#npu.mem`` spaces and explicit ``npu.dma`` transfers; the entry
calls them in destination-passing style).  Every ``npu.dma`` is tagged with
its kernel and becomes a ``memref.copy`` followed by a counter increment of
its byte count, GM reads and GM writes apart; a copy between GM buffers
outside any kernel counts as both.  Kernels are then inlined, memory spaces
stripped, and the module is JIT-compiled with the CPU runtime's lowering
(same loops, same numerics as the CPU path).  The counters are a workspace
buffer the call zeroes first, so the bytes are counted at run time, for the
transfers that actually execute (tile loops included).

Cost model, per kernel: time = max(GM bytes / GM bandwidth, vector ops /
vector throughput, cube flops / cube throughput): transfers, vector work and
cube work overlap perfectly (double buffering), and the slowest bounds the
kernel.  Vector ops are the arithmetic ops of each loop body times its
iteration count (copies on chip count one per element); cube flops are
2 x multiply-accumulates of matmuls and convolutions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import GraphfuseError, from_mlir_error
from graphfuse.dialect.interpreter import entry_function, functions
from graphfuse.dialect.matching import as_operation, nested_ops
from graphfuse.lowering.codegen.cpu.hoist_allocations import hoist_allocations
from graphfuse.lowering.codegen.cpu.pack_arguments import pack_arguments
from graphfuse.lowering.codegen.cpu.pipeline import LOOPS, TO_LLVM
from graphfuse.lowering.codegen.cpu.specs import ArgSpec, arg_spec, numpy_dtype
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.npu.dialect import is_gm, with_space
from graphfuse.lowering.npu.kernel_buffers import PLACED_SPACES, is_cube_op, loop_access
from graphfuse.lowering.runtime import C_RUNNER_UTILS, CompiledFunction
from graphfuse.lowering.streaming import static_bounds

__all__ = ["OUTSIDE_KERNELS", "EmulatedFunction", "KernelInfo", "emulate", "kernel_infos"]

#: The report row of GM-to-GM copies made outside any kernel.
OUTSIDE_KERNELS = "(outside kernels)"
_KERNEL_TAG = "npu.kernel"


@dataclass(frozen=True)
class KernelInfo:
    """What the cost model knows statically about one kernel."""

    name: str
    kind: str
    tiles: int
    peaks: dict[str, int]
    vector_ops: int
    cube_flops: int
    #: a matmul kernel's (batch, M, N, K, element bytes), for the GM traffic lower bound
    matmul: tuple[int, int, int, int, int] | None = None


def _loop_ranges(op: ir.Operation) -> list[int] | None:
    access = loop_access(op)
    if access is None or not access[0]:
        return None
    operands, iterators = access
    ranges: list[int | None] = [None] * len(iterators)
    for value, dims, _ in operands:
        shape = ir.MemRefType(value.type).shape
        for size, loops in zip(shape, dims, strict=False):
            if len(loops) == 1:
                (d,) = loops
                if ranges[d] is None:
                    ranges[d] = size
    if any(r is None for r in ranges):
        return None
    return ranges  # type: ignore[return-value]


def _op_work(op: ir.Operation) -> tuple[int, int]:
    """(vector ops, cube flops) of one execution of ``op``."""
    if is_cube_op(op):
        ranges = _loop_ranges(op)
        return 0, 2 * math.prod(ranges) if ranges else 0
    if op.name == "memref.copy" or op.name.startswith("linalg."):
        ranges = _loop_ranges(op)
        points = math.prod(ranges) if ranges else 0
        body = 1
        if op.name == "linalg.generic" and len(op.regions):
            body = max(1, sum(1 for o in op.regions[0].blocks[0].operations if o.operation.name != "linalg.yield"))
        return points * body, 0
    return 0, 0


def _trips(op: ir.Operation) -> int:
    """How often ``op`` runs per kernel call: the product of its enclosing scf.for loops' trip counts."""
    count = 1
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        bounds = static_bounds(parent) if parent.name == "scf.for" else None
        if bounds is not None and bounds[3] > 0:
            _, lower, upper, step = bounds
            count *= max(0, -(-(upper - lower) // step))
        parent = parent.parent
    return count


def kernel_infos(module: ir.Module) -> list[KernelInfo]:
    """Static facts of each assigned kernel, in the order the module defines them."""
    infos = []
    for name, func_op in functions(module).items():
        if not is_kernel(func_op) or not func_op.regions[0].blocks:
            continue
        tiles = ir.IntegerAttr(func_op.attributes["npu.tiles"]).value if "npu.tiles" in func_op.attributes else 1
        vector = cube = 0
        for op in nested_ops(func_op):
            if op.name in ("npu.dma",) or op.parent.name == "linalg.generic":
                continue
            v, c = _op_work(op)
            repeat = _trips(op)
            vector += v * repeat
            cube += c * repeat
        peaks = {s: ir.IntegerAttr(func_op.attributes[f"npu.{s}_bytes"]).value
                 if f"npu.{s}_bytes" in func_op.attributes else 0 for s in PLACED_SPACES}
        kind = ir.StringAttr(func_op.attributes["graph.fusion_kind"]).value \
            if "graph.fusion_kind" in func_op.attributes else ""
        matmul = tuple(ir.DenseI64ArrayAttr(func_op.attributes["npu.matmul"])) \
            if "npu.matmul" in func_op.attributes else None
        infos.append(KernelInfo(name, kind, tiles, peaks, vector, cube, matmul))
    return infos


class EmulatedFunction:
    """The JIT-compiled emulation: call it like a CompiledFunction; ``gm_bytes`` holds the last call's counts."""

    def __init__(self, function: CompiledFunction, rows: list[str]):
        self.function = function
        self.rows = rows
        #: row name -> (GM bytes read, GM bytes written) of the last call
        self.gm_bytes: dict[str, tuple[int, int]] = {}

    @property
    def inputs(self) -> list[ArgSpec]:
        return self.function.inputs

    @property
    def outputs(self) -> list[ArgSpec]:
        return self.function.outputs

    def gm_bytes_by_kernel(self) -> dict[str, tuple[int, int]]:
        """The last call's (read, written) GM bytes of each kernel (without the outside-kernels row)."""
        return {row: counts for row, counts in self.gm_bytes.items() if row != OUTSIDE_KERNELS}

    def __call__(self, *arrays: np.ndarray, out: list[np.ndarray] | None = None) -> list[np.ndarray]:
        counters = self.function.workspace[0]
        counters[...] = 0
        results = self.function(*arrays, out=out)
        self.gm_bytes = {row: (int(counters[k, 0]), int(counters[k, 1])) for k, row in enumerate(self.rows)}
        return results


def _i64(value: int) -> ir.Value:
    from mlir.dialects import arith

    return arith.ConstantOp(ir.IntegerType.get_signless(64), value).result


def _index(value: int) -> ir.Value:
    from mlir.dialects import arith

    return arith.ConstantOp(ir.IndexType.get(), value).result


def _bytes_of(t: ir.Type) -> int:
    m = ir.MemRefType(t)
    return math.prod(m.shape) * numpy_dtype(m.element_type, "transfer").itemsize


def _transfer_bytes(value: ir.Value) -> int | ir.Value:
    """The bytes a transfer of ``value`` moves: a constant, or computed from its dynamic sizes (the clipped
    rows of a convolution's window at the border)."""
    from mlir.dialects import arith, memref

    m = ir.MemRefType(value.type)
    if m.has_static_shape:
        return _bytes_of(m)
    total = _i64(numpy_dtype(m.element_type, "transfer").itemsize)
    for d, size in enumerate(m.shape):
        extent = _i64(size) if size != ir.ShapedType.get_dynamic_size() else \
            arith.index_cast(ir.IntegerType.get_signless(64), memref.dim(value, _index(d)))
        total = arith.muli(total, extent)
    return total


def _count(counters: ir.Value, row: int, column: int, amount: int | ir.Value) -> None:
    from mlir.dialects import arith, memref

    indices = [_index(row), _index(column)]
    old = memref.LoadOp(counters, indices).result
    memref.StoreOp(arith.addi(old, _i64(amount) if isinstance(amount, int) else amount), counters, indices)


def emulate(text: str, entry: str | None, n_outputs: int, opt_level: int = 0,
            booleans: Sequence[int] = ()) -> EmulatedFunction:
    """JIT-compile the NPU module ``text`` (``n_outputs`` trailing output arguments) with GM-byte counters.

    ``booleans``: the positions (inputs, then outputs) of the source's boolean arguments, which the module
    holds as bytes: they are passed and returned as numpy bools (one byte each)."""
    context = make_context()
    with context, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as error:
            raise GraphfuseError(from_mlir_error(error)) from None
        entry_op = entry_function(module, entry)
        name = ir.StringAttr(entry_op.attributes["sym_name"]).value
        defined = [n for n, f in functions(module).items() if is_kernel(f) and f.regions[0].blocks]
        called = [ir.FlatSymbolRefAttr(op.attributes["callee"]).value for op in nested_ops(entry_op)
                  if op.name == "func.call"]
        # Report rows in execution order (first call), kernels never called last.
        kernels = [n for n in dict.fromkeys(called) if n in defined] + [n for n in defined if n not in called]
        rows = [*kernels, OUTSIDE_KERNELS]
        # npu.dma (an IRDL op, not inlinable) becomes a tagged memref.copy: its kernel and its GM directions.
        i64 = ir.IntegerType.get_signless(64)
        for k, kernel_name in enumerate(kernels):
            for op in nested_ops(functions(module)[kernel_name]):
                if op.name == "npu.dma":
                    source, dest = op.operands
                    with ir.InsertionPoint(op), op.location:
                        copy = ir.Operation.create("memref.copy", operands=[source, dest])
                    copy.attributes[_KERNEL_TAG] = ir.IntegerAttr.get(i64, k)
                    op.erase()
        for op in nested_ops(entry_op):
            if op.name == "memref.copy":
                op.attributes[_KERNEL_TAG] = ir.IntegerAttr.get(i64, len(kernels))
        _run("builtin.module(inline,symbol-dce)", module)
        entry_op = functions(module)[name]
        block = entry_op.regions[0].blocks[0]
        with ir.InsertionPoint(block.operations[0]):
            counters = ir.Operation.create(
                "memref.alloc", results=[ir.MemRefType.get([len(rows), 2], ir.IntegerType.get_signless(64))],
                operands=[], attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).results[0]
        for op in nested_ops(entry_op):
            if op.name != "memref.copy" or _KERNEL_TAG not in op.attributes:
                continue
            source, dest = op.operands
            row = ir.IntegerAttr(op.attributes[_KERNEL_TAG]).value
            with ir.InsertionPoint(op):
                size = _transfer_bytes(source)
                if is_gm(source.type):
                    _count(counters, row, 0, size)
                if is_gm(dest.type):
                    _count(counters, row, 1, size)
        _strip_memory_spaces(entry_op)
        if any(o.name == "func.call" for o in nested_ops(entry_op)):
            raise GraphfuseError("NPU emulator: kernels could not be inlined into the entry")
        ftype = ir.FunctionType(ir.TypeAttr(entry_op.attributes["function_type"]).value)
        args = list(ftype.inputs)
        if ftype.results:
            raise GraphfuseError(f"@{name}: the NPU module's entry still returns buffers ({ftype})")
        specs = [arg_spec(ir.RankedTensorType.get(ir.MemRefType(t).shape, ir.MemRefType(t).element_type),
                           f"@{name} argument {k}") for k, t in enumerate(args)]
        for k in booleans:
            specs[k] = replace(specs[k], dtype=np.dtype(np.bool_), type_str=specs[k].type_str.replace("xi8>", "xi1>"))
        inputs, outputs = specs[: len(specs) - n_outputs], specs[len(specs) - n_outputs:]
        for op in nested_ops(module):
            for result in op.results:
                if isinstance(result.type, ir.MemRefType) and str(result.type.element_type) == "i1":
                    raise GraphfuseError(f"NPU emulator: boolean (i1) buffers are not supported ({result.type})")
        workspace = hoist_allocations(entry_op)
        entry_op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        pack_arguments(entry_op)
        _run(f"builtin.module({LOOPS},{TO_LLVM})", module)
        llvm_ir = str(module)
        try:
            engine = ExecutionEngine(module, opt_level=opt_level, shared_libs=[C_RUNNER_UTILS])
        except Exception as error:
            raise GraphfuseError(f"JIT compilation of the NPU emulation of @{name} failed: {error}") from None
    function = CompiledFunction(name, inputs, outputs, context, module, engine, llvm_ir, workspace)
    return EmulatedFunction(function, rows)


def _strip_memory_spaces(root: ir.Operation) -> None:
    """Every memref in ``root`` in the default memory space (the CPU has one memory)."""
    for op in nested_ops(root):
        for result in op.results:
            if isinstance(result.type, ir.MemRefType) and ir.MemRefType(result.type).memory_space is not None:
                result.set_type(with_space(result.type, None))
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    if isinstance(arg.type, ir.MemRefType) and ir.MemRefType(arg.type).memory_space is not None:
                        arg.set_type(with_space(arg.type, None))
    as_operation(root)


def _run(pipeline: str, module: ir.Module) -> None:
    from mlir.passmanager import PassManager

    try:
        PassManager.parse(pipeline).run(module.operation)
    except ir.MLIRError as error:
        raise GraphfuseError(from_mlir_error(error)) from None
