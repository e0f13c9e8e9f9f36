"""A pass plugin for the switch tests: a fusion pass marked as needed for correctness.

It rewrites graph.neg(graph.neg(x)) to x, so its effect is visible in the IR.
"""

from dataclasses import dataclass
from typing import ClassVar

from graphfuse.dialect.matching import producer
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.registry import register_pass


def _double_negation(op, rw):
    inner = producer(op.operands[0], "graph.neg")
    if inner is None:
        return False
    rw.replace_op(op, [inner.operands[0]])
    if not list(inner.results[0].uses):
        rw.erase_op(inner)
    return True


@register_pass
@dataclass(frozen=True)
class TestProtectedFusionPass(FusionPass):
    name: ClassVar[str] = "TestProtectedFusionPass"
    summary: ClassVar[str] = "test-only protected pass"
    origin: ClassVar[str] = "cann"
    protected: ClassVar[bool] = True
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("DoubleNegation", "graph.neg", _double_negation),)
