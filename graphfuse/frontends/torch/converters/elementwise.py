"""Converters of elementwise ATen ops: arithmetic, comparisons, activations, dtype changes."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.frontends.torch.converters.shapes import _to_node_shape
from graphfuse.frontends.torch.dtypes import _FLOATS
from graphfuse.frontends.torch.importer import _Importer
from graphfuse.frontends.torch.registry import Converter, _converts, _op_name

_UNARY_FLOAT = ("exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf", "silu", "sin", "cos",
                "acos", "asin", "atan", "acosh", "asinh", "expm1")
_UNARY_NUMERIC = ("abs", "neg", "relu", "sign")
_UNARY_ROUNDING = ("floor", "ceil", "round", "trunc")


def _unary(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        x = imp.tensor(a["self"], dtype)
        if graph_op in _UNARY_ROUNDING and dtype not in _FLOATS:
            return x  # integers are already whole
        return imp.emit(graph_op, x)

    return convert


for _name in (*_UNARY_FLOAT, *_UNARY_NUMERIC, *_UNARY_ROUNDING):
    _converts(
        f"aten.{_name}.default",
        graph=f"`{_name}`",
        notes="integer input: identity" if _name in _UNARY_ROUNDING else "",
    )(_unary(_name))


@_converts("aten.gelu.default", graph="`gelu`", notes="`approximate` none or tanh")
def _gelu(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("gelu", imp.tensor(a["self"], imp.out_dtype(node)), approximate=a["approximate"])


@_converts("aten.logical_not.default", graph="`cast` to i1, `logical_not`")
def _logical_not(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.emit("logical_not", imp.tensor(a["self"], "i1"))


@_converts("aten.isfinite.default", graph="`isfinite`", notes="integer input: all true")
def _isfinite(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"])
    if x.dtype not in _FLOATS:
        return imp.emit("broadcast_to", imp.const(np.asarray(True), "i1"), x.shape)
    return imp.emit("isfinite", x)


@_converts("aten.isnan.default", graph="`isnan`", notes="integer input: all false")
def _isnan(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _float_test(imp, imp.tensor(a["self"]), "isnan")


@_converts("aten.isinf.default", graph="`isinf`", notes="integer input: all false")
def _isinf(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _float_test(imp, imp.tensor(a["self"]), "isinf")


def _float_test(imp: _Importer, x: Tensor, graph_op: str) -> Tensor:
    """``graph_op`` (isnan, isinf) of a float tensor; an integer one is neither: all false."""
    if x.dtype not in _FLOATS:
        return imp.emit("broadcast_to", imp.const(np.asarray(False), "i1"), x.shape)
    return imp.emit(graph_op, x)


def _scaled(imp: _Importer, value: Tensor, alpha: Any) -> Tensor:
    if alpha is None or alpha == 1:
        return value
    return imp.emit("mul", value, imp.const(np.asarray(alpha), value.dtype))


def _binary(graph_op: str, swap: bool = False, with_alpha: bool = False) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        lhs, rhs = imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype)
        if with_alpha:
            rhs = _scaled(imp, rhs, a.get("alpha"))
        if swap:
            lhs, rhs = rhs, lhs
        return imp.emit(graph_op, lhs, rhs)

    return convert


_converts("aten.add.Tensor", "aten.add.Scalar", graph="`add` (`mul` by alpha)", notes="promotion as PyTorch")(
    _binary("add", with_alpha=True)
)
_converts("aten.sub.Tensor", "aten.sub.Scalar", graph="`sub` (`mul` by alpha)", notes="promotion as PyTorch")(
    _binary("sub", with_alpha=True)
)
_converts("aten.rsub.Scalar", "aten.rsub.Tensor", graph="`sub` (`mul` by alpha)", notes="other - alpha * self")(
    lambda imp, node, a: _rsub(imp, node, a)
)
_converts("aten.mul.Tensor", "aten.mul.Scalar", graph="`mul`", notes="promotion as PyTorch")(_binary("mul"))
_converts("aten.maximum.default", graph="`maximum`", notes="NaN propagates")(_binary("maximum"))
_converts("aten.minimum.default", graph="`minimum`", notes="NaN propagates")(_binary("minimum"))


def _rsub(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    scaled = _scaled(imp, imp.tensor(a["self"], dtype), a.get("alpha"))
    return imp.emit("sub", imp.tensor(a["other"], dtype), scaled)


@_converts(
    "aten.div.Tensor",
    "aten.div.Scalar",
    graph="`div`",
    notes="true division (integers divide as floats); rounding modes unsupported",
)
def _div(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    return imp.emit("div", imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype))


@_converts("aten.div.Tensor_mode", "aten.div.Scalar_mode", graph="`div`, `floor_div`; `trunc` of a float quotient",
           notes="rounding_mode None, 'floor' or 'trunc'")
def _div_mode(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    lhs, rhs = imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype)
    mode = a.get("rounding_mode")
    if mode == "floor":
        return imp.emit("floor_div", lhs, rhs)
    quotient = imp.emit("div", lhs, rhs)  # integers: truncated already
    return imp.emit("trunc", quotient) if mode == "trunc" and dtype in _FLOATS else quotient


_converts("aten.floor_divide.default", "aten.floor_divide.Scalar", graph="`floor_div`",
          notes="rounds toward -inf, as PyTorch")(_binary("floor_div"))
_converts("aten.fmod.Tensor", "aten.fmod.Scalar", graph="`mod`", notes="the dividend's sign (C's fmod)")(
    _binary("mod"))
_converts("aten.remainder.Tensor", "aten.remainder.Scalar", graph="`floor_mod`",
          notes="the divisor's sign (Python's %)")(_binary("floor_mod"))
_converts("aten.atan2.default", graph="`atan2`", notes="integers promoted to float")(_binary("atan2"))


#: pow(x, c) for the exponents PyTorch computes by a dedicated kernel, as the graph op computing the same
_POW_SPECIAL = {2: "square", 0.5: "sqrt", -0.5: "rsqrt", -1: "reciprocal"}


@_converts(
    "aten.pow.Tensor_Scalar",
    "aten.pow.Tensor_Tensor",
    "aten.pow.Scalar",
    graph="`pow`; `square`, `sqrt`, `rsqrt`, `reciprocal` for exponents 2, 0.5, -0.5, -1",
)
def _pow(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    base, exponent = a["self"], a["exponent"]
    if isinstance(exponent, int | float) and not isinstance(exponent, bool):
        if exponent == 1:
            return imp.tensor(base, dtype)
        special = _POW_SPECIAL.get(exponent)
        if special is not None and (special == "square" or dtype in _FLOATS):
            return imp.emit(special, imp.tensor(base, dtype))
    return imp.emit("pow", imp.tensor(base, dtype), imp.tensor(exponent, dtype))


_COMPARISONS = {
    "eq": "equal",
    "ne": "not_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "lt": "less",
    "le": "less_equal",
}


def _comparison(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.promoted_dtype(a["self"], a["other"])
        return imp.emit(graph_op, imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype))

    return convert


for _name, _graph_op in _COMPARISONS.items():
    _converts(
        f"aten.{_name}.Tensor", f"aten.{_name}.Scalar", graph=f"`{_graph_op}`", notes="operands promoted first"
    )(_comparison(_graph_op))
# torch.greater & co. stay under their long names in an exported program
for _name, _graph_op in (("greater", "greater"), ("greater_equal", "greater_equal"), ("less", "less"),
                         ("less_equal", "less_equal"), ("not_equal", "not_equal")):
    _converts(
        f"aten.{_name}.Tensor", f"aten.{_name}.Scalar", graph=f"`{_graph_op}`", notes="operands promoted first"
    )(_comparison(_graph_op))


def _logical(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        return imp.emit(graph_op, imp.tensor(a["self"], "i1"), imp.tensor(a["other"], "i1"))

    return convert


_converts("aten.logical_and.default", graph="`logical_and`", notes="operands cast to i1")(_logical("logical_and"))
_converts("aten.logical_or.default", graph="`logical_or`", notes="operands cast to i1")(_logical("logical_or"))


def _bitwise(graph_op: str) -> Converter:
    """``&``, ``|``, ``^`` (transformers combines its padding and causal masks so): on booleans the logical ops
    (xor is ``not_equal``), on integers the bitwise ops, operands promoted as PyTorch promotes them."""
    boolean = {"bitwise_and": "logical_and", "bitwise_or": "logical_or", "bitwise_xor": "not_equal"}[graph_op]

    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        dtype = imp.out_dtype(node)
        if dtype in _FLOATS:
            raise imp.unsupported(node, f"a bitwise operation on {dtype}")
        lhs, rhs = imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype)
        return imp.emit(boolean if dtype == "i1" else graph_op, lhs, rhs)

    return convert


for _name, _graph_op in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
    _converts(f"aten.bitwise_{_name}.Tensor", f"aten.bitwise_{_name}.Scalar", f"aten.__{_name}__.Tensor",
              f"aten.__{_name}__.Scalar", graph=f"`{_graph_op}`; on booleans `logical_{_name}`"
              if _name != "xor" else "`bitwise_xor`; on booleans `not_equal`",
              notes="booleans and integers, promoted as PyTorch")(_bitwise(_graph_op))


@_converts("aten.bitwise_not.default", graph="`bitwise_not`; on booleans `logical_not`",
           notes="booleans and integers (`~mask`)")
def _bitwise_not(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    if dtype in _FLOATS:
        raise imp.unsupported(node, f"a bitwise operation on {dtype}")
    return imp.emit("logical_not" if dtype == "i1" else "bitwise_not", imp.tensor(a["self"], dtype))


@_converts(
    "aten.where.self", "aten.where.ScalarOther", "aten.where.ScalarSelf", "aten.where.Scalar", graph="`select`"
)
def _where(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    cond = imp.tensor(a["condition"], "i1")
    return imp.emit("select", cond, imp.tensor(a["self"], dtype), imp.tensor(a["other"], dtype))


@_converts("aten.masked_fill.Scalar", "aten.masked_fill.Tensor", graph="`select`")
def _masked_fill(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    return imp.emit("select", imp.tensor(a["mask"], "i1"), imp.tensor(a["value"], dtype), imp.tensor(a["self"], dtype))


@_converts(
    "aten.clamp.default",
    "aten.clamp_min.default",
    "aten.clamp_max.default",
    graph="`maximum`, `minimum`",
    notes="scalar bounds",
)
def _clamp(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    low = a.get("min")
    high = a.get("max")
    if low is not None:
        x = imp.emit("maximum", x, imp.tensor(low, dtype))
    if high is not None:
        x = imp.emit("minimum", x, imp.tensor(high, dtype))
    return x


@_converts("aten.hardtanh.default", "aten.relu6.default", graph="`maximum`, `minimum`",
           notes="relu6 is hardtanh(0, 6)")
def _hardtanh(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    relu6 = _op_name(node.target) == "aten.relu6.default"
    low = imp.tensor(0.0 if relu6 else float(a.get("min_val", -1.0)), dtype)
    high = imp.tensor(6.0 if relu6 else float(a.get("max_val", 1.0)), dtype)
    return imp.emit("minimum", imp.emit("maximum", x, low), high)


def _relu6_of_shifted(imp: _Importer, x: Tensor, dtype: str) -> Tensor:
    """``min(max(x + 3, 0), 6)``: PyTorch's hardsigmoid and hardswish before their division by 6."""
    shifted = imp.emit("add", x, imp.tensor(3.0, dtype))
    return imp.emit("minimum", imp.emit("maximum", shifted, imp.tensor(0.0, dtype)), imp.tensor(6.0, dtype))


