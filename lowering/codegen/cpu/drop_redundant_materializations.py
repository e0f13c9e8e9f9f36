"""drop-redundant-materializations: no ``materialize_in_destination`` of a value already computed in place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import ops_named
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["DropRedundantMaterializations", "drop_redundant_materializations"]


@dataclass(frozen=True)
class DropRedundantMaterializations(GraphPass):
    name: ClassVar[str] = "drop-redundant-materializations"
    summary: ClassVar[str] = ("Remove materialize_in_destination of a value its producer already computes in that "
                              "destination (after eliminate-empty-tensors)")

    def run(self, module: ir.Module, context: PassContext) -> None:
        drop_redundant_materializations(module)


def _destination_of(value: ir.Value) -> ir.Value | None:
    """The value a result is computed into: a linalg op's init, an ``scf.for`` result's iter_args init."""
    if isinstance(value.owner, ir.Block):
        return None
    producer = value.owner.operation
    index = ir.OpResult(value).result_number
    if producer.name == "scf.for":
        return producer.operands[3 + index]  # lower bound, upper bound, step, then the iter_args inits
    if producer.name.startswith("linalg."):
        return producer.operands[len(producer.operands) - len(producer.results) + index]
    return None


def drop_redundant_materializations(module: ir.Module) -> None:
    """Remove ``materialize_in_destination %v in %out`` where %v is already computed in %out.

    After empty-tensor elimination, a result's producer often has the output
    argument itself as its destination (a linalg op's init, an ``scf.for``'s
    iter_args init).  The materialization is then a no-op, and for loops it
    even makes one-shot bufferization report a read-after-write conflict.
    """
    for op in ops_named(module, "bufferization.materialize_in_destination"):
        source, dest = op.operands[0], op.operands[1]
        destination = _destination_of(source)
        if destination is not None and destination == dest:
            op.results[0].replace_all_uses_with(source)
            op.erase()
