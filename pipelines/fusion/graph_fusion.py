"""graph-fusion: run every enabled pattern fusion pass in one fixed order.

``graph-fusion{opt-level=2 enable-pass=a,b disable-pass=c,d backend=cpu}``.
The switches of the other front ends (MindSpore flags, the CANN switch file)
reach it through the pipeline; its own options override them (see
pipelines/fusion/switches.py for the layers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from mlir import ir

from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.base import FusionPass
from graphfuse.pipelines.fusion.switches import FusionSwitches
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option
from graphfuse.pipelines.registry import PASSES, all_passes, canonical_pass_name, register_pass

#: The execution order.  Structural clean-ups first (they expose patterns), then
#: the rewrites that recompose or fold ops (split convs merge into one conv
#: before batch_norm folds into it, and that before the conv may turn into a
#: matmul), then attention, normalization and matmul
#: epilogues; a pass that absorbs more ops runs before one that would
#: take a piece of its pattern (add_rms_norm_quant before add_rms_norm,
#: add_cast_rms_norm_cast before add_rms_norm).  Passes registered later (user
#: patterns) run after these, in registration order.
ORDER = (
    "shape_reshape",
    "shape_reshape_2",
    "split_concat_fusion",
    "ZConcatv2dFusionPass",
    "SoftmaxSmallOpFusionPass",
    "SplitConvConcatFusionPass",
    "BatchNormSplitFusionPass",
    "ConvBatchnormFusionPass",
    "ConvToFullyConnectionFusionPass",
    "FlashAttentionFusionV1",
    "FlashAttentionFusionV2",
    "add_layer_norm_fusion",
    "add_layer_norm_v3_fusion",
    "add_layer_norm_ext_fusion",
    "add_rms_norm_quant_fusion",
    "rms_norm_quant_fusion",
    "add_cast_rms_norm_cast_fusion",
    "add_rms_norm_fusion",
    "pattern_fusion_pass",
    "inference_swiglu_fusion",
    "inference_matmul_split_fusion",
    "matmul_elem_biasadd_fusion",
    "MatMulBiasAddFusionPass",
    "matmul_elem_add_fusion",
    "matmul_elem_relu_fusion",
    "matmul_elem_gelu_fusion",
)


def fusion_passes() -> list[type[FusionPass]]:
    """Every registered fusion pass, in execution order."""
    rank = {canonical_pass_name(name): i for i, name in enumerate(ORDER)}
    all_passes()  # make sure the built-in passes are registered
    registered = [cls for cls in PASSES.values() if isinstance(cls, type) and issubclass(cls, FusionPass)]
    order = {cls: i for i, cls in enumerate(registered)}
    return sorted(registered, key=lambda c: (rank.get(canonical_pass_name(c.name), len(ORDER)), order[c]))


@register_pass
@dataclass(frozen=True)
class GraphFusion(GraphPass):
    name: ClassVar[str] = "graph-fusion"
    summary: ClassVar[str] = "Run the enabled pattern fusion passes in their fixed order"

    opt_level: int = option(2, "0 runs no fusion; a pass runs when its opt level is at most this")
    enable_pass: tuple[str, ...] = option((), "passes to run even if off by default or switched off")
    disable_pass: tuple[str, ...] = option((), "passes not to run")
    backend: Literal["cpu", "npu"] = option("cpu", "target whose default pass set applies")

    def __post_init__(self) -> None:
        if not 0 <= self.opt_level <= 3:
            raise OptionError(f"option 'opt-level' of pass '{self.name}' must be in [0, 3], got {self.opt_level}")
        known = {canonical_pass_name(c.name) for c in fusion_passes()}
        for name in (*self.enable_pass, *self.disable_pass):
            if canonical_pass_name(name.rsplit(".", 1)[-1]) not in known:
                raise OptionError(f"pass '{self.name}' does not know fusion pass '{name}'")

    def enabled(self, cls: type[FusionPass], switches: FusionSwitches) -> bool:
        default = self.opt_level >= cls.opt_level > 0 and self.backend in cls.default_backends
        enabled = switches.decide(cls, default)
        names = lambda values: {canonical_pass_name(v.rsplit(".", 1)[-1]) for v in values}  # noqa: E731
        key = canonical_pass_name(cls.name)
        if key in names(self.enable_pass):
            enabled = True
        if key in names(self.disable_pass):
            enabled = False
        return enabled

    def run(self, module: ir.Module, context: PassContext) -> None:
        switches = context.switches or FusionSwitches()
        passes = fusion_passes()
        log.info("graph kernel passes: " + ",".join(cls.name for cls in passes))
        for cls in passes:
            if not self.enabled(cls, switches):
                log.info(f"graph kernel pass {cls.name} is disabled")
                continue
            cls().execute(module, context)
            if context.dump is not None:
                context.dump(cls.name, module)
