"""Pattern fusion passes under the seeds' names, and the graph-fusion pass that runs them by switch.

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
)
