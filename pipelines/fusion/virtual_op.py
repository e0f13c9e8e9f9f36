"""FusionVirtualOpSetSwitch (seed 004): a split whose pieces are contiguous views of its input runs no kernel.

A ``graph.split`` along axis 0 (split_n: after normalising a negative axis),
or along axis 1 when dimension 0 is 1 (split_c_to_n), cuts its row-major
input into pieces that are each one contiguous range of it.  Such a split is
marked with the discardable attribute ``_no_task = true``: its results become
views of the input (no kernel, no copy, no GM traffic on the NPU target).

The seed's constraints, as they apply to the graph dialect:

=====================================================  ======================================================
seed constraint                                        here
=====================================================  ======================================================
dynamic scenarios                                      a dynamic dimension on the input or a piece
``_input/_output_memory_type`` holds L1 or L2          no meaning: graph values have no memory placement
                                                       (UB/L1 buffers are assigned after bufferization)
input Data -> TransData -> Split                       no meaning: the dialect has no layout formats
input Data -> Reshape -> Split                         the input is a ``graph.reshape`` of a function argument
input node already no_task                             the input's producer carries ``_no_task``
input node has ``atomic_output_index``                 no meaning: no op writes its output by atomic add
input node is Const                                    the input is an ``arith.constant``
output node NetOutput                                  a piece is a function result (used by ``func.return``)
output node Hcom* collective                           a piece is passed to a collective: a ``func.call`` of an
                                                       external declaration named like one (hcom_*,
                                                       *all_reduce*, *all_gather*, *reduce_scatter*); the
                                                       dialect has no collective op
output node SplitD/SplitVD                             a piece feeds another ``graph.split``
output node already no_task                            a consumer carries ``_no_task``
output node not a TVM op (imply_type != 1)             a consumer graphfuse does not compile: a call of any
                                                       other external declaration, or a non-graph op
output ``_fusion_virtual_op`` / ``continuous_input``    no meaning: no op of the dialect is a virtual fused op
/ ``atomic_output_index``                              or needs its inputs in one contiguous buffer
split_n: ND -> NZ with 2 dims swaps the axis           no meaning: no NZ format
split_c_to_n: formats ND/NZ, NCHW/NC1HWC0              the "original format equals current format" case
                                                       always holds (no format conversion exists)
=====================================================  ======================================================

As the seed says, the effect is not written to fusion_result.json: it shows
as the attribute appearing between IR dumps (``--dump-dir``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from graphfuse.dialect.matching import as_operation, nested_ops, op_id, sig, users
from graphfuse.dialect.shape_utils import normalize_axis
from graphfuse.pipelines.fusion.base import UB_FUSION, FusionPass, Pattern, PatternCounts, try_consume_rewrite

__all__ = ["NO_TASK", "FusionVirtualOpSetSwitch", "is_no_task"]

#: The seed's attribute name; the NPU emulator treats a split carrying it as views of its input.
NO_TASK = "_no_task"

#: Collective-communication names (CANN's HcomBroadcast/AllGather/AllReduce/ReduceScatter/Reduce), compared
#: with the callee's name lowercased and without underscores.
_COLLECTIVE = re.compile(r"^hcom|allreduce|allgather|reducescatter")


def is_no_task(op: ir.Operation) -> bool:
    """Whether ``op`` carries ``_no_task`` (true, or as a unit attribute)."""
    if NO_TASK not in op.attributes:
        return False
    attr = op.attributes[NO_TASK]
    return isinstance(attr, ir.UnitAttr) or (isinstance(attr, ir.BoolAttr) and attr.value)


def _external_callee(call: ir.Operation) -> str | None:
    """The callee's name when ``call`` is a func.call of a function declared without a body, else None."""
    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    module = call.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return None
    for op in module.regions[0].blocks[0].operations:
        op = as_operation(op)
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == callee:
            return callee if not op.regions[0].blocks else None
    return None


def _input_reason(split: ir.Operation) -> str | None:
    """Why the split's input rules it out (seed: unsupported inputs), or None."""
    value = split.operands[0]
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None  # Data -> Split: a view of a graph input is fine
    producer = as_operation(owner)
    if producer.name == "arith.constant":
        return "its input is a constant (Const)"
    if is_no_task(producer):
        return f"its input's producer {producer.name} is already no_task"
    if producer.name == "graph.reshape" and isinstance(producer.operands[0].owner, ir.Block):
        return "its input is a function argument through a reshape (Data -> Reshape -> Split)"
    return None


