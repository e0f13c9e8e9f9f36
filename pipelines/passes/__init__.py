"""Built-in graphfuse passes, one module per pass; importing this package registers them."""

from graphfuse.pipelines import fusion  # noqa: F401  (the pattern fusion passes)
from graphfuse.pipelines.passes import canonicalize, cse, dce, verify  # noqa: F401
