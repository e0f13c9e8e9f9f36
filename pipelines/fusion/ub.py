"""CANN UB fusion passes: ops whose intermediates can stay in the NPU's Unified Buffer become one kernel.

Seed 001: two ops run separately move op 1's result UB -> GM (DDR) -> UB
between them; fused into one kernel, the result stays in the on-chip Unified
Buffer, saving one off-chip write and one off-chip read per intermediate.
These passes are hardware-dependent (CANN's UB fusion, run after graph
fusion), so they are on by default for the ``npu`` backend only, and they sit
in fusion_switch.cfg's ``UBFusion`` section.

Each pass groups ops and outlines every group exactly as graph-kernel fusion
does (a private ``func.func`` marked ``graph.kernel`` with ``graph.kernel_ops``
and ``graph.fusion_kind``, called with ``func.call``), so the CPU lowering
compiles a UB kernel like any other kernel and the NPU emulator sees which
intermediates stay on chip.

==============================  ====================  ===========================================================
pass                            fusion kind           what one kernel holds
==============================  ====================  ===========================================================
ATbeMatMulElemwiseFusionPass    ub_matmul_elemwise    a matmul (or fused matmul op) and up to ``max-epilogue``
                                                      elementwise ops consuming its result
TbeReduceElemwiseFusionPass     ub_reduce_elemwise    one reduction, its elementwise producers, and elementwise
                                                      consumers that keep the reduced shape
TbeEltwiseFusionPass            ub_eltwise            up to ``max-ops`` connected elementwise ops (a chain or DAG)
AutomaticUbFusion               ub_auto               any connected group of elementwise, reduction, layout ops
                                                      (and at most one matmul, as its head) whose live values
                                                      fit the target's UB (or ``ub-size``)
==============================  ====================  ===========================================================

Common rules: a group is grown from a seed op (in program order) along
producer/consumer edges; an op already in a kernel never joins another one;
a group is never formed when a path between two of its ops leaves it (the
outlined kernel would depend on itself), counting kernels planned earlier in
the same pass as single nodes.  A seed that has fusable neighbours but cannot
take any of them is a rejected match; the reason is logged at debug level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.matching import as_operation, op_id, sig
from graphfuse.dialect.npu_target import load_target
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.base import UB_FUSION, FusionPass, Pattern, PatternCounts, try_consume_rewrite
from graphfuse.pipelines.graph_kernel.cluster import op_kind, outline
from graphfuse.pipelines.pass_base import OptionError, option

__all__ = [
    "DEFAULT_TARGET",
    "ATbeMatMulElemwiseFusionPass",
    "AutomaticUbFusion",
    "TbeEltwiseFusionPass",
    "TbeReduceElemwiseFusionPass",
    "UbFusionPass",
    "UbPlanner",
    "ub_kind",
]

#: The NPU target description whose Unified Buffer bounds AutomaticUbFusion's kernels by default.
DEFAULT_TARGET = "910b"
#: Alignment of a UB allocation when ``ub-size`` is given explicitly (the target's own alignment otherwise).
DEFAULT_UB_ALIGNMENT = 32

#: Ops whose cube-unit result an elementwise epilogue can read from UB: matmul and the fused matmul ops.
MATMUL_HEADS = frozenset({
    "graph.matmul", "graph.matmul_bias_add", "graph.matmul_add", "graph.matmul_relu", "graph.matmul_gelu",
})


def ub_kind(name: str) -> str:
    """"elementwise", "reduction", "layout", "matmul" or "opaque" (never UB-fused) for an op name."""
    if name in MATMUL_HEADS:
        return "matmul"
    if name == "graph.bias_add":  # an add of a 1-D operand along one axis: elementwise on the vector unit
        return "elementwise"
    return op_kind(name)


def _value_bytes(value: ir.Value, alignment: int = 1) -> int | None:
    """Bytes a tensor value occupies in a buffer of ``alignment``, or None when a dimension is dynamic."""
    signature = sig(value)
    count = signature.num_elements
    if count is None:
        return None
    return -(-count * NUMPY_DTYPES[signature.dtype].itemsize // alignment) * alignment


class UbPlanner:
    """One function body seen as positions: producers, consumers, and the kernels planned so far.

    Planning only reads the IR; :meth:`outline_kernels` changes it at the end,
    so positions stay valid while a pass decides.
    """

    def __init__(self, fusion_pass: UbFusionPass, func_op: ir.Operation):
        self.fusion_pass = fusion_pass
        self.func_op = func_op
        block = func_op.regions[0].blocks[0]
        self.ops = [as_operation(op) for op in block.operations][:-1]  # the terminator never fuses
        position = {op_id(op): i for i, op in enumerate(self.ops)}
        self.producers: list[list[int]] = [[] for _ in self.ops]
        self.consumers: list[list[int]] = [[] for _ in self.ops]
        for i, op in enumerate(self.ops):
            for operand in op.operands:
                owner = operand.owner
                if isinstance(owner, ir.Block):
                    continue
                j = position.get(op_id(owner))
                if j is not None and j not in self.producers[i]:
                    self.producers[i].append(j)
                    self.consumers[j].append(i)
        #: op position -> index of the planned kernel holding it
        self.kernel_of: dict[int, int] = {}
        self.kernels: list[list[int]] = []
        self._sizes: dict[tuple[ir.Value, int], int | None] = {}

    # -- queries ---------------------------------------------------------------------

    def kind(self, i: int) -> str:
        return ub_kind(self.ops[i].name)

    def free(self, i: int) -> bool:
        return i not in self.kernel_of

    def describe(self, i: int) -> str:
        op = self.ops[i]
        where = source_loc(op.location)
        return f"{op.name} at {where}" if where else op.name

    def neighbours(self, members: set[int], upstream: bool = True, downstream: bool = True) -> list[int]:
        """Ops outside ``members`` that produce for (upstream) or consume from (downstream) a member."""
        found: set[int] = set()
        for m in members:
            if upstream:
                found.update(self.producers[m])
            if downstream:
                found.update(self.consumers[m])
        return sorted(found - members)

    def cycle_reason(self, members: set[int]) -> str | None:
        """Why ``members`` cannot be one kernel (a path between two of them leaves the group), or None.

        Kernels planned earlier count as single nodes: a path through one of
        them continues from all of its ops, as it will once it is outlined.
        Edges go forward in program order, so only a kernel can lead back: ops
        after ``horizon`` (the last member, extended over every kernel that
        starts before it) cannot reach a member.
        """
        horizon = max(members)
        spans = sorted((kernel[0], kernel[-1]) for kernel in self.kernels)
        for first, last in spans:
            if first > horizon:
                break
            horizon = max(horizon, last)
        frontier = [c for m in members for c in self.consumers[m] if c not in members]
        seen: set[int] = set()
        while frontier:
            node = frontier.pop()
            if node in seen or node > horizon:
                continue
            seen.add(node)
            group = self.kernels[self.kernel_of[node]] if node in self.kernel_of else [node]
            for g in group:
                seen.add(g)
                for c in self.consumers[g]:
                    if c in members:
                        return (f"{self.describe(node)} lies on a path between ops of the kernel "
                                "(outside it, the kernel would depend on itself)")
                    if c not in seen:
                        frontier.append(c)
        return None

    def footprint(self, members: Iterable[int], alignment: int = 1) -> int | None:
        """Peak bytes of the values one kernel of ``members`` keeps in UB at once (None: a dynamic shape).

        The kernel runs its ops in program order on whole tensors: an input is
        resident from the start until its last use, an intermediate from its
        op until its last use, an output from its op until the end (it is
        copied out last).  A tiled kernel needs less; this bound is what
        keeps an untiled kernel within the buffer.
        """
        order = sorted(members)
        inside = {op_id(self.ops[i]) for i in order}
        live: dict[Any, list[int]] = {}  # value -> [first step, last step, bytes]
        last = len(order) - 1
        for step, i in enumerate(order):
            op = self.ops[i]
            for operand in op.operands:
                owner = operand.owner
                internal = not isinstance(owner, ir.Block) and op_id(owner) in inside
                if operand not in live:
                    size = self._bytes(operand, alignment)
                    if size is None:
                        return None
                    live[operand] = [0 if not internal else step, step, size]
                live[operand][1] = max(live[operand][1], step)
            for result in op.results:
                size = self._bytes(result, alignment)
                if size is None:
                    return None
                escapes = any(op_id(use.owner) not in inside for use in result.uses)
                entry = live.setdefault(result, [step, step, size])
                entry[0] = step
                if escapes:
                    entry[1] = last
        # The peak of the live bytes over the steps, from each value's start and end (one pass, not steps x values).
        change = [0] * (len(order) + 1)
        for first, end, size in live.values():
            change[first] += size
            change[end + 1] -= size
        peak = current = 0
        for delta in change[:-1]:
            current += delta
            peak = max(peak, current)
        return peak

    def _bytes(self, value: ir.Value, alignment: int) -> int | None:
        """_value_bytes, remembered: planning asks for the same values' sizes over and over."""
        key = (value, alignment)
        if key not in self._sizes:
            self._sizes[key] = _value_bytes(value, alignment)
        return self._sizes[key]

    # -- planning --------------------------------------------------------------------

    def grow(self, seed: int, admit: Callable[[int, set[int]], str | None],
             upstream: bool = True, downstream: bool = True) -> tuple[set[int], dict[int, str]]:
        """Grow a group from ``seed`` along edges until no free neighbour is admitted.

        ``admit(op, members)`` returns None to take the op or the reason not
        to.  Returns the group and, for each neighbour left out, why.  An op
        ``admit`` refused is not asked again (its kind does not change, and a
        larger group only needs more UB); one that would close a cycle is,
        since the group may absorb the op on the path later.
        """
        members = {seed}
        rejected: dict[int, str] = {}
        refused: set[int] = set()
        changed = True
        while changed:
            changed = False
            for j in self.neighbours(members, upstream, downstream):
                if j in refused:
                    continue
                if not self.free(j):
                    rejected[j] = "it is already in another UB kernel"
                    refused.add(j)
                    continue
                reason = admit(j, members)
                if reason is not None:
                    refused.add(j)
                if reason is None:
                    reason = self.cycle_reason(members | {j})
                if reason is None:
                    members.add(j)
                    rejected.pop(j, None)
                    changed = True
                else:
                    rejected[j] = reason
        return members, rejected

    def settle(self, seed: int, pattern: Pattern, members: set[int], rejected: dict[int, str]) -> bool | str:
        """Record the group as a kernel (True), or say why nothing fused (a reason, or False for no match)."""
        name = self.fusion_pass.name
        if len(members) > 1:
            for j, reason in sorted(rejected.items()):
                log.debug(f"{name}: {self.describe(j)} stays out of the kernel of {self.describe(seed)}: {reason}")
        if len(members) < 2:
            if not rejected:
                return False
            return "; ".join(f"{self.describe(j)} cannot join it: {reason}" for j, reason in sorted(rejected.items()))
        if not try_consume_rewrite(name, pattern.name, self.ops[seed].location, self.ops[seed].name):
            return False
        index = len(self.kernels)
        self.kernels.append(sorted(members))
        for m in members:
            self.kernel_of[m] = index
        return True

    def outline_kernels(self, taken: set[str]) -> None:
        """Outline every planned kernel into a private ``graph.kernel`` function, in program order."""
        fn_name = ir.StringAttr(self.func_op.attributes["sym_name"]).value
        kind = self.fusion_pass.fusion_kind
        # Outlining moves ops: take the member ops (not positions) before changing the block.
        plans = [[self.ops[m] for m in members] for members in sorted(self.kernels, key=min)]
        anchor = self.func_op
        for k, members in enumerate(plans):
            kernel_name = f"{fn_name}_{kind}_{k}"
            while kernel_name in taken:
                kernel_name += "_"
            taken.add(kernel_name)
            log.debug(f"{self.fusion_pass.name}: @{kernel_name} ({kind}): "
                      + ", ".join(op.name for op in members))
            anchor = outline(self.func_op, members, kind, kernel_name, after=anchor)


