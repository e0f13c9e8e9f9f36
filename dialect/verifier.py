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


def _enclosing_function(op: ir.Operation) -> str | None:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return None if parent is None else ir.StringAttr(parent.attributes["sym_name"]).value


def call_cycles(calls: list[tuple[str, str, ir.Location]]) -> list[Diagnostic]:
    """One error per cycle of the call graph whose edges are ``(caller, callee, location of the call)``.

    The reference interpreter would recurse until Python's limit and the lowering inlines calls, so a
    recursive function can neither run nor compile.  The search is iterative (a call chain may be long).
    """
    edges: dict[str, list[tuple[str, ir.Location]]] = {}
    for caller, callee, location in calls:
        edges.setdefault(caller, []).append((callee, location))
    diagnostics: list[Diagnostic] = []
    reported: set[frozenset[str]] = set()
    done: set[str] = set()
    for start in edges:
        if start in done:
            continue
        path: list[str] = [start]  # the current chain of calls; on_path gives each function's index in it
        on_path = {start: 0}
        pending = [iter(edges.get(start, ()))]
        while pending:
            step = next(pending[-1], None)
            if step is None:
                finished = path.pop()
                del on_path[finished]
                done.add(finished)
                pending.pop()
                continue
            callee, location = step
            if callee in on_path:
                cycle = path[on_path[callee]:]
                if frozenset(cycle) not in reported:
                    reported.add(frozenset(cycle))
                    if len(cycle) == 1:
                        message = f"recursive call: @{callee} calls itself"
                    else:
                        message = "recursive calls: " + " -> ".join(f"@{name}" for name in [*cycle, callee])
                    diagnostics.append(Diagnostic("error", f"{message}; graphfuse does not support recursion "
                                                  "(a cycle in the call graph)", source_loc(location)))
            elif callee not in done and callee in edges:
                on_path[callee] = len(path)
                path.append(callee)
                pending.append(iter(edges[callee]))
    return diagnostics


#: Ops whose regions hold scalar code only (a linalg body: most of a lowered module's ops), never a graph op or
#: a call: the verifier's walk does not enter them.  Any other op's regions are walked (graph ops may sit in
#: scf loops, or in ops of dialects graphfuse does not know).
_SCALAR_BODIES = ("linalg.",)


def verify_operation(root: ir.Operation) -> list[Diagnostic]:
    """Diagnostics for every invalid graph op nested in ``root`` and every recursive call (empty when none)."""
    diagnostics: list[Diagnostic] = []
    calls: list[tuple[str, str, ir.Location]] = []  # (caller, callee, location) of every func.call
    type_cache: dict[ir.Type, TensorSig | None] = {}
    # Ops found valid in this walk, by name, operand/result types and attributes (MLIR types and attributes
    # are uniqued, so they compare and hash by identity): a graph repeats the same ops layer after layer.
    valid: set[tuple] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name.startswith(_SCALAR_BODIES):
            return ir.WalkResult.SKIP
        if name == "func.call":
            caller = _enclosing_function(op)
            if caller is not None:
                calls.append((caller, ir.FlatSymbolRefAttr(op.attributes["callee"]).value, op.location))
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
    return diagnostics + call_cycles(calls)
