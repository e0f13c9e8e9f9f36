"""Dynamic dimensions checked before compiled code runs: the graph's shape inference on a call's actual sizes.

The compiled code trusts the sizes it is given: two operands of an
elementwise op with different sizes, or an ``out=`` buffer of another size
than the result, would be read or written out of bounds.  The graph's shape
inference (the op catalog's), run on the actual input shapes, says what is
valid and how large each result is.  The JIT's :class:`~graphfuse.Executable`
runs it on the graph it compiled; a library from graphfuse-compile carries
the graph for it (:func:`shape_graph_text`, constants reduced to their types).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op, read_attributes
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import nested_ops
from graphfuse.dialect.parsing import relocate
from graphfuse.dialect.shape_utils import sized_at_call
from graphfuse.dialect.types import TensorSig, sig_from_type

__all__ = ["DynamicShapes", "infer_result_shapes", "shape_graph_text"]

#: Constants up to this many elements keep their values in a shape graph (shape-like operands); larger ones
#: become splats of their type (weights: shape inference reads only their types).
KEPT_CONSTANT_ELEMENTS = 64
#: Input shape combinations whose inferred result shapes a checker remembers.
CACHED_SHAPES = 256


def infer_result_shapes(module: ir.Module, entry: str, input_shapes: list[tuple[int, ...]]) -> list[tuple]:
    """The result shapes of ``@entry`` for inputs of these shapes (None where they cannot be told).

    Runs the op catalog's shape inference with the actual sizes in place of
    the dynamic dimensions; an inconsistency (operands that do not broadcast)
    is an error naming the op.
    """
    func = functions(module)[entry]
    block = func.regions[0].blocks[0]
    sigs: dict = {}
    for arg, shape in zip(block.arguments, input_shapes, strict=True):
        declared = sig_from_type(arg.type)
        sigs[arg] = declared.with_shape(tuple(shape)) if declared is not None else None
    for op in block.operations:
        op = op.operation
        declared = [sig_from_type(r.type) for r in op.results]
        if op.name == "func.return":
            return [None if sigs.get(v) is None else sigs[v].shape for v in op.operands]
        spec = lookup_op(op.name)
        inputs = [sigs.get(v) for v in op.operands]
        inferred = declared
        known = all(sig is not None for sig in inputs)
        if op.name in ("graph.reshape", "graph.broadcast_to") and known \
                and all(None not in sig.shape for sig in inputs):
            operands = [sig_from_type(v.type).shape for v in op.operands]
            declared = [sized_at_call(op.name, operands, [sig.shape for sig in inputs], declared[0])]
            inferred = declared
        if spec is not None and known:
            try:
                inferred = infer_results(spec, inputs, read_attributes(spec, op), declared)
            except VerifyError as error:
                shapes = ", ".join(str(tuple(s)) for s in input_shapes)
                raise GraphfuseError([Diagnostic(
                    "error", f"@{entry} called with inputs of shapes {shapes}: '{op.name}' {error.message}",
                    source_loc(op.location),
                )]) from None
        if op.name == "graph.reshape" and known and inferred and inferred[0] is not None:
            inferred = [_sized_reshape(inputs[0], inferred[0])]
        if spec is not None and known and spec.group.endswith("elementwise") and inferred and inferred[0] is not None:
            _check_no_dynamic_broadcast(op, entry, inputs, op.operands, inferred[0].shape)
        if op.name == "graph.flash_attention" and known and len(inputs) == 4 and inferred[0] is not None:
            # the mask is read as the scores' shape along its dynamic dims (the tiled attention reads it by row)
            scores = (*inferred[0].shape[:-1], inputs[1].shape[-2])
            _check_no_dynamic_broadcast(op, entry, inputs[3:], op.operands[3:], scores, first=3)
        if op.name == "func.call" and known:  # a kernel, or a function of the module: its results' shapes
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            shapes = infer_result_shapes(module, callee, [sig.shape for sig in inputs])
            inferred = [None if d is None or shape is None else d.with_shape(shape)
                        for d, shape in zip(declared, shapes, strict=True)]
        for result, sig in zip(op.results, inferred, strict=False):
            sigs[result] = sig
    results = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results
    return [None for _ in results]


def _sized_reshape(source: TensorSig, result: TensorSig) -> TensorSig:
    """A reshape's result with its one dynamic dim sized by the operand's element count, when the call's sizes
    make that count known (the catalog keeps the declared type)."""
    count = source.num_elements
    if count is None or None not in result.shape:
        return result
    known = math.prod(d for d in result.shape if d is not None)
    return result if known == 0 else result.with_shape(tuple(count // known if d is None else d for d in result.shape))


def _check_no_dynamic_broadcast(op: ir.Operation, entry: str, inputs: list, operands, result_shape: tuple,
                                first: int = 0) -> None:
    """An elementwise operand's dynamic dimension may not broadcast (be 1 where the result is larger).

    numpy allows it, but the lowering gives a dynamic dimension the size of
    the result's: the compiled code would read the operand out of bounds.
    """
    for k, (sig, operand) in enumerate(zip(inputs, operands, strict=True), start=first):
        declared = sig_from_type(operand.type)
        offset = len(result_shape) - sig.rank
        for axis, (size, written) in enumerate(zip(sig.shape, declared.shape, strict=True)):
            wanted = result_shape[offset + axis]
            if written is None and size is not None and wanted is not None and size != wanted:
                raise GraphfuseError([Diagnostic(
                    "error",
                    f"@{entry}: operand #{k} of '{op.name}' ({declared}) has size {size} in its dynamic dimension "
                    f"{axis}, broadcast to {wanted}: the compiled code does not broadcast dynamic dimensions "
                    "(give the dimension a static size 1 to broadcast it)",
                    source_loc(op.location),
                )])


class DynamicShapes:
    """The dynamic-dimension checks of one entry: ``check`` before each call, ``result_buffers`` for results
    whose size only the call's inputs tell."""

    def __init__(self, module: ir.Module, entry: str, filename: str):
        self.module = module
        self.entry = entry
        #: the name diagnostics give the graph (its locations name the parser's buffer)
        self.filename = filename
        self._shapes: dict[tuple, list] = {}

    def check(self, arrays: Sequence, out) -> list:
        """The result shapes for these inputs (None where not inferable), or an error naming the op whose
        operands disagree or the ``out=`` buffer of the wrong shape."""
        key = tuple(tuple(np.shape(a)) for a in arrays)
        expected = self._shapes.get(key)
        if expected is None:
            try:
                expected = infer_result_shapes(self.module, self.entry, [np.shape(a) for a in arrays])
            except GraphfuseError as error:
                raise GraphfuseError([relocate(d, self.filename) for d in error.diagnostics]) from None
            if len(self._shapes) >= CACHED_SHAPES:
                self._shapes.clear()
            self._shapes[key] = expected
        if out is None:
            return expected
        buffers = [out] if isinstance(out, np.ndarray) else list(out)
        for k, (want, buffer) in enumerate(zip(expected, buffers, strict=False)):
            got = tuple(np.shape(buffer))
            if want is None:
                continue  # not inferable here; the runtime checks what it can
            if len(want) != len(got) or any(w is not None and w != g for w, g in zip(want, got, strict=False)):
                shape = "(" + ", ".join("?" if d is None else str(d) for d in want) + ")"
                raise GraphfuseError(
                    f"@{self.entry}: out[{k}] has shape {got}, but for inputs of shapes "
                    f"{', '.join(str(s) for s in key)} result {k} has shape {shape}"
                )
        return expected

    def result_shapes(self, shapes: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """The result shapes for inputs of ``shapes``, each result's size told by them (else the error of
        :meth:`result_buffers`); cached per shapes."""
        key = tuple(shapes)
        expected = self._shapes.get(key)
        if expected is None:
            expected = self.check([_Shaped(shape) for shape in shapes], None)
        if any(shape is None or None in shape for shape in expected):
            k = next(k for k, shape in enumerate(expected) if shape is None or None in shape)
            ret = functions(self.module)[self.entry].regions[0].blocks[0].operations[-1]
            raise GraphfuseError([relocate(Diagnostic(
                "error", f"@{self.entry}: the inputs' shapes do not tell the size of result {k}",
                source_loc(ret.location)), self.filename)])
        return expected

    def out_buffers(self, arrays: Sequence, out, specs: Sequence, alignment: int, allocate):
        """What a call writes its results into, after :meth:`check`: ``out`` when given, else buffers sized by the
        inferred shapes when a result (``specs``) has a dynamic dimension, else None (the caller allocates)."""
        expected = self.check(arrays, out)
        if out is not None or not any(None in spec.shape for spec in specs):
            return out
        return self.result_buffers(expected, specs, alignment, allocate)

    def result_buffers(self, expected: list, specs: Sequence, alignment: int, allocate) -> list[np.ndarray]:
        """Buffers for every result (``specs``: their ArgSpecs), sized by the shapes :meth:`check` inferred;
        ``allocate(shape, dtype, alignment)`` makes one."""
        buffers = []
        for k, (spec, shape) in enumerate(zip(specs, expected, strict=True)):
            if shape is None or None in shape:
                ret = functions(self.module)[self.entry].regions[0].blocks[0].operations[-1]
                raise GraphfuseError([relocate(Diagnostic(
                    "error", f"@{self.entry}: the inputs' shapes do not tell the size of result {k} "
                    f"({spec.type_str}); pass out= buffers", source_loc(ret.location)), self.filename)])
            buffers.append(allocate(tuple(shape), spec.dtype, alignment))
        return buffers


class _Shaped:
    """Stands for an input of a shape (:meth:`DynamicShapes.check` reads only its ``shape``)."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape


def shape_graph_text(module: ir.Module) -> str:
    """``module`` as text with locations, its large constants made splats of their types: all shape inference
    needs, a few kilobytes for a model whose weights take megabytes."""
    copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True), module.context)
    for op in nested_ops(copy):
        if op.name != "arith.constant" or "value" not in op.attributes:
            continue
        value = op.attributes["value"]
        if not isinstance(value, ir.DenseElementsAttr):
            continue
        dense = ir.DenseElementsAttr(value)
        if dense.is_splat or len(dense) <= KEPT_CONSTANT_ELEMENTS:
            continue
        shaped = ir.ShapedType(dense.type)
        zero = ir.IntegerAttr.get(shaped.element_type, 0) if ir.IntegerType.isinstance(shaped.element_type) \
            else ir.FloatAttr.get(shaped.element_type, 0.0)
        op.attributes["value"] = ir.DenseElementsAttr.get_splat(dense.type, zero)
    return copy.operation.get_asm(enable_debug_info=True)