@dataclass(frozen=True)
class UbFusionPass(FusionPass):
    """A UB fusion pass: its patterns plan kernels on each function, which are then outlined.

    A pattern's function is called as ``rewrite(planner, position)`` for every
    op not yet in a kernel, in program order, and returns like a rewrite
    pattern: False (no match), a reason (matched, not fused), or True (a
    kernel was planned); its ``root`` is ``"*"`` (every op is offered).
    The greedy driver does not suit outlining (it would create functions
    while walking the one it rewrites), so :meth:`apply` drives the
    patterns itself and keeps the counts of the base class.
    """

    group: ClassVar[str] = UB_FUSION
    origin: ClassVar[str] = "cann"
    default_backends: ClassVar[frozenset[str]] = frozenset({"npu"})
    #: graph.fusion_kind of the kernels this pass outlines
    fusion_kind: ClassVar[str] = ""

    def apply(self, module: ir.Module) -> dict[str, PatternCounts]:
        counts = {p.name: PatternCounts() for p in self.patterns}
        with module.context:
            top = [as_operation(op) for op in module.body.operations]
            taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in top if "sym_name" in op.attributes}
            for func_op in top:
                if func_op.name != "func.func" or "graph.kernel" in func_op.attributes:
                    continue
                if not func_op.regions[0].blocks:
                    continue
                planner = UbPlanner(self, func_op)
                for pattern in self.patterns:
                    for i, op in enumerate(planner.ops):
                        if not planner.free(i):
                            continue
                        counts[pattern.name].record(pattern.rewrite(planner, i), op, pattern, self.name)
                planner.outline_kernels(taken)
        return counts


