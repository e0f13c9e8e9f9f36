"""MindSpore's normalization fusion passes: add/cast/quantize chains around layer_norm and rms_norm.

Each pass rewrites a fixed chain of basic graph ops into one fused op of
``graphfuse.dialect.ops.fused_norm`` whose reference is exactly that chain, so
fusing never changes a result bit:

- add_layer_norm_fusion: add (used by nothing else) -> layer_norm => add_layer_norm;
- add_layer_norm_v3_fusion: bias_add (last axis) -> layer_norm => add_layer_norm;
- add_layer_norm_ext_fusion: add (also used elsewhere) -> layer_norm => add_layer_norm, its sum reused;
- add_rms_norm_quant_fusion: add -> rms_norm -> quantize => add_rms_norm_quant;
- rms_norm_quant_fusion: rms_norm -> quantize => rms_norm_quant;
- add_cast_rms_norm_cast_fusion: cast(x1), cast(x2) f16/bf16 -> f32, add, rms_norm, cast back
  => add_rms_norm in its mixed-precision form (computing in f32); and MindSpore's order, add in
  f16/bf16 -> cast to f32 -> rms_norm -> cast back (HF's bf16 RMSNorm after a residual add) =>
  add_rms_norm in the low type, gamma narrowed where its values are the low type's;
- add_rms_norm_fusion: add -> rms_norm => add_rms_norm;
- rms_norm_fusion (graphfuse's own): a hand-written RMSNorm of basic ops,
  ``x * rsqrt(reduce_mean(x * x, last axis, keep_dims) + eps) [* w]``, => rms_norm. It runs
  before the passes above, which then see the norm whatever front end wrote it. Unlike them it
  may change low bits: rms_norm computes in f32 and divides by the square root, where the chain
  rounds each op to its type and multiplies by the reciprocal.

Run order matters where chains overlap (``FusionPass.priority``, graph-fusion's
order): add_rms_norm_quant_fusion runs before rms_norm_quant_fusion and
add_rms_norm_fusion, or they would take the rms_norm -> quantize or add ->
rms_norm part of an add -> rms_norm -> quantize chain and leave a graph the
three-op fusion no longer matches; add_cast_rms_norm_cast_fusion runs before
add_rms_norm_fusion, whose add -> rms_norm pattern also matches the f32 add ->
rms_norm inside the cast chain. (MindSpore lists add_rms_norm_fusion before
add_cast_rms_norm_cast_fusion because its only chain has the cast between the
add and the norm, which add_rms_norm_fusion cannot take.)

Wherever a fused op also returns an intermediate (``sum``), other users of
that intermediate read the fused op's result instead; an intermediate the fused
op does not return (the rms_norm before a quantize) must have no other user.
The helpers here (:func:`anchor_for`, :func:`commit`) are shared with the
TorchAir pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.matching import (
    attributes,
    constant_array,
    create_constant,
    create_op,
    fused_location,
    producer,
    sig,
    users,
)
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.pipelines.fusion.base import GRAPH_FUSION, FusionPass, Pattern

_LOW_PRECISION = ("f16", "bf16")


# --------------------------------------------------------------------------
# Shared helpers (also used by the TorchAir pass).


class InsertBefore:
    """What :func:`create_op` needs of a rewriter (``ip``): new ops go right before ``anchor``."""

    def __init__(self, anchor: ir.Operation):
        self.ip = ir.InsertionPoint(anchor)


def other_users(value: ir.Value, *chain: ir.Operation) -> list[ir.Operation]:
    """Users of ``value`` outside ``chain`` (func.return included)."""
    return [u for u in users(value) if not any(u == c for c in chain)]


def anchor_for(
    root: ir.Operation, chain: Sequence[ir.Operation], operands: Iterable[ir.Value]
) -> ir.Operation | str:
    """The op before which the fused ops go, or why there is none.

    The root is the last op of the chain, so the fused op's operands (operands
    of chain ops) are defined before it; but a user of an intermediate the
    fused op returns (a residual sum) may come before the root: then the fused
    op goes before the first such user, which needs its operands defined there.
    """
    block = root.block
    for op in chain:
        if op.block != block:
            return "the chain spans several blocks"
    anchor = root
    for op in chain:
        for result in op.results:
            for user in other_users(result, *chain):
                if user.block != block:
                    return "an intermediate is used inside a nested region"
                if user.is_before_in_block(anchor):
                    anchor = user
    if anchor != root:
        for value in operands:
            defining = producer(value)
            if defining is not None and defining.block == block and not defining.is_before_in_block(anchor):
                return "an operand of the fused op is defined after a user of an intermediate"
    return anchor


Plan = list[tuple[ir.Operation, dict[int, ir.Value]]]


def commit(rw: Any, plan: Plan, created: Sequence[ir.Operation]) -> bool | str:
    """Redirect the used results of each planned op to its new values, then erase it (in plan order).

    Every op of the plan must be dead once the ops before it are gone, except
    for the results given new values.  Checked before anything changes: a
    used result without a new value of the same type undoes the new ops and
    returns why.
    """
    erased: list[ir.Operation] = []
    for op, values in plan:
        for i, result in enumerate(op.results):
            remaining = [u for u in users(result) if not any(u == e for e in erased)]
            if not remaining:
                continue
            new = values.get(i)
            if new is None or new.type != result.type:
                for op_created in reversed(created):
                    rw.erase_op(op_created)
                got = "no value" if new is None else str(new.type)
                return f"internal: result #{i} of {op.name} ({result.type}) would be replaced by {got}"
        erased.append(op)
    for op, values in plan:
        for i, result in enumerate(op.results):
            if i in values and any(True for _ in result.uses):
                result.replace_all_uses_with(values[i])
        rw.erase_op(op)
    return True


def add_operands(add: ir.Operation) -> tuple[ir.Value, ir.Value] | None:
    """(x1, x2) of an add with x1 the operand of the sum's shape (addition commutes exactly), or None."""
    a, b = add.operands
    shape = sig(add.results[0]).shape
    if sig(a).shape == shape:
        return a, b
    if sig(b).shape == shape:
        return b, a
    return None