def _output_reason(split: ir.Operation) -> str | None:
    """Why a consumer of the split's pieces rules it out (seed: unsupported outputs), or None."""
    for result in split.results:
        for user in users(result):
            if user.name == "func.return":
                return "a piece is a function result (NetOutput)"
            if is_no_task(user):
                return f"its consumer {user.name} is already no_task"
            if user.name == "graph.split":
                return "a piece feeds another split"
            if user.name == "func.call":
                callee = _external_callee(user)
                if callee is not None:
                    if _COLLECTIVE.search(callee.lower().replace("_", "")):
                        return f"a piece is passed to the collective @{callee}"
                    return f"a piece is passed to @{callee}, an external function graphfuse does not compile"
                continue
            if not user.name.startswith("graph."):
                return f"its consumer {user.name} is not a graph op graphfuse compiles"
    return None


def _mark(split: ir.Operation, wanted_axis: int, pattern: Pattern) -> bool | str:
    if is_no_task(split):
        return False
    shape = sig(split.operands[0]).shape
    axis = normalize_axis(ir.IntegerAttr(split.attributes["axis"]).value, len(shape))
    if axis != wanted_axis:
        return False
    if not all(d is not None for v in (split.operands[0], *split.results) for d in sig(v).shape):
        return "dynamic shapes are not supported"
    if wanted_axis == 1 and shape[0] != 1:
        return f"split_c_to_n needs dimension 0 to be 1, got {shape[0]}: the pieces are not contiguous"
    reason = _input_reason(split) or _output_reason(split)
    if reason is not None:
        return reason
    if not try_consume_rewrite(FusionVirtualOpSetSwitch.name, pattern.name, split.location, split.name):
        return False
    split.attributes[NO_TASK] = ir.BoolAttr.get(True)
    return True


def _split_n(split: ir.Operation, _: object) -> bool | str:
    return _mark(split, 0, _SPLIT_N)


def _split_c_to_n(split: ir.Operation, _: object) -> bool | str:
    return _mark(split, 1, _SPLIT_C_TO_N)


_SPLIT_N = Pattern("split_n", "graph.split", _split_n)
_SPLIT_C_TO_N = Pattern("split_c_to_n", "graph.split", _split_c_to_n)


@dataclass(frozen=True)
class FusionVirtualOpSetSwitch(FusionPass):
    """Mark splits along axis 0 (or along axis 1 when dimension 0 is 1) ``_no_task``: their pieces are views.

    The patterns are split_n (axis 0) and split_c_to_n (axis 1, dimension 0
    of size 1), with the exclusions in this module's table.  Splits are
    visited in program order, so of two chained splits the first is ruled
    out (its piece feeds another split) and the second may be marked.
    Logged like every fusion pass, but, as seed 004 says, never counted in
    fusion_result.json.
    """

    name: ClassVar[str] = "FusionVirtualOpSetSwitch"
    priority: ClassVar[int] = 310
    summary: ClassVar[str] = "Mark splits whose pieces are contiguous views of their input no_task (no kernel)"
    group: ClassVar[str] = UB_FUSION
    origin: ClassVar[str] = "cann"
    default_backends: ClassVar[frozenset[str]] = frozenset({"npu"})
    example: ClassVar[str] = """\
func.func @split_rows(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>}
      : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.neg"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (_SPLIT_N, _SPLIT_C_TO_N)
    in_fusion_result: ClassVar[bool] = False  # seed 004: its effect shows between IR dumps, not in fusion_result.json

    def apply(self, module: ir.Module) -> dict[str, PatternCounts]:
        """Visit every split once, in program order (marking an attribute needs no rewrite driver)."""
        counts = {p.name: PatternCounts() for p in self.patterns}
        seen: set[int] = set()
        with module.context:
            for op in nested_ops(module.operation):
                if op.name != "graph.split" or op_id(op) in seen:
                    continue
                seen.add(op_id(op))
                for pattern in self.patterns:
                    counts[pattern.name].record(pattern.rewrite(op, None), op, pattern, self.name)
        return counts
