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
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import OpSpec, VerifyError, infer_results, lookup_op, read_attributes
from graphfuse.dialect.diagnostics import Diagnostic, GraphfuseError, source_loc
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import nested_ops
from graphfuse.dialect.parsing import relocate
from graphfuse.dialect.shape_utils import sized_at_call
from graphfuse.dialect.types import TensorSig, sig_from_type

__all__ = ["DynamicShapes", "ShapePlan", "infer_result_shapes", "shape_graph_text"]

#: Constants up to this many elements keep their values in a shape graph (shape-like operands); larger ones
#: become splats of their type (weights: shape inference reads only their types).
KEPT_CONSTANT_ELEMENTS = 64
#: Input shape combinations whose inferred result shapes a checker remembers.
CACHED_SHAPES = 256


def infer_result_shapes(module: ir.Module, entry: str, input_shapes: list[tuple[int, ...]]) -> list[tuple]:
    """The result shapes of ``@entry`` for inputs of these shapes (None where they cannot be told).

    Runs the op catalog's shape inference with the actual sizes in place of
    the dynamic dimensions; an inconsistency (operands that do not broadcast)
    is an error naming the op.  A :class:`ShapePlan` kept across calls does the
    same for a fraction of the cost.
    """
    return ShapePlan(module, entry).result_shapes(input_shapes)


@dataclass(frozen=True)
class _Step:
    """One op of a :class:`ShapePlan`: where its operands' and results' signatures are kept, and what its
    inference reads that no call changes."""

    op: ir.Operation
    spec: OpSpec | None
    attributes: dict[str, Any] | None
    operands: tuple[int, ...]
    results: tuple[int, ...]
    declared: tuple[TensorSig | None, ...]
    operand_types: tuple[TensorSig | None, ...]


