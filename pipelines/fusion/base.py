"""Pattern fusion passes: named MLIR rewrite patterns, switchable and counted as the seeds describe.

A fusion pass (``add_layer_norm_fusion``, ``ConvBatchnormFusionPass``...) is a
:class:`FusionPass` subclass listing :class:`Pattern` objects.  A pattern is a
Python rewrite rooted at one op name, applied by MLIR's greedy rewrite driver.
Its function returns

- ``False``: the op does not have the pattern's shape (no match);
- a string: the shape matched but fusing is not legal or not worth it; the
  string says why (printed at ``--log-level=debug``);
- ``True``: the pattern rewrote the IR.

matched_times counts matches (fused or rejected, each op once), effected_times
the rewrites, per pattern, as CANN's ``RunOnePattern:GraphId[N], GraphFusionPass[Name]: pattern=P,
matched_times=N, effected_times=M`` log lines report them.

Rewrite budget (fuel, for graphfuse-bisect): when a
:class:`~graphfuse.pipelines.pass_base.RewriteBudget` is installed with
``limit_rewrites`` and covers this pass, a pattern is not even tried once the
budget is spent (the op reports "no match", so the greedy driver sees no
change), and each rewrite it allowed is recorded with the pass, the pattern
and the root op's location.  A subclass that overrides :meth:`FusionPass.apply`
and rewrites by itself (outlining groups of ops, say) must do the same: call
``try_consume_rewrite(self.name, pattern_name, root_op.location, root_op.name)``
(from ``graphfuse.pipelines.pass_base``, re-exported here) right before each
rewrite and skip the rewrite when it returns False.  Without a budget it
returns True and records nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.matching import VerifyError, as_operation, op_id
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import (
    GraphPass,
    PassContext,
    RewriteBudget,
    active_rewrite_budget,
    current_graph_id,
    limit_rewrites,
    try_consume_rewrite,
)

__all__ = [
    "GRAPH_FUSION",
    "UB_FUSION",
    "FusionPass",
    "Pattern",
    "PatternCounts",
    "RewriteBudget",
    "limit_rewrites",
    "try_consume_rewrite",
]

RewriteFn = Callable[[ir.Operation, Any], "bool | str"]

#: Switch groups, as CANN's fusion_switch.cfg names them, plus TorchAir's FX pattern fusion.
GRAPH_FUSION = "GraphFusion"
UB_FUSION = "UBFusion"


@dataclass(frozen=True)
class Pattern:
    name: str  # as logged: pattern=<name>
    root: str  # op name the driver calls it on, e.g. "graph.layer_norm"
    rewrite: RewriteFn


class PatternCounts:
    """matched/effected times of one pattern, and why matches were rejected."""

    def __init__(self) -> None:
        self.matched = 0
        self.effected = 0
        self._rejected: set[int] = set()

    def record(self, outcome: bool | str, op: ir.Operation, pattern: Pattern, pass_name: str) -> None:
        """Count one outcome of a pattern's rewrite function: True fused, a string a rejected match, False none."""
        if outcome is True:
            self.matched += 1
            self.effected += 1
        elif isinstance(outcome, str):
            self.reject(op, outcome, pattern, pass_name)

    def reject(self, op: ir.Operation, reason: str, pattern: Pattern, pass_name: str) -> None:
        # The greedy driver may revisit an op: count and log each rejected op once.
        key = op_id(op)
        if key in self._rejected:
            return
        self._rejected.add(key)
        self.matched += 1
        where = source_loc(op.location)
        log.debug(f"{pass_name}: pattern {pattern.name} not fused at {where or op.name}: {reason}")


