"""Decompositions: fused, composite and compound graph ops rewritten into simpler graph ops.

graph-to-linalg lowers elementwise ops, reductions, matmul and the shape ops;
every other op is first rewritten here into those, at its own location, and
the pieces are lowered in turn.  ``graph-decompose`` runs this step alone, so
the decomposed graph can be read (and checked) before lowering.

Reused from graph-kernel-expand (``pipelines/graph_kernel/expand.py``, whose
docstring states their numerics: bit-exact, f16/bf16 computed in f32 between
casts): add_n, squared_difference, tile, bias_add, softmax, log_softmax,
layer_norm, rms_norm, batch_norm, group_norm.  Elementwise activations (gelu, silu,
relu...) and reduce_mean are *not* decomposed: they lower directly.

New here, each the op's reference step by step, so bit-exact in every element
type (each intermediate is rounded to the type the reference rounds it to):

- matmul_bias_add, matmul_add, matmul_relu, matmul_gelu: ``matmul`` (its
  transpose flags), rounded to the element type, then ``add`` / ``relu`` /
  ``gelu``.  A 1-D bias along the last axis is a plain broadcast ``add``.
- matmul_split: ``matmul`` then ``split`` along the last axis.
- swiglu: ``split`` into two halves along ``axis``, ``silu(first) * second``.
- flash_attention: ``matmul(q, k, transpose_b)``, times ``scale`` (in f32 and
  rounded once, as the reference; a scale the element type holds exactly
  needs no casts), ``+ mask`` when given, ``softmax`` over the last axis
  (decomposed in turn), ``matmul`` with ``v``.  This is the plain, untiled
  form; the tiled online-softmax kernel is a later code-generation step.
- quantize: ``cast(round(f32(x) * scale + offset), i8)``: ``round`` is half to
  even, and the float -> i8 ``cast`` truncates (an integer already),
  saturates to [-128, 127] (+-inf included) and maps NaN to 0, which is the
  reference's clip and nan_to_num.
- dynamic_quant: ``x' = f32(x) [* smooth_scales]``, ``m = max(reduce_max(|x'|,
  -1), 0)`` (the reference's ``initial = 0``: also 0 for a row that is empty
  at run time), ``s = m / 127``, ``q = cast(round(select(s == 0, 0, x' /
  select(s == 0, 1, s))), i8)``; the ``scale`` result is ``s`` reshaped to
  ``x.shape[:-1]``.
- rms_norm_quant, add_layer_norm, add_rms_norm (mixed-precision form
  included: the operands cast to f32, the normalized result cast back),
  add_rms_norm_cast, add_rms_norm_quant, add_rms_norm_dynamic_quant: ``add``
  (the ``sum`` result), then the norm (decomposed in turn), then the cast or
  the quantization above; every result of the fused op is replaced.
- quant_batch_matmul: both operands cast to i32, ``matmul``, cast to f32,
  ``* scale`` (``+ f32(bias)``), cast to the result type.
- all_reduce, all_gather, reduce_scatter over a group of one rank: the
  operand; matmul_all_reduce over one rank: ``matmul`` (+ the bias);
  quant_batch_matmul_all_reduce: the quantized product (+ ``x3``).  Over
  more ranks they communicate and stay (graphfuse.distributed runs them).

Not decomposed (the op stays; graph-to-linalg{strict} then reports it): what
an expander refuses (a dynamic normalized or tiled dimension; softmax over a
statically empty axis), an op whose decomposition needs such a refused
composite (add_rms_norm over a dynamic last dimension stays whole rather than
half decomposed), swiglu over a dynamic ``axis`` (the halves' sizes are
unknown), dynamic_quant over a statically empty last axis (reduce_max needs an
element) or with more than one dynamic leading dimension (the ``scale``
reshape can recover only one).  Each decomposition is first planned on type
signatures alone: when a piece would not verify or the results would differ
from the op's, nothing is created.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.diagnostics import source_loc
from graphfuse.dialect.expansions import EXPANDERS, ExpansionBuilder, Value
from graphfuse.dialect.matching import attributes, create_op, sig
from graphfuse.dialect.ops.derived import DERIVED_OPS
from graphfuse.dialect.shape_utils import normalize_axis
from graphfuse.dialect.types import TensorSig, numpy_dtype
from graphfuse.lowering.common import decompose_graph_ops, register_decomposition
from graphfuse.lowering.structured_ops.attention import tiled_attention_applies
from graphfuse.pipelines import log
from graphfuse.pipelines.pass_base import GraphPass, PassContext

__all__ = ["DECOMPOSED_OPS", "REUSED_EXPANDERS", "GraphDecompose"]

#: Ops decomposed by graph-kernel-expand's expanders, registered as they are: the composites above and every
#: op defined by its expansion (dialect/ops/derived.py: gradients and activations).
REUSED_EXPANDERS = (
    "add_n",
    "squared_difference",
    "tile",
    "bias_add",
    "softmax",
    "safe_softmax",
    "log_softmax",
    "layer_norm",
    "rms_norm",
    "batch_norm",
    "group_norm",
    *DERIVED_OPS,
)

for _name in REUSED_EXPANDERS:
    register_decomposition(_name)(EXPANDERS[_name])


# --------------------------------------------------------------------------
# Planning and emitting.

# The composites a decomposition below emits, with the condition under which their expander refuses (the
# same conditions as in expand.py).  Planning checks them, so a fused op is either decomposed all the way
# or left whole.


def _layer_norm_refusal(inputs: Sequence[TensorSig], attrs: dict[str, Any]) -> str | None:
    x = inputs[0]
    begin = normalize_axis(attrs.get("begin_norm_axis", -1), x.rank)
    return f"a normalized dimension of {x} is dynamic" if None in x.shape[begin:] else None


def _rms_norm_refusal(inputs: Sequence[TensorSig], attrs: dict[str, Any]) -> str | None:
    x = inputs[0]
    return f"the normalized last dimension of {x} is dynamic" if x.rank and x.shape[-1] is None else None


def _softmax_refusal(inputs: Sequence[TensorSig], attrs: dict[str, Any]) -> str | None:
    x = inputs[0]
    axis = normalize_axis(attrs.get("axis", -1), x.rank)
    return f"its axis {axis} of {x} is empty (reduce_max needs an element)" if x.shape[axis] == 0 else None


_NESTED_REFUSALS: dict[str, Callable[[Sequence[TensorSig], dict[str, Any]], str | None]] = {
    "layer_norm": _layer_norm_refusal,
    "rms_norm": _rms_norm_refusal,
    "softmax": _softmax_refusal,
    "safe_softmax": _softmax_refusal,
}


class _Graph(ExpansionBuilder):
    """expand.py's builder (``b.add(x, y)``; signatures only when ``rw`` is None) with multi-result ops.

    While planning, emitting a composite whose expander would refuse raises
    VerifyError, so the fused op is left whole.
    """

    def op(self, name: str, *operands: Value, declared: TensorSig | None = None, **attrs: Any) -> Value:
        refusal = _NESTED_REFUSALS.get(name)
        if self.rw is None and refusal is not None:
            reason = refusal([self.sig(v) for v in operands], attrs)
            if reason is not None:
                raise VerifyError(f"graph.{name} would not decompose: {reason}")
        return super().op(name, *operands, declared=declared, **attrs)

    def results(self, name: str, *operands: Value, **attrs: Any) -> list[Value]:
        """All results of ``graph.<name>`` (split)."""
        if self.rw is None:
            spec = lookup_op(f"graph.{name}")
            assert spec is not None, name
            return infer_results(spec, [self.sig(v) for v in operands], spec.with_defaults(attrs), None)
        return list(create_op(self.rw, name, list(operands), self.loc, None, **attrs).results)


Build = Callable[..., list[Value]]  # (builder, *operands) -> one value per result of the op


def _refuse(op: ir.Operation, reason: str) -> bool:
    where = source_loc(op.location)
    log.debug(f"graph-decompose: {op.name}{f' at {where}' if where else ''} is not decomposed: {reason}")
    return False


def _decompose(op: ir.Operation, rw: Any, build: Build) -> bool:
    """Replace every result of ``op`` by ``build(builder, *operands)``, after a dry run on signatures."""
    want = [sig(r) for r in op.results]
    try:
        planned = build(_Graph(), *[sig(v) for v in op.operands])
    except VerifyError as error:
        return _refuse(op, error.message)
    if planned != want:
        got = ", ".join(str(s) for s in planned)
        return _refuse(op, f"the decomposition would give ({got}), not ({', '.join(str(s) for s in want)})")
    values = build(_Graph(rw, op.location), *op.operands)
    rw.replace_op(op, list(values))
    return True


def _flags(attrs: dict[str, Any]) -> dict[str, bool]:
    """matmul's transpose flags, only the set ones (the others are the defaults)."""
    return {name: True for name in ("transpose_a", "transpose_b") if attrs[name]}


