"""Built-in graphfuse passes, one module per pass; importing this package registers them."""

from graphfuse.lowering import graph_to_linalg, kernels, npu, row_fusion  # noqa: F401  (lowering, kernel, NPU passes)
from graphfuse.pipelines import fusion, graph_kernel  # noqa: F401  (pattern fusion, graph-kernel fusion)
from graphfuse.pipelines.passes import canonicalize, cse, dce, verify  # noqa: F401
