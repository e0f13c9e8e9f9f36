"""Converters of elementwise ONNX ops, and of the activations composed from them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.onnx.dtypes import _element_type
from graphfuse.frontends.onnx.importer import _Node
from graphfuse.frontends.onnx.registry import _converter, _NodeError

_UNARY = {
    "Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Reciprocal": "reciprocal",
    "Tanh": "tanh", "Sigmoid": "sigmoid", "Erf": "erf", "Relu": "relu", "Floor": "floor", "Ceil": "ceil",
    "Round": "round", "Sign": "sign", "Sin": "sin", "Cos": "cos", "Not": "logical_not",
}


@_converter(*_UNARY, lowering={k: f"`{v}`" for k, v in _UNARY.items()})
def _unary(n: _Node) -> list[Tensor]:
    return [n.b.op(_UNARY[n.node.op_type], n.input(0))]


_BINARY = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "And": "logical_and", "Or": "logical_or",
    "Xor": "not_equal", "Equal": "equal", "Greater": "greater", "GreaterOrEqual": "greater_equal", "Less": "less",
    "LessOrEqual": "less_equal",
}


@_converter(*_BINARY, lowering={k: f"`{v}` (numpy broadcasting)" for k, v in _BINARY.items()})
def _binary(n: _Node) -> list[Tensor]:
    return [n.b.op(_BINARY[n.node.op_type], n.input(0), n.input(1))]


@_converter("Pow", lowering="`pow`; an exponent of another element type is cast to the base's (an integer base with "
                            "a float exponent: computed in the float type, then cast back)")
def _pow(n: _Node) -> list[Tensor]:
    base, exponent = n.input(0), n.input(1)
    if base.dtype in ("i8", "i32", "i64") and exponent.dtype not in ("i8", "i32", "i64"):
        # ONNX computes an integer base to a float power in floating point and truncates back.
        result = n.b.pow(n.b.cast(base, exponent.dtype), exponent)
        return [n.b.cast(result, base.dtype)]
    if exponent.dtype != base.dtype:
        exponent = n.b.cast(exponent, base.dtype)
    return [n.b.pow(base, exponent)]


_VARIADIC = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}


@_converter(*_VARIADIC, lowering={k: f"a left fold of `{v}`" + (", divided by the count" if k == "Mean" else "")
                                  for k, v in _VARIADIC.items()})
def _variadic(n: _Node) -> list[Tensor]:
    values = n.inputs()
    if not values:
        raise _NodeError("needs at least one input")
    result = values[0]
    for value in values[1:]:
        result = n.b.op(_VARIADIC[n.node.op_type], result, value)
    if n.node.op_type == "Mean":
        result = n.b.div(result, n.const_like(len(values), result))
    elif len(values) == 1:
        result = n.b.broadcast_to(result, result.shape)  # a copy: the output is a new value, not the input
    return [result]


@_converter("Where", lowering="`select`")
def _where(n: _Node) -> list[Tensor]:
    return [n.b.select(n.input(0), n.input(1), n.input(2))]


@_converter("Cast", lowering="`cast` (element types of the dialect only; `saturate` concerns float8 types only)")
def _cast(n: _Node) -> list[Tensor]:
    target = _element_type(int(n.attr("to")), "the target type 'to'")
    x = n.input(0)
    return [x if x.dtype == target else n.b.cast(x, target)]


@_converter("CastLike", lowering="`cast` to the second input's element type")
def _cast_like(n: _Node) -> list[Tensor]:
    x, like = n.input(0), n.input(1)
    return [x if x.dtype == like.dtype else n.b.cast(x, like.dtype)]


@_converter("Identity", lowering="the input value itself (no op)")
def _identity(n: _Node) -> list[Tensor]:
    return [n.input(0)]


@_converter("Dropout", constant_operands=(1, 2),
            lowering="the input itself, the optional mask all true: inference, or training with a constant ratio 0")
def _dropout(n: _Node) -> list[Tensor]:
    training = n.constant(2, "training_mode")
    if training is not None and bool(np.asarray(training)):
        ratio = n.constant(1, "ratio")
        if ratio is None or float(np.asarray(ratio)) != 0.0:
            raise _NodeError("training_mode=true with a nonzero ratio drops random elements: not supported")
    x = n.input(0)
    outputs: list[Tensor] = [x]
    if len(n.node.output) > 1 and n.node.output[1]:
        outputs.append(n.b.const(np.ones(x.shape, np.bool_)))
    return outputs


@_converter("IsNaN", lowering="`not_equal(x, x)`")
def _isnan(n: _Node) -> list[Tensor]:
    x = n.input(0)
    return [n.b.not_equal(x, x)]


@_converter("IsInf", lowering="`equal` with +inf and/or -inf (`detect_positive`, `detect_negative`)")
def _isinf(n: _Node) -> list[Tensor]:
    x = n.input(0)
    n.require_float(x)
    positive, negative = int(n.attr("detect_positive", 1)), int(n.attr("detect_negative", 1))
    tests = []
    if positive:
        tests.append(n.b.equal(x, n.const_like(np.inf, x)))
    if negative:
        tests.append(n.b.equal(x, n.const_like(-np.inf, x)))
    if not tests:
        return [n.b.const(np.zeros(x.shape, np.bool_))]
    return [tests[0] if len(tests) == 1 else n.b.logical_or(tests[0], tests[1])]


def _composed(fn: Callable[[_Node, Tensor], Tensor]) -> Callable[[_Node], list[Tensor]]:
    """An activation composed of several ops, computed in f32 for f16/bf16 inputs and rounded once at the end.

    ONNX's reference evaluates these formulas in f32 or wider; rounding every
    step to bf16 would drift by several ulps.
    """

    def convert(n: _Node) -> list[Tensor]:
        x = n.input(0)
        if x.dtype in ("f16", "bf16"):
            return [n.b.cast(fn(n, n.b.cast(x, "f32")), x.dtype)]
        return [fn(n, x)]

    convert.__name__ = fn.__name__
    return convert


@_converter("Gelu", lowering="`gelu` with the same `approximate`")
def _gelu(n: _Node) -> list[Tensor]:
    approximate = n.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise _NodeError(f"approximate={approximate} is not supported")
    return [n.b.gelu(n.input(0), approximate=approximate)]


@_converter("LeakyRelu", lowering="`select(x < 0, alpha * x, x)`")
@_composed
def _leaky_relu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 0.01), x)
    zero = n.const_like(0, x)
    return n.b.select(n.b.less(x, zero), n.b.mul(x, alpha), x)


@_converter("PRelu", lowering="`select(x < 0, slope * x, x)` (slope broadcast to x; before opset 7 a 1-D slope "
                              "of the channel count is per channel)")
def _prelu(n: _Node) -> list[Tensor]:
    x, slope = n.input(0), n.input(1)
    if n.opset < 7 and len(slope.shape) == 1 and len(x.shape) > 2 and slope.shape[0] == x.shape[1] > 1:
        slope = n.b.reshape(slope, (slope.shape[0],) + (1,) * (len(x.shape) - 2))
    zero = n.const_like(0, x)
    return [n.b.select(n.b.less(x, zero), n.b.mul(x, slope), x)]


def _exp_minus_one(n: _Node, x: Tensor) -> Tensor:
    return n.b.sub(n.b.exp(x), n.const_like(1, x))


@_converter("Elu", lowering="`select(x > 0, x, alpha * (exp(x) - 1))`")
@_composed
def _elu(n: _Node, x: Tensor) -> Tensor:
    negative = n.b.mul(_exp_minus_one(n, x), n.const_like(n.attr("alpha", 1.0), x))
    return n.b.select(n.b.greater(x, n.const_like(0, x)), x, negative)


@_converter("Selu", lowering="`gamma * select(x > 0, x, alpha * exp(x) - alpha)`")
@_composed
def _selu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 1.67326319217681884765625), x)
    gamma = n.const_like(n.attr("gamma", 1.05070102214813232421875), x)
    negative = n.b.sub(n.b.mul(n.b.exp(x), alpha), alpha)
    return n.b.mul(n.b.select(n.b.greater(x, n.const_like(0, x)), x, negative), gamma)


@_converter("Celu", lowering="`max(x, 0) + min(alpha * (exp(x / alpha) - 1), 0)`")
@_composed
def _celu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 1.0), x)
    zero = n.const_like(0, x)
    negative = n.b.mul(_exp_minus_one(n, n.b.div(x, alpha)), alpha)
    return n.b.add(n.b.maximum(x, zero), n.b.minimum(negative, zero))


@_converter("ThresholdedRelu", lowering="`select(x > alpha, x, 0)`")
@_composed
def _thresholded_relu(n: _Node, x: Tensor) -> Tensor:
    alpha = n.const_like(n.attr("alpha", 1.0), x)
    return n.b.select(n.b.greater(x, alpha), x, n.b.broadcast_to(n.const_like(0, x), x.shape))


def _hard_sigmoid(n: _Node, x: Tensor, alpha: float, beta: float) -> Tensor:
    linear = n.b.add(n.b.mul(x, n.const_like(alpha, x)), n.const_like(beta, x))
    return n.b.minimum(n.b.maximum(linear, n.const_like(0, x)), n.const_like(1, x))


@_converter("HardSigmoid", lowering="`min(max(alpha * x + beta, 0), 1)`")
@_composed
def _hard_sigmoid_op(n: _Node, x: Tensor) -> Tensor:
    return _hard_sigmoid(n, x, n.attr("alpha", 0.2), n.attr("beta", 0.5))


@_converter("HardSwish", lowering="`x * min(max(x / 6 + 1 / 2, 0), 1)`")
@_composed
def _hard_swish(n: _Node, x: Tensor) -> Tensor:
    return n.b.mul(x, _hard_sigmoid(n, x, 1.0 / 6.0, 0.5))


def _softplus(n: _Node, x: Tensor) -> Tensor:
    return n.b.log(n.b.add(n.b.exp(x), n.const_like(1, x)))


@_converter("Softplus", lowering="`log(exp(x) + 1)`")
@_composed
def _softplus_op(n: _Node, x: Tensor) -> Tensor:
    return _softplus(n, x)


@_converter("Softsign", lowering="`x / (1 + abs(x))`")
@_composed
def _softsign(n: _Node, x: Tensor) -> Tensor:
    return n.b.div(x, n.b.add(n.b.abs(x), n.const_like(1, x)))


@_converter("Mish", lowering="`x * tanh(log(exp(x) + 1))`")
@_composed
def _mish(n: _Node, x: Tensor) -> Tensor:
    return n.b.mul(x, n.b.tanh(_softplus(n, x)))


@_converter("Swish", lowering="`x * sigmoid(alpha * x)`")
@_composed
def _swish(n: _Node, x: Tensor) -> Tensor:
    alpha = float(n.attr("alpha", 1.0))
    scaled = x if alpha == 1.0 else n.b.mul(x, n.const_like(alpha, x))
    return n.b.mul(x, n.b.sigmoid(scaled))


@_converter("Tan", lowering="`sin(x) / cos(x)`")
@_composed
def _tan(n: _Node, x: Tensor) -> Tensor:
    return n.b.div(n.b.sin(x), n.b.cos(x))


@_converter("Sinh", "Cosh", lowering={"Sinh": "`(exp(x) - exp(-x)) / 2`", "Cosh": "`(exp(x) + exp(-x)) / 2`"})
@_composed
def _sinh_cosh(n: _Node, x: Tensor) -> Tensor:
    e_pos, e_neg = n.b.exp(x), n.b.exp(n.b.neg(x))
    combined = n.b.sub(e_pos, e_neg) if n.node.op_type == "Sinh" else n.b.add(e_pos, e_neg)
    return n.b.mul(combined, n.const_like(0.5, x))


@_converter("Clip", lowering="`minimum(maximum(x, min), max)`; opset < 11 takes min/max as attributes")
def _clip(n: _Node) -> list[Tensor]:
    x = n.input(0)
    if n.opset < 11:
        low = n.const_like(n.attr("min"), x) if "min" in n.attrs else None
        high = n.const_like(n.attr("max"), x) if "max" in n.attrs else None
    else:
        low = n.input(1) if n.has_input(1) else None
        high = n.input(2) if n.has_input(2) else None
    result = x
    if low is not None:
        result = n.b.maximum(result, low)
    if high is not None:
        result = n.b.minimum(result, high)
    if result is x:
        result = n.b.broadcast_to(x, x.shape)  # a copy, as for Sum of one input
    return [result]
