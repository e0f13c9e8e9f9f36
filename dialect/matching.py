"""Helpers for matching graph ops in rewrite patterns and building their replacements.

Patterns receive an op from the rewrite driver and look at its neighbours:
who produced an operand (:func:`producer`), who uses a result
(:func:`users`), what an attribute says (:func:`attributes`), whether an
operand is a constant (:func:`constant_array`).  Replacements are built with
:func:`create_op`, which infers result types through the op catalog exactly as
the builder does, so a pattern cannot create an op the verifier rejects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import arith

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op, python_to_attr, read_attributes
from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.op_walk import native_ops_named, operation_address
from graphfuse.dialect.types import TensorSig, sig_from_type, tensor_type


def as_operation(op: ir.Operation | ir.OpView) -> ir.Operation:
    return op.operation if isinstance(op, ir.OpView) else op



def op_id(op: ir.Operation | ir.OpView) -> int:
    """The address of the C++ operation: an identity for sets and dicts of ops.

    ``hash(op)`` is not one: the bindings' wrappers of two distinct ops (seen
    with two func.return ops) can hash equal.  Valid only while the op lives.
    """
    return operation_address(as_operation(op))


def producer(value: ir.Value, name: str | None = None) -> ir.Operation | None:
    """The op defining ``value`` (None for block arguments, or when it is not ``name``)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    owner = as_operation(owner)
    if name is not None and owner.name != name:
        return None
    return owner


def users(value: ir.Value) -> list[ir.Operation]:
    """The ops using ``value`` (an op using it twice appears twice)."""
    return [as_operation(use.owner) for use in value.uses]


def has_one_use(value: ir.Value) -> bool:
    return len(list(value.uses)) == 1


def is_function_result(value: ir.Value) -> bool:
    return any(u.name == "func.return" for u in users(value))


def attributes(op: ir.Operation) -> dict[str, Any]:
    """The graph op's attributes as Python values, defaults filled in."""
    spec = lookup_op(op.name)
    assert spec is not None, op.name
    return read_attributes(spec, op)


def sig(value: ir.Value) -> TensorSig:
    result = sig_from_type(value.type)
    assert result is not None, value.type
    return result


def constant_array(value: ir.Value) -> np.ndarray | None:
    """The numpy value of an ``arith.constant dense<...>`` result, or None."""
    op = producer(value, "arith.constant")
    if op is None or not isinstance(op.attributes["value"], ir.DenseElementsAttr):
        return None
    try:
        return attr_to_array(op.attributes["value"])
    except ValueError:
        return None


def constant_scalar(value: ir.Value) -> float | None:
    """The value of a constant whose elements are all equal (a splat or a 1-element tensor), or None."""
    array = constant_array(value)
    if array is None or array.size == 0:
        return None
    flat = array.reshape(-1).astype(np.float64)
    return float(flat[0]) if np.all(flat == flat[0]) else None


def nested_ops(root: ir.Operation | ir.OpView | ir.Module) -> list[ir.Operation]:
    """Every operation nested in ``root`` (not ``root`` itself), in pre-order.

    A list, taken before the caller changes anything: safe to erase or
    replace ops while iterating over it.
    """
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    root.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[1:]


def ops_named(root: ir.Operation | ir.OpView | ir.Module, *patterns: str) -> list[ir.Operation]:
    """Every operation nested in ``root`` (not ``root``), in pre-order, named one of ``patterns`` (a pattern
    ending in '.' is a dialect's prefix: ``"linalg."``).

    Found by the native walk where it was built (a Python callback per op costs about 1 us, and a lowered
    5,000-op graph holds a million ops), else by :func:`nested_ops`.  A list, like that one.
    """
    found = native_ops_named(root.operation, patterns)
    if found is not None:
        return found
    prefixes = tuple(p for p in patterns if p.endswith("."))
    names = frozenset(p for p in patterns if not p.endswith("."))
    return [op for op in nested_ops(root) if op.name in names or op.name.startswith(prefixes)]


