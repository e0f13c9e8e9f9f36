"""graph-cse: merge identical graph ops and constants.

Upstream CSE never merges IRDL ops (it must assume they have side effects).
Two graph ops are identical when they have the same name, operands,
attributes and result types; the later one is replaced by the earlier, which
dominates it because both sit in one block (or the earlier one's block
encloses the later one's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.pipelines.pass_base import GraphPass, PassContext
from graphfuse.pipelines.passes.dce import is_pure

Key = tuple


def op_key(op: ir.Operation) -> Key:
    """What makes two pure ops interchangeable."""
    attrs = tuple(sorted((name, str(attr)) for name, attr in op.attributes.items()))
    return (
        op.name,
        tuple(op.operands),
        attrs,
        tuple(str(r.type) for r in op.results),
    )


def _is_isolated(op: ir.Operation) -> bool:
    return op.name == "builtin.module" or "sym_name" in op.attributes


def cse_block(block: ir.Block, known: dict[Key, ir.Operation]) -> int:
    """CSE ``block`` given the ops ``known`` from enclosing blocks; returns ops removed."""
    removed = 0
    scope = dict(known)
    for op in list(block.operations):
        op = op.operation
        # Symbols (functions, modules) are isolated from above: their regions
        # cannot use values defined outside, so they start with an empty scope.
        inherited = {} if _is_isolated(op) else scope
        for region in op.regions:
            for inner in region.blocks:
                removed += cse_block(inner, inherited)
        if not is_pure(op) or op.regions:
            continue
        key = op_key(op)
        existing = scope.get(key)
        if existing is None:
            scope[key] = op
            continue
        for old, new in zip(op.results, existing.results, strict=True):
            old.replace_all_uses_with(new)
        op.erase()
        removed += 1
    return removed


@dataclass(frozen=True)
class GraphCSE(GraphPass):
    name: ClassVar[str] = "graph-cse"
    summary: ClassVar[str] = "Merge identical graph ops and constants (upstream CSE skips IRDL ops)"
    statistics: ClassVar[dict[str, str]] = {"num-cse'd": "Number of operations CSE'd"}

    def run(self, module: ir.Module, context: PassContext) -> None:
        context.count("num-cse'd", cse_block(module.body, {}))
