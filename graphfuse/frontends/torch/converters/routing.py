"""Converters of sorting and mixture-of-experts routing (Mixtral's, Qwen2-MoE's): topk, sort,
histc, grouped products, one_hot."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from torch import fx

from graphfuse.dialect.builder import Tensor
from graphfuse.dialect.matching import attributes, producer
from graphfuse.frontends.torch.converters.shapes import _axis, _filled, _filled_like
from graphfuse.frontends.torch.importer import _Importer
from graphfuse.frontends.torch.registry import _converts


@_converts("aten.topk.default", graph="`topk`",
           notes="any dim, largest or smallest, sorted or not; NaN is the largest; ties in the CPU kernel's order")
def _topk(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor]:
    x = imp.tensor(a["self"])
    if not x.shape:  # a 0-d tensor is its own top-1
        return x, imp.const(np.asarray(0), "i64")
    return tuple(imp.emit("topk", x, k=int(a["k"]), axis=_axis(a["dim"], len(x.shape)), largest=bool(a["largest"]),
                          sorted=bool(a["sorted"])))


@_converts("aten.sort.default", "aten.sort.stable", graph="`sort`",
           notes="any dim, either order; stable or in the CPU kernel's order of ties; NaN is the largest")
def _sort(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> tuple[Tensor, Tensor]:
    x = imp.tensor(a["self"])
    if not x.shape:
        return x, imp.const(np.asarray(0), "i64")
    return tuple(imp.emit("sort", x, axis=_axis(a["dim"], len(x.shape)), descending=bool(a["descending"]),
                          stable=bool(a.get("stable") or False)))


@_converts("aten.argsort.default", "aten.argsort.stable", graph="`sort`'s positions",
           notes="as sort: any dim, either order, stable or in the CPU kernel's order of ties")
def _argsort(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    return _sort(imp, node, {"dim": -1, "descending": False, **a})[1]


def _f32_order(values: np.ndarray) -> np.ndarray:
    """f32 values as int64 keys in the same order (the sign bit flipped for positives, all bits for negatives)."""
    bits = values.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def _f32_of_order(keys: np.ndarray) -> np.ndarray:
    bits = np.where(keys < 0, (-keys) | -0x80000000, keys).astype(np.int64)
    return (bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def _histc_thresholds(low: float, high: float, bins: int) -> np.ndarray:
    """For each bin b in 1..bins-1 the smallest f32 x in [low, high] that PyTorch's histc puts in bin b or later:
    its bin is ``int(((x - low) * bins) / (high - low))`` in f32, which never decreases with x, so counting the
    elements at or above each threshold gives the exact histogram with comparisons only (no division, which
    fast-math code may round differently).  A bin no f32 value reaches gets +inf."""
    low32, high32 = np.float32(low), np.float32(high)
    width = np.float32(high32 - low32)

    def bin_of(keys: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return ((_f32_of_order(keys) - low32) * np.float32(bins) / width).astype(np.int64)

    first, last = int(_f32_order(np.asarray(low32))), int(_f32_order(np.asarray(high32)))
    lo = np.full(bins - 1, first, np.int64)
    hi = np.full(bins - 1, last + 1, np.int64)  # last + 1: not reached
    wanted = np.arange(1, bins, dtype=np.int64)
    while np.any(lo < hi):  # bisection over the f32 values of [low, high], all bins at once
        mid = (lo + hi) // 2
        reached = bin_of(np.minimum(mid, last)) >= wanted
        hi, lo = np.where(reached & (lo < hi), mid, hi), np.where(~reached & (lo < hi), mid + 1, lo)
    return np.where(lo > last, np.inf, _f32_of_order(np.minimum(lo, last))).astype(np.float32)


@_converts("aten.histc.default", graph="`greater_equal` / `less_equal` against constant thresholds, `cast`, "
           "`reduce_sum`, `sub`", notes="f32; min < max given (not taken from the data); exact: each bin's "
           "threshold is PyTorch's own f32 bin arithmetic solved when importing")
def _histc(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """The counts of the elements in [min, max] by bin (Mixtral's tokens per expert)."""
    x = imp.tensor(a["self"])
    bins, low, high = int(a["bins"]), float(a["min"]), float(a["max"])
    if x.dtype != "f32":
        raise imp.unsupported(node, f"a histogram of {x.dtype} (PyTorch rounds each count to it)")
    if not np.float32(low) < np.float32(high) or not math.isfinite(low) or not math.isfinite(high):
        raise imp.unsupported(node, f"the range [{low}, {high}] (min == max takes it from the data)")
    count = None if None in x.shape else math.prod(x.shape)  # a dynamic count is the reshape's one dynamic dim
    flat = imp.emit("reshape", x, (count, 1)) if len(x.shape) != 2 or x.shape[1] != 1 else x
    starts = np.concatenate([[np.float32(low)], _histc_thresholds(low, high, bins)]).astype(np.float32)
    at_or_above = imp.emit("greater_equal", flat, imp.const(starts, "f32"))  # [N, bins]: the bins up to x's
    in_range = imp.emit("logical_and", at_or_above, imp.emit("less_equal", flat, imp.const(np.float32(high), "f32")))
    cumulative = imp.emit("reduce_sum", imp.emit("cast", in_range, "f32"), axes=[0])  # elements in bin b or later
    later = imp.emit("concat", imp.emit("slice", cumulative, start=[1], limit=[bins]), imp.const(np.zeros(1), "f32"),
                     axis=0) if bins > 1 else imp.const(np.zeros(1), "f32")
    return imp.emit("sub", cumulative, later)


@_converts("transformers.grouped_mm_fallback.default",
           graph="`grouped_matmul` (a transpose of the weights' last two dims folded into `transpose_weights`)",
           notes="transformers' grouped expert matmul: rows sorted by expert, offs the cumulative row counts "
           "(i32 or i64); rows past the last group are 0")
def _grouped_mm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    """``out[s] = input[s] @ weight[g]`` for the rows ``offs[g - 1] <= s < offs[g]``."""
    return _grouped_rows_matmul(imp, node, a["input"], a["weight"], a["offs"])


@_converts("aten._grouped_mm.default",
           graph="`grouped_matmul` (a transpose of the weights' last two dims folded into `transpose_weights`)",
           notes="2-D rows sorted by group times 3-D weights with `offs` (what transformers' experts call in "
           "bf16), no bias; the other forms (2-D x 2-D grouping the reduction, 3-D x 3-D) are unsupported")
def _aten_grouped_mm(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    rows, weights, offs = a["self"], a["mat2"], a.get("offs")
    ranks = [value.meta["val"].dim() for value in (rows, weights)]
    if offs is None or a.get("bias") is not None or ranks != [2, 3]:
        raise imp.unsupported(node, "only rows [m, k] times per-group weights [g, k, n] with offs and no bias")
    return _grouped_rows_matmul(imp, node, rows, weights, offs)


def _grouped_rows_matmul(imp: _Importer, node: fx.Node, rows: Any, weights: Any, offs: Any) -> Tensor:
    """``grouped_matmul`` of ``rows`` and ``weights`` in the node's result dtype.

    transformers passes a linear layer's experts ([E, N, K]) transposed; reading them through the transpose
    (``transpose_weights``) spares a copy of every expert's weights per call."""
    dtype = imp.out_dtype(node)
    x, weight = imp.tensor(rows, dtype), imp.tensor(weights, dtype)
    offs = imp.tensor(offs)
    ends = offs if offs.dtype in ("i32", "i64") else imp.emit("cast", offs, "i64")
    transpose = producer(weight.value, "graph.transpose")
    if transpose is not None and attributes(transpose)["perm"] == [0, 2, 1]:
        source = Tensor(imp.builder, transpose.operands[0])
        return imp.emit("grouped_matmul", x, source, ends, transpose_weights=True)
    return imp.emit("grouped_matmul", x, weight, ends)


@_converts("aten.one_hot.default", graph="`one_hot` (i64 ones and zeros)",
           notes="num_classes given; an index outside [0, num_classes) gives a row of zeros (PyTorch raises)")
def _one_hot(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    classes = int(a["num_classes"])
    if classes < 0:
        raise imp.unsupported(node, "num_classes = -1 (the result's size would be the largest index + 1)")
    one, zero = imp.const(np.asarray(1), "i64"), imp.const(np.asarray(0), "i64")
    return imp.emit("one_hot", imp.tensor(a["self"], "i64"), one, zero, depth=classes, axis=-1)


@_converts("aten.empty_like.default", "aten.empty.memory_format", "aten.new_empty.default",
           graph="`broadcast_to` of 0 (`select` on `iota`s for symbolic dims)",
           notes="uninitialized memory in PyTorch: zeros here")
def _empty(imp: _Importer, node: fx.Node, a: dict[str, Any]) -> Tensor:
    if "self" in a and "size" not in a:
        return _filled_like(imp, a["self"], 0, imp.out_dtype(node))
    return _filled(imp, node, list(a["size"]), 0, imp.out_dtype(node))
