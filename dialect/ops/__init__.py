"""Op definitions, one module per group; importing this package registers every op."""

from graphfuse.dialect.ops import (  # noqa: F401
    collective,
    composite,
    derived,
    elementwise,
    fused_matmul,
    fused_norm,
    indexing,
    nn,
    quant,
    reduction,
    shape,
    sorting,
    spatial,
)