def graph_op_names(root: ir.Operation | ir.Module) -> list[str]:
    """The names of the graph ops nested in ``root``, in pre-order."""
    return [op.name for op in nested_ops(root) if op.name.startswith("graph.")]


def create_op(
    rw: Any,
    name: str,
    operands: Sequence[ir.Value],
    loc: ir.Location,
    declared: Sequence[TensorSig] | None = None,
    **attrs: Any,
) -> ir.Operation:
    """Create ``graph.<name>`` at the rewriter's insertion point, result types inferred.

    ``declared`` gives result types for ops that need them (reshape, cast...).
    Raises VerifyError when the catalog rejects the combination, before any IR
    is created.
    """
    spec = lookup_op(f"graph.{name}")
    assert spec is not None, name
    inputs = [sig(v) for v in operands]
    results = infer_results(spec, inputs, spec.with_defaults(attrs), declared)
    with loc:
        ir_attrs = {k: python_to_attr(spec.attr(k), v) for k, v in attrs.items() if v is not None}
        with rw.ip:
            return ir.Operation.create(
                spec.full_name,
                results=[tensor_type(s) for s in results],
                operands=list(operands),
                attributes=ir_attrs,
                loc=loc,
            )


def sole_use_reason(value: ir.Value, user: ir.Operation, what: str) -> str | None:
    """None when ``user`` is the only use of ``value``; otherwise why the value cannot be absorbed."""
    uses = users(value)
    if is_function_result(value):
        return f"{what} is also a function result"
    if len(uses) != 1 or uses[0] != user:
        return f"{what} has other users"
    return None


def has_uses(op: ir.Operation) -> bool:
    return any(True for result in op.results for _ in result.uses)


def erase_dead(rw: Any, ops: Sequence[ir.Operation | None]) -> None:
    """Erase the ops (consumers first) that nothing uses any more: the greedy driver keeps dead IRDL ops."""
    for op in ops:
        if op is not None and not has_uses(op):
            rw.erase_op(op)


def replace_with_new(
    rw: Any,
    root: ir.Operation,
    name: str,
    operands: Sequence[ir.Value],
    absorbed: Sequence[ir.Operation],
    declared: Sequence[TensorSig] | None = None,
    **attrs: Any,
) -> str | None:
    """Replace ``root`` by a new ``graph.<name>`` op; the new op's location fuses ``absorbed`` (root included).

    Returns a reason, before creating anything, when the new op's result types
    would not be exactly ``root``'s (a VerifyError propagates: base.py logs it
    as the reason).  ``attrs`` with the value None are left unwritten.
    """
    spec = lookup_op(f"graph.{name}")
    assert spec is not None, name
    written = {k: v for k, v in attrs.items() if v is not None}
    inferred = infer_results(spec, [sig(v) for v in operands], spec.with_defaults(written), declared)
    expected = [sig(r) for r in root.results]
    if inferred != expected:
        got = ", ".join(str(s) for s in inferred)
        want = ", ".join(str(s) for s in expected)
        return f"the fused graph.{name} would give {got}, not {want}"
    new = create_op(rw, name, operands, fused_location(list(absorbed)), declared, **written)
    rw.replace_op(root, list(new.results))
    return None


def create_constant(rw: Any, array: np.ndarray, loc: ir.Location) -> ir.Value:
    with loc, rw.ip:
        attr = array_to_attr(array)
        return arith.ConstantOp(attr.type, attr, loc=loc).result


def fused_location(ops: Sequence[ir.Operation]) -> ir.Location:
    """A location naming every op a fused op replaces (MLIR's fused location)."""
    locations = [op.location for op in ops]
    return ir.Location.fused(locations, context=locations[0].context)


__all__ = [
    "VerifyError",
    "as_operation",
    "attributes",
    "constant_array",
    "constant_scalar",
    "create_constant",
    "create_op",
    "erase_dead",
    "fused_location",
    "graph_op_names",
    "has_one_use",
    "has_uses",
    "is_function_result",
    "nested_ops",
    "op_id",
    "producer",
    "replace_with_new",
    "sig",
    "sole_use_reason",
    "users",
]
