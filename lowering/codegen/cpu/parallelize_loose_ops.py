"""parallelize-loose-ops: large copies and elementwise ops left in the entry's body are shared out across the cores.

``parallelize-kernels`` splits the kernels of graph-kernel fusion before they are inlined; what the CPU pipeline
makes afterwards, or what no kernel holds, runs serial while the other cores wait: the transposes
``block-contractions`` puts around a convolution's product (the [F, N, OH, OW] result back into NCHW), a lone
``neg`` of a rotary embedding's half.  Each such op of the entry's body (not in a loop) with static shapes and at
least ``min-elements`` result elements is tiled into an ``scf.forall`` over its leading parallel loops, as
``parallelize-kernels`` tiles a window op.  It runs after ``block-contractions`` (whose packing copies and
products are loops by then) and before bufferization.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects.transform import interpreter

from graphfuse.dialect.diagnostics import GraphfuseError, from_mlir_error
from graphfuse.dialect.matching import as_operation, nested_ops
from graphfuse.lowering.codegen.cpu.entry import entry_function
from graphfuse.lowering.parallel import DEFAULT_MIN_ELEMENTS, leading_tiles, static_elements
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["ParallelizeLooseOps"]

#: The ops taken: copies and transposes, and generics whose loops are all parallel (elementwise, broadcasts).
_COPIES = frozenset({"linalg.copy", "linalg.transpose"})
#: Marks the op being tiled.
_ROOT = "graphfuse.cpu.loose_root"
_SCRIPT = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %r = transform.structured.match attributes{ROOT} in %root : (!transform.any_op) -> !transform.any_op
    %t, %tasks = transform.structured.tile_using_forall %r tile_sizes TILES
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}"""


def _all_parallel(op: ir.Operation) -> bool:
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    return all(str(a).endswith("parallel>") for a in iterators)


@dataclass(frozen=True)
class ParallelizeLooseOps(GraphPass):
    name: ClassVar[str] = "parallelize-loose-ops"
    summary: ClassVar[str] = ("Tile large copies and elementwise ops of the entry's body into scf.forall tasks for "
                              "the cores (after block-contractions)")
    statistics: ClassVar[dict[str, str]] = {"num-parallel": "Number of ops split over the cores"}
    threads: int = option(1, "threads of the compiled code (1: nothing to do)")
    min_elements: int = option(DEFAULT_MIN_ELEMENTS, "ops with fewer result elements stay serial")
    max_tasks: int = option(64, "most tasks an op is split into")

    def run(self, module: ir.Module, context: PassContext) -> None:
        if self.threads < 1 or self.min_elements < 0 or self.max_tasks < 1:
            context.fail(f"options 'threads' (>= 1), 'min-elements' (>= 0) and 'max-tasks' (>= 1) of pass "
                         f"'{self.name}' are out of range: {self.threads}, {self.min_elements}, {self.max_tasks}")
        if self.threads == 1:
            return
        func = entry_function(module, self.name)
        for op in [as_operation(op) for op in func.regions[0].blocks[0].operations]:
            tiles = self._tiles(op)
            if tiles is None:
                continue
            op.attributes[_ROOT] = ir.UnitAttr.get()
            script = ir.Module.parse(_SCRIPT.replace("ROOT", _ROOT).replace("TILES", str(tiles)), module.context)
            try:
                interpreter.apply_named_sequence(func, script.body.operations[0], script)
            except ir.MLIRError as error:
                raise GraphfuseError([*from_mlir_error(error)]) from None
            for marked in nested_ops(func):  # the tiled op inside the loop carries the mark too
                if _ROOT in marked.attributes:
                    del marked.attributes[_ROOT]
            context.count("num-parallel")

    def _tiles(self, op: ir.Operation) -> list[int] | None:
        """The tile sizes splitting ``op`` into tasks, or None when it stays as it is."""
        if op.name not in _COPIES and not (op.name == "linalg.generic" and _all_parallel(op)):
            return None
        if len(op.results) != 1:
            return None
        count = static_elements(op.results[0])
        if count is None or count < self.min_elements:
            return None
        return leading_tiles(op, self.max_tasks)
