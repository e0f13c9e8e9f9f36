"""Converters of the backward ops a training step's joint graph keeps whole."""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.torch.converters.shapes import _axis
from graphfuse.frontends.torch.importer import _Importer
from graphfuse.frontends.torch.registry import Converter, _converts


@_converts("aten.threshold_backward.default", graph="`relu_grad` (threshold 0); else `greater`, `select`")
def _threshold_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    grad, x = imp.tensor(a["grad_output"], dtype), imp.tensor(a["self"], dtype)
    if float(a["threshold"]) == 0.0:
        return imp.emit("relu_grad", grad, x)
    above = imp.emit("greater", x, imp.const(np.asarray(float(a["threshold"])), dtype))
    return imp.emit("select", above, grad, imp.const(np.asarray(0.0), dtype))


def _by_output(graph_op: str) -> Converter:
    """``aten.<op>_backward(grad_output, output)`` -> ``graph.<op>_grad(y = output, dy = grad_output)``."""

    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        return imp.emit(graph_op, imp.tensor(a["output"], dtype), imp.tensor(a["grad_output"], dtype))

    return convert


_converts("aten.sigmoid_backward.default", graph="`sigmoid_grad`")(_by_output("sigmoid_grad"))
_converts("aten.tanh_backward.default", graph="`tanh_grad`")(_by_output("tanh_grad"))


@_converts("aten.gelu_backward.default", graph="`gelu_grad` (either approximation)")
def _gelu_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    approximate = a.get("approximate", "none")
    return imp.emit("gelu_grad", imp.tensor(a["grad_output"], dtype), imp.tensor(a["self"], dtype),
                    approximate=None if approximate == "none" else approximate)


def _softmax_backward(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        y, dy = imp.tensor(a["output"], dtype), imp.tensor(a["grad_output"], dtype)
        return imp.emit(graph_op, y, dy, axis=_axis(a["dim"], len(y.shape)))

    return convert


_converts("aten._softmax_backward_data.default", graph="`softmax_grad`")(_softmax_backward("softmax_grad"))
_converts("aten._log_softmax_backward_data.default", graph="`log_softmax_grad`")(
    _softmax_backward("log_softmax_grad"))


@_converts("aten.native_layer_norm_backward.default",
           graph="`layer_norm_grad` (the saved inverse std as a variance: `rsqrt` of it squared)",
           notes="a missing weight is ones; the gradients output_mask leaves out are not computed")
def _native_layer_norm_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Any, ...]:
    dtype = imp.out_dtype(node, 0)
    x, dy = imp.tensor(a["input"], dtype), imp.tensor(a["grad_out"], dtype)
    normalized = tuple(a["normalized_shape"])
    begin = len(x.shape) - len(normalized)
    rstd = imp.tensor(a["rstd"], dtype)
    # layer_norm_grad takes the variance and epsilon; 1 / rstd^2 with epsilon 0 gives rstd back
    variance = imp.emit("reciprocal", imp.emit("mul", rstd, rstd))
    gamma = (imp.const(np.ones(normalized), dtype) if a["weight"] is None else imp.tensor(a["weight"], dtype))
    dx, dgamma, dbeta = imp.emit("layer_norm_grad", x, dy, variance, imp.tensor(a["mean"], dtype), gamma,
                                 begin_norm_axis=begin, begin_params_axis=begin, epsilon=0.0)
    mask = list(a["output_mask"])
    return (dx if mask[0] else None, dgamma if mask[1] and a["weight"] is not None else None,
            dbeta if mask[2] and a["bias"] is not None else None)