# --------------------------------------------------------------------------
# Shared formulas.


def _quantize(b: _Graph, x: Value, scale: Value, offset: Value) -> Value:
    """cast(round_half_even(f32(x) * scale + offset), i8): saturating, NaN -> 0 (graph.cast's rules)."""
    v = b.add(b.mul(b.cast(x, "f32"), scale), offset)
    return b.cast(b.round(v), "i8")


def _dynamic_quant(b: _Graph, x: Value, smooth: Value | None) -> list[Value]:
    """[q, scale] of graph.dynamic_quant: per row over the last axis, in f32."""
    shape = b.sig(x).shape
    xs = b.cast(x, "f32")
    if smooth is not None:
        xs = b.mul(xs, b.cast(smooth, "f32"))
    zero, one = b.const(0.0, "f32"), b.const(1.0, "f32")
    row_max = b.maximum(b.reduce_max(b.abs(xs), axes=[len(shape) - 1], keep_dims=True), zero)
    s = b.div(row_max, b.const(127.0, "f32"))
    zero_scale = b.equal(s, zero)
    quotient = b.div(xs, b.select(zero_scale, one, s))
    q = b.cast(b.round(b.select(zero_scale, zero, quotient)), "i8")
    return [q, b.reshape(s, shape[:-1])]


