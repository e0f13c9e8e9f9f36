"""Fusion opt levels: the one range check and the one table of graph pipelines per level and backend.

An opt level means the same in every entry point (docs/fusion-switches.md):
``graphfuse.compile(opt_level=N)``, ``graphfuse-run --opt-level N`` and
``graphfuse-bisect --opt-level N`` run :func:`graph_pipeline` of N; the flags'
``--opt_level=N`` (``MS_DEV_GRAPH_KERNEL_FLAGS``, ``--graph-kernel-flags``)
is the level of every fusion driver whose pipeline text does not set one, so
``graphfuse-opt --graph-kernel-flags=--opt_level=0 --graph-fusion`` fuses
nothing, exactly as ``graphfuse.compile(..., graph_kernel_flags="--opt_level=0")``.

0 cleans up only: every op, a fused op's parts included, becomes its own
loop nest (the unfused baseline).  1-3 also run pattern fusion, graph-kernel
fusion at that level, and outline each remaining fused op as a kernel, so
that its parts are fused into few loop nests too.
"""

from __future__ import annotations

from typing import Literal

#: The fusion opt levels.
OPT_LEVELS = range(4)
#: The level used when neither the caller nor the flags give one.
DEFAULT_OPT_LEVEL = 2

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

Backend = Literal["cpu", "npu"]


def opt_level_error(value: object) -> str | None:
    """Why ``value`` is not an opt level (None when it is one)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in OPT_LEVELS:
        return None
    return f"opt level must be an integer in [{OPT_LEVELS[0]}, {OPT_LEVELS[-1]}], got {value!r}"


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
