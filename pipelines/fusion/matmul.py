"""Matmul epilogue, SwiGLU and matmul-split fusion passes (MindSpore), and CANN's MatMulBiasAddFusionPass.

- ``matmul_elem_biasadd_fusion`` / ``MatMulBiasAddFusionPass``: ``matmul -> bias_add`` along the last axis,
  or ``matmul -> add`` of a 1-D value as long as the last dim => ``matmul_bias_add``;
- ``matmul_elem_add_fusion``: ``matmul -> add`` of any value that broadcasts to the matmul result without
  enlarging it => ``matmul_add``;
- ``matmul_elem_relu_fusion`` / ``matmul_elem_gelu_fusion``: ``matmul -> relu`` / ``matmul -> gelu`` =>
  ``matmul_relu`` / ``matmul_gelu`` (gelu's ``approximate`` kept);
- ``inference_swiglu_fusion``: ``silu(first half) * second half`` of ``x`` cut in two equal halves along its
  last axis, by one ``split`` or by two ``slice`` ops, the halves possibly reshaped alike with their last dim
  kept (a linear layer's [tokens, n] output viewed as [batch, seq, n]) => ``swiglu(x)``;
- ``inference_matmul_split_fusion``: ``matmul -> split`` along the last axis => ``matmul_split``;
- ``transpose_matmul_fusion`` (off by default): ``transpose`` of the last two axes ``-> matmul`` => the
  matmul's ``transpose_a`` / ``transpose_b`` flag.

Every absorbed intermediate (the matmul result, silu output, halves) must have
the fusing op as its only user: the fused ops do not return intermediates, so
an intermediate that is used elsewhere (a function result included) stays
unfused, with the reason logged at ``--log-level=debug``.  The fused ops round
exactly as the unfused chains do (see :mod:`graphfuse.dialect.ops.fused_matmul`),
so every rewrite here keeps the results bit for bit.

The helpers at the top are shared with the attention and reshape passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

from graphfuse.dialect.matching import (
    attributes,
    create_op,
    erase_dead,
    fused_location,
    producer,
    replace_with_new,
    sig,
    sole_use_reason,
)
from graphfuse.dialect.shape_utils import normalize_axis
from graphfuse.dialect.types import TensorSig
from graphfuse.pipelines.fusion.base import FusionPass, Pattern

# --------------------------------------------------------------------------
# Helpers shared by the matmul, attention and reshape passes.


def transpose_flags(op: ir.Operation) -> dict[str, Any]:
    """A matmul's transpose flags, only the ones set (so the fused op prints like the matmul did)."""
    values = attributes(op)
    return {name: True for name in ("transpose_a", "transpose_b") if values[name]}


def is_last_axis(axis: int, rank: int) -> bool:
    return rank > 0 and -rank <= axis < rank and normalize_axis(axis, rank) == rank - 1


def result_index(value: ir.Value) -> int | None:
    """Which result of its op ``value`` is (None for a block argument)."""
    if isinstance(value.owner, ir.Block):
        return None
    return ir.OpResult(value).result_number


# --------------------------------------------------------------------------
# matmul -> bias_add / add of a 1-D bias  (matmul_elem_biasadd_fusion, MatMulBiasAddFusionPass)


def _fuse_bias(root: ir.Operation, matmul: ir.Operation, bias: ir.Value, rw: Any) -> bool | str:
    reason = sole_use_reason(matmul.results[0], root, "the matmul result")
    if reason:
        return reason
    reason = replace_with_new(
        rw, root, "matmul_bias_add", [*matmul.operands, bias], [matmul, root], **transpose_flags(matmul)
    )
    if reason:
        return reason
    erase_dead(rw, [matmul])
    return True


def matmul_bias_add(op: ir.Operation, rw: Any) -> bool | str:
    """bias_add(matmul(a, b), bias) with the bias along the last axis => matmul_bias_add(a, b, bias)."""
    matmul = producer(op.operands[0], "graph.matmul")
    if matmul is None:
        return False
    axis, rank = attributes(op)["axis"], sig(op.operands[0]).rank
    if not is_last_axis(axis, rank):
        return f"the bias_add runs along axis {axis}, not the last axis of the rank-{rank} matmul result"
    return _fuse_bias(op, matmul, op.operands[1], rw)


