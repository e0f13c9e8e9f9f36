"""store-booleans-as-bytes: boolean tensors held as bytes, so that no ``memref<...xi1>`` is ever made.

LLVM's memref lowering aborts on stores of ``memref<...xi1>``, and numpy keeps booleans in bytes anyway: every
boolean tensor is retyped as ``tensor<...xi8>`` holding 0 or 1 before bufferization.  Values stay ``i1`` inside
linalg bodies.  The CPU pipeline runs it on the whole module; the emulated NPU's lowering runs it before
bufferizing its kernels, so a mask crosses kernels and GM as bytes, as it does on an Ascend device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import nested_ops, ops_named
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["StoreBooleansAsBytes", "arith_constant", "nonzero_bytes", "store_booleans_as_bytes"]


@dataclass(frozen=True)
class StoreBooleansAsBytes(GraphPass):
    name: ClassVar[str] = "store-booleans-as-bytes"
    summary: ClassVar[str] = "Retype boolean tensors (i1) as byte tensors (i8 holding 0 or 1) before bufferization"

    def run(self, module: ir.Module, context: PassContext) -> None:
        if ops_named(module, "graph."):
            context.fail("store-booleans-as-bytes: lower graph ops to linalg first (graph-to-linalg)")
        try:
            with module.context, ir.Location.unknown():
                store_booleans_as_bytes(module)
        except GraphfuseError as error:
            context.fail(f"store-booleans-as-bytes: {error.diagnostics[0].message}")


def nonzero_bytes(value: ir.Value) -> ir.Value:
    """The booleans (i1, or a vector of them) of bytes ``value``: true where non-zero, as numpy reads a bool array
    (its bytes may hold other values than 0 and 1: a view of uint8 data).  Truncation would read the low bit."""
    from mlir.dialects import arith

    zero = ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 0)
    if isinstance(value.type, ir.VectorType):
        zero = ir.DenseElementsAttr.get_splat(value.type, zero)
    return arith.cmpi(arith.CmpIPredicate.ne, value, arith.constant(value.type, zero))


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
