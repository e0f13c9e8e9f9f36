"""graph-fold-empty-tensors: no graph op is left computing on an empty tensor.

An empty tensor (a zero-size dimension: ``tensor<2x0x4xf32>``) is a valid
value with nothing in it, so it is known without running anything.  The CPU
code generator, though, cannot meet an empty iteration space (linalg tiling
asserts on one), so this pass takes empty tensors out of the computation,
walking each function in order:

- every op result with a zero-size dimension becomes an empty
  ``arith.constant`` (``dense<>``), and an op all of whose results are empty
  is erased;
- an op that reads an empty operand into a non-empty result is folded by its
  semantics: concat drops its empty operands; split drops its empty pieces
  (one piece left is a slice); scatter_update with no index is its data;
  matmul_add and matmul_bias_add with an empty contraction are their epilogue
  on zeros; flash_attention over no key and grouped_matmul with no
  contraction or no group are zeros; a pad of nothing is its
  padding value broadcast; any other op whose operands are all empty or
  constant is evaluated by its reference (the interpreter's semantics, bit
  for bit): a reduce_sum over an empty axis is 0, a reduce_mean NaN, a
  matmul whose contraction size is 0 zeros, a loss over nothing its identity;
  an op with an expansion into basic ops (the derived ops, defined by
  theirs: ``square_sum_all(empty, y)``, ``layer_norm_grad`` of no row) is
  expanded, and its pieces are folded in turn.

What is left holds empty tensors only as function arguments, results and
constants (and as operands of calls, whose callees are folded in turn).  An
op that still reads an empty tensor into a non-empty result (attention over
an empty head dim of run-time values, a reduction over an empty axis of a
value that also has a dynamic dimension) is a located error naming the op,
and so is an empty value of dynamic type that something uses (no constant
has a dynamic type) and a collective of an empty tensor: every rank must
call the same collectives, so none is folded away.

The dialect itself rejects reducing a static empty axis with reduce_max,
reduce_min, argmax and argmin, as PyTorch does (``amax(): Expected reduction
dim 1 to have non-zero size``); the ONNX importer writes ONNX's identities
for them as constants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith

from graphfuse.dialect.catalog import OPS, VerifyError
from graphfuse.dialect.constants import array_to_attr
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.expansions import EXPANDERS
from graphfuse.dialect.matching import attributes, constant_array, create_op, op_id
from graphfuse.dialect.ops.collective import COLLECTIVE_OPS
from graphfuse.dialect.types import TensorSig, numpy_dtype, sig_from_type, sig_of_array, tensor_type
from graphfuse.pipelines.pass_base import GraphPass, PassContext

EMPTIED = "num-emptied"
FOLDED = "num-folded"
EXPANDED = "num-expanded"

#: A fold gets an op that reads or makes an empty tensor and an insertion point before it; it returns the values
#: replacing its results (None for an empty result: an empty constant) or None when it does not apply.
Fold = Callable[[ir.Operation, "_Before"], list[ir.Value | None] | None]


class _Before:
    """What ``create_op`` and the expanders take of a rewriter: new ops go right before ``op``."""

    def __init__(self, op: ir.Operation):
        self.ip = ir.InsertionPoint(op)
        self.loc = op.location

    def replace_op(self, op: ir.Operation, values: list[ir.Value]) -> None:
        for result, value in zip(op.results, values, strict=True):
            result.replace_all_uses_with(value)
        op.erase()


def _empty(value: ir.Value | ir.Type) -> TensorSig | None:
    """The signature of a tensor with a zero-size dimension, or None."""
    sig = sig_from_type(value if isinstance(value, ir.Type) else value.type)
    return sig if sig is not None and 0 in sig.shape else None


def _dense(array: np.ndarray) -> ir.DenseElementsAttr:
    """``array`` as an attribute: a splat when its elements are bitwise equal (a matmul's zeros are one element)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.size > 1 and flat.dtype != np.bool_:
        rows = flat.view(np.uint8).reshape(flat.size, -1)
        if (rows == rows[0]).all():
            element = array_to_attr(flat[:1]).get_splat_value()
            return ir.DenseElementsAttr.get_splat(tensor_type(sig_of_array(array)), element)
    return array_to_attr(array)


def _constant(at: _Before, array: np.ndarray) -> ir.Value:
    attr = _dense(array)
    with at.loc, at.ip:
        return arith.ConstantOp(attr.type, attr).result


def _array_of(value: ir.Value) -> np.ndarray | None:
    """The value's elements when they are known: none (static empty) or those of a constant."""
    sig = _empty(value)
    if sig is not None:
        return np.zeros(sig.shape, numpy_dtype(sig.dtype)) if sig.is_static else None
    return constant_array(value)


# --------------------------------------------------------------------------
# Folds by semantics: the ops whose result does not vanish with an empty operand.


def _concat_without_empty(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
    """concat(a, empty, b) -> concat(a, b); one operand left is the result itself.

    The IRDL form (first, second, rest...) survives: operands after the second share one type, so they are all
    empty or none is.
    """
    kept = [v for v in op.operands if _empty(v) is None]
    if len(kept) == 1:
        return [kept[0]]
    return list(create_op(at, "concat", kept, at.loc, axis=attributes(op)["axis"]).results)


def _split_without_empty(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
    """split into sizes [2, 0, 6] -> split into [2, 6] (the same IRDL argument as concat's); one piece left is
    the whole operand (the sizes add up to the axis: Phi-3's rotary half and an empty rest, other dims dynamic)."""
    attrs = attributes(op)
    operand = op.operands[0]
    sizes = list(attrs["sizes"])
    kept = [k for k, size in enumerate(sizes) if size != 0]
    if len(kept) == 1:
        if op.results[kept[0]].type != operand.type:
            return None
        pieces = [operand]
    else:
        pieces = create_op(at, "split", [operand], at.loc, axis=attrs["axis"], sizes=[sizes[k] for k in kept]).results
    by_result: dict[int, ir.Value] = dict(zip(kept, pieces, strict=True))
    return [by_result.get(k) for k in range(len(sizes))]


def _scatter_of_nothing(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
    """scatter_update(data, no indices, no updates) -> data."""
    return [op.operands[0]]


def _epilogue_on_zeros(epilogue: str) -> Fold:
    """matmul_add / matmul_bias_add whose contraction size is 0: the epilogue on the matmul's zeros."""

    def fold(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
        a, b, addend = op.operands
        if _empty(a) is None or _empty(b) is None:
            return None
        attrs = attributes(op)
        flags = {"transpose_a": attrs["transpose_a"], "transpose_b": attrs["transpose_b"]}
        (product,) = OPS["matmul"].infer([sig_from_type(a.type), sig_from_type(b.type)], flags, None)
        if not product.is_static:
            return None
        zeros = _constant(at, np.zeros(product.shape, numpy_dtype(product.dtype)))
        extra = {"axis": -1} if epilogue == "bias_add" else {}
        return list(create_op(at, epilogue, [zeros, addend], at.loc, **extra).results)

    return fold


def _attention_over_no_keys(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
    """flash_attention with no key: the softmax over none weighs no value, the result is zeros (PyTorch's too)."""
    v = op.operands[2]
    result = sig_from_type(op.results[0].type)
    if _empty(v) is None or not result.is_static:
        return None
    return [_constant(at, np.zeros(result.shape, numpy_dtype(result.dtype)))]


def _padding_only(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
    """pad of an empty operand (constant mode: the other modes have nothing to repeat): the padding value
    everywhere.  Without a padding value operand it is zeros, which the reference gives."""
    result = sig_from_type(op.results[0].type)
    if len(op.operands) < 2 or _empty(op.operands[0]) is None or not result.is_static:
        return None
    return list(create_op(at, "broadcast_to", [op.operands[1]], at.loc, declared=[result]).results)


def _no_products(op: ir.Operation, at: _Before) -> list[ir.Value | None] | None:
    """grouped_matmul with no contraction or no group (``x`` or ``weights`` empty): no row gets a product, the
    result is zeros whatever the group ends."""
    result = sig_from_type(op.results[0].type)
    nothing_empty = _empty(op.operands[0]) is None and _empty(op.operands[1]) is None
    if nothing_empty or not result.is_static:
        return None
    return [_constant(at, np.zeros(result.shape, numpy_dtype(result.dtype)))]


FOLDS: dict[str, Fold] = {
    "graph.concat": _concat_without_empty,
    "graph.split": _split_without_empty,
    "graph.scatter_update": _scatter_of_nothing,
    "graph.matmul_add": _epilogue_on_zeros("add"),
    "graph.matmul_bias_add": _epilogue_on_zeros("bias_add"),
    "graph.flash_attention": _attention_over_no_keys,
    "graph.grouped_matmul": _no_products,
    "graph.pad": _padding_only,
}


def _evaluate(op: ir.Operation, at: _Before, context: PassContext) -> list[ir.Value | None] | None:
    """Every operand empty or constant: the results are the reference's, as constants."""
    inputs = [_array_of(v) for v in op.operands]
    declared = [sig_from_type(r.type) for r in op.results]
    if any(x is None for x in inputs) or not all(s is not None and s.is_static for s in declared):
        return None
    try:
        with np.errstate(all="ignore"):
            outputs = evaluate_op(op.name, inputs, attributes(op), declared)
    except (VerifyError, ValueError, IndexError, ArithmeticError) as error:
        context.fail(f"'{op.name}' reads an empty tensor and its reference cannot evaluate it: {error}", op.location)
    return [None if 0 in out.shape else _constant(at, out) for out in outputs]


def _expand(op: ir.Operation, at: _Before, context: PassContext) -> bool:
    """Expand ``op`` into basic ops (when it has an expansion) and fold those: whether it did."""
    expander = EXPANDERS.get(op.name.removeprefix("graph."))
    if expander is None:
        return False
    block = op.block
    before = {op_id(o) for o in block.operations}
    if not expander(op, at):
        return False
    for piece in [o.operation for o in block.operations if op_id(o) not in before]:
        if piece.name != "arith.constant":
            _fold_op(piece, context)
    context.count(EXPANDED)
    return True


# --------------------------------------------------------------------------
# The walk.


def _fold_op(op: ir.Operation, context: PassContext, erased: set[int] | None = None) -> None:
    """Take empty tensors out of ``op``: replace its empty results, fold it when it reads one; the ops it erases
    are added to ``erased`` (by :func:`op_id`)."""
    empty_in = [k for k, v in enumerate(op.operands) if _empty(v) is not None]
    non_empty = [r for r in op.results if _empty(r) is None]
    if not empty_in and len(non_empty) == len(op.results):
        return
    if op.name in COLLECTIVE_OPS:
        context.fail(f"'{op.name}' communicates an empty tensor: collectives of empty tensors are not supported "
                     "(every rank must call the same collectives, so none is folded away)", op.location)
    at = _Before(op)
    if not op.name.startswith("graph."):  # a call (or an op of another dialect): its empty results are known
        _replace(op, [r if _empty(r) is None else None for r in op.results], at, context, erased)
        return
    values: list[ir.Value | None] | None = [None] * len(op.results)
    if non_empty:
        fold = FOLDS.get(op.name)
        values = fold(op, at) if fold is not None else None
        if values is None:
            values = _evaluate(op, at, context)
        if values is None and _expand(op, at, context):
            return
        if values is None:
            if empty_in:
                what = f"reads the empty {op.operands[empty_in[0]].type} (operand #{empty_in[0]}) into"
            else:
                what = "makes an empty result next to"
            context.fail(f"'{op.name}' {what} the non-empty {non_empty[0].type}, and graph-fold-empty-tensors has no "
                         "fold for it: the CPU code generator does not compile empty tensors", op.location)
        context.count(FOLDED)
    _replace(op, values, at, context, erased)
    if erased is not None:
        erased.add(op_id(op))
    op.erase()


def _replace(op: ir.Operation, values: list[ir.Value | None], at: _Before, context: PassContext,
             erased: set[int] | None = None) -> None:
    """Replace each result of ``op`` by its value, a used empty result without one by an empty constant."""
    for result, value in zip(op.results, values, strict=True):
        if value is None:
            sig = _empty(result)
            if not sig.is_static:  # no constant stands for it: the concats reading it drop it first
                concats = {op_id(use.owner): use.owner for use in result.uses if use.owner.name == "graph.concat"}
                for concat in concats.values():
                    _fold_op(concat.operation, context, erased)
            if not any(True for _ in result.uses):
                continue
            if not sig.is_static:
                context.fail(f"'{op.name}' makes the empty {result.type}, whose dynamic dimension no constant can "
                             "stand for: the CPU code generator does not compile empty tensors", op.location)
            value = _constant(at, np.zeros(sig.shape, numpy_dtype(sig.dtype)))
            context.count(EMPTIED)
        elif value.type != result.type:
            context.fail(f"folding '{op.name}' gave {value.type} for its result {result.type}", op.location)
        if value != result:
            result.replace_all_uses_with(value)


def _erase_unused_empty_constants(block: ir.Block) -> None:
    """The empty constants nothing reads any more: the folded ops' operands, or made for them."""
    for op in reversed(list(block.operations)):
        op = op.operation
        if op.name == "arith.constant" and _empty(op.results[0]) is not None and not any(
                True for _ in op.results[0].uses):
            op.erase()


def fold_empty_tensors(module: ir.Module, context: PassContext) -> None:
    for function in module.body.operations:
        if function.operation.name != "func.func" or not function.regions[0].blocks:
            continue
        block = function.regions[0].blocks[0]
        erased: set[int] = set()  # ops folded ahead of their turn (a concat dropping a dynamic empty operand)
        for key, op in [(op_id(op.operation), op.operation) for op in block.operations]:
            if key not in erased and op.name not in ("func.return", "arith.constant"):
                _fold_op(op, context, erased)
        _erase_unused_empty_constants(block)


@dataclass(frozen=True)
class GraphFoldEmptyTensors(GraphPass):
    name: ClassVar[str] = "graph-fold-empty-tensors"
    summary: ClassVar[str] = "Replace empty tensors by constants and fold the ops that read them"
    statistics: ClassVar[dict[str, str]] = {
        EMPTIED: "Number of empty op results replaced by constants",
        FOLDED: "Number of ops reading an empty tensor folded into non-empty results",
        EXPANDED: "Number of ops reading an empty tensor expanded into basic ops, which were folded",
    }

    def run(self, module: ir.Module, context: PassContext) -> None:
        fold_empty_tensors(module, context)