def matmul_add_bias(op: ir.Operation, rw: Any) -> bool | str:
    """add(matmul(a, b), bias) or add(bias, matmul(a, b)), bias 1-D of the last dim => matmul_bias_add."""
    for i in (0, 1):
        matmul = producer(op.operands[i], "graph.matmul")
        bias = op.operands[1 - i]
        if matmul is None:
            continue
        result, b = sig(matmul.results[0]), sig(bias)
        if result.rank >= 1 and b.rank == 1 and b.shape[0] is not None and b.shape[0] == result.shape[-1]:
            return _fuse_bias(op, matmul, bias, rw)
    return False


# The same rewrite under both systems' switches: MindSpore's matmul_elem_biasadd_fusion and CANN's
# MatMulBiasAddFusionPass list these two patterns (one function each), so either switch turns it on or off.
BIAS_ADD_PATTERNS = (
    Pattern("MatMulBiasAdd", "graph.bias_add", matmul_bias_add),
    Pattern("MatMulAddBias", "graph.add", matmul_add_bias),
)

_BIAS_EXAMPLE = """\
func.func @dense(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<4x16xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}
"""


@dataclass(frozen=True)
class MatmulElemBiasaddFusion(FusionPass):
    """matmul -> bias_add (last axis) or -> add of a 1-D bias of the last dim => matmul_bias_add.

    The same rewrite as CANN's MatMulBiasAddFusionPass (it shares the patterns),
    reachable under MindSpore's switches.
    """

    name: ClassVar[str] = "matmul_elem_biasadd_fusion"
    priority: ClassVar[int] = 220
    summary: ClassVar[str] = (
        "matmul -> bias_add (last axis) or add of a 1-D bias => matmul_bias_add (as MatMulBiasAddFusionPass)"
    )
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = _BIAS_EXAMPLE
    patterns: ClassVar[tuple[Pattern, ...]] = BIAS_ADD_PATTERNS


@dataclass(frozen=True)
class MatMulBiasAddFusionPass(FusionPass):
    """CANN's MatMulBiasAddFusionPass: the rewrite of matmul_elem_biasadd_fusion under CANN's switch name.

    It lists the very same patterns, so fusion_switch.cfg (``"MatMulBiasAddFusionPass": "off"``)
    and MindSpore's flags (``--disable_pass=matmul_elem_biasadd_fusion``) each control one name
    of the same rewrite; with both on, the second finds nothing left to fuse.
    """

    name: ClassVar[str] = "MatMulBiasAddFusionPass"
    priority: ClassVar[int] = 230
    summary: ClassVar[str] = (
        "matmul -> bias_add (last axis) or add of a 1-D bias => matmul_bias_add (as matmul_elem_biasadd_fusion)"
    )
    origin: ClassVar[str] = "cann"
    example: ClassVar[str] = _BIAS_EXAMPLE
    patterns: ClassVar[tuple[Pattern, ...]] = BIAS_ADD_PATTERNS


# --------------------------------------------------------------------------
# matmul -> add  (matmul_elem_add_fusion)


def matmul_add(op: ir.Operation, rw: Any) -> bool | str:
    """add(matmul(a, b), c) or add(c, matmul(a, b)) => matmul_add(a, b, c), c not enlarging the result."""
    reasons = []
    for i in (0, 1):
        matmul = producer(op.operands[i], "graph.matmul")
        if matmul is None:
            continue
        if sig(op.results[0]).shape != sig(matmul.results[0]).shape:
            reasons.append("the add broadcasts the matmul result to a larger shape")
            continue
        reason = sole_use_reason(matmul.results[0], op, "the matmul result")
        if reason:
            reasons.append(reason)
            continue
        c = op.operands[1 - i]
        reason = replace_with_new(rw, op, "matmul_add", [*matmul.operands, c], [matmul, op], **transpose_flags(matmul))
        if reason:
            return reason
        erase_dead(rw, [matmul])
        return True
    return reasons[0] if reasons else False


@dataclass(frozen=True)
class MatmulElemAddFusion(FusionPass):
    """matmul -> add (either operand order) => matmul_add, when the addend does not enlarge the result."""

    name: ClassVar[str] = "matmul_elem_add_fusion"
    priority: ClassVar[int] = 240
    summary: ClassVar[str] = "matmul -> add of a tensor broadcast to the matmul result => matmul_add"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @residual(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%r, %0) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("MatMulAdd", "graph.add", matmul_add),)


# --------------------------------------------------------------------------
# transpose -> matmul  (transpose_matmul_fusion)


