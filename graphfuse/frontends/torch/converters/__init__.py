"""The converters of ATen ops to graph ops, one module per op family; importing the package registers them all
(``registry._converts``)."""

from graphfuse.frontends.torch.converters import (  # noqa: F401
    attention,
    backward,
    collectives,
    elementwise,
    nn,
    reductions,
    routing,
    shapes,
    spatial,
    structure,
)