@dataclass(frozen=True)
class FusionPass(GraphPass):
    """A switchable pattern fusion pass (subclasses set the ClassVars and ``patterns``)."""

    #: GRAPH_FUSION or UB_FUSION: the fusion_switch.cfg section and fusion_result.json part
    group: ClassVar[str] = GRAPH_FUSION
    #: which system the name comes from: "mindspore", "cann" or "torchair"
    origin: ClassVar[str] = ""
    #: backends on which the pass is on by default ("cpu", "npu"); empty: off unless enabled
    default_backends: ClassVar[frozenset[str]] = frozenset({"cpu", "npu"})
    #: lowest graph-fusion opt-level that runs it
    opt_level: ClassVar[int] = 1
    #: where graph-fusion runs it: lower first.  Structural clean-ups first (they expose patterns), then the
    #: rewrites that recompose or fold ops (split convs merge into one conv before batch_norm folds into it, and
    #: that before the conv may turn into a matmul), then attention, normalization and matmul epilogues; a pass
    #: that absorbs more ops runs before one that would take a piece of its pattern (add_rms_norm_quant before
    #: add_rms_norm).  In UBFusion the pattern-specific passes run before the automatic one, which takes what
    #: they leave.  User patterns (the default) run after the built-ins, in registration order.
    priority: ClassVar[int] = 1000
    #: needed for correctness: stays on under "ALL": "off" (only an exact name turns it off)
    protected: ClassVar[bool] = False
    #: IR before the pass, for the generated pass catalog (the "after" is computed)
    example: ClassVar[str] = ""
    patterns: ClassVar[tuple[Pattern, ...]] = ()
    #: whether fusion_result.json lists the pass (FusionVirtualOpSetSwitch is only logged, as seed 004 says)
    in_fusion_result: ClassVar[bool] = True

    def run(self, module: ir.Module, context: PassContext) -> None:
        """Run as a pipeline step of its own: on unless a switch turns it off."""
        switches = context.switches
        if switches is not None and not switches.is_enabled(type(self)):
            log.info(f"graph kernel pass {self.name} is disabled")
            return
        self.execute(module, context)

    def execute(self, module: ir.Module, context: PassContext) -> None:
        """Apply the patterns, log the run and the counts, record them for fusion_result.json."""
        start = time.perf_counter()
        counts = self.apply(module)
        elapsed_us = (time.perf_counter() - start) * 1e6
        log.info(f"Run graph kernel pass {self.name} in {elapsed_us:.2f} us")
        for pattern in self.patterns:
            c = counts[pattern.name]
            if self.in_fusion_result:
                context.record_fusion(self, pattern.name, c.matched, c.effected)
            log.info(
                f"RunOnePattern:GraphId[{current_graph_id()}], {self.group}Pass[{self.name}]: "
                f"pattern={pattern.name}, matched_times={c.matched}, effected_times={c.effected}"
            )

    def apply(self, module: ir.Module) -> dict[str, PatternCounts]:
        """Apply every pattern to a fixpoint; returns the counts per pattern name."""
        counts = {p.name: PatternCounts() for p in self.patterns}
        with module.context:
            patterns = RewritePatternSet()
            by_root: dict[str, list[Pattern]] = {}
            for pattern in self.patterns:
                by_root.setdefault(pattern.root, []).append(pattern)
            for root, rooted in by_root.items():
                patterns.add(root, self._callback(rooted, counts))
            apply_patterns_and_fold_greedily(module, patterns.freeze())
        return counts

    def _callback(self, rooted: list[Pattern], counts: dict[str, PatternCounts]) -> Callable:
        budget = active_rewrite_budget()
        if budget is not None and not budget.applies_to(self.name):
            budget = None

        def callback(op: ir.OpView, rw: Any) -> bool:
            # The driver reads a falsy return as "rewrote", a truthy one as "no match".
            op = as_operation(op)
            if budget is not None and not budget.has_fuel(self.name):
                return True
            # Read before the rewrite: the root op may be erased by it.
            location = op.location if budget is not None else None
            op_name = op.name if budget is not None else ""
            for pattern in rooted:
                try:
                    outcome = pattern.rewrite(op, rw)
                except VerifyError as error:
                    # The fused op would not verify (types the pattern did not foresee): no fusion.
                    outcome = f"the fused op would be invalid: {error.message}"
                counts[pattern.name].record(outcome, op, pattern, self.name)
                if outcome is True:
                    if budget is not None:
                        budget.consume(self.name, pattern.name, location, op_name)
                    return False
            return True

        return callback
