"""FlashAttentionFusionV1 / V2: scaled dot-product attention subgraphs => ``flash_attention``.

Both passes root their pattern at the second matmul, ``matmul(probs, v)``, and
walk up: ``probs = softmax(x, axis = -1)`` (or ``safe_softmax``, which sets the
fused op's ``safe_softmax``), ``x = add(s, mask)`` or
``add(mask, s)`` (optional), ``s`` = the scaled scores.  They differ in how
the scores are scaled (see each pass).  The scores matmul is ``matmul(q, k,
transpose_b = true)`` or ``matmul(q, transpose(k))`` with a transpose that
swaps the last two dims (a transpose used elsewhere stays for its other
users).  Every intermediate (scores, scaled scores, masked scores,
probabilities, a pre-scaled q) must have the next op of the chain as its only
user and must not be a function result.  The scale constant is a splat (or
1-element) ``arith.constant`` whose broadcast does not enlarge the tensor it
scales; the mask must not enlarge the scores either.  Neither matmul may carry
a ``transpose_a`` flag, and the second none at all (``v`` is ``[..., Sk, Dv]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.matching import (
    VerifyError,
    attributes,
    constant_scalar,
    create_op,
    erase_dead,
    producer,
    replace_with_new,
    sig,
    sole_use_reason,
)
from graphfuse.pipelines.fusion.base import FusionPass, Pattern
from graphfuse.pipelines.fusion.matmul import is_last_axis


@dataclass
class _Scores:
    """The matched ``q k^T`` scaled by ``scale``: the ops from the scaled scores up to the scores matmul."""

    q: ir.Value
    k: ir.Value
    scale: float
    #: absorbed ops with what their result is, consumers first: each result's only user is the op before it
    chain: list[tuple[ir.Operation, str]]
    #: ops that are not absorbed but die with the fusion (the transpose of k), erased when unused
    extra: list[ir.Operation]
    #: when k is not an existing value: the perm that turns ``k`` into the [..., Sk, D] operand
    k_perm: list[int] | None = None


# --------------------------------------------------------------------------
# Matching pieces.


def _qk(matmul: ir.Operation) -> tuple[ir.Value, ir.Value, ir.Operation | None, list[int] | None] | str | None:
    """(q, k, transpose of k or None, perm for k or None) of matmul(q, k, transpose_b) or matmul(q, transpose(x)).

    A transpose whose perm ends by swapping the last two dims gives k = its
    operand.  Any other transpose (e.g. the head split and k^T merged into one
    transpose by graph-canonicalize) gives k = transpose(x, perm with its last
    two entries swapped), built only when the fusion happens.
    """
    flags = attributes(matmul)
    if flags["transpose_a"]:
        return "the scores matmul transposes q (transpose_a)"
    q, b = matmul.operands
    if flags["transpose_b"]:
        return q, b, None, None
    transpose = producer(b, "graph.transpose")
    if transpose is None:
        return "the scores matmul multiplies by k, not by k transposed (transpose_b or a transpose of the last dims)"
    perm = list(attributes(transpose)["perm"])
    k_perm = [*perm[:-2], perm[-1], perm[-2]]
    if k_perm == list(range(len(perm))):
        return q, transpose.operands[0], transpose, None
    return q, transpose.operands[0], transpose, k_perm


def _scalar_operand(op: ir.Operation, i: int) -> float | None:
    """The scalar value of constant operand ``i`` of ``op`` when its broadcast keeps the other operand's shape."""
    value = constant_scalar(op.operands[i])
    if value is None or sig(op.results[0]) != sig(op.operands[1 - i]):
        return None
    return value


def _scores_matmul(value: ir.Value) -> tuple[ir.Operation, Any] | str | None:
    """The scores matmul producing ``value`` and its (q, k, transpose)."""
    matmul = producer(value, "graph.matmul")
    if matmul is None:
        return None
    qk = _qk(matmul)
    return qk if isinstance(qk, str) else (matmul, qk)


def _v1_scores(value: ir.Value) -> _Scores | str | None:
    """mul(matmul(q, k^T), c) or mul(c, matmul(q, k^T)), c a constant scalar."""
    mul = producer(value, "graph.mul")
    if mul is None:
        return None
    for i in (0, 1):
        found = _scores_matmul(mul.operands[i])
        if found is None:
            continue
        if isinstance(found, str):
            return found
        scale = _scalar_operand(mul, 1 - i)
        if scale is None:
            return "the scores are not multiplied by a constant scalar"
        matmul, (q, k, transpose, k_perm) = found
        chain = [(mul, "scaled scores"), (matmul, "scores")]
        return _Scores(q, k, scale, chain, [transpose] if transpose else [], k_perm)
    return None