def _only(planner: UbPlanner, rejected: dict[int, str], kinds: Iterable[str]) -> dict[int, str]:
    """The rejections of neighbours of ``kinds``: a neighbour of another kind is no candidate (no match)."""
    return {j: reason for j, reason in rejected.items() if planner.kind(j) in kinds}


# --------------------------------------------------------------------------
# ATbeMatMulElemwiseFusionPass


def _matmul_epilogue(planner: UbPlanner, seed: int) -> bool | str:
    if planner.kind(seed) != "matmul":
        return False
    limit = planner.fusion_pass.max_epilogue

    def admit(j: int, members: set[int]) -> str | None:
        if planner.kind(j) != "elementwise":
            return f"it is not an elementwise op ({planner.kind(j)})"
        if len(members) - 1 >= limit:
            return f"the epilogue already has max-epilogue={limit} ops"
        return None

    members, rejected = planner.grow(seed, admit, upstream=False)
    rejected = _only(planner, rejected, {"elementwise"})
    return planner.settle(seed, _MATMUL_PATTERN, members, rejected)


_MATMUL_PATTERN = Pattern("TbeMatMulElemwiseFusion", "*", _matmul_epilogue)


@dataclass(frozen=True)
class ATbeMatMulElemwiseFusionPass(UbFusionPass):
    """matmul (or matmul_bias_add / matmul_add / matmul_relu / matmul_gelu) + elementwise epilogue -> one kernel.

    The cube unit's result reaches UB, where the vector unit applies the
    epilogue before one copy out to GM; unfused, the matmul result makes a
    GM round trip per epilogue op.  The epilogue is the matmul's elementwise
    consumers (and theirs), at most ``max-epilogue`` ops: CANN's matmul UB
    fusion pattern is matmul + (dequant) + (relu) + (eltwise), two
    elementwise ops after the matmul.  Producers of the matmul never join
    (its operands go GM -> L1 -> cube unit, not through UB).
    """

    name: ClassVar[str] = "ATbeMatMulElemwiseFusionPass"
    priority: ClassVar[int] = 270
    summary: ClassVar[str] = "UB fusion: a matmul and its elementwise epilogue become one kernel"
    fusion_kind: ClassVar[str] = "ub_matmul_elemwise"
    max_epilogue: int = option(2, "most elementwise ops fused after the matmul")
    example: ClassVar[str] = """\
func.func @matmul_epilogue(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.tanh"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (_MATMUL_PATTERN,)

    def __post_init__(self) -> None:
        if self.max_epilogue < 1:
            raise OptionError(f"option 'max-epilogue' of pass '{self.name}' must be >= 1, got {self.max_epilogue}")


# --------------------------------------------------------------------------
# TbeReduceElemwiseFusionPass


def _reduce_elemwise(planner: UbPlanner, seed: int) -> bool | str:
    if planner.kind(seed) != "reduction":
        return False
    limit = planner.fusion_pass.max_ops
    reduced_shape = sig(planner.ops[seed].results[0]).shape
    after = {seed}  # the reduction and the consumers that joined after it

    def admit(j: int, members: set[int]) -> str | None:
        if planner.kind(j) != "elementwise":
            return f"it is not an elementwise op ({planner.kind(j)})"
        if len(members) >= limit:
            return f"the kernel already has max-ops={limit} ops"
        if not any(j in planner.producers[m] for m in members):
            # A consumer only: legal after the reduction, and only while it keeps the reduced shape.
            if not any(p in after for p in planner.producers[j]):
                return "it consumes an op before the reduction without feeding the reduction"
            if sig(planner.ops[j].results[0]).shape != reduced_shape:
                return "it broadcasts the reduced value back to the full shape (a second pass over the input)"
            after.add(j)
        return None

    members, rejected = planner.grow(seed, admit)
    rejected = _only(planner, rejected, {"elementwise"})
    return planner.settle(seed, _REDUCE_PATTERN, members, rejected)


_REDUCE_PATTERN = Pattern("TbeReduceElemwiseFusion", "*", _reduce_elemwise)


@dataclass(frozen=True)
class TbeReduceElemwiseFusionPass(UbFusionPass):
    """Elementwise producers + one reduction (+ elementwise consumers of the reduced value) -> one kernel.

    The producers' results are reduced where they are computed, in UB; the
    reduced value's elementwise consumers (a mean's scale, an rsqrt) run on
    the small reduced tile before it goes out.  A consumer that broadcasts
    the reduced value back to the full shape stays out (it needs the full
    input again: a second pass), as does a second reduction.
    """

    name: ClassVar[str] = "TbeReduceElemwiseFusionPass"
    priority: ClassVar[int] = 280
    summary: ClassVar[str] = "UB fusion: a reduction with its elementwise producers and reduced-shape consumers"
    fusion_kind: ClassVar[str] = "ub_reduce_elemwise"
    max_ops: int = option(6, "most ops in one kernel")
    example: ClassVar[str] = """\
