"""Graph-kernel fusion (MindSpore's automatic fusion): expand composite ops, simplify, cluster into kernels.

Importing this package registers its passes.
"""

from graphfuse.pipelines.graph_kernel import cluster, expand, fusion, simplify  # noqa: F401
