"""The converters of ONNX ops to graph ops, one module per op family; importing the package registers them all
(``registry._converter``)."""

from graphfuse.frontends.onnx.converters import elementwise, nn, reductions, shapes  # noqa: F401