func.func @sum_of_squares(%x: tensor<4x16xf32>, %s: tensor<4x16xf32>) -> tensor<4xf32> {
  %0 = "graph.mul"(%x, %s) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.square"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = "graph.reduce_sum"(%1) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  %3 = "graph.sqrt"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (_REDUCE_PATTERN,)

    def __post_init__(self) -> None:
        if self.max_ops < 2:
            raise OptionError(f"option 'max-ops' of pass '{self.name}' must be >= 2, got {self.max_ops}")


# --------------------------------------------------------------------------
# TbeEltwiseFusionPass


def _eltwise_chain(planner: UbPlanner, seed: int) -> bool | str:
    if planner.kind(seed) != "elementwise":
        return False
    limit = planner.fusion_pass.max_ops

    def admit(j: int, members: set[int]) -> str | None:
        if planner.kind(j) != "elementwise":
            return f"it is not an elementwise op ({planner.kind(j)})"
        if len(members) >= limit:
            return f"the kernel already has max-ops={limit} ops"
        return None

    members, rejected = planner.grow(seed, admit)
    rejected = _only(planner, rejected, {"elementwise"})
    return planner.settle(seed, _ELTWISE_PATTERN, members, rejected)


_ELTWISE_PATTERN = Pattern("TbeEltwiseFusion", "*", _eltwise_chain)


@dataclass(frozen=True)
class TbeEltwiseFusionPass(UbFusionPass):
    """Up to ``max-ops`` connected elementwise ops -> one kernel (chains and DAGs).

    Every intermediate of the chain stays in UB; only the chain's inputs are
    read from GM and only the values used outside it are written back.  The
    default limit, 6, is the eltwise buffer-fusion limit of MindSpore's
    Ascend backend.
    """

    name: ClassVar[str] = "TbeEltwiseFusionPass"
    priority: ClassVar[int] = 290
    summary: ClassVar[str] = "UB fusion: up to max-ops connected elementwise ops become one kernel"
    fusion_kind: ClassVar[str] = "ub_eltwise"
    max_ops: int = option(6, "most elementwise ops in one kernel")
    example: ClassVar[str] = """\
func.func @eltwise_chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.sub"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (_ELTWISE_PATTERN,)

    def __post_init__(self) -> None:
        if self.max_ops < 2:
            raise OptionError(f"option 'max-ops' of pass '{self.name}' must be >= 2, got {self.max_ops}")


# --------------------------------------------------------------------------
# AutomaticUbFusion

_AUTO_KINDS = frozenset({"elementwise", "reduction", "layout", "matmul"})


def _automatic(planner: UbPlanner, seed: int) -> bool | str:
    if planner.kind(seed) not in _AUTO_KINDS:
        return False
    budget, alignment = planner.fusion_pass.ub_budget()
    alone = planner.footprint([seed], alignment)
    if alone is None:
        return False  # dynamic shapes: the UB footprint cannot be bounded

    limit = planner.fusion_pass.max_ops

    def admit(j: int, members: set[int]) -> str | None:
        if len(members) >= limit:
            return f"the kernel has {limit} ops already (max-ops)"
        kind = planner.kind(j)
        if kind not in _AUTO_KINDS:
            return f"it is not UB-fusable ({kind}: a kernel of its own)"
        matmuls = [m for m in members if planner.kind(m) == "matmul"]
        if kind == "matmul":
            if matmuls:
                return "the kernel already has a matmul"
            if any(p in members for p in planner.producers[j]):
                return "a matmul reads its operands from GM through L1, not from UB: it only heads a kernel"
        if any(j in planner.producers[m] for m in matmuls):
            return "it feeds the kernel's matmul, whose operands do not come from UB"
        need = planner.footprint(members | {j}, alignment)
        if need is None:
            return "its shape is dynamic: the kernel's UB footprint cannot be bounded"
        if need > budget:
            return f"the kernel would keep {need} bytes live in UB, more than its {budget} bytes"
        return None

    members, rejected = planner.grow(seed, admit)
    rejected = _only(planner, rejected, _AUTO_KINDS)
    return planner.settle(seed, _AUTO_PATTERN, members, rejected)


_AUTO_PATTERN = Pattern("AutomaticUbFusion", "*", _automatic)


@dataclass(frozen=True)
class AutomaticUbFusion(UbFusionPass):
    """Any connected group of UB-fusable ops whose live values fit the Unified Buffer -> one kernel.

    Fusable: elementwise, reduction and layout ops (reshape, transpose,
    broadcast_to), and one matmul as the head of its kernel.  The group grows
    from each op not yet fused while the kernel's peak live bytes (see
    :meth:`UbPlanner.footprint`, each value rounded up to the UB alignment)
    stay within the budget: ``ub-size`` when given, else the UB capacity of
    the NPU ``target`` description (192 KiB for the bundled 910b).  Fused and
    composite ops (softmax, layer_norm, ...) are kernels of their own
    already; they do not join.  Runs after the pattern-specific UB passes and
    fuses what they left.
    """

    name: ClassVar[str] = "AutomaticUbFusion"
    priority: ClassVar[int] = 300
    summary: ClassVar[str] = "UB fusion: connected fusable ops whose live values fit the Unified Buffer"
    fusion_kind: ClassVar[str] = "ub_auto"
    target: str = option(DEFAULT_TARGET, "NPU target (bundled name or .json path) whose UB capacity is the budget")
    ub_size: int = option(0, "UB bytes one kernel's live values may use; 0: the target's UB capacity")
    max_ops: int = option(128, "most ops in one kernel (bounds the planning time of graphs of tiny tensors)")
    example: ClassVar[str] = """\
func.func @row_scale(%x: tensor<8x16xf32>, %g: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = "graph.mul"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = "graph.reduce_max"(%0) {axes = array<i64: 1>, keep_dims = true} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %2 = "graph.div"(%0, %1) : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %3 = "graph.mul"(%2, %g) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (_AUTO_PATTERN,)

    def __post_init__(self) -> None:
        if self.ub_size < 0:
            raise OptionError(f"option 'ub-size' of pass '{self.name}' must not be negative, got {self.ub_size}")
        if self.max_ops < 2:
            raise OptionError(f"option 'max-ops' of pass '{self.name}' must be at least 2, got {self.max_ops}")

    def ub_budget(self) -> tuple[int, int]:
        """(UB bytes, allocation alignment): ``ub-size`` when given, else the target description's UB."""
        if self.ub_size:
            return self.ub_size, DEFAULT_UB_ALIGNMENT
        ub = load_target(self.target).ub
        return ub.bytes, ub.alignment
