"""Converters of softmax and scaled-dot-product attention (masks, grouped-query heads, bf16 as PyTorch rounds it)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.dialect.types import NUMPY_DTYPES
from graphfuse.frontends.torch.converters.shapes import _axis
from graphfuse.frontends.torch.dtypes import _LOW_PRECISION
from graphfuse.frontends.torch.importer import _Importer
from graphfuse.frontends.torch.registry import Converter, _converts


def _softmax_like(graph_op: str) -> Converter:
    def convert(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
        x = imp.tensor(a["self"], imp.out_dtype(node))
        return imp.emit(graph_op, x, axis=_axis(a["dim"], len(x.shape)))

    return convert


_converts("aten.softmax.int", "aten._softmax.default", graph="`softmax`")(_softmax_like("softmax"))
_converts("aten.log_softmax.int", "aten._log_softmax.default", graph="`log_softmax`")(_softmax_like("log_softmax"))
_converts("aten._safe_softmax.default", graph="`safe_softmax`", notes="0 for a row of all -inf")(
    _softmax_like("safe_softmax"))


def _causal_mask(length: int, source: int, dtype: str) -> np.ndarray:
    """0 where key j <= query i (PyTorch's top-left aligned causal mask), -inf elsewhere."""
    allowed = np.tril(np.ones((length, source), dtype=bool))
    return np.where(allowed, 0.0, -np.inf).astype(NUMPY_DTYPES[dtype])


def _additive_mask(imp: _Importer, mask_arg: Any, dtype: str) -> Tensor:
    """An attention mask to add to the scores: a boolean mask (True = attend) becomes 0 / -inf."""
    known = imp.constant_value(mask_arg)
    meta = imp.meta(mask_arg)
    if meta.dtype != torch.bool:
        return imp.tensor(mask_arg, dtype)
    if known is not None:
        return imp.const(np.where(known.numpy(), 0.0, -np.inf), dtype)
    zero, minus_inf = imp.const(np.asarray(0.0), dtype), imp.const(np.asarray(-np.inf), dtype)
    return imp.emit("select", imp.tensor(mask_arg, "i1"), zero, minus_inf)


def _repeat_heads(imp: _Importer, x: Tensor, heads: int) -> Tensor:
    """[B, Hkv, S, E] -> [B, heads, S, E], each kv head repeated heads / Hkv times (grouped-query attention)."""
    *batch, kv_heads, seq, dim = x.shape
    group = heads // kv_heads
    wide = imp.emit("reshape", x, (*batch, kv_heads, 1, seq, dim))
    wide = imp.emit("broadcast_to", wide, (*batch, kv_heads, group, seq, dim))
    return imp.emit("reshape", wide, (*batch, heads, seq, dim))


@_converts(
    "aten.scaled_dot_product_attention.default",
    graph="`matmul` (`transpose_b`), `mul` by the scale, `add` of the mask, `safe_softmax`, `matmul`",
    notes="FlashAttentionFusionV1's form; bool or float mask, is_causal, scale, GQA; dropout_p = 0; a query row "
          "whose mask hides every key gives 0, as PyTorch; in f16/bf16 computed as PyTorch's CPU kernel computes "
          "it (scores, softmax and the division by its sum in f32, its `coarse_exp` on whole vectors of keys, "
          "the exponentials rounded for the product with V)",
)
def _sdpa(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    dtype = imp.out_dtype(node)
    q, k, v = (imp.tensor(a[key], dtype) for key in ("query", "key", "value"))
    if a["dropout_p"]:
        raise imp.unsupported(node, f"dropout_p = {a['dropout_p']}")
    if a["attn_mask"] is not None and a["is_causal"]:
        raise imp.unsupported(node, "both attn_mask and is_causal")
    if a.get("enable_gqa") and len(q.shape) >= 3 and q.shape[-3] != k.shape[-3]:
        k, v = _repeat_heads(imp, k, q.shape[-3]), _repeat_heads(imp, v, q.shape[-3])
    if dtype in _LOW_PRECISION:
        return _low_precision_attention(imp, node, a, q, k, v, dtype)
    probs, _ = _attention_probs(imp, node, a, q, k, dtype)
    return imp.emit("matmul", probs, v)


def _low_precision_attention(imp: _Importer, node: fx.Node, a: dict[str, Any], q: Tensor, k: Tensor, v: Tensor,
                             dtype: str) -> Tensor:
    """f16/bf16 attention rounded where PyTorch's CPU kernel rounds: the scores, their maximum, exponentials and
    sum in f32; the exponentials rounded to ``dtype`` for the product with V, accumulated in f32; multiplied by
    the reciprocal of the sum in f32 and rounded once.  (Rounding the normalized probabilities instead puts the
    logits of a bf16 Llama one rounding step further from eager's.)  A row whose mask hides every key gives 0.

    The exponentials are the kernel's own (:func:`_attention_exponentials`): with the true exp, 5% of a bf16
    attention's outputs differ from eager's by a rounding step, enough to flip a mixture-of-experts router."""
    scores, _ = _attention_scores(imp, node, a, imp.emit("cast", q, "f32"), imp.emit("cast", k, "f32"), "f32")
    last = len(scores.shape) - 1
    largest = imp.emit("reduce_max", scores, axes=[last], keep_dims=True)
    hidden = imp.emit("equal", largest, imp.const(np.asarray(-np.inf), "f32"))
    zero = imp.const(np.asarray(0.0), "f32")
    exps = _attention_exponentials(imp, imp.emit("sub", scores, imp.emit("select", hidden, zero, largest)))
    total = imp.emit("reduce_sum", exps, axes=[last], keep_dims=True)
    rounded = imp.emit("cast", imp.emit("cast", exps, dtype), "f32")
    weighted = imp.emit("matmul", rounded, imp.emit("cast", v, "f32"))
    normalized = imp.emit("mul", weighted, imp.emit("reciprocal", total))
    return imp.emit("cast", imp.emit("select", hidden, zero, normalized), dtype)


#: The f32 vector width of PyTorch's CPU kernels by its dispatch level, where the flash-attention kernel takes
#: the coarse exponential for f16/bf16 (x86 AVX2 and AVX-512 builds; elsewhere it is the accurate exp).
_COARSE_EXP_WIDTH = {"AVX2": 8, "AVX512": 16}


def _attention_exponentials(imp: _Importer, shifted: Tensor) -> Tensor:
    """exp of the shifted f32 scores as PyTorch's CPU flash attention computes it for f16/bf16 on this host:
    ``coarse_exp`` on the keys its vector loop covers (whole vectors of the dispatch level's width), the
    accurate exp on the remainder.  A dynamic key count takes ``coarse_exp`` throughout."""
    width = _COARSE_EXP_WIDTH.get(torch.backends.cpu.get_cpu_capability())
    if width is None:
        return imp.emit("exp", shifted)
    keys = shifted.shape[-1]
    vectorized = keys if keys is None else keys // width * width
    if vectorized == 0:
        return imp.emit("exp", shifted)
    coarse = imp.emit("coarse_exp", shifted)
    if vectorized == keys or keys is None:
        return coarse
    remainder = imp.const(np.arange(keys) >= vectorized, "i1")
    return imp.emit("select", remainder, imp.emit("exp", shifted), coarse)


def _attention_probs(imp: _Importer, node: fx.Node, a: dict[str, Any], q: Tensor, k: Tensor, dtype: str
                     ) -> tuple[Tensor, Tensor]:
    """safe_softmax(q k^T * scale [+ mask]) over the keys, and the scale as a constant (SDPA and its backward).

    PyTorch's attention gives a query row whose mask hides every key probabilities of 0 (its ``_safe_softmax``),
    not softmax's NaN: the rows of left padding in a batch of a decoder LM."""
    scores, scale = _attention_scores(imp, node, a, q, k, dtype)
    return imp.emit("safe_softmax", scores, axis=-1), scale


def _attention_scores(imp: _Importer, node: fx.Node, a: dict[str, Any], q: Tensor, k: Tensor, dtype: str
                      ) -> tuple[Tensor, Tensor]:
    """q k^T * scale [+ mask, or the causal mask], and the scale as a constant."""
    head_dim = q.shape[-1]
    if a.get("scale") is None and head_dim is None:
        raise imp.unsupported(node, "a dynamic head dim without an explicit scale")
    scale = imp.const(np.asarray(a["scale"] if a.get("scale") is not None else 1.0 / math.sqrt(head_dim)), dtype)
    scores = imp.emit("mul", imp.emit("matmul", q, k, transpose_b=True), scale)
    if a.get("attn_mask") is not None:
        scores = imp.emit("add", scores, _additive_mask(imp, a["attn_mask"], dtype))
    elif a["is_causal"]:
        length, source = q.shape[-2], k.shape[-2]
        if length is None or source is None:
            scores = imp.emit("add", scores, _dynamic_causal_mask(imp, q, k, dtype))
        else:
            scores = imp.emit("add", scores, imp.const(_causal_mask(length, source, dtype), dtype))
    return scores, scale


def _dynamic_causal_mask(imp: _Importer, q: Tensor, k: Tensor, dtype: str) -> Tensor:
    """:func:`_causal_mask` for a dynamic query or key count: key j <= query i compared on ``iota``s of the two
    sequence dims, [queries, 1] against [1, keys]."""
    queries = imp.emit("reshape", imp.emit("iota", q, axis=len(q.shape) - 2), (q.shape[-2], 1))
    keys = imp.emit("reshape", imp.emit("iota", k, axis=len(k.shape) - 2), (1, k.shape[-2]))
    allowed = imp.emit("less_equal", keys, queries)
    zero, minus_inf = imp.const(np.asarray(0.0), dtype), imp.const(np.asarray(-np.inf), dtype)
    return imp.emit("select", allowed, zero, minus_inf)


@_converts(
    "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
    graph="the attention recomputed (`matmul`, `mul`, mask `add`, `safe_softmax`), then `matmul`s, `mul`, `sub`, "
          "`reduce_sum` for dQ, dK, dV",
    notes="a training graph's attention backward; the saved logsumexp is not read; dropout_p = 0",
)
def _sdpa_backward(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor, Tensor]:
    """dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO * O)), dQ = dS K s, dK = dS^T Q s with P = softmax(Q K^T s)."""
    dtype = imp.out_dtype(node, 0)
    d_out, q, k, v, out = (imp.tensor(a[key], dtype) for key in ("grad_out", "query", "key", "value", "out"))
    if a["dropout_p"]:
        raise imp.unsupported(node, f"dropout_p = {a['dropout_p']}")
    if q.shape[-3:-2] != k.shape[-3:-2]:
        raise imp.unsupported(node, "grouped-query attention (fewer key heads than query heads)")
    probs, scale = _attention_probs(imp, node, a, q, k, dtype)
    d_value = imp.emit("matmul", probs, d_out, transpose_a=True)
    d_probs = imp.emit("matmul", d_out, v, transpose_b=True)
    row = imp.emit("reduce_sum", imp.emit("mul", d_out, out), axes=[len(q.shape) - 1], keep_dims=True)
    d_scores = imp.emit("mul", probs, imp.emit("sub", d_probs, row))
    d_query = imp.emit("mul", imp.emit("matmul", d_scores, k), scale)
    d_key = imp.emit("mul", imp.emit("matmul", d_scores, q, transpose_a=True), scale)
    return (d_query, d_key, d_value)