def _epsilon(op: ir.Operation) -> float:
    return attributes(op)["epsilon"]


# --------------------------------------------------------------------------
# add -> layer_norm


def _fuse_into_add_layer_norm(ln: ir.Operation, rw: Any, pre: ir.Operation, x1: ir.Value, x2: ir.Value) -> bool | str:
    """layer_norm(pre(x1, x2)) -> add_layer_norm(x1, x2): y replaces the layer_norm, sum the producer."""
    _, gamma, beta = ln.operands
    anchor = anchor_for(ln, [ln, pre], [x1, x2, gamma, beta])
    if isinstance(anchor, str):
        return anchor
    attrs = attributes(ln)
    fused = create_op(
        InsertBefore(anchor), "add_layer_norm", [x1, x2, gamma, beta], fused_location([pre, ln]),
        begin_norm_axis=attrs["begin_norm_axis"], epsilon=attrs["epsilon"],
    )
    return commit(rw, [(ln, {0: fused.results[0]}), (pre, {0: fused.results[1]})], [fused])


def _layer_norm_of(ln: ir.Operation, name: str) -> ir.Operation | None:
    pre = producer(ln.operands[0], name)
    return pre if pre is not None and pre.block == ln.block else None


def fuse_add_layer_norm(ln: ir.Operation, rw: Any) -> bool | str:
    add = _layer_norm_of(ln, "graph.add")
    if add is None:
        return False
    if other_users(add.results[0], ln):
        return "the add result has other users (add_layer_norm_ext_fusion fuses that case)"
    operands = add_operands(add)
    if operands is None:
        return "the add broadcasts both operands: neither has the sum's shape"
    return _fuse_into_add_layer_norm(ln, rw, add, *operands)


def fuse_bias_add_layer_norm(ln: ir.Operation, rw: Any) -> bool | str:
    bias_add = _layer_norm_of(ln, "graph.bias_add")
    if bias_add is None:
        return False
    x, bias = bias_add.operands
    if attributes(bias_add)["axis"] not in (-1, sig(x).rank - 1):
        return "the bias_add does not run along the last axis, so it is not x + bias with numpy broadcasting"
    return _fuse_into_add_layer_norm(ln, rw, bias_add, x, bias)


