"""graph-kernel-expand: rewrite composite ops into basic ops before graph-kernel clustering.

MindSpore's graph-kernel fusion first *expands* composite operators (GeLU,
Softmax, AddN, ...) into basic ones, so that the clustering that follows can
fuse the pieces with their neighbours.  Which operators expand is decided per
backend (the seed's Appendix 1, :data:`DEFAULT_EXPAND_OPS`) and adjusted by the
``enable_expand_ops`` / ``disable_expand_ops`` / ``enable_expand_ops_only``
flags, here the pass options ``enable-ops``, ``disable-ops`` and ``only-ops``
(MindSpore names such as ``Square`` or dialect names such as ``square``).

The expanders themselves, and their numerics, are in
:mod:`graphfuse.dialect.expansions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mlir import ir
from mlir.rewrite import (
    GreedyRewriteConfig,
    GreedySimplifyRegionLevel,
    RewritePatternSet,
    apply_patterns_and_fold_greedily,
)

from graphfuse.dialect.expansions import EXPANDERS
from graphfuse.dialect.matching import graph_op_names
from graphfuse.pipelines import log
from graphfuse.pipelines.graph_kernel.op_names import resolve_ops
from graphfuse.pipelines.pass_base import GraphPass, PassContext, active_rewrite_budget, option

EXPANDED = "num-expanded"

#: Dialect ops expanded by default per backend: Appendix 1's CPU and Ascend columns, restricted to the
#: ops the dialect has.  softmax, log_softmax and layer_norm (N on both; Y only on GPU), rms_norm and
#: batch_norm (not listed) expand only when enabled.
DEFAULT_EXPAND_OPS: dict[str, frozenset[str]] = {
    "cpu": frozenset({"add_n", "bias_add", "gelu", "square", "tile", "relu", "tanh_grad", "sqrt_grad", "gelu_grad",
                      "softplus", "softplus_grad", "assign_add", "bias_add_grad", "expand_dims", "ones_like", "adam",
                      "maximum_grad", "minimum_grad"}),
    "npu": frozenset({
        "add_n", "bias_add", "gelu", "fast_gelu", "silu", "square", "tile", "sigmoid", "squared_difference",
        "reduce_mean", "relu", "erf", "tanh", "sigmoid_grad", "tanh_grad", "sqrt_grad", "rsqrt_grad", "relu_grad",
        "silu_grad", "fast_gelu_grad", "gelu_grad", "softplus", "softplus_grad", "hsigmoid", "hswish", "hshrink",
        "leaky_relu", "elu", "cosh", "sinh", "addcmul", "fused_mul_add", "assign_add", "bias_add_grad",
        "clamp_scalar", "div_mod", "fill_v2", "ones_like", "zeros_like", "sigmoid_cross_entropy_with_logits",
        "sigmoid_cross_entropy_with_logits_grad", "adam", "bce_with_logits_loss", "binary_cross_entropy",
        "adam_apply_one_with_decay", "clip_by_norm_no_div_sum", "lamb_apply_optimizer", "lamb_apply_weight",
        "repeat_interleave",
    }),
}

def _with_expanders(ops: set[str], flag: str) -> set[str]:
    missing = sorted(ops - EXPANDERS.keys())
    if missing:
        log.warning(f"{flag}: {', '.join(missing)} cannot be expanded (no expander) and "
                    f"{'is' if len(missing) == 1 else 'are'} ignored")
    return ops & EXPANDERS.keys()


def expand_set(
    backend: str = "cpu",
    enable: tuple[str, ...] = (),
    disable: tuple[str, ...] = (),
    only: tuple[str, ...] = (),
) -> frozenset[str]:
    """The dialect ops to expand: ``only`` alone when given, else the backend's defaults + ``enable`` - ``disable``.

    Names are MindSpore's (``GeLU``, ``Softmax``) or the dialect's (``gelu``);
    unknown names, and enabled ops without an expander, warn and are ignored
    (as ``enable_expand_ops_only`` makes MindSpore ignore the other two flags).
    """
    if backend not in DEFAULT_EXPAND_OPS:
        raise ValueError(f"unknown backend '{backend}' (expected one of {', '.join(DEFAULT_EXPAND_OPS)})")
    if only:
        return frozenset(_with_expanders(resolve_ops(only, "enable_expand_ops_only"), "enable_expand_ops_only"))
    enabled = _with_expanders(resolve_ops(enable, "enable_expand_ops"), "enable_expand_ops")
    return frozenset((DEFAULT_EXPAND_OPS[backend] | enabled) - resolve_ops(disable, "disable_expand_ops"))


def expand_patterns(ops: frozenset[str], count: Callable[[str], None]) -> RewritePatternSet:
    """One rewrite pattern per op of ``ops`` running its expander."""
    patterns = RewritePatternSet()
    # graphfuse-bisect's fuel: with a budget covering this pass, each expansion spends one rewrite.
    budget = active_rewrite_budget()
    if budget is not None and not budget.applies_to(GraphKernelExpand.name):
        budget = None
    for name in sorted(ops):
        expander = EXPANDERS[name]

        def apply(op: ir.OpView, rw: Any, expander: Callable[[ir.Operation, Any], bool] = expander) -> bool:
            # The driver reads a falsy return as success, a truthy one as "no match".
            op = op.operation
            if budget is not None and not budget.has_fuel(GraphKernelExpand.name):
                return True
            location, op_name = op.location, op.name  # read before the expander erases the op
            if expander(op, rw):
                count(EXPANDED)
                if budget is not None:
                    budget.consume(GraphKernelExpand.name, op_name.removeprefix("graph."), location, op_name)
                return False
            return True

        patterns.add(f"graph.{name}", apply)
    return patterns


@dataclass(frozen=True)
class GraphKernelExpand(GraphPass):
    name: ClassVar[str] = "graph-kernel-expand"
    summary: ClassVar[str] = "Expand composite ops (gelu, softmax, add_n, ...) into basic ops for graph-kernel fusion"
    statistics: ClassVar[dict[str, str]] = {EXPANDED: "Number of composite ops expanded into basic ops"}

    backend: Literal["cpu", "npu"] = option("cpu", "backend whose default expander list applies (npu = Ascend)")
    enable_ops: tuple[str, ...] = option((), "also expand these ops (enable_expand_ops)")
    disable_ops: tuple[str, ...] = option((), "do not expand these ops (disable_expand_ops)")
    only_ops: tuple[str, ...] = option((), "expand only these ops; enable/disable are ignored (enable_expand_ops_only)")

    def expand_ops(self) -> frozenset[str]:
        return expand_set(self.backend, self.enable_ops, self.disable_ops, self.only_ops)

    def run(self, module: ir.Module, context: PassContext) -> None:
        ops = self.expand_ops()
        present = {name.removeprefix("graph.") for name in graph_op_names(module)}
        if not ops & present:
            return
        with module.context:
            # Only the expanders rewrite: no folding, constant CSE or region simplification, which would move
            # (and de-locate) constants and touch ops this pass is not about.  graph-canonicalize cleans up.
            config = GreedyRewriteConfig()
            config.enable_folding = False
            config.enable_constant_cse = False
            config.region_simplification_level = GreedySimplifyRegionLevel.DISABLED
            apply_patterns_and_fold_greedily(module, expand_patterns(ops & present, context.count).freeze(), config)
