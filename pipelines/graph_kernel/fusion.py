"""graph-kernel-fusion: MindSpore's automatic fusion, its options mirroring MS_DEV_GRAPH_KERNEL_FLAGS.

``graph-kernel-fusion{opt-level=1 disable-expand-ops=Softmax,RmsNorm}`` means
``--opt_level=1 --disable_expand_ops=Softmax,RmsNorm``.  What runs at each
level (each step is also a pass of its own):

==========  =================================================================
opt-level   steps
==========  =================================================================
0           nothing (graph-kernel fusion off)
1           graph-kernel-expand, graph-kernel-cluster
2           + graph-kernel-cse (graph CSE), graph-kernel-simplify (arithmetic
            simplification), graph-kernel-canonicalize (constant folding,
            reshape/transpose chains), before clustering
3           + stitching (reduction -> elementwise -> reduction in one kernel)
            and parallel fusion (independent small kernels merged);
            experimental, as in the seed
==========  =================================================================

An option left empty takes its value from the flags (``--graph-kernel-flags``
or ``MS_DEV_GRAPH_KERNEL_FLAGS``); a value written in the pipeline wins.
``enable-pass`` / ``disable-pass`` name the steps above (also as
``stage.name``) and override the level: the level's steps, then the flags'
``enable_pass`` / ``disable_pass``, then the pipeline's own, each overriding
the one before (graph-fusion decides in the same order).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mlir import ir

from graphfuse.pipelines import log
from graphfuse.pipelines.graph_kernel.cluster import GraphKernelCluster
from graphfuse.pipelines.graph_kernel.expand import GraphKernelExpand
from graphfuse.pipelines.graph_kernel.simplify import GraphKernelSimplify
from graphfuse.pipelines.opt_levels import opt_level_error
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, canonical_pass_name, option
from graphfuse.pipelines.passes.canonicalize import GraphCanonicalize
from graphfuse.pipelines.passes.cse import GraphCSE
from graphfuse.pipelines.passes.dce import GraphDCE

#: The steps, in order, with the level that turns each on.
STEPS: tuple[tuple[str, int], ...] = (
    ("graph-kernel-expand", 1),
    ("graph-kernel-cse", 2),
    ("graph-kernel-simplify", 2),
    ("graph-kernel-canonicalize", 2),
    ("graph-kernel-dce", 1),
    ("graph-kernel-cluster", 1),
    ("graph-kernel-stitch", 3),
    ("graph-kernel-parallel", 3),
)
_STEP_NAMES = {name for name, _ in STEPS}


def is_step_name(text: str) -> bool:
    """Whether ``text`` names a graph-kernel-fusion step (enable_pass/disable_pass may name one)."""
    return canonical_pass_name(text) in _STEP_NAMES


@dataclass(frozen=True)
class GraphKernelFusion(GraphPass):
    name: ClassVar[str] = "graph-kernel-fusion"
    summary: ClassVar[str] = "Expand composite ops, simplify, and cluster basic ops into kernels (MindSpore style)"
    statistics: ClassVar[dict[str, str]] = {
        "num-expanded": "Number of composite ops expanded",
        "num-kernels": "Number of kernels outlined",
        "num-fused-ops": "Number of ops moved into kernels",
    }

    opt_level: int = option(-1, "0-3; -1 takes the flags' opt_level, or 2 (MindSpore's default) when they have none")
    backend: Literal["cpu", "npu"] = option("cpu", "target whose default expand and cluster lists apply")
    enable_expand_ops: tuple[str, ...] = option((), "ops to expand besides the defaults (e.g. Softmax)")
    disable_expand_ops: tuple[str, ...] = option((), "ops not to expand")
    enable_expand_ops_only: tuple[str, ...] = option((), "expand only these (the two options above are ignored)")
    enable_cluster_ops: tuple[str, ...] = option((), "ops to cluster besides the defaults (e.g. MatMul)")
    disable_cluster_ops: tuple[str, ...] = option((), "ops not to cluster")
    enable_cluster_ops_only: tuple[str, ...] = option((), "cluster only these (the two options above are ignored)")
    composite_op_limit_size: int = option(-1, "most ops in one kernel (-1: the flags' value, or 200)")
    enable_pass: tuple[str, ...] = option((), "steps to run below their level (see the table)")
    disable_pass: tuple[str, ...] = option((), "steps not to run")
    dump_as_text: bool = option(False, "write graph_kernel_dump/ with each kernel's source ops and decisions")

    def __post_init__(self) -> None:
        problem = opt_level_error(self.opt_level) if self.opt_level != -1 else None
        if problem is not None:
            raise OptionError(f"option 'opt-level' of pass '{self.name}': {problem}")
        for name in (*self.enable_pass, *self.disable_pass):
            if canonical_pass_name(name) not in _STEP_NAMES:
                known = ", ".join(n for n, _ in STEPS)
                raise OptionError(f"pass '{self.name}' has no step '{name}' (steps: {known})")

    def resolved(self, flags: Any) -> dict[str, Any]:
        """The effective settings: pipeline options where written, else the flags, else defaults.

        The enable/disable lists add up instead: the CPU pipeline writes its extra cluster ops as an option,
        and a user's ``--enable_cluster_ops=Atan`` (or ``--disable_cluster_ops=sin``) still counts.
        """
        lists = flags.lists if flags is not None else {}

        def pick(own: tuple[str, ...], key: str) -> tuple[str, ...]:
            return own or tuple(lists.get(key, ()))

        def both(own: tuple[str, ...], key: str) -> tuple[str, ...]:
            return tuple(dict.fromkeys((*own, *lists.get(key, ()))))

        level = self.opt_level
        if level < 0:
            level = flags.opt_level if flags is not None and flags.opt_level is not None else 2
        limit = self.composite_op_limit_size
        if limit < 0:
            limit = flags.composite_op_limit_size if flags is not None and flags.composite_op_limit_size else 200
        return {
            "opt_level": level,
            "limit": limit,
            "expand": (both(self.enable_expand_ops, "enable_expand_ops"),
                       both(self.disable_expand_ops, "disable_expand_ops"),
                       pick(self.enable_expand_ops_only, "enable_expand_ops_only")),
            "cluster": (both(self.enable_cluster_ops, "enable_cluster_ops"),
                        both(self.disable_cluster_ops, "disable_cluster_ops"),
                        pick(self.enable_cluster_ops_only, "enable_cluster_ops_only")),
            # Steps switched by the flags, then by the pipeline's own options (which win, as in graph-fusion).
            "flags_enable_pass": {canonical_pass_name(n) for n in lists.get("enable_pass", ())} & _STEP_NAMES,
            "flags_disable_pass": {canonical_pass_name(n) for n in lists.get("disable_pass", ())} & _STEP_NAMES,
            "enable_pass": {canonical_pass_name(n) for n in self.enable_pass},
            "disable_pass": {canonical_pass_name(n) for n in self.disable_pass},
            "dump_as_text": self.dump_as_text or (flags is not None and flags.dump_as_text),
        }

    def steps(self, settings: dict[str, Any]) -> list[tuple[str, GraphPass | None]]:
        """(step name, pass instance) in order; None for a step that does not run."""
        level = settings["opt_level"]
        on = {name for name, min_level in STEPS if level >= min_level > 0}
        on = (on | settings["flags_enable_pass"]) - settings["flags_disable_pass"]
        on = (on | settings["enable_pass"]) - settings["disable_pass"]
        enable, disable, only = settings["expand"]
        c_enable, c_disable, c_only = settings["cluster"]
        instances: dict[str, GraphPass] = {
            "graph-kernel-expand": GraphKernelExpand(
                backend=self.backend, enable_ops=enable, disable_ops=disable, only_ops=only),
            "graph-kernel-cse": GraphCSE(),
            "graph-kernel-simplify": GraphKernelSimplify(),
            "graph-kernel-canonicalize": GraphCanonicalize(),
            "graph-kernel-dce": GraphDCE(),
            "graph-kernel-cluster": GraphKernelCluster(
                backend=self.backend, enable_ops=c_enable, disable_ops=c_disable, only_ops=c_only,
                limit=settings["limit"], stitch="graph-kernel-stitch" in on,
                parallel="graph-kernel-parallel" in on, dump_as_text=settings["dump_as_text"]),
        }
        return [(name, instances.get(name) if name in on else None) for name, _ in STEPS]

    def run(self, module: ir.Module, context: PassContext) -> None:
        flags = context.switches.flags if context.switches is not None else None
        settings = self.resolved(flags)
        steps = self.steps(settings)
        log.info("graph kernel passes: " + ",".join(name for name, _ in steps))
        for name, instance in steps:
            if name in ("graph-kernel-stitch", "graph-kernel-parallel"):
                # Modes of graph-kernel-cluster: reported, run inside it.
                state = "is enabled (runs inside graph-kernel-cluster)" if _mode_on(steps, name) else "is disabled"
                log.info(f"graph kernel pass {name} {state}")
                continue
            if instance is None:
                log.info(f"graph kernel pass {name} is disabled")
                continue
            start = time.perf_counter()
            sub = PassContext(instance, context.switches, context.dump)
            instance.run(module, sub)
            for stat, value in sub.statistics.items():
                if stat in context.statistics:
                    context.statistics[stat] += value
            log.info(f"Run graph kernel pass {name} in {(time.perf_counter() - start) * 1e6:.2f} us")
            if context.dump is not None:
                context.dump(name, module)


def _mode_on(steps: list[tuple[str, GraphPass | None]], mode: str) -> bool:
    cluster = dict(steps).get("graph-kernel-cluster")
    return cluster is not None and getattr(cluster, "stitch" if mode.endswith("stitch") else "parallel")
