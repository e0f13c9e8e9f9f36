"""Op definitions, one module per group; importing this package registers every op."""

from graphfuse.dialect.ops import elementwise, nn, reduction, shape  # noqa: F401