class ShapePlan:
    """The shape inference of ``@entry`` made once into steps over numbered slots.

    What does not change from call to call is read when the plan is made: each op's spec, attributes and
    declared types, and the results of every op none of whose operands has a dynamic dimension (those are
    inferred then, once).  A call runs the ops that read a value of dynamic shape alone: in a decoding step of a
    language model, the attention's ops over the cache's length among hundreds (the whole graph's inference for
    every new length took 10 to 30 ms a token, several times the step).  An op reading only values of static
    type has the sizes it had when the graph was verified; one whose result type is static gives that type or
    an error (the check), so only results of dynamic type carry a call's sizes on.
    """

    _NONE = 0  # the slot of values no op of the block defines: no signature

    def __init__(self, module: ir.Module, entry: str):
        self.module, self.entry = module, entry
        self._callees: dict[str, ShapePlan] = {}
        block = functions(module)[entry].regions[0].blocks[0]
        slots: dict = {}
        template: list[TensorSig | None] = [None]

        def slot_of(value: ir.Value) -> int:
            return slots.get(value, self._NONE)

        def new_slot(value: ir.Value, sig: TensorSig | None) -> int:
            slots[value] = len(template)
            template.append(sig)
            return slots[value]

        self._inputs = tuple(new_slot(arg, sig_from_type(arg.type)) for arg in block.arguments)
        varying = {k for k in self._inputs if template[k] is not None and not template[k].is_static}
        #: (position, slot) of the inputs whose type has a dynamic dim: what a call sets before its steps run
        self._varying_inputs = tuple((position, k) for position, k in enumerate(self._inputs) if k in varying)
        self._steps: list[_Step] = []  # those a call runs
        self._every: list[_Step] = []
        self._returned: tuple[int, ...] | None = None
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                self._returned = tuple(slot_of(v) for v in op.operands)
                break
            spec = lookup_op(op.name)
            step = _Step(op, spec, read_attributes(spec, op) if spec is not None else None,
                         tuple(slot_of(v) for v in op.operands),
                         tuple(new_slot(r, None) for r in op.results),
                         tuple(sig_from_type(r.type) for r in op.results),
                         tuple(sig_from_type(v.type) for v in op.operands))
            self._every.append(step)
            dynamic = any(k in varying for k in step.operands)
            if not dynamic:
                try:
                    for k, sig in zip(step.results, self._run_step(step, template, input_shapes=None), strict=False):
                        template[k] = sig
                except GraphfuseError:
                    dynamic = True  # it fails as a call: the call says so, naming the inputs
            if dynamic:
                self._steps.append(step)
                varying.update(k for k, sig in zip(step.results, step.declared, strict=True)
                               if sig is None or not sig.is_static)
        self._template = template
        self._static_inputs = tuple((position, template[k].shape) for position, k in enumerate(self._inputs)
                                    if k not in varying and template[k] is not None)

    @property
    def ops_per_call(self) -> int:
        """The ops a call infers: those reading a value of dynamic shape."""
        return len(self._steps)

    def result_shapes(self, input_shapes: Sequence[tuple[int, ...]], every_op: bool = False) -> list[tuple | None]:
        """The result shapes for inputs of ``input_shapes``, as :func:`infer_result_shapes` tells them; with
        ``every_op`` (and for a static input of another size than its type's) every op is inferred again."""
        if every_op or any(tuple(input_shapes[position]) != shape for position, shape in self._static_inputs):
            return self._full(input_shapes)
        sigs = list(self._template)
        for position, k in self._varying_inputs:
            sigs[k] = sigs[k].with_shape(tuple(input_shapes[position]))
        for step in self._steps:
            for k, sig in zip(step.results, self._run_step(step, sigs, input_shapes), strict=False):
                sigs[k] = sig
        return self._returned_shapes(sigs)

    def _full(self, input_shapes: Sequence[tuple[int, ...]]) -> list[tuple | None]:
        """Every op inferred on these input shapes, none of the plan's results taken."""
        sigs: list[TensorSig | None] = [None] * len(self._template)
        for position, k in enumerate(self._inputs):
            declared = self._template[k]
            sigs[k] = None if declared is None else declared.with_shape(tuple(input_shapes[position]))
        for step in self._every:
            for k, sig in zip(step.results, self._run_step(step, sigs, input_shapes), strict=False):
                sigs[k] = sig
        return self._returned_shapes(sigs)

    def _returned_shapes(self, sigs: list[TensorSig | None]) -> list[tuple | None]:
        if self._returned is None:
            results = ir.FunctionType(ir.TypeAttr(functions(self.module)[self.entry].attributes["function_type"])
                                      .value).results
            return [None for _ in results]
        return [None if sigs[k] is None else sigs[k].shape for k in self._returned]

    def _run_step(self, step: _Step, sigs: list, input_shapes: Sequence[tuple[int, ...]] | None) -> list:
        """The signatures of ``step``'s results for its operands' in ``sigs``: the catalog's inference and the
        checks of the compiled code's assumptions."""
        op, spec = step.op, step.spec
        inputs = [sigs[k] for k in step.operands]
        declared = list(step.declared)
        inferred: list = declared
        known = all(sig is not None for sig in inputs)
        if op.name in ("graph.reshape", "graph.broadcast_to") and known \
                and all(None not in sig.shape for sig in inputs):
            operands = [sig.shape for sig in step.operand_types]
            declared = [sized_at_call(op.name, operands, [sig.shape for sig in inputs], declared[0])]
            inferred = declared
        if spec is not None and known:
            try:
                inferred = infer_results(spec, inputs, step.attributes, declared)
            except VerifyError as error:
                shapes = ", ".join(str(tuple(s)) for s in (input_shapes or ()))
                raise GraphfuseError([Diagnostic(
                    "error", f"@{self.entry} called with inputs of shapes {shapes}: '{op.name}' {error.message}",
                    source_loc(op.location),
                )]) from None
        if op.name == "graph.reshape" and known and inferred and inferred[0] is not None:
            inferred = [_sized_reshape(inputs[0], inferred[0])]
        if spec is not None and known and spec.group.endswith("elementwise") and inferred and inferred[0] is not None:
            _check_no_dynamic_broadcast(op, self.entry, inputs, step.operand_types, inferred[0].shape)
        if op.name == "graph.flash_attention" and known and len(inputs) == 4 and inferred[0] is not None:
            # the mask is read as the scores' shape along its dynamic dims (the tiled attention reads it by row)
            scores = (*inferred[0].shape[:-1], inputs[1].shape[-2])
            _check_no_dynamic_broadcast(op, self.entry, inputs[3:], step.operand_types[3:], scores, first=3)
        if op.name == "func.call" and known:  # a kernel, or a function of the module: its results' shapes
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee not in self._callees:
                self._callees[callee] = ShapePlan(self.module, callee)
            shapes = self._callees[callee].result_shapes([sig.shape for sig in inputs])
            inferred = [None if d is None or shape is None else d.with_shape(shape)
                        for d, shape in zip(declared, shapes, strict=True)]
        return inferred


def _sized_reshape(source: TensorSig, result: TensorSig) -> TensorSig:
    """A reshape's result with its one dynamic dim sized by the operand's element count, when the call's sizes
    make that count known (the catalog keeps the declared type)."""
    count = source.num_elements
    if count is None or None not in result.shape:
        return result
    known = math.prod(d for d in result.shape if d is not None)
    return result if known == 0 else result.with_shape(tuple(count // known if d is None else d for d in result.shape))


def _check_no_dynamic_broadcast(op: ir.Operation, entry: str, inputs: list, operand_types: Sequence,
                                result_shape: tuple, first: int = 0) -> None:
    """An elementwise operand's dynamic dimension may not broadcast (be 1 where the result is larger).

    numpy allows it, but the lowering gives a dynamic dimension the size of
    the result's: the compiled code would read the operand out of bounds.
    ``operand_types``: the operands' declared signatures.
    """
    for k, (sig, declared) in enumerate(zip(inputs, operand_types, strict=True), start=first):
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
        self._plan: ShapePlan | None = None  # made at the first call's check

    def check(self, arrays: Sequence, out) -> list:
        """The result shapes for these inputs (None where not inferable), or an error naming the op whose
        operands disagree or the ``out=`` buffer of the wrong shape."""
        key = tuple(tuple(np.shape(a)) for a in arrays)
        expected = self._shapes.get(key)
        if expected is None:
            try:
                if self._plan is None:
                    self._plan = ShapePlan(self.module, self.entry)
                expected = self._plan.result_shapes([np.shape(a) for a in arrays])
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
