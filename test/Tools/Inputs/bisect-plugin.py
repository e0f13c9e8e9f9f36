"""A deliberately wrong pattern fusion pass, for the graphfuse-bisect tests.

test_silu_fusion rewrites x * sigmoid(x) into graph.silu(x), correctly, except
on tensors whose last axis has an odd size: there it builds x * sigmoid(-x)
(a sign error), the kind of bug that hides until one layer has an odd width.
"""

from dataclasses import dataclass
from typing import ClassVar

from graphfuse.dialect.matching import create_op, fused_location, producer, sig, users
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.registry import register_pass


def _fuse_silu(mul, rw):
    for i in (0, 1):
        sigmoid = producer(mul.operands[i], "graph.sigmoid")
        x = mul.operands[1 - i]
        if sigmoid is None or sigmoid.operands[0] != x:
            continue
        if len(users(sigmoid.results[0])) != 1:
            return "the sigmoid has other users"
        loc = fused_location([sigmoid, mul])
        if sig(x).shape[-1] % 2 == 0:
            fused = create_op(rw, "silu", [x], loc)
        else:  # the planted bug: silu(-x) negated is x * sigmoid(-x)
            fused = create_op(rw, "neg", [create_op(rw, "silu", [create_op(rw, "neg", [x], loc).results[0]],
                                                     loc).results[0]], loc)
        rw.replace_op(mul, list(fused.results))
        rw.erase_op(sigmoid)
        return True
    return False


@register_pass
@dataclass(frozen=True)
class TestSiluFusion(FusionPass):
    name: ClassVar[str] = "test_silu_fusion"
    summary: ClassVar[str] = "test-only: x * sigmoid(x) => silu(x), wrong on odd widths"
    origin: ClassVar[str] = "mindspore"
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("MulSigmoidToSilu", "graph.mul", _fuse_silu),)
