"""The graph pipeline of each fusion opt level and backend: the one table of them.

0 cleans up only: every op, a fused op's parts included, becomes its own
loop nest (the unfused baseline).  1-3 also run pattern fusion, graph-kernel
fusion at that level, and outline each remaining fused op as a kernel
(``outline-fused-ops``, a pass of this layer: which ops are fused is what the
lowering decomposes), so that its parts are fused into few loop nests too.
The levels and their range check are :mod:`graphfuse.pipelines.opt_levels`'.
"""

from __future__ import annotations

from graphfuse.pipelines.opt_levels import Backend, opt_level_error

__all__ = ["CLEANUP", "CPU_EXTRA_CLUSTER_OPS", "graph_pipeline"]

CLEANUP = "graph-canonicalize,graph-cse,graph-dce"
#: Basic ops the CPU code generator fuses well that the seed's CPU cluster list leaves out: the comparisons and
#: logical ops of expanded gelu/erf and of masks, the elementwise activations the generator lowers as they
#: are (left out, they cut one elementwise chain into several kernels, or stay a lone loop nest: a Llama MLP's
#: silu before its product with the up projection), and reduce_mean (a layer norm written out as means, as
#: DeBERTa's is, was five kernels, two of them serial loops over the whole tensor).
CPU_EXTRA_CLUSTER_OPS = (
    "greater,greater_equal,not_equal,logical_and,logical_or,isfinite,broadcast_to,reduce_min,reduce_mean,"
    "silu,sigmoid,erf,sin,cos,floor,ceil,sign"
)


def graph_pipeline(opt_level: int, backend: Backend = "cpu", graph_kernel: bool = True) -> str:
    """The graph pipeline of ``opt_level`` for ``backend`` (ValueError for a level out of range); without
    ``graph_kernel`` (MindSpore's ``enable_graph_kernel=False``, ``jit_level="O0"``) pattern fusion alone."""
    problem = opt_level_error(opt_level)
    if problem is not None:
        raise ValueError(problem)
    if opt_level == 0:
        return f"builtin.module({CLEANUP})"
    # Pattern fusion has no level-3 passes: level 3 adds stitching and parallel fusion to graph-kernel fusion.
    if backend == "npu":
        fusion = f"graph-fusion{{opt-level={min(opt_level, 2)} backend=npu}}"
        kernels = f"graph-kernel-fusion{{opt-level={opt_level} backend=npu}}"
        outline = "outline-fused-ops"
    else:
        fusion = f"graph-fusion{{opt-level={min(opt_level, 2)}}}"
        kernels = f"graph-kernel-fusion{{opt-level={opt_level} enable-cluster-ops={CPU_EXTRA_CLUSTER_OPS}}}"
        # the CPU generator fuses a compound op's row loops with the elementwise ops around it
        outline = "outline-fused-ops{absorb=true}"
    if not graph_kernel:
        return f"builtin.module({CLEANUP},{fusion},graph-dce,{outline})"
    return f"builtin.module({CLEANUP},{fusion},{kernels},graph-dce,{outline})"