def _swaps_last_two(perm: list[int]) -> bool:
    rank = len(perm)
    return rank >= 2 and list(perm) == [*range(rank - 2), rank - 1, rank - 2]


def transpose_matmul(op: ir.Operation, rw: Any) -> bool | str:
    """matmul(transpose(a), b) => matmul(a, b, transpose_a) when the transpose swaps the last two axes (and
    likewise for b); a flag already set is cleared instead (two swaps cancel)."""
    operands = list(op.operands)
    flags = attributes(op)
    absorbed, reasons = [], []
    for k, flag in ((0, "transpose_a"), (1, "transpose_b")):
        transpose = producer(operands[k], "graph.transpose")
        if transpose is None:
            continue
        if not _swaps_last_two(attributes(transpose)["perm"]):
            reasons.append(f"the transpose of operand {k} moves more than the last two axes")
            continue
        reason = sole_use_reason(transpose.results[0], op, f"the transpose of operand {k}")
        if reason:
            reasons.append(reason)
            continue
        operands[k] = transpose.operands[0]
        flags[flag] = not flags[flag]
        absorbed.append(transpose)
    if not absorbed:
        return "; ".join(reasons) or False
    set_flags = {name: True for name in ("transpose_a", "transpose_b") if flags[name]}
    reason = replace_with_new(rw, op, "matmul", operands, [*absorbed, op], **set_flags)
    if reason:
        return reason
    erase_dead(rw, absorbed)
    return True


