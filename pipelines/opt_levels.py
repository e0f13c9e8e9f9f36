"""Fusion opt levels: the levels and their one range check.

An opt level means the same in every entry point (docs/fusion-switches.md):
``graphfuse.compile(opt_level=N)``, ``graphfuse-run --opt-level N`` and
``graphfuse-bisect --opt-level N`` run the graph pipeline of N
(:func:`graphfuse.lowering.graph_pipelines.graph_pipeline`: it outlines kernels for the code generators, so it
lives in their layer); the flags'
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

Backend = Literal["cpu", "npu"]


def opt_level_error(value: object) -> str | None:
    """Why ``value`` is not an opt level (None when it is one)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in OPT_LEVELS:
        return None
    return f"opt level must be an integer in [{OPT_LEVELS[0]}, {OPT_LEVELS[-1]}], got {value!r}"
