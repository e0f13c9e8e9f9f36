"""A pattern fusion pass that breaks the IR, for the graphfuse-bisect tests.

test_hoist_sigmoid moves x * sigmoid(x)'s sigmoid above the op that defines
x when the last axis is odd: a use before its definition, which the verifier
after the pass rejects. graphfuse-bisect must name the pass (and the rewrite)
as the culprit, as it does for a pass that computes a wrong result.
"""

from dataclasses import dataclass
from typing import ClassVar

from graphfuse.dialect.matching import producer, sig
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.registry import register_pass


def _hoist_sigmoid(mul, rw):
    for i in (0, 1):
        sigmoid = producer(mul.operands[i], "graph.sigmoid")
        x = mul.operands[1 - i]
        if sigmoid is None or sigmoid.operands[0] != x or sig(x).shape[-1] % 2 == 0:
            continue
        definition = producer(x)
        if definition is None or not definition.is_before_in_block(sigmoid):
            return False
        sigmoid.move_before(definition)  # the planted bug
        return True
    return False


@register_pass
@dataclass(frozen=True)
class TestHoistSigmoid(FusionPass):
    name: ClassVar[str] = "test_hoist_sigmoid"
    summary: ClassVar[str] = "test-only: moves a sigmoid above its operand's definition on odd widths"
    origin: ClassVar[str] = "mindspore"
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("HoistSigmoid", "graph.mul", _hoist_sigmoid),)
