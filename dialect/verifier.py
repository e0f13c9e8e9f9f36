"""graph-verify: the checks IRDL cannot express.

IRDL verifies op structure (operand/result counts, tensor-ness, required
attribute kinds).  This verifier adds element types, ranks, broadcasting,
attribute values and the result types implied by the operands, using the op
catalog's ``infer`` functions.  It runs after parsing and after every pass.
"""

from __future__ import annotations

from mlir import ir

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op, read_attributes
from graphfuse.dialect.diagnostics import Diagnostic, source_loc
from graphfuse.dialect.types import ALL_DTYPES, TensorSig, shape_matches, sig_from_type


def _value_sigs(values, what: str) -> list[TensorSig]:
    sigs = []
    for i, value in enumerate(values):
        sig = sig_from_type(value.type)
        if sig is None:
            raise VerifyError(f"{what} #{i} has type {value.type}, expected a ranked tensor")
        if sig.dtype not in ALL_DTYPES:
            allowed = ", ".join(sorted(ALL_DTYPES))
            raise VerifyError(f"{what} #{i} has unsupported element type {sig.dtype} (expected one of {allowed})")
        sigs.append(sig)
    return sigs


def check_graph_op(op: ir.Operation) -> None:
    """Raise VerifyError (message without the op name) when ``op`` is invalid."""
    spec = lookup_op(op.name)
    if spec is None:
        raise VerifyError("is not in the graphfuse op catalog")
    inputs = _value_sigs(op.operands, "operand")
    declared = _value_sigs(op.results, "result")
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

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("graph."):
            try:
                check_graph_op(op)
            except VerifyError as error:
                diagnostics.append(Diagnostic("error", f"'{op.name}' {error.message}", source_loc(op.location)))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return diagnostics