def _add_rms_norm(b: _Graph, x1: Value, x2: Value, gamma: Value, eps: float) -> tuple[Value, Value]:
    """(y in x1's type, sum in gamma's type): the mixed form (f16/bf16 x, f32 gamma) adds and normalizes in f32."""
    compute = b.sig(gamma).dtype
    total = b.add(b.cast(x1, compute), b.cast(x2, compute))
    y = b.rms_norm(total, gamma, epsilon=eps)
    return b.cast(y, b.sig(x1).dtype), total


def _holds_exactly(value: float, dtype: str) -> bool:
    """Whether the f32 ``value`` survives a round trip through ``dtype``."""
    f32 = np.float32(value)
    return bool(f32.astype(numpy_dtype(dtype)).astype(np.float32) == f32)


def _scaled(b: _Graph, scores: Value, scale: float) -> Value:
    """scores * scale computed in f32 and rounded once to the scores' type (flash_attention's reference)."""
    dtype = b.sig(scores).dtype
    if _holds_exactly(scale, dtype):  # the mul widens both to f32: the same product, rounded the same way
        return b.mul(scores, b.const(scale, dtype))
    return b.cast(b.mul(b.cast(scores, "f32"), b.const(scale, "f32")), dtype)


# --------------------------------------------------------------------------
# Decompositions: (op, rw) -> True after rewriting, False to leave the op alone.


@register_decomposition("matmul_bias_add")
def decompose_matmul_bias_add(op: ir.Operation, rw: Any) -> bool:
    """matmul_bias_add(a, b, bias) -> matmul(a, b) + bias (bias along the last axis broadcasts as is)."""
    flags = _flags(attributes(op))
    return _decompose(op, rw, lambda b, x, w, bias: [b.add(b.matmul(x, w, **flags), bias)])