def fuse_residual_add_layer_norm(ln: ir.Operation, rw: Any) -> bool | str:
    add = _layer_norm_of(ln, "graph.add")
    if add is None or not other_users(add.results[0], ln):
        return False  # the single-use add is add_layer_norm_fusion's
    operands = add_operands(add)
    if operands is None:
        return "the add broadcasts both operands: neither has the sum's shape"
    return _fuse_into_add_layer_norm(ln, rw, add, *operands)


@dataclass(frozen=True)
class AddLayerNormFusion(FusionPass):
    """add(x1, x2) -> layer_norm, the add used by nothing else => add_layer_norm(x1, x2, gamma, beta).

    Covers the plain, single-use add; an add whose sum is also used elsewhere (the
    residual stream) is add_layer_norm_ext_fusion's and is rejected here with that
    reason; a bias_add producer is add_layer_norm_v3_fusion's.
    """

    name: ClassVar[str] = "add_layer_norm_fusion"
    priority: ClassVar[int] = 120
    summary: ClassVar[str] = "add (single use) -> layer_norm => add_layer_norm"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @add_layer_norm(%x1: tensor<2x4x8xf16>, %x2: tensor<2x4x8xf16>, %gamma: tensor<8xf16>,
                          %beta: tensor<8xf16>) -> tensor<2x4x8xf16> {
  %sum = "graph.add"(%x1, %x2) : (tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  %y = "graph.layer_norm"(%sum, %gamma, %beta) {begin_norm_axis = -1 : i64, epsilon = 1.0e-05 : f32}
    : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16>
  return %y : tensor<2x4x8xf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("AddLayerNormFusion", "graph.layer_norm", fuse_add_layer_norm),)


@dataclass(frozen=True)
class AddLayerNormV3Fusion(FusionPass):
    """bias_add(x, bias) along the last axis -> layer_norm => add_layer_norm(x, bias, gamma, beta).

    MindSpore's v3 pass differs from add_layer_norm_fusion only in the LayerNorm
    variant it matches (LayerNormV3), which graphfuse does not have; here the
    variant is the one whose input is a bias_add: x + bias with a 1-D bias on the
    last axis, which is exactly numpy broadcasting, so add_layer_norm's x2 is the
    bias. The bias_add result may have other users: they read the fused sum.
    """

    name: ClassVar[str] = "add_layer_norm_v3_fusion"
    priority: ClassVar[int] = 130
    summary: ClassVar[str] = "bias_add (last axis) -> layer_norm => add_layer_norm (sum reused by other users)"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @bias_add_layer_norm(%x: tensor<2x4x8xf32>, %bias: tensor<8xf32>, %gamma: tensor<8xf32>,
                               %beta: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %sum = "graph.bias_add"(%x, %bias) {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %y = "graph.layer_norm"(%sum, %gamma, %beta) {begin_norm_axis = -1 : i64, epsilon = 1.0e-05 : f32}
    : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("AddLayerNormV3Fusion", "graph.layer_norm", fuse_bias_add_layer_norm),
    )


@dataclass(frozen=True)
class AddLayerNormExtFusion(FusionPass):
    """add(x1, x2) -> layer_norm where the sum also feeds later ops => add_layer_norm, its sum result reused.

    MindSpore's ext pass differs from add_layer_norm_fusion only in the LayerNorm
    variant it matches (LayerNormExt); here the variant is the residual stream:
    the add result is consumed by the layer_norm and by other ops (or returned),
    which then read add_layer_norm's ``sum``. A single-use add is not matched
    (add_layer_norm_fusion's case).
    """

    name: ClassVar[str] = "add_layer_norm_ext_fusion"
    priority: ClassVar[int] = 140
    summary: ClassVar[str] = "add (also used elsewhere) -> layer_norm => add_layer_norm, its sum reused"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @residual_add_layer_norm(%x1: tensor<2x4x8xf16>, %x2: tensor<2x4x8xf16>, %gamma: tensor<8xf16>,
                                   %beta: tensor<8xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf16>) {
  %sum = "graph.add"(%x1, %x2) : (tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  %y = "graph.layer_norm"(%sum, %gamma, %beta) {begin_norm_axis = -1 : i64, epsilon = 1.0e-05 : f32}
    : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16>
  return %y, %sum : tensor<2x4x8xf16>, tensor<2x4x8xf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("AddLayerNormExtFusion", "graph.layer_norm", fuse_residual_add_layer_norm),
    )


# --------------------------------------------------------------------------
# rms_norm chains


def fuse_add_rms_norm(rn: ir.Operation, rw: Any) -> bool | str:
    """add(x1, x2) -> rms_norm => add_rms_norm; other users of the add read its sum."""
    add = producer(rn.operands[0], "graph.add")
    if add is None:
        return False
    operands = add_operands(add)
    if operands is None:
        return "the add broadcasts both operands: neither has the sum's shape"
    gamma = rn.operands[1]
    anchor = anchor_for(rn, [rn, add], [*operands, gamma])
    if isinstance(anchor, str):
        return anchor
    fused = create_op(
        InsertBefore(anchor), "add_rms_norm", [*operands, gamma], fused_location([add, rn]), epsilon=_epsilon(rn)
    )
    return commit(rw, [(rn, {0: fused.results[0]}), (add, {0: fused.results[1]})], [fused])


def _gamma_as(gamma: ir.Value, dtype: str, anchor: ir.Operation) -> ir.Value | str:
    """``gamma`` (f32) as the same values in ``dtype``: the operand of a widening cast, or a constant whose every
    value ``dtype`` holds exactly (made right before ``anchor``); otherwise why not."""
    widened = producer(gamma, "graph.cast")
    if widened is not None and sig(widened.operands[0]).dtype == dtype:
        return widened.operands[0]
    values = constant_array(gamma)
    if values is None:
        return f"gamma is an f32 value computed at run time, not a {dtype} value cast to f32"
    narrow = values.astype(NUMPY_DTYPES[dtype])
    if not np.array_equal(narrow.astype(np.float32), values):
        return f"gamma holds f32 values that {dtype} does not hold exactly"
    return create_constant(InsertBefore(anchor), narrow, gamma.owner.location)


def _fuse_add_then_cast(cast: ir.Operation, rn: ir.Operation, up: ir.Operation, rw: Any) -> bool | str:
    """cast(rms_norm(cast(x1 + x2) to f32, gamma) back): the sum rounded to f16/bf16, normalized in f32 (HF's
    bf16 RMSNorm, MindSpore's AddCastRmsNormCast) => add_rms_norm(x1, x2, gamma) in the low type, which computes
    its rms_norm in f32 and rounds once: the same numbers, gamma's values being the low type's."""
    add = producer(up.operands[0], "graph.add")
    if add is None:
        return False
    low, wide, out = sig(add.results[0]).dtype, sig(up.results[0]).dtype, sig(cast.results[0]).dtype
    if low not in _LOW_PRECISION or wide != "f32" or out != low:
        return f"the chain casts {low} -> {wide} -> {out}, not f16/bf16 -> f32 and back"
    if other_users(rn.results[0], cast):
        return "the f32 rms_norm result has other users (the fused op only returns it cast back)"
    if other_users(up.results[0], rn):
        return "the f32 sum has other users (the fused op returns the sum in its own type only)"
    operands = add_operands(add)
    if operands is None:
        return "the add broadcasts both operands: neither has the sum's shape"
    anchor = anchor_for(cast, [cast, rn, up, add], [*operands, rn.operands[1]])
    if isinstance(anchor, str):
        return anchor
    gamma = _gamma_as(rn.operands[1], low, anchor)
    if isinstance(gamma, str):
        return gamma
    fused = create_op(InsertBefore(anchor), "add_rms_norm", [*operands, gamma], fused_location([add, up, rn, cast]),
                      epsilon=_epsilon(rn))
    return commit(rw, [(cast, {0: fused.results[0]}), (rn, {}), (up, {}), (add, {0: fused.results[1]})], [fused])


def fuse_add_cast_rms_norm_cast(cast: ir.Operation, rw: Any) -> bool | str:
    """cast(rms_norm(cast(x1) + cast(x2))) back to x's type => add_rms_norm(x1, x2, gamma) computing in f32;
    cast(rms_norm(cast(x1 + x2))) back => add_rms_norm in x's type (:func:`_fuse_add_then_cast`)."""
    rn = producer(cast.operands[0], "graph.rms_norm")
    if rn is None:
        return False
    up = producer(rn.operands[0], "graph.cast")
    if up is not None:
        return _fuse_add_then_cast(cast, rn, up, rw)
    add = producer(rn.operands[0], "graph.add")
    if add is None:
        return False
    up1, up2 = (producer(v, "graph.cast") for v in add.operands)
    if up1 is None or up2 is None:
        return False
    x1, x2 = up1.operands[0], up2.operands[0]
    low, wide, out = sig(x1).dtype, sig(add.results[0]).dtype, sig(cast.results[0]).dtype
    if low not in _LOW_PRECISION or sig(x2).dtype != low:
        return f"the add's operands are not both cast from one of f16/bf16 (got {low} and {sig(x2).dtype})"
    if wide != "f32":
        return f"the add computes in {wide}, not f32"
    if out != low:
        return f"the final cast goes to {out}, not back to the inputs' {low}"
    if other_users(rn.results[0], cast):
        return "the f32 rms_norm result has other users (the fused op only returns it cast back)"
    operands = add_operands(add)
    if operands is None:
        return "the add broadcasts both operands: neither has the sum's shape"
    if operands[0] != add.operands[0]:
        x1, x2 = x2, x1  # the sum must have x1's shape; addition commutes exactly
    gamma = rn.operands[1]
    ups = [up1] if up1 == up2 else [up1, up2]
    anchor = anchor_for(cast, [cast, rn, add], [x1, x2, gamma])
    if isinstance(anchor, str):
        return anchor
    fused = create_op(
        InsertBefore(anchor), "add_rms_norm", [x1, x2, gamma], fused_location([*ups, add, rn, cast]),
        epsilon=_epsilon(rn),
    )
    plan: Plan = [(cast, {0: fused.results[0]}), (rn, {}), (add, {0: fused.results[1]})]
    # The input casts stay when something else reads them.
    plan += [(up, {}) for up in ups if not other_users(up.results[0], add)]
    return commit(rw, plan, [fused])


def fuse_rms_norm_quant(quant: ir.Operation, rw: Any) -> bool | str:
    """rms_norm(x, gamma) -> quantize(., scale, offset) => rms_norm_quant(x, gamma, scale, offset)."""
    rn = producer(quant.operands[0], "graph.rms_norm")
    if rn is None:
        return False
    if other_users(rn.results[0], quant):
        return "the rms_norm result has other users (rms_norm_quant does not return it)"
    operands = [*rn.operands, *quant.operands[1:]]
    anchor = anchor_for(quant, [quant, rn], operands)
    if isinstance(anchor, str):
        return anchor
    fused = create_op(
        InsertBefore(anchor), "rms_norm_quant", operands, fused_location([rn, quant]), epsilon=_epsilon(rn)
    )
    return commit(rw, [(quant, {0: fused.results[0]}), (rn, {})], [fused])


def fuse_add_rms_norm_quant(quant: ir.Operation, rw: Any) -> bool | str:
    """add -> rms_norm -> quantize => add_rms_norm_quant; other users of the add read its sum."""
    rn = producer(quant.operands[0], "graph.rms_norm")
    add = producer(rn.operands[0], "graph.add") if rn is not None else None
    if add is None:
        return False
    if other_users(rn.results[0], quant):
        return "the rms_norm result has other users (add_rms_norm_quant does not return it)"
    operands = add_operands(add)
    if operands is None:
        return "the add broadcasts both operands: neither has the sum's shape"
    fused_operands = [*operands, rn.operands[1], *quant.operands[1:]]
    anchor = anchor_for(quant, [quant, rn, add], fused_operands)
    if isinstance(anchor, str):
        return anchor
    fused = create_op(
        InsertBefore(anchor), "add_rms_norm_quant", fused_operands, fused_location([add, rn, quant]),
        epsilon=_epsilon(rn),
    )
    return commit(rw, [(quant, {0: fused.results[0]}), (rn, {}), (add, {0: fused.results[1]})], [fused])


# --------------------------------------------------------------------------
# a hand-written RMSNorm


def _scalar_constant(value: ir.Value) -> float | None:
    """The one value of a constant with a single element (``eps``), or None."""
    array = constant_array(value)
    if array is None or array.size != 1:
        return None
    return float(array.reshape(()))


def _squared(value: ir.Value) -> tuple[ir.Operation, ir.Value] | None:
    """(the op, x) when ``value`` is x squared: ``square(x)``, ``mul(x, x)`` or ``pow(x, 2)``."""
    op = producer(value)
    if op is None:
        return None
    if op.name == "graph.square":
        return op, op.operands[0]
    if op.name == "graph.mul" and op.operands[0] == op.operands[1]:
        return op, op.operands[0]
    if op.name == "graph.pow" and _scalar_constant(op.operands[1]) == 2.0:
        return op, op.operands[0]
    return None


def _sole_user(value: ir.Value, name: str) -> ir.Operation | None:
    found = users(value)
    return found[0] if len(found) == 1 and found[0].name == name else None


def _times(op: ir.Operation, value: ir.Value) -> ir.Value | None:
    """The other operand of the product ``op`` of ``value``, or None when ``value`` is not one of them."""
    a, b = op.operands
    if a == value:
        return b
    return a if b == value else None


def _reciprocal_root(op: ir.Operation) -> tuple[list[ir.Operation], ir.Value, ir.Value | None] | None:
    """The ops from the square root to the normalized value, the square root's operand, and the value the
    reciprocal scales (None when the division by the root already is the normalized value), for the forms
    ``x * rsqrt(s)`` (PyTorch), ``x * (1 / sqrt(s))``, ``x * reciprocal(sqrt(s))`` and ``x / sqrt(s)`` (ONNX,
    which has no rsqrt); None when ``op`` starts none of them."""
    if op.name == "graph.rsqrt":
        return [op], op.operands[0], op.results[0]
    if op.name != "graph.sqrt":
        return None
    root = op.results[0]
    found = users(root)
    if len(found) != 1:
        return None
    inverse = found[0]
    if inverse.name == "graph.div" and inverse.operands[1] == root and inverse.operands[0] != root:
        if _scalar_constant(inverse.operands[0]) == 1.0:
            return [op, inverse], op.operands[0], inverse.results[0]
        return [op, inverse], op.operands[0], None  # x / sqrt(s): the dividend is checked to be x
    if inverse.name == "graph.reciprocal":
        return [op, inverse], op.operands[0], inverse.results[0]
    return None


def fuse_rms_norm(start: ir.Operation, rw: Any) -> bool | str:
    """``x * rsqrt(reduce_mean(x^2, last axis, keep_dims) + eps) [* w]`` (or its forms with a square root, see
    :func:`_reciprocal_root`) => ``rms_norm(x, w or ones)``."""
    form = _reciprocal_root(start)
    if form is None:
        return False
    inverse_ops, statistic, scale = form
    add = producer(statistic, "graph.add")
    if add is None:
        return False
    mean, epsilon = None, None
    for first, second in ((0, 1), (1, 0)):
        mean = producer(add.operands[first], "graph.reduce_mean")
        epsilon = _scalar_constant(add.operands[second])
        if mean is not None and epsilon is not None:
            break
    if mean is None or epsilon is None:
        return False
    squared = _squared(mean.operands[0])
    if squared is None:
        return False
    square, x = squared
    x_sig = sig(x)
    mean_attrs = attributes(mean)
    axes = [axis % x_sig.rank for axis in mean_attrs["axes"]] if x_sig.rank else None
    if axes != [x_sig.rank - 1] or not mean_attrs["keep_dims"]:
        return "the mean is not over the last axis alone with its dim kept"
    if scale is None:
        normed = inverse_ops[-1]
        if normed.operands[0] != x:
            return "the reciprocal square root is not used only to scale the squared value"
    else:
        normed = _sole_user(scale, "graph.mul")
        if normed is None or _times(normed, scale) != x:
            return "the reciprocal square root is not used only to scale the squared value"
    for value, user in ((square.results[0], mean), (mean.results[0], add), (add.results[0], inverse_ops[0])):
        if users(value) != [user]:
            return "an intermediate of the norm is used elsewhere"
    if x_sig.dtype not in ("f32", "f16", "bf16") or not 0.0 <= epsilon < float("inf"):
        return "not a float norm with a finite non-negative epsilon"
    if sig(normed.results[0]) != x_sig:
        return "the scaled value does not have the shape and type of x"
    chain, root, gamma = [square, mean, add, *inverse_ops], normed, None
    if normed not in chain:
        chain.append(normed)
    scaled = _sole_user(normed.results[0], "graph.mul")
    if scaled is not None:
        weight = _times(scaled, normed.results[0])
        w_sig = sig(weight) if weight is not None else None
        if w_sig is not None and w_sig.shape == (x_sig.shape[-1],) and w_sig.dtype == x_sig.dtype and \
                sig(scaled.results[0]) == x_sig:
            chain, root, gamma = [*chain, scaled], scaled, weight
    anchor = anchor_for(root, chain, [x] if gamma is None else [x, gamma])
    if isinstance(anchor, str):
        return anchor
    if gamma is None:
        if not isinstance(x_sig.shape[-1], int):
            return "no weight and a dynamic last dim: no constant gamma of its length"
        ones = np.ones(x_sig.shape[-1], NUMPY_DTYPES[x_sig.dtype])
        gamma = create_constant(InsertBefore(anchor), ones, start.location)
    fused = create_op(InsertBefore(anchor), "rms_norm", [x, gamma], fused_location(chain), epsilon=epsilon)
    return commit(rw, [(op, {0: fused.results[0]} if op == root else {}) for op in reversed(chain)], [fused])


@dataclass(frozen=True)
class RmsNormFusion(FusionPass):
    """A hand-written RMSNorm of basic ops => rms_norm (transformers' RMSNorms as PyTorch or ONNX export them).

    ``x * rsqrt(reduce_mean(x^2, last axis, keep_dims) + eps)``, the reciprocal square root also as
    ``1 / sqrt``, ``reciprocal(sqrt)`` or a division ``x / sqrt`` (ONNX has no rsqrt); x^2 as ``square``,
    ``mul(x, x)`` or ``pow(x, 2)``; ``eps`` a constant; optionally times a 1-D ``w`` of x's last dim (either
    operand order). Every intermediate is used only by the next op, all in one float type. The
    mixed-precision form (x cast to f32 first, the result cast back before the weight) becomes an f32
    rms_norm between the casts, which add_cast_rms_norm_cast_fusion then takes with a residual add before
    it. Runs before the rms_norm passes.
    """

    name: ClassVar[str] = "rms_norm_fusion"
    priority: ClassVar[int] = 115
    summary: ClassVar[str] = "x * rsqrt(mean(x^2) + eps) [* w] of basic ops => rms_norm"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "graphfuse"
    example: ClassVar[str] = """\
func.func @rms_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 2>, keep_dims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %y = "graph.mul"(%w, %n) : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("RmsNormFusion", "graph.rsqrt", fuse_rms_norm),
        Pattern("RmsNormSqrtFusion", "graph.sqrt", fuse_rms_norm),
    )


@dataclass(frozen=True)
class AddRmsNormFusion(FusionPass):
    """add(x1, x2) -> rms_norm => add_rms_norm(x1, x2, gamma); other users of the add read its ``sum``.

    Runs after add_rms_norm_quant_fusion and add_cast_rms_norm_cast_fusion (see
    ``FusionPass.priority``): it would take the add -> rms_norm part of their chains
    (leaving add_rms_norm -> quantize, or an f32 add_rms_norm of the casts).
    """

    name: ClassVar[str] = "add_rms_norm_fusion"
    priority: ClassVar[int] = 180
    summary: ClassVar[str] = "add -> rms_norm => add_rms_norm (other users of the sum read its sum result)"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @add_rms_norm(%x1: tensor<2x4x8xbf16>, %x2: tensor<2x4x8xbf16>, %gamma: tensor<8xbf16>)
    -> (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) {
  %sum = "graph.add"(%x1, %x2) : (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  %y = "graph.rms_norm"(%sum, %gamma) {epsilon = 1.0e-06 : f32}
    : (tensor<2x4x8xbf16>, tensor<8xbf16>) -> tensor<2x4x8xbf16>
  return %y, %sum : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("AddRmsNormFusion", "graph.rms_norm", fuse_add_rms_norm),)


@dataclass(frozen=True)
class AddCastRmsNormCastFusion(FusionPass):
    """cast(x1), cast(x2) f16/bf16 -> f32, add, rms_norm in f32, cast back => add_rms_norm(x1, x2, gamma).

    The fused op is add_rms_norm's mixed-precision form (f16/bf16 inputs, f32
    gamma): it computes the sum and the normalization in f32 internally and
    rounds only y to the input type, so its results are those of the cast
    chain bit for bit; its ``sum`` is the f32 sum and replaces the add's other
    uses. The f32 rms_norm result must have no user but the final cast. Runs
    before add_rms_norm_fusion, which would fuse the f32 add -> rms_norm alone.
    """

    name: ClassVar[str] = "add_cast_rms_norm_cast_fusion"
    priority: ClassVar[int] = 170
    summary: ClassVar[str] = "cast up x2 -> add -> rms_norm (f32) -> cast down => add_rms_norm computing in f32"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @add_cast_rms_norm_cast(%x1: tensor<2x4x8xf16>, %x2: tensor<2x4x8xf16>, %gamma: tensor<8xf32>)
    -> tensor<2x4x8xf16> {
  %a = "graph.cast"(%x1) : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
  %b = "graph.cast"(%x2) : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
  %sum = "graph.add"(%a, %b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %n = "graph.rms_norm"(%sum, %gamma) {epsilon = 1.0e-06 : f32}
    : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %y = "graph.cast"(%n) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf16>
  return %y : tensor<2x4x8xf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("AddCastRmsNormCastFusion", "graph.cast", fuse_add_cast_rms_norm_cast),
    )


_QUANT_EXAMPLE = """\
func.func @{name}(%x1: tensor<4x16xf16>, %x2: tensor<4x16xf16>, %gamma: tensor<16xf16>) -> tensor<4x16xi8> {{
  %scale = arith.constant dense<2.0> : tensor<1xf32>
  %offset = arith.constant dense<0.0> : tensor<1xf32>
  %sum = "graph.add"(%x1, %x2) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %y = "graph.rms_norm"(%sum, %gamma) {{epsilon = 1.0e-06 : f32}}
    : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %q = "graph.quantize"(%y, %scale, %offset) : (tensor<4x16xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16xi8>
  return %q : tensor<4x16xi8>
}}
"""


@dataclass(frozen=True)
class AddRmsNormQuantFusion(FusionPass):
    """add -> rms_norm -> quantize => add_rms_norm_quant(x1, x2, gamma, scale, offset).

    Must run before add_rms_norm_fusion and rms_norm_quant_fusion (see
    ``FusionPass.priority``), which would each take a part of the chain. Other users
    of the add read the fused ``sum``; the rms_norm result must have no user but
    the quantize.
    """

    name: ClassVar[str] = "add_rms_norm_quant_fusion"
    priority: ClassVar[int] = 150
    summary: ClassVar[str] = "add -> rms_norm -> quantize => add_rms_norm_quant (runs before add_rms_norm_fusion)"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = _QUANT_EXAMPLE.format(name="add_rms_norm_quant")
    patterns: ClassVar[tuple[Pattern, ...]] = (
        Pattern("AddRmsNormQuantFusion", "graph.quantize", fuse_add_rms_norm_quant),
    )


@dataclass(frozen=True)
class RmsNormQuantFusion(FusionPass):
    """rms_norm -> quantize => rms_norm_quant(x, gamma, scale, offset); the rms_norm must have no other user."""

    name: ClassVar[str] = "rms_norm_quant_fusion"
    priority: ClassVar[int] = 160
    summary: ClassVar[str] = "rms_norm -> quantize => rms_norm_quant"
    group: ClassVar[str] = GRAPH_FUSION
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @rms_norm_quant(%x: tensor<4x16xf16>, %gamma: tensor<16xf16>, %scale: tensor<16xf32>,
                          %offset: tensor<16xf32>) -> tensor<4x16xi8> {
  %y = "graph.rms_norm"(%x, %gamma) {epsilon = 1.0e-06 : f32} : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %q = "graph.quantize"(%y, %scale, %offset) : (tensor<4x16xf16>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xi8>
  return %q : tensor<4x16xi8>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("RmsNormQuantFusion", "graph.quantize", fuse_rms_norm_quant),)