@_converts("aten.hardsigmoid.default", graph="`add`, `maximum`, `minimum`, `div`",
           notes="`min(max(x + 3, 0), 6) / 6` as PyTorch computes it")
def _hardsigmoid(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    return imp.emit("div", _relu6_of_shifted(imp, x, dtype), imp.tensor(6.0, dtype))


@_converts("aten.hardswish.default", graph="`add`, `maximum`, `minimum`, `mul`, `div`",
           notes="`x * min(max(x + 3, 0), 6) / 6` as PyTorch computes it")
def _hardswish(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    x = imp.tensor(a["self"], dtype)
    return imp.emit("div", imp.emit("mul", x, _relu6_of_shifted(imp, x, dtype)), imp.tensor(6.0, dtype))


@_converts(
    "aten._to_copy.default",
    "aten.type_as.default",
    graph="`cast` (none when the dtype stays)",
    notes="CPU only",
)
def _to(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    device = a.get("device")
    if device is not None and torch.device(device).type != "cpu":
        raise imp.unsupported(node, f"a copy to device {device}")
    return imp.tensor(a["self"], imp.out_dtype(node))


@_converts("aten.clone.default", "aten.alias.default", "aten.detach.default", graph="none (the operand)")
def _identity(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return imp.tensor(a["self"])


@_converts("aten.copy.default", graph="`broadcast_to` and `cast` of the source (none when it fits)",
           notes="`x.copy_(src)` (functionalized): src broadcast to x's shape and cast to its dtype; into a "
           "model input it is a mutated input the caller writes back")
def _copy(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _to_node_shape(imp, node, imp.tensor(a["src"], imp.out_dtype(node)), "broadcast_to")


@_converts("aten.softplus.default", graph="`softplus` (beta, threshold)", notes="x where beta x > threshold")
def _softplus(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    x = imp.tensor(a["self"], imp.out_dtype(node))
    return imp.emit("softplus", x, beta=float(a["beta"]), threshold=float(a["threshold"]))