@dataclass(frozen=True)
class TransposeMatmulFusion(FusionPass):
    """transpose (of the last two axes) -> matmul => matmul with ``transpose_a`` / ``transpose_b``.

    MindSpore's ``transpose_matmul_fusion``, off by default there and here (``enable_pass`` turns it on): the
    matmul reads the operand transposed instead of a transposed copy being written first.  The transpose must
    swap exactly the last two axes (batch axes stay) and feed nothing else.
    """

    name: ClassVar[str] = "transpose_matmul_fusion"
    priority: ClassVar[int] = 197
    summary: ClassVar[str] = "transpose of the last two axes -> matmul => matmul with a transpose flag"
    origin: ClassVar[str] = "mindspore"
    default_backends: ClassVar[frozenset[str]] = frozenset()
    example: ClassVar[str] = """\
func.func @scores(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>) -> tensor<2x8x8xf32> {
  %0 = "graph.transpose"(%k) {perm = array<i64: 0, 2, 1>} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %1 = "graph.matmul"(%q, %0) : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  return %1 : tensor<2x8x8xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("TransposeMatMul", "graph.matmul", transpose_matmul),)


# --------------------------------------------------------------------------
# matmul -> relu / gelu  (matmul_elem_relu_fusion, matmul_elem_gelu_fusion)


def _fuse_activation(op: ir.Operation, rw: Any, fused: str, **attrs: Any) -> bool | str:
    matmul = producer(op.operands[0], "graph.matmul")
    if matmul is None:
        return False
    reason = sole_use_reason(matmul.results[0], op, "the matmul result")
    if reason:
        return reason
    reason = replace_with_new(rw, op, fused, list(matmul.operands), [matmul, op], **transpose_flags(matmul), **attrs)
    if reason:
        return reason
    erase_dead(rw, [matmul])
    return True


def matmul_relu(op: ir.Operation, rw: Any) -> bool | str:
    """relu(matmul(a, b)) => matmul_relu(a, b)."""
    return _fuse_activation(op, rw, "matmul_relu")


def matmul_gelu(op: ir.Operation, rw: Any) -> bool | str:
    """gelu(matmul(a, b)) => matmul_gelu(a, b) with the same ``approximate``."""
    approximate = attributes(op)["approximate"]
    # Written only when not the default, as the gelu most likely was.
    return _fuse_activation(op, rw, "matmul_gelu", approximate=None if approximate == "none" else approximate)


@dataclass(frozen=True)
class MatmulElemReluFusion(FusionPass):
    """matmul -> relu => matmul_relu."""

    name: ClassVar[str] = "matmul_elem_relu_fusion"
    priority: ClassVar[int] = 250
    summary: ClassVar[str] = "matmul -> relu => matmul_relu"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @ffn(%x: tensor<4x16xf16>, %w: tensor<16x64xf16>) -> tensor<4x64xf16> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf16>, tensor<16x64xf16>) -> tensor<4x64xf16>
  %1 = "graph.relu"(%0) : (tensor<4x64xf16>) -> tensor<4x64xf16>
  return %1 : tensor<4x64xf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("MatMulRelu", "graph.relu", matmul_relu),)


@dataclass(frozen=True)
class MatmulElemGeluFusion(FusionPass):
    """matmul -> gelu (either approximation, kept) => matmul_gelu."""

    name: ClassVar[str] = "matmul_elem_gelu_fusion"
    priority: ClassVar[int] = 260
    summary: ClassVar[str] = "matmul -> gelu => matmul_gelu (approximate kept)"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @ffn(%x: tensor<2x4x16xf32>, %w: tensor<16x64xf32>) -> tensor<2x4x64xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<2x4x16xf32>, tensor<16x64xf32>) -> tensor<2x4x64xf32>
  %1 = "graph.gelu"(%0) {approximate = "tanh"} : (tensor<2x4x64xf32>) -> tensor<2x4x64xf32>
  return %1 : tensor<2x4x64xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("MatMulGelu", "graph.gelu", matmul_gelu),)


# --------------------------------------------------------------------------
# swiglu  (inference_swiglu_fusion)


def _halves_by_split(first: ir.Value, second: ir.Value) -> tuple[ir.Value, list[ir.Operation]] | str | None:
    """(x, [split]) when first/second are results 0/1 of split(x) into two equal halves of the last axis."""
    split = producer(first, "graph.split")
    if split is None or producer(second) != split:
        return None
    if result_index(first) != 0 or result_index(second) != 1:
        return None  # not (first half, second half): another computation
    x, values = split.operands[0], attributes(split)
    rank = sig(x).rank
    if len(values["sizes"]) != 2 or values["sizes"][0] != values["sizes"][1]:
        return f"the split cuts sizes {values['sizes']}, not two equal halves"
    if not is_last_axis(values["axis"], rank):
        return f"the split cuts axis {values['axis']}, not the last axis of rank {rank}"
    return x, [split]


def _slice_bounds(op: ir.Operation) -> tuple[list[int], list[int]] | None:
    values = attributes(op)
    if values["strides"] is not None and any(s != 1 for s in values["strides"]):
        return None
    return list(values["start"]), list(values["limit"])


def _halves_by_slices(first: ir.Value, second: ir.Value) -> tuple[ir.Value, list[ir.Operation]] | str | None:
    """(x, [slices]) when first/second are slice(x) of the lower / upper half of x's last axis (MindSpore's form)."""
    lo, hi = producer(first, "graph.slice"), producer(second, "graph.slice")
    if lo is None or hi is None or lo.operands[0] != hi.operands[0]:
        return None
    x = lo.operands[0]
    shape = sig(x).shape
    if not shape or any(d is None for d in shape):
        return "the sliced tensor has a dynamic shape: the slices cannot be proven to be its halves"
    if shape[-1] % 2:
        return f"the last dim {shape[-1]} is odd: the slices are not two equal halves"
    half, full = shape[-1] // 2, list(shape)
    zeros = [0] * len(shape)
    want_lo = (zeros, [*full[:-1], half])
    want_hi = ([*zeros[:-1], half], full)
    if _slice_bounds(lo) != want_lo or _slice_bounds(hi) != want_hi:
        return "the slices are not the lower and upper halves of the last axis (unit strides, other dims whole)"
    return x, [lo, hi]


def _alike_row_reshapes(first: ir.Value, second: ir.Value) -> tuple[ir.Value, ir.Value, list[ir.Operation]] | None:
    """(h0, h1, [reshapes]) when first and second are reshapes of h0 and h1 of one static type into one static
    type that keep the last dim: only the leading dims are regrouped (a linear layer's [tokens, n] result viewed
    as [batch, seq, n])."""
    shaped = [producer(v, "graph.reshape") for v in (first, second)]
    if any(r is None for r in shaped):
        return None
    r0, r1 = shaped
    source, result = sig(r0.operands[0]), sig(first)
    if sig(r1.operands[0]) != source or sig(second) != result or not source.is_static or not result.is_static:
        return None
    if not source.shape or not result.shape or source.shape[-1] != result.shape[-1]:
        return None
    return r0.operands[0], r1.operands[0], [r0, r1]


def swiglu(op: ir.Operation, rw: Any) -> bool | str:
    """mul(silu(h0), h1) or mul(h1, silu(h0)), h0/h1 the two halves of x's last axis (or the same reshape of
    each, keeping the last dim) => swiglu(x), x reshaped as the halves are."""
    for i in (0, 1):
        silu = producer(op.operands[i], "graph.silu")
        if silu is None:
            continue
        first, second = silu.operands[0], op.operands[1 - i]
        halves, reshapes = (first, second), []
        found = _halves_by_split(first, second) or _halves_by_slices(first, second)
        if found is None and (alike := _alike_row_reshapes(first, second)) is not None:
            halves, reshapes = alike[:2], alike[2]
            found = _halves_by_split(*halves) or _halves_by_slices(*halves)
        if found is None:
            continue
        if isinstance(found, str):
            return found
        x, cutters = found
        uses = [(silu.results[0], op, "the silu result"), (first, silu, "the first half"),
                (second, op, "the second half")]
        if reshapes:
            uses += [(halves[0], reshapes[0], "the first half"), (halves[1], reshapes[1], "the second half")]
        for value, user, what in uses:
            reason = sole_use_reason(value, user, what)
            if reason:
                return reason
        operand = x
        if reshapes:
            row_shape = sig(op.results[0]).shape
            reshaped = TensorSig((*row_shape[:-1], sig(x).shape[-1]), sig(x).dtype)
            operand = create_op(rw, "reshape", [x], fused_location(reshapes), declared=[reshaped]).results[0]
        reason = replace_with_new(rw, op, "swiglu", [operand], [*cutters, *reshapes, silu, op])
        if reason:
            return reason
        erase_dead(rw, [silu, *reshapes, *cutters])
        return True
    return False


@dataclass(frozen=True)
class InferenceSwigluFusion(FusionPass):
    """silu(first half) * second half of x's last axis => swiglu(x).

    The halves come from one ``split`` (sizes [h, h] on the last axis, results
    0 and 1) or from two unit-stride ``slice`` ops of the same static-shaped x
    taking ``[0, h)`` and ``[h, 2h)`` of the last axis and every other dim
    whole.  The mul may take its operands in either order.
    """

    name: ClassVar[str] = "inference_swiglu_fusion"
    priority: ClassVar[int] = 200
    summary: ClassVar[str] = "silu(first half) * second half of the last axis (split or two slices) => swiglu"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @swiglu(%x: tensor<4x64xf16>) -> tensor<4x32xf16> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>}
      : (tensor<4x64xf16>) -> (tensor<4x32xf16>, tensor<4x32xf16>)
  %1 = "graph.silu"(%0#0) : (tensor<4x32xf16>) -> tensor<4x32xf16>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x32xf16>, tensor<4x32xf16>) -> tensor<4x32xf16>
  return %2 : tensor<4x32xf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("Swiglu", "graph.mul", swiglu),)


# --------------------------------------------------------------------------
# matmul -> split  (inference_matmul_split_fusion)


def matmul_split(op: ir.Operation, rw: Any) -> bool | str:
    """split(matmul(a, b), axis = last, sizes) => matmul_split(a, b, sizes), one result per piece."""
    matmul = producer(op.operands[0], "graph.matmul")
    if matmul is None:
        return False
    values = attributes(op)
    rank = sig(op.operands[0]).rank
    if not is_last_axis(values["axis"], rank):
        return f"the split cuts axis {values['axis']}, not the last axis of the rank-{rank} matmul result"
    reason = sole_use_reason(matmul.results[0], op, "the matmul result")
    if reason:
        return reason
    reason = replace_with_new(
        rw, op, "matmul_split", list(matmul.operands), [matmul, op], **transpose_flags(matmul), sizes=values["sizes"]
    )
    if reason:
        return reason
    erase_dead(rw, [matmul])
    return True


@dataclass(frozen=True)
class InferenceMatmulSplitFusion(FusionPass):
    """matmul whose only user is a split along the last axis => matmul_split (e.g. a fused QKV projection)."""

    name: ClassVar[str] = "inference_matmul_split_fusion"
    priority: ClassVar[int] = 210
    summary: ClassVar[str] = "matmul -> split along the last axis => matmul_split"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @qkv(%x: tensor<4x16xf32>, %w: tensor<16x48xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x48xf32>) -> tensor<4x48xf32>
  %1:3 = "graph.split"(%0) {axis = 1 : i64, sizes = array<i64: 16, 16, 16>}
      : (tensor<4x48xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
  return %1#0, %1#1, %1#2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("MatMulSplit", "graph.split", matmul_split),)


__all__ = [
    "BIAS_ADD_PATTERNS",
    "is_last_axis",
    "result_index",
    "transpose_flags",
]
