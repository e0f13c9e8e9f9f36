"""graph-verify: the checks IRDL cannot express.

IRDL verifies op structure (operand/result counts, tensor-ness, required
attribute kinds).  This verifier adds element types, ranks, broadcasting,
attribute values and the result types implied by the operands, using the op
catalog's ``infer`` functions.  It runs after parsing and after every pass.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op, read_attributes
from graphfuse.dialect.diagnostics import Diagnostic, source_loc
from graphfuse.dialect.types import ALL_DTYPES, TensorSig, shape_matches, sig_from_type


def _value_sigs(values, what: str, cache: dict[ir.Type, TensorSig | None] | None = None) -> list[TensorSig]:
    sigs = []
    for i, value in enumerate(values):
        value_type = value.type
        if cache is None:
            sig = sig_from_type(value_type)
        else:
            # MLIR types are uniqued in their context: one conversion per distinct type and verify run.
            sig = cache.get(value_type, _MISSING)
            if sig is _MISSING:
                sig = cache[value_type] = sig_from_type(value_type)
        if sig is None:
            raise VerifyError(f"{what} #{i} has type {value_type}, expected a ranked tensor")
        if sig.dtype not in ALL_DTYPES:
            allowed = ", ".join(sorted(ALL_DTYPES))
            raise VerifyError(f"{what} #{i} has unsupported element type {sig.dtype} (expected one of {allowed})")
        sigs.append(sig)
    return sigs


_MISSING: Any = object()


def check_graph_op(op: ir.Operation, type_cache: dict[ir.Type, TensorSig | None] | None = None) -> None:
    """Raise VerifyError (message without the op name) when ``op`` is invalid.

    ``type_cache`` (a dict the caller keeps for one walk of one context) saves converting a type twice.
    """
    spec = lookup_op(op.name)
    if spec is None:
        raise VerifyError("is not in the graphfuse op catalog")
    inputs = _value_sigs(op.operands, "operand", type_cache)
    declared = _value_sigs(op.results, "result", type_cache)
    attrs = read_attributes(spec, op)
    inferred = infer_results(spec, inputs, attrs, declared)
    if len(inferred) != len(declared):
        raise VerifyError(f"has {len(declared)} results, but its operands and attributes give {len(inferred)}")
    for i, (want, got) in enumerate(zip(inferred, declared, strict=True)):
        if want.dtype != got.dtype or not shape_matches(want.shape, got.shape):
            raise VerifyError(f"result #{i} has type {got}, but its operands and attributes give {want}")


def verify_operation(root: ir.Operation) -> list[Diagnostic]:
    """Diagnostics for every invalid graph op nested in ``root`` (empty when all are valid)."""
    diagnostics: list[Diagnostic] = []
    type_cache: dict[ir.Type, TensorSig | None] = {}
    # Ops found valid in this walk, by name, operand/result types and attributes (MLIR types and attributes
    # are uniqued, so they compare and hash by identity): a graph repeats the same ops layer after layer.
    valid: set[tuple] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name.startswith("graph."):
            attributes = op.attributes
            key = (
                name,
                tuple(v.type for v in op.operands),
                tuple(r.type for r in op.results),
                tuple((named.name, named.attr) for named in (attributes[i] for i in range(len(attributes)))),
            )
            if key in valid:
                return ir.WalkResult.ADVANCE
            try:
                check_graph_op(op, type_cache)
                valid.add(key)
            except VerifyError as error:
                diagnostics.append(Diagnostic("error", f"'{name}' {error.message}", source_loc(op.location)))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return diagnostics