def _v2_scores(value: ir.Value) -> _Scores | str | None:
    """div(matmul(q, k^T), c), or matmul(q', k^T) with q' = mul(q, c) / mul(c, q) / div(q, c), c a constant."""
    div = producer(value, "graph.div")
    if div is not None:
        found = _scores_matmul(div.operands[0])
        if found is None:
            return None
        if isinstance(found, str):
            return found
        c = _scalar_operand(div, 1)
        if c is None or c == 0 or not np.isfinite(c):
            return "the scores are not divided by a finite non-zero constant scalar"
        matmul, (q, k, transpose, k_perm) = found
        chain = [(div, "scaled scores"), (matmul, "scores")]
        return _Scores(q, k, 1.0 / c, chain, [transpose] if transpose else [], k_perm)
    found = _scores_matmul(value)
    if found is None:
        return None
    if isinstance(found, str):
        return found
    matmul, (scaled_q, k, transpose, k_perm) = found
    prescale = producer(scaled_q, "graph.mul") or producer(scaled_q, "graph.div")
    if prescale is None:
        return "the scores are not scaled (no constant mul/div of the scores or of q)"
    if prescale.name == "graph.div":
        c = _scalar_operand(prescale, 1)
        if c is None or c == 0 or not np.isfinite(c):
            return "q is not divided by a finite non-zero constant scalar"
        q, scale = prescale.operands[0], 1.0 / c
    else:
        scale, q = None, None
        for i in (0, 1):
            scale = _scalar_operand(prescale, 1 - i)
            if scale is not None:
                q = prescale.operands[i]
                break
        if q is None:
            return "q is not multiplied by a constant scalar"
    return _Scores(q, k, scale, [(matmul, "scores"), (prescale, "scaled q")], [transpose] if transpose else [],
                   k_perm)


def _attention(op: ir.Operation, rw: Any, parse_scores: Any) -> bool | str:
    """matmul(softmax(add?(scaled scores, mask)), v) => flash_attention(q, k, v[, mask], scale); a safe_softmax
    makes a flash_attention with ``safe_softmax`` set."""
    softmax = producer(op.operands[0], "graph.softmax") or producer(op.operands[0], "graph.safe_softmax")
    if softmax is None:
        return False
    safe = {"safe_softmax": True} if softmax.name == "graph.safe_softmax" else {}
    scores_in = softmax.operands[0]
    # The scores chain first: a softmax feeding a matmul is attention only when it is there.
    mask_index, add = None, producer(scores_in, "graph.add")
    found: _Scores | str | None = None
    if add is not None:
        for i in (0, 1):
            candidate = parse_scores(add.operands[i])
            if isinstance(candidate, _Scores):
                found, mask_index = candidate, 1 - i
                break
            found = found or candidate  # a reason, kept when neither operand is the scores
    else:
        found = parse_scores(scores_in)
    if found is None:
        return False
    if isinstance(found, str):
        return found
    flags = attributes(op)
    if flags["transpose_a"] or flags["transpose_b"]:
        return "the matmul with v transposes an operand"
    axis, rank = attributes(softmax)["axis"], sig(scores_in).rank
    if not is_last_axis(axis, rank):
        return f"the softmax runs along axis {axis}, not the last axis of the rank-{rank} scores"
    mask = None if add is None else add.operands[mask_index]
    if add is not None and sig(add.results[0]) != sig(add.operands[1 - mask_index]):
        return "the mask broadcasts the scores to a larger shape"
    # Each intermediate's only user is the next op of the chain.
    roles = [(op, ""), (softmax, "probabilities"), *([(add, "masked scores")] if add else []), *found.chain]
    for (user, _), (producer_op, what) in pairwise(roles):
        reason = sole_use_reason(producer_op.results[0], user, f"the {producer_op.name} result ({what})")
        if reason:
            return reason
    chain = [o for o, _ in roles]
    k, built = found.k, None
    if found.k_perm is not None:
        built = create_op(rw, "transpose", [found.k], found.extra[0].location, perm=found.k_perm)
        k = built.results[0]
    operands = [found.q, k, op.operands[1], *([mask] if mask is not None else [])]
    try:
        reason = replace_with_new(rw, op, "flash_attention", operands, list(reversed(chain)), scale=found.scale,
                                  **safe)
    except VerifyError:
        reason = None
        if built is not None:
            rw.erase_op(built)
        raise
    if reason:
        if built is not None:
            rw.erase_op(built)  # leave the IR as it was: the pattern did not apply
        return reason
    erase_dead(rw, [*chain[1:], *found.extra])
    return True