@register_decomposition("matmul_add")
def decompose_matmul_add(op: ir.Operation, rw: Any) -> bool:
    """matmul_add(a, b, c) -> matmul(a, b) + c."""
    flags = _flags(attributes(op))
    return _decompose(op, rw, lambda b, x, w, c: [b.add(b.matmul(x, w, **flags), c)])


@register_decomposition("matmul_relu")
def decompose_matmul_relu(op: ir.Operation, rw: Any) -> bool:
    """matmul_relu(a, b) -> relu(matmul(a, b))."""
    flags = _flags(attributes(op))
    return _decompose(op, rw, lambda b, x, w: [b.relu(b.matmul(x, w, **flags))])


@register_decomposition("matmul_gelu")
def decompose_matmul_gelu(op: ir.Operation, rw: Any) -> bool:
    """matmul_gelu(a, b) -> gelu(matmul(a, b), approximate)."""
    attrs = attributes(op)
    flags = _flags(attrs)
    return _decompose(op, rw, lambda b, x, w: [b.gelu(b.matmul(x, w, **flags), approximate=attrs["approximate"])])


@register_decomposition("matmul_split")
def decompose_matmul_split(op: ir.Operation, rw: Any) -> bool:
    """matmul_split(a, b, sizes) -> split(matmul(a, b), axis = last, sizes): one result per piece."""
    attrs = attributes(op)
    flags = _flags(attrs)

    def build(b: _Graph, x: Value, w: Value) -> list[Value]:
        product = b.matmul(x, w, **flags)
        return b.results("split", product, axis=b.sig(product).rank - 1, sizes=list(attrs["sizes"]))

    return _decompose(op, rw, build)


