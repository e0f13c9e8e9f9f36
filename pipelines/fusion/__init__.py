"""Fusion passes under the seeds' names, and the graph-fusion / ub-fusion passes that run them by switch.

Importing this package registers every fusion pass.
"""

from graphfuse.pipelines.fusion import (  # noqa: F401
    attention,
    cann,
    graph_fusion,
    matmul,
    norm,
    reshape,
    torchair,
    ub,
    virtual_op,
)