def flash_attention_v1(op: ir.Operation, rw: Any) -> bool | str:
    return _attention(op, rw, _v1_scores)


def flash_attention_v2(op: ir.Operation, rw: Any) -> bool | str:
    return _attention(op, rw, _v2_scores)


# --------------------------------------------------------------------------
# Passes.


@dataclass(frozen=True)
class FlashAttentionFusionV1(FusionPass):
    """softmax(q k^T * c [+ mask]) @ v => flash_attention(q, k, v[, mask], scale = c).

    Covers: scores ``matmul(q, k, transpose_b = true)`` or ``matmul(q,
    transpose(k, perm swapping the last two dims))``; scaled by ``mul(scores,
    c)`` or ``mul(c, scores)`` with ``c`` a constant scalar; then optionally
    ``add(_, mask)`` or ``add(mask, _)``; ``softmax`` on the last axis;
    ``matmul(probs, v)`` without transposes.  The fused op computes the same
    chain with the same roundings: the rewrite is exact.
    """

    name: ClassVar[str] = "FlashAttentionFusionV1"
    priority: ClassVar[int] = 100
    summary: ClassVar[str] = "softmax(q k^T * const [+ mask]) @ v => flash_attention (exact)"
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @attention(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>,
                     %mask: tensor<8x8xf32>) -> tensor<2x8x16xf32> {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %2 = "graph.add"(%1, %mask) : (tensor<2x8x8xf32>, tensor<8x8xf32>) -> tensor<2x8x8xf32>
  %3 = "graph.softmax"(%2) {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %4 = "graph.matmul"(%3, %v) : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %4 : tensor<2x8x16xf32>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("FlashAttentionV1", "graph.matmul", flash_attention_v1),)


@dataclass(frozen=True)
class FlashAttentionFusionV2(FusionPass):
    """softmax(q k^T / c [+ mask]) @ v, or the scale applied to q first => flash_attention.

    Covers, with the scores matmul, mask, softmax and second matmul as in V1:
    ``div(scores, c)`` (scale = 1/c); or no scaling of the scores but ``q``
    scaled before the first matmul by ``mul(q, c)`` / ``mul(c, q)`` (scale =
    c) or ``div(q, c)`` (scale = 1/c); ``c`` a finite non-zero constant scalar.
    The fused op multiplies the scores by the scale, so the result equals the
    unfused graph's up to rounding (bit for bit when c is a power of two);
    the pure ``q k^T * c`` form is V1's.
    """

    name: ClassVar[str] = "FlashAttentionFusionV2"
    priority: ClassVar[int] = 110
    summary: ClassVar[str] = (
        "softmax(q k^T / const [+ mask]) @ v or q scaled first => flash_attention (equal up to rounding)"
    )
    origin: ClassVar[str] = "mindspore"
    example: ClassVar[str] = """\
func.func @attention(%q: tensor<2x8x64xf16>, %k: tensor<2x8x64xf16>, %v: tensor<2x8x64xf16>) -> tensor<2x8x64xf16> {
  %c = arith.constant dense<8.000000e+00> : tensor<f16>
  %kt = "graph.transpose"(%k) {perm = array<i64: 0, 2, 1>} : (tensor<2x8x64xf16>) -> tensor<2x64x8xf16>
  %0 = "graph.matmul"(%q, %kt) : (tensor<2x8x64xf16>, tensor<2x64x8xf16>) -> tensor<2x8x8xf16>
  %1 = "graph.div"(%0, %c) : (tensor<2x8x8xf16>, tensor<f16>) -> tensor<2x8x8xf16>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %3 = "graph.matmul"(%2, %v) : (tensor<2x8x8xf16>, tensor<2x8x64xf16>) -> tensor<2x8x64xf16>
  return %3 : tensor<2x8x64xf16>
}
"""
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("FlashAttentionV2", "graph.matmul", flash_attention_v2),)