@register_decomposition("swiglu")
def decompose_swiglu(op: ir.Operation, rw: Any) -> bool:
    """swiglu(x, axis) -> silu(first) * second, (first, second) = split(x, axis) in two equal halves."""
    x_sig = sig(op.operands[0])
    axis = normalize_axis(attributes(op)["axis"], x_sig.rank)
    size = x_sig.shape[axis]
    if size is None:
        return _refuse(op, f"the split axis {axis} of {x_sig} is dynamic")

    def build(b: _Graph, x: Value) -> list[Value]:
        first, second = b.results("split", x, axis=axis, sizes=[size // 2, size // 2])
        return [b.mul(b.silu(first), second)]

    return _decompose(op, rw, build)


@register_decomposition("flash_attention")
def decompose_flash_attention(op: ir.Operation, rw: Any) -> bool:
    """flash_attention(q, k, v [, mask]) -> matmul(softmax(matmul(q, k^T) * scale [+ mask], -1), v), with
    safe_softmax when the op has ``safe_softmax`` set.

    The untiled form; over a query or key count known only at run time graph-to-linalg lowers the op tiled
    instead (``lowering/structured_ops/attention.py``).
    """
    if tiled_attention_applies(op):
        return False
    attrs = attributes(op)
    scale = float(attrs["scale"])
    probabilities = "safe_softmax" if attrs.get("safe_softmax") else "softmax"

    def build(b: _Graph, q: Value, k: Value, v: Value, *mask: Value) -> list[Value]:
        scores = _scaled(b, b.matmul(q, k, transpose_b=True), scale)
        if mask:
            scores = b.add(scores, mask[0])
        return [b.matmul(b.op(probabilities, scores, axis=b.sig(scores).rank - 1), v)]

    return _decompose(op, rw, build)


@register_decomposition("quantize")
def decompose_quantize(op: ir.Operation, rw: Any) -> bool:
    """quantize(x, scale, offset) -> cast(round(f32(x) * scale + offset), i8)."""
    return _decompose(op, rw, lambda b, x, scale, offset: [_quantize(b, x, scale, offset)])


@register_decomposition("dynamic_quant")
def decompose_dynamic_quant(op: ir.Operation, rw: Any) -> bool:
    """dynamic_quant(x [, smooth_scales]) -> [q, scale], per row in f32 (see the module docstring)."""
    return _decompose(op, rw, lambda b, x, *smooth: _dynamic_quant(b, x, smooth[0] if smooth else None))


@register_decomposition("rms_norm_quant")
def decompose_rms_norm_quant(op: ir.Operation, rw: Any) -> bool:
    """rms_norm_quant(x, gamma, scale, offset) -> quantize(rms_norm(x, gamma)), the norm rounded to x's type."""
    eps = attributes(op)["epsilon"]
    return _decompose(
        op, rw, lambda b, x, gamma, scale, offset: [_quantize(b, b.rms_norm(x, gamma, epsilon=eps), scale, offset)]
    )


@register_decomposition("add_layer_norm")
def decompose_add_layer_norm(op: ir.Operation, rw: Any) -> bool:
    """add_layer_norm(x1, x2, gamma, beta) -> [layer_norm(sum, gamma, beta), sum], sum = x1 + x2."""
    attrs = attributes(op)

    def build(b: _Graph, x1: Value, x2: Value, gamma: Value, beta: Value) -> list[Value]:
        total = b.add(x1, x2)
        norm = b.layer_norm(total, gamma, beta, begin_norm_axis=attrs["begin_norm_axis"], epsilon=attrs["epsilon"])
        return [norm, total]

    return _decompose(op, rw, build)


@register_decomposition("add_rms_norm")
def decompose_add_rms_norm(op: ir.Operation, rw: Any) -> bool:
    """add_rms_norm(x1, x2, gamma) -> [rms_norm(sum, gamma), sum], sum = x1 + x2 (f32 in the mixed form)."""
    eps = attributes(op)["epsilon"]
    return _decompose(op, rw, lambda b, x1, x2, gamma: list(_add_rms_norm(b, x1, x2, gamma, eps)))


@register_decomposition("add_rms_norm_cast")
def decompose_add_rms_norm_cast(op: ir.Operation, rw: Any) -> bool:
    """add_rms_norm_cast(x1, x2, gamma) -> [cast(y, f32), y, sum], (y, sum) as add_rms_norm."""
    eps = attributes(op)["epsilon"]

    def build(b: _Graph, x1: Value, x2: Value, gamma: Value) -> list[Value]:
        y, total = _add_rms_norm(b, x1, x2, gamma, eps)
        return [b.cast(y, "f32"), y, total]

    return _decompose(op, rw, build)


@register_decomposition("add_rms_norm_quant")
def decompose_add_rms_norm_quant(op: ir.Operation, rw: Any) -> bool:
    """add_rms_norm_quant(x1, x2, gamma, scale, offset) -> [quantize(y, scale, offset), sum]."""
    eps = attributes(op)["epsilon"]

    def build(b: _Graph, x1: Value, x2: Value, gamma: Value, scale: Value, offset: Value) -> list[Value]:
        y, total = _add_rms_norm(b, x1, x2, gamma, eps)
        return [_quantize(b, y, scale, offset), total]

    return _decompose(op, rw, build)


@register_decomposition("add_rms_norm_dynamic_quant")
def decompose_add_rms_norm_dynamic_quant(op: ir.Operation, rw: Any) -> bool:
    """add_rms_norm_dynamic_quant(x1, x2, gamma [, smooth_scales]) -> [*dynamic_quant(y [, smooth_scales]), sum]."""
    eps = attributes(op)["epsilon"]

    def build(b: _Graph, x1: Value, x2: Value, gamma: Value, *smooth: Value) -> list[Value]:
        y, total = _add_rms_norm(b, x1, x2, gamma, eps)
        return [*_dynamic_quant(b, y, smooth[0] if smooth else None), total]

    return _decompose(op, rw, build)


def _single_rank(op: ir.Operation) -> str | None:
    """Why a collective cannot be decomposed here: it communicates (a group of more than one rank)."""
    size = attributes(op)["group_size"]
    return None if size == 1 else (f"it communicates with {size} ranks: the ranks' graphs compile with "
                                   "graphfuse.distributed (docs/distributed.md)")


@register_decomposition("all_reduce", "all_gather", "reduce_scatter")
def decompose_one_rank_collective(op: ir.Operation, rw: Any) -> bool:
    """A collective over one rank is its operand (the sum, the concatenation, the only block of one value)."""
    reason = _single_rank(op)
    if reason is not None:
        return _refuse(op, reason)
    return _decompose(op, rw, lambda b, x: [x])


@register_decomposition("matmul_all_reduce")
def decompose_one_rank_matmul_all_reduce(op: ir.Operation, rw: Any) -> bool:
    """matmul_all_reduce over one rank -> matmul(a, b) (+ bias along the last axis)."""
    reason = _single_rank(op)
    if reason is not None:
        return _refuse(op, reason)
    flags = _flags(attributes(op))

    def build(b: _Graph, x: Value, w: Value, *bias: Value) -> list[Value]:
        product = b.matmul(x, w, **flags)
        return [b.add(product, bias[0]) if bias else product]

    return _decompose(op, rw, build)


def _qbmm(b: _Graph, x1: Value, x2: Value, scale: Value, bias: Value | None, attrs: dict[str, Any]) -> Value:
    """dtype(f32(i32(x1) @ i32(x2)) * scale [+ f32(bias)]): int32 products wrap as the reference's narrowing."""
    flags = {"transpose_a": True} if attrs["transpose_x1"] else {}
    if attrs["transpose_x2"]:
        flags["transpose_b"] = True
    product = b.matmul(b.cast(x1, "i32"), b.cast(x2, "i32"), **flags)
    y = b.mul(b.cast(product, "f32"), scale)
    if bias is not None:
        y = b.add(y, b.cast(bias, "f32"))
    return b.cast(y, attrs["dtype"])


@register_decomposition("quant_batch_matmul")
def decompose_quant_batch_matmul(op: ir.Operation, rw: Any) -> bool:
    """quant_batch_matmul -> cast to i32, matmul, cast to f32, * scale [+ bias], cast to dtype."""
    attrs = attributes(op)
    return _decompose(op, rw, lambda b, x1, x2, scale, *bias: [_qbmm(b, x1, x2, scale, bias[0] if bias else None,
                                                                      attrs)])


@register_decomposition("quant_batch_matmul_all_reduce")
def decompose_one_rank_qbmm_all_reduce(op: ir.Operation, rw: Any) -> bool:
    """quant_batch_matmul_all_reduce over one rank -> quant_batch_matmul's decomposition (+ x3)."""
    reason = _single_rank(op)
    if reason is not None:
        return _refuse(op, reason)
    attrs = attributes(op)

    def build(b: _Graph, x1: Value, x2: Value, scale: Value, *x3: Value) -> list[Value]:
        y = _qbmm(b, x1, x2, scale, None, attrs)
        return [b.add(y, x3[0]) if x3 else y]

    return _decompose(op, rw, build)


#: Every op this module decomposes (reused expanders included).
DECOMPOSED_OPS = frozenset(
    (
        *REUSED_EXPANDERS,
        "matmul_bias_add",
        "matmul_add",
        "matmul_relu",
        "matmul_gelu",
        "matmul_split",
        "swiglu",
        "flash_attention",
        "quantize",
        "dynamic_quant",
        "rms_norm_quant",
        "add_layer_norm",
        "add_rms_norm",
        "add_rms_norm_cast",
        "add_rms_norm_quant",
        "add_rms_norm_dynamic_quant",
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "matmul_all_reduce",
        "quant_batch_matmul",
        "quant_batch_matmul_all_reduce",
    )
)


@dataclass(frozen=True)
class GraphDecompose(GraphPass):
    name: ClassVar[str] = "graph-decompose"
    summary: ClassVar[str] = (
        "Rewrite fused, composite and compound graph ops into the simpler graph ops lowered to linalg"
    )
    statistics: ClassVar[dict[str, str]] = {
        "num-decomposed": "Number of graph ops rewritten into simpler graph ops",
    }

    def run(self, module: ir.Module, context: PassContext) -> None:
        with module.context:
            decompose_graph_ops(module, context.count)
