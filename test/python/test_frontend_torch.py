"""The PyTorch front end (graphfuse.frontends.torch) and the three example models.

Numerics are checked at three levels against PyTorch eager: the reference
interpreter on the imported graph, the compiled CPU code (graphfuse.compile),
and the fused graph against the unfused one (both in the reference
interpreter).  Per-op cases run through the reference interpreter only (no
JIT), grouped so that each export covers several ATen ops; every case also
checks that its ops reached the importer (not folded away).
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch front end needs the torch extra (pip install '.[torch]')")

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import graphfuse.frontends.torch as gft  # noqa: E402
from graphfuse import GraphfuseError, parse_module, run_function, run_pipeline  # noqa: E402
from graphfuse import compile as graphfuse_compile  # noqa: E402
from graphfuse.dialect.matching import graph_op_names  # noqa: E402
from graphfuse.pipelines import log  # noqa: E402

A = torch.ops.aten
ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = str(Path(__file__).resolve())


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_outputs(model: nn.Module, args: tuple, kwargs: dict | None = None) -> list[np.ndarray]:
    with torch.no_grad():
        out = model.eval()(*args, **(kwargs or {}))
    leaves = out if isinstance(out, list | tuple) else [out]
    return [gft.to_numpy(t) for t in leaves]


def assert_close(got: list[np.ndarray], want: list[np.ndarray], rtol: float, atol: float) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype == np.bool_ or np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------
# The three examples: import, fuse, compile, match PyTorch; the expected fusions fire.

EXAMPLES = ("llama_decoder_layer", "bert_encoder_layer", "resnet_basic_block")
_COMPILED: dict[str, tuple[Any, tuple, gft.CompiledModule]] = {}


def compiled_example(name: str) -> tuple[Any, tuple, gft.CompiledModule]:
    """(model, inputs, compiled) of an example at its default (small) size, built once per session."""
    if name not in _COMPILED:
        model, inputs = load_example(name).build()
        _COMPILED[name] = (model, inputs, gft.compile_module(model, inputs))
    return _COMPILED[name]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_pytorch_at_three_levels(name: str) -> None:
    model, inputs, compiled = compiled_example(name)
    want = torch_outputs(model, inputs)
    arrays = compiled.imported.numpy_inputs(*inputs)
    # 1. the imported graph in the reference interpreter
    reference = run_function(compiled.imported.module, arrays)
    assert_close(reference, want, rtol=1e-4, atol=1e-5)
    # 2. the fused, compiled CPU code (called with tensors, like the model)
    got = compiled(*inputs)
    assert isinstance(got, torch.Tensor)
    assert_close([gft.to_numpy(got)], want, rtol=1e-4, atol=1e-5)
    # 3. the fused graph against the unfused one, both interpreted
    fused = run_function(parse_module(compiled.executable.fused_graph), arrays, compiled.executable.entry)
    assert_close(fused, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_fires_the_expected_fusions(name: str) -> None:
    _, _, compiled = compiled_example(name)
    expected = load_example(name).EXPECTED_FUSIONS
    missing = [p for p in expected if p not in compiled.fusions]
    assert not missing, f"{missing} did not fire; fired: {compiled.fusions}"
    fused_ops = {"FlashAttentionFusionV1": "graph.flash_attention", "FlashAttentionFusionV2": "graph.flash_attention",
                 "add_rms_norm_fusion": "graph.add_rms_norm", "inference_swiglu_fusion": "graph.swiglu",
                 "add_layer_norm_fusion": "graph.add_layer_norm"}
    for pass_name in expected:
        if pass_name in fused_ops:
            assert fused_ops[pass_name] in compiled.executable.fused_graph
    if name == "resnet_basic_block":
        assert "graph.batch_norm" not in compiled.executable.fused_graph  # folded into the convs


def test_compare_report_names_fusions_error_and_times() -> None:
    model, inputs = load_example("resnet_basic_block").build(size=8, channels=8)
    comparison = gft.compare(model, inputs, name="block", repeat=3)
    report = comparison.report()
    assert comparison.max_abs_error < 1e-4 and comparison.reference_max_abs_error < 1e-4
    assert comparison.fusions.get("ConvBatchnormFusionPass") == 2
    assert comparison.graphfuse_seconds > 0 and comparison.torch_seconds > 0
    assert "== block" in report and "ConvBatchnormFusionPass x2" in report
    assert re.search(r"max abs error vs PyTorch: compiled [0-9.e-]+", report)
    assert re.search(r"graphfuse [0-9.]+ ms, PyTorch eager [0-9.]+ ms", report)
    assert "conv2d.default x2" in report and "batch_norm x2" in report  # the import summary


# --------------------------------------------------------------------------
# Per-op import: small modules, compared with PyTorch through the reference interpreter.


class Fn(nn.Module):
    """A module whose forward is ``fn`` (so each case is one expression)."""

    def __init__(self, fn: Callable[..., Any], **children: nn.Module):
        super().__init__()
        self.fn = fn
        for key, child in children.items():
            self.add_module(key, child)

    def forward(self, *args: Any) -> Any:
        return self.fn(self, *args)


def randn(*shape: int, dtype: Any = None) -> Any:
    return torch.randn(*shape, dtype=dtype or torch.float32)


def ints(*shape: int, dtype: Any = None) -> Any:
    return torch.randint(-5, 6, shape, dtype=dtype or torch.int64)


def with_specials(t: Any) -> Any:
    """``t`` with a NaN, +inf and -inf at fixed positions (its first elements, row-major)."""
    t = t.clone()
    t.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=t.dtype)
    return t


def _moe_route(hidden: Any, weights: Any, expert_ids: Any) -> tuple[Any, ...]:
    """transformers' grouped_mm_experts_forward, top-2: rows sorted by expert, tokens per expert by histc, the
    grouped product over the group ends, the rows put back in order through an inverse permutation."""
    import transformers.integrations.moe  # noqa: F401  (registers torch.ops.transformers.grouped_mm_fallback)

    ids, perm = torch.sort(expert_ids)
    counts = torch.histc(ids.float(), bins=weights.shape[0], min=0, max=weights.shape[0] - 1)
    ends = torch.cumsum(counts, dim=0, dtype=torch.int32)
    rows = torch.ops.transformers.grouped_mm_fallback(hidden[perm // 2], weights, ends)
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(perm.size(0))
    return rows[inverse], ends


# (id, forward, inputs, ATen ops that must reach the importer, rtol, atol)
Case = tuple[str, Callable[..., Any], Callable[[], tuple], tuple[str, ...], float, float]
_F32 = (1e-5, 1e-6)

CASES: list[Case] = [
    (
        "binary-promotion",
        lambda m, x, y, i: (torch.add(x, y, alpha=2), torch.sub(x, 1.5, alpha=3), 1 - x, x * y, x / 3,
                            i / 2, i * 2, i + 0.5, torch.maximum(x, y), torch.minimum(x, y)),
        lambda: (randn(3, 4), randn(4), ints(3, 4)),
        ("aten.add.Tensor", "aten.sub.Tensor", "aten.rsub.Scalar", "aten.mul.Tensor", "aten.div.Tensor",
         "aten.maximum.default", "aten.minimum.default"),
        *_F32,
    ),
    (
        "mixed-dtypes",
        lambda m, h, x, s: (h * s, h + x, h.to(torch.float32) - x, (x * 4).to(torch.int32), h.float() > s),
        lambda: (randn(3, 4, dtype=torch.float16), randn(3, 4), torch.tensor(1.5)),
        ("aten.mul.Tensor", "aten._to_copy.default", "aten.gt.Tensor"),
        1e-3, 1e-3,
    ),
    (
        "pow",
        lambda m, x: (x ** 2, x.abs() ** 0.5, (x.abs() + 1) ** -0.5, (x.abs() + 1) ** -1, x ** 3, 2 ** x, x ** 1),
        lambda: (randn(3, 5),),
        ("aten.pow.Tensor_Scalar", "aten.pow.Scalar"),
        *_F32,
    ),
    (
        "comparisons-logical",
        lambda m, x, y, i: (x > y, x >= 0, x < y, x <= 0.25, i == 2, i != y.long(), i > 0.5,
                            torch.logical_and(x > 0, y > 0), torch.logical_or(x > 0, i), torch.logical_not(i),
                            torch.isfinite(x / y.abs().round()), torch.isnan(x.log()),
                            torch.isinf(x / y.abs().round()), torch.isnan(i), torch.isinf(i)),
        lambda: (randn(3, 4), randn(3, 4), ints(3, 4)),
        ("aten.gt.Tensor", "aten.ge.Scalar", "aten.lt.Tensor", "aten.le.Scalar", "aten.eq.Scalar",
         "aten.ne.Tensor", "aten.gt.Scalar", "aten.logical_and.default", "aten.logical_or.default",
         "aten.logical_not.default", "aten.isfinite.default", "aten.isnan.default", "aten.isinf.default"),
        *_F32,
    ),
    (
        "select-clamp",
        lambda m, x, y: (torch.where(x > 0, x, y), x.masked_fill(y > 0, -2.0), x.clamp(-0.5, 0.5),
                         x.clamp(min=0.1), x.clamp(max=-0.1), torch.where(x > y, x, 0.0),
                         torch.where(x > y, 2.0, y), torch.where(x > 0, 2.0, -1.0)),
        lambda: (randn(3, 4), randn(4)),
        ("aten.where.self", "aten.masked_fill.Scalar", "aten.clamp.default", "aten.where.ScalarOther",
         "aten.where.ScalarSelf", "aten.where.Scalar"),
        *_F32,
    ),
    (
        "unary-float",
        lambda m, x: (x.exp(), x.abs().log(), x.abs().sqrt(), (x.abs() + 0.5).rsqrt(), (x + 10).reciprocal(),
                      x.tanh(), x.sigmoid(), torch.erf(x), x.relu(), F.silu(x), x.sin(), x.cos(), x.abs(), -x,
                      x.sign()),
        lambda: (randn(4, 6),),
        tuple(f"aten.{n}.default" for n in ("exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "erf",
                                               "relu", "silu", "sin", "cos", "abs", "neg", "sign")),
        1e-5, 1e-6,
    ),
    (
        "inverse-trigonometry",
        lambda m, x: (x.tanh().acos(), x.tanh().asin(), x.atan(), (x.abs() + 1).acosh(), x.asinh(),
                      torch.expm1(x), torch.atan2(x, x.t().reshape(4, 6))),
        lambda: (randn(4, 6),),
        ("aten.acos.default", "aten.asin.default", "aten.atan.default", "aten.acosh.default",
         "aten.asinh.default", "aten.expm1.default", "aten.atan2.default"),
        1e-5, 1e-6,
    ),
    (
        "remainders-floor-division",
        lambda m, x, y, i, j: (torch.fmod(x, y), torch.remainder(x, y), torch.floor_divide(x, y), x % 0.75,
                               torch.fmod(i, 3), torch.remainder(i, j), i // j, torch.div(x, y, rounding_mode="floor"),
                               torch.div(x, y, rounding_mode="trunc"), torch.div(i, j, rounding_mode="trunc"),
                               torch.ops.aten.div.Scalar_mode(x, 0.5, rounding_mode="floor"),
                               torch.ops.aten.floor_divide.Scalar(x, 0.75), (x * 4).trunc(), i.trunc()),
        lambda: (randn(3, 4) * 4, randn(3, 4) + 3, ints(3, 4) - 5, ints(3, 4).abs() + 1),
        ("aten.fmod.Tensor", "aten.remainder.Tensor", "aten.floor_divide.default", "aten.remainder.Scalar",
         "aten.fmod.Scalar", "aten.div.Tensor_mode", "aten.div.Scalar_mode", "aten.floor_divide.Scalar",
         "aten.trunc.default"),
        *_F32,
    ),
    (
        "rounding-gelu",
        lambda m, x, i: ((x * 4).floor(), (x * 4).ceil(), (x * 4).round(), i.round(), F.gelu(x),
                         F.gelu(x, approximate="tanh"), i.abs(), i.exp()),
        lambda: (randn(4, 6), ints(4, 6)),
        ("aten.floor.default", "aten.ceil.default", "aten.round.default", "aten.gelu.default", "aten.exp.default"),
        1e-5, 1e-6,
    ),
    (
        "reductions",
        lambda m, x, i: (x.sum(-1, keepdim=True), x.sum(), x.mean((0, 2)), x.mean(), x.amax(1), x.amin((0, 1)),
                         x.max(), x.min(), (x > 0).sum(-1), i.sum(0), x.var(-1), x.var(1, correction=0, keepdim=True),
                         torch.var(x, (0, 2), unbiased=False)),
        lambda: (randn(2, 3, 5), ints(3, 4, dtype=torch.int32)),
        ("aten.sum.dim_IntList", "aten.sum.default", "aten.mean.dim", "aten.mean.default", "aten.amax.default",
         "aten.amin.default", "aten.max.default", "aten.min.default", "aten.var.correction"),
        1e-5, 1e-5,
    ),
    (
        "fills-scatter-any",
        lambda m, x, i: (torch.full_like(x, 2.5), torch.zeros_like(x), torch.ones_like(i), x + torch.scalar_tensor(3.0),
                         x.scatter(1, i.abs().clamp(max=3)[:, :1], 0.5), (x > 0).any(-1), (x > 1).any(),
                         (x > 0).any(1, keepdim=True)),
        lambda: (randn(3, 4), ints(3, 4)),
        ("aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default", "aten.scalar_tensor.default",
         "aten.scatter.value", "aten.any.dim", "aten.any.default"),
        *_F32,
    ),
    (
        "arg-extremes",
        lambda m, x, i: (x.argmax(-1), x.argmin(0, keepdim=True), x.argmax(), i.argmin(1), x.argmax(keepdim=True)),
        lambda: (randn(3, 4, 5), ints(3, 6)),
        ("aten.argmax.default", "aten.argmin.default"),
        *_F32,
    ),
    (
        "views",
        lambda m, x: (x.view(6, 4), x.reshape(-1), x.flatten(1), x.unflatten(2, (2, 2)), x[:, None].squeeze(1),
                      x.unsqueeze(0).squeeze(), x[:1].expand(3, 3, 4), x.permute(2, 0, 1), x.transpose(0, -1),
                      x[0].t(), x.clone(), x.contiguous().squeeze(0), x.unsqueeze(-1).squeeze(-1)),
        lambda: (randn(2, 3, 4),),
        ("aten.view.default", "aten.unsqueeze.default", "aten.squeeze.default", "aten.squeeze.dim",
         "aten.expand.default", "aten.permute.default", "aten.transpose.int", "aten.t.default", "aten.clone.default"),
        0.0, 0.0,
    ),
    (
        "join-cut",
        lambda m, a, b, c: (torch.cat([a, b, c], dim=1), torch.cat([a, a, b], -1), torch.stack([a, a], 1),
                            *c.split(2, dim=1), *torch.split(b, [1, 3, 2, 2], dim=1), *a.chunk(3, -1),
                            *c.unbind(0), a.repeat(2, 1, 2)),
        lambda: (randn(2, 3), randn(2, 8), randn(2, 5)),
        ("aten.cat.default", "aten.stack.default", "aten.split.Tensor", "aten.split_with_sizes.default",
         "aten.unbind.int", "aten.repeat.default"),
        0.0, 0.0,
    ),
    (
        "slices",
        lambda m, x: (x[:, 1:3], x[..., ::2], x[-2:], x[:, -3:-1, 1:], x.narrow(1, 1, 2), x[1], x[:, -1],
                      x[:, 2:100], x[:, 3:1]),
        lambda: (randn(3, 4, 5),),
        ("aten.slice.Tensor", "aten.select.int"),
        0.0, 0.0,
    ),
    (
        "hard-activations",
        lambda m, x: (F.hardswish(x), F.hardsigmoid(x), F.relu6(x), F.hardtanh(x, -0.5, 2.0)),
        lambda: (torch.linspace(-8, 8, 1001).reshape(7, 143),),
        ("aten.hardswish.default", "aten.hardsigmoid.default", "aten.relu6.default", "aten.hardtanh.default"),
        *_F32,
    ),
    (
        "advanced-indexing",
        lambda m, x, i, j, a, b: (x[i], x[:, i, j], x[torch.arange(3)[:, None], torch.tensor([[4, -1]])], x[:, :, j],
                                  a & b, a | b, torch.bitwise_and(a, b), torch.bitwise_or(a, b)),
        lambda: (randn(6, 6, 5), torch.tensor([[0, 5], [-2, 1]]), torch.tensor([4, 0], dtype=torch.int32),
                 torch.rand(4, 5) > 0.5, torch.rand(4, 5) > 0.5),
        ("aten.index.Tensor", "aten.__and__.Tensor", "aten.__or__.Tensor", "aten.bitwise_and.Tensor",
         "aten.bitwise_or.Tensor"),
        0.0, 0.0,
    ),
    (
        "gathers",
        lambda m, x, ids, cols: (F.embedding(ids, x[0]), x.index_select(2, cols), x.index_select(0, ids[1, 2:])),
        lambda: (randn(3, 6, 5), torch.tensor([[0, 5, 2], [4, 4, 1]]), torch.tensor([4, 0], dtype=torch.int32)),
        ("aten.embedding.default", "aten.index_select.default"),
        0.0, 0.0,
    ),
    (
        "scatters",
        lambda m, x, pos, v, ids: (
            x.index_copy(1, pos, v), torch.ops.aten.index_put(x, [None, pos], v),
            torch.index_put(x, (x > 0,), torch.tensor(0.5)), torch.index_put(x, (ids[:, :1], pos[None, :1]), -x[0, 0]),
            torch.gather(x, 2, ids[None].expand(4, 2, 3)), torch.gather(x, 1, pos[None, :, None].expand(4, 2, 2)),
            torch.slice_scatter(x, v, 1, 2, 6, 2), torch.select_scatter(x, v[:, 0], 1, -1)),
        lambda: (randn(4, 6, 5), torch.tensor([4, 1]), randn(4, 2, 5), torch.tensor([[0, 4, 2], [3, 1, 4]])),
        ("aten.index_copy.default", "aten.index_put.default", "aten.gather.default", "aten.slice_scatter.default",
         "aten.select_scatter.default"),
        0.0, 0.0,
    ),
    (
        "topk-sort",  # ties in PyTorch's CPU order, NaN the largest, any dim, integers, a batch of 1
        lambda m, p, q, ids: (*torch.topk(p, 2), *torch.topk(p, 3, dim=0, largest=False, sorted=False),
                              *torch.topk(q, 4, dim=1), *torch.sort(ids), *torch.sort(p, dim=0, descending=True),
                              *torch.sort(q, stable=True), *torch.sort(p.T, dim=1, descending=True, stable=True),
                              torch.argsort(p, dim=0), torch.argsort(q, descending=True, stable=True)),
        lambda: (with_specials(torch.randint(0, 3, (6, 5)).float()), torch.randint(-2, 2, (1, 40), dtype=torch.int32),
                 torch.randint(0, 4, (24,))),
        ("aten.topk.default", "aten.sort.default", "aten.sort.stable", "aten.argsort.default", "aten.argsort.stable"),
        0.0, 0.0,
    ),
    (
        "moe-routing",  # Mixtral's and Qwen2-MoE's grouped experts (transformers' grouped_mm implementation)
        lambda m, h, w, ids, perm: (*_moe_route(h, w, ids), F.one_hot(ids, 4), torch.greater(ids, 1),
                                    torch.histc(with_specials(h), bins=7, min=-1.5, max=2.0),
                                    # empty tensors every element of which is written
                                    h[0].new_empty(4).index_put((perm,), h[0]),
                                    torch.empty(4, dtype=torch.long).index_put((perm,), torch.arange(4))),
        lambda: (randn(6, 4), randn(4, 4, 5), torch.tensor([3, 1, 1, 0, 3, 3, 1, 0, 1, 1, 3, 3]),
                 torch.tensor([2, 0, 3, 1])),
        ("aten.sort.default", "aten.histc.default", "transformers.grouped_mm_fallback.default",
         "aten.empty_like.default", "aten.one_hot.default", "aten.greater.Scalar", "aten.new_empty.default",
         "aten.empty.memory_format"),
        1e-6, 1e-6,
    ),
    (
        "grouped-mm",  # transformers' experts in bf16 call torch._grouped_mm (weights transposed or not)
        lambda m, h, w, v, ends: (torch._grouped_mm(h, w.transpose(-2, -1), offs=ends),
                                  torch._grouped_mm(h, v, offs=ends)),
        lambda: (randn(10, 16, dtype=torch.bfloat16), randn(3, 8, 16, dtype=torch.bfloat16),
                 randn(3, 16, 8, dtype=torch.bfloat16), torch.tensor([4, 4, 10], dtype=torch.int32)),  # one empty
        ("aten._grouped_mm.default",),
        1e-2, 1e-2,
    ),
    (
        "repeat-interleave-baddbmm",  # GPT-J's and Cohere's interleaved rotary, BLOOM's ALiBi
        lambda m, x, r, b, p, q: (x.repeat_interleave(2, 1), x.repeat_interleave(3), torch.repeat_interleave(r, 2, 0),
                                  x.repeat_interleave(torch.tensor([1, 0, 2, 1]), dim=1), b.baddbmm(p, q),
                                  torch.baddbmm(b, p, q, beta=2.0, alpha=0.5),
                                  torch.baddbmm(b * float("nan"), p, q, beta=0, alpha=3)),
        lambda: (randn(3, 4, 5), ints(2, 3), randn(2, 1, 5), randn(2, 3, 4), randn(2, 4, 5)),
        ("aten.repeat_interleave.self_int", "aten.repeat_interleave.self_Tensor", "aten._assert_scalar.default",
         "aten.baddbmm.default"),
        1e-5, 1e-6,
    ),
    (
        "bitwise",  # DeBERTa's ~mask; integers too, Scalar forms, promotion
        lambda m, a, i, j: (~a, ~i, ~j, i & j, i | 3, i ^ j, a ^ (i > 0), torch.bitwise_xor(i, 5), a & True,
                            j.bitwise_and(6), a | (i < 0), torch.bitwise_or(j, -2), i ^ 7, torch.bitwise_xor(j, i)),
        lambda: (torch.rand(3, 4) > 0.5, ints(3, 4) * 1000, ints(4, dtype=torch.int32)),
        ("aten.bitwise_not.default", "aten.__and__.Tensor", "aten.__or__.Scalar", "aten.__xor__.Tensor",
         "aten.bitwise_xor.Scalar", "aten.__and__.Scalar", "aten.bitwise_and.Scalar", "aten.__or__.Tensor",
         "aten.bitwise_or.Scalar", "aten.__xor__.Scalar", "aten.bitwise_xor.Tensor"),
        0.0, 0.0,
    ),
    (
        "comparison-names",  # torch.greater & co. keep their long names in an exported program
        lambda m, x, y: (torch.greater(x, y), torch.greater(x, 0.5), torch.greater_equal(x, y),
                         torch.greater_equal(x, 0), torch.less(x, y), torch.less(y, 1), torch.less_equal(x, y),
                         torch.less_equal(x, -1), torch.not_equal(x, y), torch.not_equal(x, 0.0)),
        lambda: (with_specials(randn(3, 4)).round(), randn(4).round()),
        ("aten.greater.Tensor", "aten.greater.Scalar", "aten.greater_equal.Tensor", "aten.greater_equal.Scalar",
         "aten.less.Tensor", "aten.less.Scalar", "aten.less_equal.Tensor", "aten.less_equal.Scalar",
         "aten.not_equal.Tensor", "aten.not_equal.Scalar"),
        0.0, 0.0,
    ),
    (
        "copy",  # x.copy_(src) as a functional op: broadcast and cast to x
        lambda m, x, y, z: (A.copy.default(x, y), A.copy.default(y, z[1] * 10), A.copy.default(x, z[0, :1])),
        lambda: (randn(3, 4), ints(4, dtype=torch.int32), randn(3, 4)),
        ("aten.copy.default",),
        0.0, 0.0,
    ),
    (
        "factories",  # computed when importing; over symbolic sizes: test_factories_and_slices_over_a_symbolic_size
        lambda m, x: (x + torch.arange(5), x * torch.arange(1, 6, 2).repeat(2)[:5] - torch.arange(2, 7),
                      x.new_ones(3, 5), x.new_zeros(5), x.new_full((2, 5), 2.5) - torch.full((5,), 0.5),
                      torch.ones(5) + torch.zeros(5)),
        lambda: (randn(3, 5),),
        ("aten.arange.default", "aten.arange.start", "aten.arange.start_step", "aten.new_ones.default",
         "aten.new_zeros.default", "aten.new_full.default", "aten.full.default", "aten.ones.default",
         "aten.zeros.default"),
        0.0, 0.0,
    ),
    (
        "cumsum",
        lambda m, x, mask: (torch.cumsum(x, 1), x.cumsum(-1, dtype=torch.float16), mask.cumsum(1) * mask - 1,
                            torch.cumsum(mask > 0, 0), torch.cumsum(x[0, 0], 0)),
        lambda: (torch.randint(-4, 5, (3, 5, 4)).float(), torch.tensor([[1, 1, 1, 0], [0, 1, 1, 1]])),
        ("aten.cumsum.default",),
        0.0, 0.0,
    ),
    (
        "matmuls",
        lambda m, x, w, b, v: (F.linear(x, w, b), F.linear(x, w), x @ w.t(), torch.mm(x[0], w.t()),
                               torch.bmm(x, x.transpose(1, 2)), x @ v, v @ w.t(), torch.addmm(b, x[0], w.t(), beta=0.5,
                                                                                            alpha=2.0), m.lin(x)),
        lambda: (randn(2, 3, 4), randn(5, 4), randn(5), randn(4)),
        ("aten.linear.default", "aten.matmul.default", "aten.mm.default", "aten.bmm.default", "aten.addmm.default"),
        1e-5, 1e-5,
    ),
    (
        "convolutions",
        lambda m, x, w, b, s: (F.conv2d(x, w, b, stride=2, padding=1), F.conv2d(x, w, dilation=2, padding=2),
                               F.conv2d(x, w[:, :2], groups=2), F.conv2d(x, w, padding="same"),
                               F.conv2d(x, w[..., :2], padding="same"), F.conv2d(x[0], w, b),
                               F.conv1d(s, w[:, :, 0], b, padding=1, stride=2), m.conv(x)),
        lambda: (randn(2, 4, 7, 6), randn(6, 4, 3, 3), randn(6), randn(2, 4, 9)),
        ("aten.conv2d.default", "aten.conv2d.padding", "aten.conv1d.default"),
        1e-4, 1e-5,
    ),
    (
        "norms",
        lambda m, x, g, s: (F.layer_norm(x, (5,), g, g - 1, 1e-5), F.layer_norm(x, (4, 5)), F.rms_norm(x, (5,), g),
                            F.rms_norm(x, (4, 5), eps=1e-3), F.rms_norm(x, (5,)),
                            F.batch_norm(s, g[:3] - 0.5, g[:3] + 1, g[:3], g[:3] + 2, eps=1e-3), m.bn(s), m.ln(x)),
        lambda: (randn(2, 4, 5), torch.rand(5) + 0.5, randn(2, 3, 4, 4)),
        ("aten.layer_norm.default", "aten.rms_norm.default", "aten._native_batch_norm_legit_no_training.default"),
        1e-4, 1e-5,
    ),
    (
        "softmax",
        lambda m, x: (x.softmax(-1), x.softmax(0), F.log_softmax(x, 1), torch.softmax(x, -1, dtype=torch.float16)),
        lambda: (randn(3, 4, 5),),
        ("aten.softmax.int", "aten.log_softmax.int"),
        1e-3, 1e-3,
    ),
    (
        "safe softmax",  # PyTorch's: 0 for the rows of all -inf (here every [b, 1, :] row)
        lambda m, x: A._safe_softmax(x.masked_fill(torch.arange(4).view(1, 4, 1) == 1, -torch.inf), -1),
        lambda: (randn(3, 4, 5),),
        ("aten._safe_softmax.default",),
        1e-6, 1e-7,
    ),
    (
        "attention",
        lambda m, q, k, v, mask, bias: (F.scaled_dot_product_attention(q, k, v),
                                        F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                                        F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3),
                                        F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True),
                                        F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(6, 6).tril() > 0)),
        lambda: (randn(2, 4, 6, 8), randn(2, 4, 6, 8), randn(2, 4, 6, 8), torch.rand(2, 1, 6, 6) > 0.3,
                 randn(6, 6)),
        ("aten.scaled_dot_product_attention.default",),
        1e-5, 1e-5,
    ),
    (
        "pooling",
        lambda m, x: (F.max_pool2d(x, 2), F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                      F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False),
                      F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(x, (2, 3)), F.max_pool2d(x[0], 2)),
        lambda: (randn(2, 3, 6, 6),),
        ("aten.max_pool2d.default", "aten.avg_pool2d.default", "aten.adaptive_avg_pool2d.default"),
        1e-5, 1e-6,
    ),
    (
        "aten-forms",  # ATen overloads called directly: forms other code paths of models produce
        lambda m, x, w, b, s, i: (
            A.convolution.default(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
            A.native_layer_norm.default(x, [4], None, None, 1e-5)[0],
            A.max_pool2d_with_indices.default(x, [2, 2])[0], A._adaptive_avg_pool2d.default(x, [1, 1]),
            A._softmax.default(s, -1, False), A._log_softmax.default(s, 0, False), A.add.Scalar(s, 2.0),
            A.sub.Scalar(s, 1), A.mul.Scalar(s, 3), A.div.Scalar(s, 4), A.rsub.Tensor(s, s, alpha=2),
            A.pow.Tensor_Tensor(s.abs(), s), A.clamp_min.default(s, 0.1), A.clamp_max.default(s, 0.1),
            A.masked_fill.Tensor(s, s > 0, torch.tensor(5.0)), A.eq.Tensor(s, s), A.ne.Scalar(i, 1),
            A.lt.Scalar(s, 0), A.le.Tensor(s, s), A.ge.Tensor(s, s), A.squeeze.dims(x[:, :1], [1]),
            A.var.dim(s, [1], True, False), A.type_as.default(i, s), A.alias.default(s), A.detach.default(s),
            A._unsafe_view.default(s, [2, 3, 2]), A.conv1d.padding(x[:, :, 0], w[:, :, 0], b, [1], "same"),
        ),
        lambda: (randn(2, 3, 4, 4), randn(5, 3, 3, 3), randn(5), randn(3, 4), ints(3, 4)),
        ("aten.convolution.default", "aten.native_layer_norm.default", "aten.max_pool2d_with_indices.default",
         "aten._adaptive_avg_pool2d.default", "aten._softmax.default", "aten._log_softmax.default", "aten.add.Scalar",
         "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar", "aten.rsub.Tensor", "aten.pow.Tensor_Tensor",
         "aten.clamp_min.default", "aten.clamp_max.default", "aten.masked_fill.Tensor", "aten.eq.Tensor",
         "aten.ne.Scalar", "aten.lt.Scalar", "aten.le.Tensor", "aten.ge.Tensor", "aten.squeeze.dims",
         "aten.var.dim", "aten.type_as.default", "aten.alias.default", "aten.detach.default",
         "aten._unsafe_view.default", "aten.conv1d.padding"),
        1e-5, 1e-5,
    ),
    (
        "pads",  # every mode of F.pad, negative pads, odd sizes, NaN/inf moved as they are, int64 token ids
        lambda m, x, s, ids: (F.pad(x, (1, 2, -1, 3), value=0.5), F.pad(x, (2, 1, 3, 4), mode="reflect"),
                              F.pad(x, (2, -1, 1, 2), mode="replicate"), F.pad(x, (3, 1, 2, 5), mode="circular"),
                              F.pad(x, (-2, -3, 1, -1), mode="circular"), F.pad(x, (-1, 2, 0, 0), mode="reflect"),
                              F.pad(s, (2, 3), mode="reflect"), F.pad(s, (0, 0, 1, 1, 1, 0)),
                              F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"), F.pad(x, (1, 0), value=float("nan")),
                              F.pad(ids, (0, 1), value=7), F.pad(ids[:, 1:], (0, 1)), F.pad(ids, (2, -3, 1, 0))),
        lambda: (with_specials(randn(2, 3, 5, 7)), randn(2, 3, 9), torch.randint(0, 100, (4, 11))),
        ("aten.pad.default",),
        0.0, 0.0,
    ),
    (
        "pad-aten-forms",
        lambda m, x, s, ids: (A.constant_pad_nd.default(x, [1, 2, -1, 1], 0.5), A.reflection_pad1d.default(s, [1, 2]),
                              A.reflection_pad2d.default(x, [1, 2, 2, 1]), A.reflection_pad3d.default(x, [1, 1] * 3),
                              A.replication_pad1d.default(s, [1, 2]), A.replication_pad2d.default(x, [1, 2, 2, 1]),
                              A.replication_pad3d.default(x, [1, 1] * 3), A._pad_circular.default(x, [1, 2, 2, 1]),
                              A.constant_pad_nd.default(ids, [2, -1], 3)),
        lambda: (with_specials(randn(2, 3, 5, 7)), randn(2, 3, 9), torch.randint(0, 100, (4, 11))),
        ("aten.constant_pad_nd.default", "aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
         "aten.reflection_pad3d.default", "aten.replication_pad1d.default", "aten.replication_pad2d.default",
         "aten.replication_pad3d.default", "aten._pad_circular.default"),
        0.0, 0.0,
    ),
    (
        "interpolate",  # bilinear within an ulp (PyTorch's FMAs), nearest exactly; infinities spread as PyTorch's
        lambda m, x, s: (F.interpolate(x, scale_factor=2, mode="bilinear"),
                         F.interpolate(x, size=(4, 11), mode="bilinear", align_corners=True),
                         F.interpolate(x, scale_factor=(1.5, 0.7), mode="bilinear"),
                         F.interpolate(x, size=(5, 7), mode="bilinear"), F.interpolate(x, scale_factor=2),
                         F.interpolate(x, size=(3, 13)), F.interpolate(x, scale_factor=1.7, mode="nearest-exact"),
                         F.interpolate(s, size=17, mode="linear"),
                         F.interpolate(s, scale_factor=0.6, mode="linear", align_corners=True),
                         F.interpolate(s, scale_factor=2.5), F.interpolate(s, size=4, mode="nearest-exact")),
        lambda: (with_specials(randn(2, 3, 5, 7)), randn(2, 3, 9)),
        ("aten.upsample_bilinear2d.vec", "aten.upsample_nearest2d.vec", "aten._upsample_nearest_exact2d.vec",
         "aten.upsample_linear1d.vec", "aten.upsample_nearest1d.vec", "aten._upsample_nearest_exact1d.vec"),
        1e-6, 1e-6,
    ),
    (
        "interpolate-aten-forms",
        lambda m, x, s: (A.upsample_nearest2d.default(x, [8, 9]), A.upsample_nearest2d.default(x, [8, 9], 1.6, 1.5),
                         A._upsample_nearest_exact2d.default(x, [8, 9]), A.upsample_nearest1d.default(s, [11]),
                         A._upsample_nearest_exact1d.default(s, [11], 2.2),
                         A.upsample_linear1d.default(s, [11], False), A.upsample_linear1d.default(s, [4], True)),
        lambda: (randn(2, 3, 5, 7), randn(2, 3, 9)),
        ("aten.upsample_nearest2d.default", "aten._upsample_nearest_exact2d.default",
         "aten.upsample_nearest1d.default", "aten._upsample_nearest_exact1d.default",
         "aten.upsample_linear1d.default"),
        1e-6, 1e-6,
    ),
    (
        "group-norm-softplus",  # Wav2Vec2's group per channel, Swin's 1-D pool, Mamba's softplus
        lambda m, x, w, b, s: (F.group_norm(x, 3, w, b), F.group_norm(x, 1), F.group_norm(s, 6),
                               *A.native_group_norm.default(x, w, b, 2, 6, 20, 2, 1e-5), F.softplus(s * 10),
                               F.softplus(s, beta=2, threshold=5), F.adaptive_avg_pool1d(s, 1),
                               F.adaptive_avg_pool1d(s, 3), A._weight_norm.default(s, w[None, :, None].abs(), 1),
                               A._weight_norm.default(s, w[:1, None, None].abs(), -1)),
        lambda: (randn(2, 6, 5, 4) * 3, torch.rand(6) + 0.5, randn(6), with_specials(randn(2, 6, 9))),
        ("aten.group_norm.default", "aten.native_group_norm.default", "aten.softplus.default",
         "aten.adaptive_avg_pool1d.default", "aten._weight_norm.default"),
        1e-5, 1e-5,
    ),
]

#: the cases of padding, resizing, group norm and softplus that test_new_model_ops_compile also compiles
COMPILED_CASES = ("pads", "pad-aten-forms", "interpolate", "interpolate-aten-forms", "group-norm-softplus")


def _children(case_id: str) -> dict[str, nn.Module]:
    """Modules whose parameters a case reads as constants (seeded, so every run is the same)."""
    torch.manual_seed(1)
    children: dict[str, nn.Module] = {"lin": nn.Linear(4, 3), "conv": nn.Conv2d(4, 2, 3, padding=1),
                                      "ln": nn.LayerNorm(5), "bn": nn.BatchNorm2d(3)}
    with torch.no_grad():
        children["bn"].running_mean.uniform_(-1, 1)
        children["bn"].running_var.uniform_(0.5, 2)
    return children


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # PyTorch's note on the 2x2 case
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_aten_op_matches_pytorch(case: Case) -> None:
    case_id, forward, make_inputs, ops, rtol, atol = case
    torch.manual_seed(0)
    model = Fn(forward, **_children(case_id))
    inputs = make_inputs()
    imported = gft.import_module(model, inputs)
    missing = [op for op in ops if op not in imported.aten_ops]
    assert not missing, f"{missing} did not reach the importer; it saw {sorted(imported.aten_ops)}"
    got = run_function(imported.module, imported.numpy_inputs(*inputs))
    assert_close(got, torch_outputs(model, inputs), rtol, atol)


#: the cases of sorting, routing, rotary, ALiBi, bitwise and copy ops that test_new_model_ops_compile compiles
ROUTING_CASES = ("topk-sort", "moe-routing", "grouped-mm", "repeat-interleave-baddbmm", "bitwise", "copy")


@pytest.mark.parametrize("case_id", COMPILED_CASES + ROUTING_CASES)
def test_new_model_ops_compile(case_id: str) -> None:
    """The compiled CPU code of the ops real models needed (padding, resizing, group norm, softplus, MoE routing,
    rotary, ALiBi, bitwise and copy) against PyTorch eager: NaN and infinities where PyTorch has them, the
    positions of ties as PyTorch gives them, integers exactly."""
    if case_id == "moe-routing":
        pytest.importorskip("transformers", reason="the routing case calls transformers' grouped matmul")
    _, forward, make_inputs, _, rtol, atol = next(case for case in CASES if case[0] == case_id)
    torch.manual_seed(0)
    model = Fn(forward)
    inputs = make_inputs()
    compiled = gft.compile_module(model, inputs)
    got = [gft.to_numpy(t) for t in compiled(*inputs)]
    want = torch_outputs(model, inputs)
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64)))
    assert_close(got, want, max(rtol, 1e-6), max(atol, 1e-6))


def test_grouped_experts_are_one_grouped_matmul_read_through_their_transpose() -> None:
    """transformers hands grouped_mm_fallback a linear layer's experts ([E, N, K], Mixtral's) transposed: the
    import reads them through ``transpose_weights``, so no copy of every expert is made per call; experts
    stored [E, K, N] are read as they are.  Row 9 is in no group (zeros), group 1 is empty."""
    pytest.importorskip("transformers", reason="the case calls transformers' grouped matmul")
    import transformers.integrations.moe  # noqa: F401  (registers torch.ops.transformers.grouped_mm_fallback)

    def forward(m: nn.Module, x: Any, stored_nk: Any, stored_kn: Any, ends: Any) -> tuple[Any, Any]:
        grouped = torch.ops.transformers.grouped_mm_fallback
        return grouped(x, stored_nk.transpose(-2, -1), ends), grouped(x, stored_kn, ends)

    torch.manual_seed(0)
    inputs = (randn(10, 8), randn(3, 6, 8), randn(3, 8, 6), torch.tensor([4, 4, 9], dtype=torch.int32))
    model = Fn(forward)
    compiled = gft.compile_module(model, inputs)
    grouped = re.findall(r'"graph.grouped_matmul"\(%\w+, (%\w+), %\w+\)( \{transpose_weights = true\})?',
                         str(compiled.imported.module))
    assert grouped == [("%arg1", " {transpose_weights = true}"), ("%arg2", "")]
    assert "graph.transpose" not in compiled.executable.fused_graph
    assert_close([gft.to_numpy(t) for t in compiled(*inputs)], torch_outputs(model, inputs), 1e-6, 1e-6)


@pytest.mark.parametrize("bins, low, high", [(4, 0, 3), (7, -1.5, 2.0), (10, 0.1, 0.7), (3, -1e-3, 1e-3),
                                             (100, -5, 5), (1, 0, 1)])
def test_histc_counts_values_at_the_bin_edges_as_pytorch(bins: int, low: float, high: float) -> None:
    """Values on each linspace edge and one f32 step either side of it, NaN and infinities: PyTorch's bin
    arithmetic rounds some of them into the neighbouring bin, and the import (thresholds) does the same."""
    edges = np.linspace(low, high, bins + 1).astype(np.float32)
    values = np.concatenate([edges, np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(-np.inf)),
                             np.random.default_rng(0).uniform(low - 1, high + 1, 100), [np.nan, np.inf, -np.inf]])
    x = torch.from_numpy(values.astype(np.float32))
    model = Fn(lambda m, x: torch.histc(x, bins=bins, min=low, max=high))
    want = torch_outputs(model, (x,))
    compiled = gft.compile_module(model, (x,))
    assert_close(compiled.imported.run_reference(x), want, 0.0, 0.0)
    assert_close([gft.to_numpy(compiled(x))], want, 0.0, 0.0)


def test_copy_into_an_input_is_written_back() -> None:
    """Mamba's cache update, ``state[i].copy_(new[..., -k:])`` into a model input: under torch.compile the compiled
    graph returns the input's new value and the backend writes it into the caller's tensor."""
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend, last_report

    class ConvState(nn.Module):
        def forward(self, state: Any, new: Any) -> Any:
            state[1].copy_(new[..., -3:])
            return state.sum(-1) * 2

    state, new = torch.zeros(2, 4, 3), randn(4, 5)
    want_state = state.clone()
    want = ConvState()(want_state, new)
    torch._dynamo.reset()
    compiled = torch.compile(ConvState(), backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
    got = compiled(state, new)
    assert_close([got.numpy(), state.numpy()], [want.numpy(), want_state.numpy()], 1e-6, 1e-6)
    assert last_report()[-1].eager_calls == 0 and last_report()[-1].compiled


def test_every_registered_op_is_covered_by_a_case() -> None:
    from test_distributed import DISTRIBUTED_OPS  # collectives: imported under torchrun there
    from test_training import TRAINING_ONLY_OPS  # a training graph's ops: test_training.py imports them

    exercised = {op for case in CASES for op in case[3]} | TRAINING_ONLY_OPS | DISTRIBUTED_OPS | TWO_TRACE_OPS
    assert set(gft.supported_ops()) - exercised == {"getitem"}  # getitem: every multi-result op above


# --------------------------------------------------------------------------
# Parameters, structure, errors, locations.


class LinearNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.bn = nn.BatchNorm1d(8)  # num_batches_tracked is unused

    def forward(self, x: Any) -> Any:
        return self.norm(x + self.linear(x)), self.bn(x)


def test_params_as_constants_or_arguments() -> None:
    torch.manual_seed(0)
    model, x = LinearNorm(), randn(4, 8)
    as_constants = gft.import_module(model, (x,))
    as_arguments = gft.import_module(model, (x,), params="arguments")
    func_constants = str(as_constants.module).split("\n")[1]
    func_arguments = str(as_arguments.module).split("\n")[1]
    assert func_constants.count("%arg") == 1
    assert as_arguments.parameter_names == [
        "linear.weight", "linear.bias", "norm.weight", "norm.bias", "bn.weight", "bn.bias", "bn.running_mean",
        "bn.running_var",
    ]
    assert func_arguments.count("%arg") == 1 + len(as_arguments.parameters)
    assert "arith.constant" not in str(as_arguments.module)
    state = model.state_dict()
    for name, array in zip(as_arguments.parameter_names, as_arguments.parameters, strict=True):
        np.testing.assert_array_equal(array, state[name].numpy())
    want = torch_outputs(model, (x,))
    for imported in (as_constants, as_arguments):
        assert_close(imported.run_reference(x), want, rtol=1e-5, atol=1e-6)


def test_compiled_module_takes_and_returns_the_model_structure() -> None:
    class Structured(nn.Module):
        def forward(self, x: Any, extra: dict) -> Any:
            return {"sum": x + extra["bias"], "parts": (x.relu(), extra["bias"] * 2)}

    x, bias = randn(3, 4), randn(4)
    compiled = gft.compile_module(Structured(), (x, {"bias": bias}), params="arguments", opt_level=0)
    out = compiled(x, {"bias": bias})
    assert set(out) == {"sum", "parts"} and isinstance(out["parts"], tuple)
    np.testing.assert_allclose(out["sum"].numpy(), (x + bias).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(out["parts"][0].numpy(), x.relu().numpy())
    with pytest.raises(GraphfuseError, match="structure"):
        compiled(x, bias)


def test_another_method_as_entry() -> None:
    class TwoMethods(nn.Module):
        def forward(self, x: Any) -> Any:
            return x + 1

        def decode(self, x: Any) -> Any:
            return x * 3

    x = randn(2, 2)
    imported = gft.import_module(TwoMethods(), (x,), entry="decode")
    assert imported.entry == "decode" and "func.func @decode" in str(imported.module)
    np.testing.assert_array_equal(imported.run_reference(x)[0], (x * 3).numpy())


class GeluSum(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x: Any) -> Any:
        return F.gelu(self.lin(x)).view(x.shape[0], 3, 1).sum(-1)  # x.shape[0]: a symbolic size


def test_dynamic_batch_dim() -> None:
    torch.manual_seed(0)
    model = GeluSum()
    batch = torch.export.Dim("batch", min=2, max=64)
    imported = gft.import_module(model, (randn(5, 4),), dynamic_shapes=({0: batch},))
    assert "tensor<?x4xf32>" in str(imported.module) and imported.aten_ops["aten.sym_size.int"] == 1
    for rows in (2, 9):
        x = randn(rows, 4)
        assert_close(imported.run_reference(x), torch_outputs(model, (x,)), rtol=1e-5, atol=1e-6)


def test_constants_fold_at_import() -> None:
    """A causal mask built with factory ops and triu becomes one constant: no arange/triu op reaches the graph."""

    def forward(m: nn.Module, scores: Any) -> Any:
        n = scores.shape[-1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return (scores + mask + torch.arange(n)).softmax(-1)

    x = randn(2, 5, 5)
    model = Fn(forward)
    imported = gft.import_module(model, (x,))
    assert "aten.triu.default" in imported.aten_ops  # evaluated by PyTorch at import, not translated
    assert set(imported.graph_ops) == {"graph.add", "graph.softmax"}
    assert_close(imported.run_reference(x), torch_outputs(model, (x,)), rtol=1e-6, atol=1e-7)


class HandWrittenRMSNorm(nn.Module):
    """RMSNorm as many Llama implementations write it, in a residual block."""

    def __init__(self, dim: int = 16, axis: int = -1) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.axis = axis

    def forward(self, x: Any) -> Any:
        h = x + self.proj(x)
        variance = h.pow(2).mean(self.axis, keepdim=True)
        return self.weight * (h * torch.rsqrt(variance + 1e-6)), h


def _fused(imported: Any) -> tuple[Counter[str], dict[str, int]]:
    """Graph op counts after graph fusion and DCE, and the effect times of the passes that fired."""
    runner = run_pipeline(imported.module, "builtin.module(graph-fusion,graph-dce)")
    return Counter(graph_op_names(imported.module)), gft.fired_fusions(runner.fusion_result())


def test_hand_written_rms_norm_is_fused_by_graph_fusion() -> None:
    """The importer writes the norm's ops; rms_norm_fusion makes them one rms_norm, which add_rms_norm_fusion
    then takes with the residual add before it."""
    torch.manual_seed(0)
    model, x = HandWrittenRMSNorm(), randn(2, 3, 16)
    imported = gft.import_module(model, (x,))
    assert imported.graph_ops["graph.rsqrt"] == 1 and "graph.rms_norm" not in imported.graph_ops
    ops, fired = _fused(imported)
    assert fired["rms_norm_fusion"] == 1 and fired["add_rms_norm_fusion"] == 1, fired
    assert "graph.rsqrt" not in ops and ops["graph.add_rms_norm"] == 1
    assert_close(imported.run_reference(x), torch_outputs(model, (x,)), rtol=1e-5, atol=1e-6)


def test_transformers_rms_norm_takes_its_weight_in_fp32() -> None:
    """transformers' LlamaRMSNorm casts the normalized value back to the input's dtype before the weight's product:
    in fp32 export's dtype check on it imports as nothing, and the weight joins the one ``graph.rms_norm``."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    torch.manual_seed(0)
    model, x = LlamaRMSNorm(16, eps=1e-6), randn(2, 3, 16)
    with torch.no_grad():
        model.weight.copy_(torch.rand(16) + 0.5)
    imported = gft.import_module(model, (x,))
    ops, fired = _fused(imported)
    assert fired == {"rms_norm_fusion": 1} and ops == {"graph.rms_norm": 1}, (ops, fired)
    assert_close(imported.run_reference(x), torch_outputs(model, (x,)), rtol=1e-6, atol=1e-6)


def test_transformers_rms_norm_in_bf16_is_an_f32_norm_between_casts() -> None:
    """In bf16 LlamaRMSNorm computes in f32 and casts back before the weight: an f32 rms_norm between the casts."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    torch.manual_seed(0)
    model, x = LlamaRMSNorm(16, eps=1e-6).to(torch.bfloat16), randn(2, 3, 16).to(torch.bfloat16)
    imported = gft.import_module(model, (x,))
    ops, fired = _fused(imported)
    assert fired == {"rms_norm_fusion": 1} and ops == {"graph.cast": 2, "graph.rms_norm": 1, "graph.mul": 1}, ops
    (got,), (want,) = imported.run_reference(x), torch_outputs(model, (x,))
    assert np.mean(np.asarray(got, np.float32) == np.asarray(want, np.float32)) > 0.99


def test_rms_norm_over_another_axis_is_not_fused() -> None:
    torch.manual_seed(0)
    model, x = HandWrittenRMSNorm(axis=1), randn(2, 16, 16)
    imported = gft.import_module(model, (x,))
    ops, fired = _fused(imported)
    assert "rms_norm_fusion" not in fired and "graph.rms_norm" not in ops
    assert_close(imported.run_reference(x), torch_outputs(model, (x,)), rtol=1e-5, atol=1e-6)


def test_unsupported_op_names_the_op_the_node_and_the_line() -> None:
    def forward(m: nn.Module, x: Any) -> Any:
        y = x * 2
        return torch.cumprod(y, 0)  # the line the error points at

    line = forward.__code__.co_firstlineno + 2
    with pytest.raises(GraphfuseError) as raised:
        gft.import_module(Fn(forward), (randn(3, 4),))
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.message.startswith("unsupported ATen op 'aten.cumprod.default' at FX node 'cumprod'")
    assert "torch.cumprod(y, 0)" in diagnostic.message
    assert diagnostic.location is not None
    assert (diagnostic.location.file, diagnostic.location.line) == (THIS_FILE, line)


def test_unsupported_dtype_and_argument_errors() -> None:
    with pytest.raises(GraphfuseError, match=r"unsupported dtype torch.float64 of input"):
        gft.import_module(Fn(lambda m, x: x * 2), (randn(3, dtype=torch.float64),))
    with pytest.raises(GraphfuseError, match=r"unsupported ATen op 'aten.scaled_dot_product_attention.default'"
                                             r".*dropout_p"):
        gft.import_module(Fn(lambda m, q: F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)), (randn(2, 3, 4),))
    with pytest.raises(GraphfuseError, match="params must be"):
        gft.import_module(Fn(lambda m, x: x), (randn(2),), params="inline")  # type: ignore[arg-type]
    with pytest.raises(GraphfuseError, match=r"torch\.export could not export"):
        gft.import_module(Fn(lambda m, x: x.numpy()), (randn(2),))


def test_locations_name_the_fx_node_and_the_source_line() -> None:
    def forward(m: nn.Module, x: Any) -> Any:
        return (x + 1).relu()

    line = forward.__code__.co_firstlineno + 1
    imported = gft.import_module(Fn(forward), (randn(2, 3),))
    text = imported.module.operation.get_asm(enable_debug_info=True)
    assert f'loc("{THIS_FILE}":{line}:1)' in text
    assert re.search(r'loc\("fx:add"\(#loc\d+\)\)', text) and re.search(r'loc\("fx:relu"\(#loc\d+\)\)', text)


def test_fusion_log_points_at_the_model_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A pattern that matches but cannot fuse says why at the model's line (the FX node's location)."""

    def forward(m: nn.Module, x: Any, y: Any) -> Any:
        return F.layer_norm(x + y, (8,))  # both operands broadcast: add_layer_norm_fusion cannot take the add

    line = forward.__code__.co_firstlineno + 1
    imported = gft.import_module(Fn(forward), (randn(4, 1, 8), randn(1, 3, 8)))
    log.configure("debug")
    try:
        run_pipeline(imported.module, "builtin.module(graph-fusion)")
    finally:
        log.configure()
    assert f"not fused at {THIS_FILE}:{line}:1: the add broadcasts both operands" in capsys.readouterr().err


def test_docs_list_exactly_the_supported_ops() -> None:
    doc = (ROOT / "docs" / "frontend-torch.md").read_text()
    assert gft.supported_ops_markdown() in doc, "regenerate the table with gft.supported_ops_markdown()"
    table = doc.split("## Supported ATen ops", 1)[1]
    listed = set(re.findall(r"^\| `([^`]+)` \|", table, flags=re.MULTILINE))
    assert listed == set(gft.supported_ops())


def test_supported_ops_are_aten_names() -> None:
    ops = gft.supported_ops()
    assert ops == sorted(ops) and len(ops) == len(set(ops))
    for name in ops:
        # transformers' custom op: its grouped expert matmul
        assert name == "getitem" or re.fullmatch(r"(aten|_c10d_functional|transformers)\.[a-z_0-9]+\.[A-Za-z_0-9]+",
                                                 name), name
    assert len(ops) == len(gft.supported_ops_markdown().splitlines()) - 2


def test_embedding_and_index_select_with_runtime_indices() -> None:
    """Token ids through nn.Embedding and index_select become graph.gather, fused with what follows."""
    torch.manual_seed(0)

    def forward(m: nn.Module, ids: Any, keep: Any) -> Any:
        return m.proj(m.table(ids)).index_select(1, keep)

    model = Fn(forward, table=nn.Embedding(50, 16), proj=nn.Linear(16, 8))
    args = (torch.randint(0, 50, (2, 7)), torch.tensor([6, 0, 3], dtype=torch.int32))
    imported = gft.import_module(model, args)
    assert str(imported.module).count('"graph.gather"') == 2
    compiled = gft.compile_module(model, args)
    assert_close([gft.to_numpy(compiled(*args))], torch_outputs(model, args), rtol=1e-6, atol=1e-6)


def test_constant_indices_out_of_range_are_an_error() -> None:
    def forward(m: nn.Module, x: Any) -> Any:
        return x.index_select(1, torch.tensor([0, 9]))

    with pytest.raises(GraphfuseError, match=r"indices \[0, 9\] are out of range for dimension 1 of size 4"):
        gft.import_module(Fn(forward), (randn(3, 4),))


def _hf_network(hf: Any, kind: str) -> nn.Module:
    """A one-layer model of the transformers library, random weights, vocabulary of 128, hidden size 64."""
    small = {"vocab_size": 128, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
             "num_attention_heads": 4, "max_position_embeddings": 64}
    if kind in ("llama", "qwen2", "mistral"):
        config = {"llama": hf.LlamaConfig, "qwen2": hf.Qwen2Config, "mistral": hf.MistralConfig}[kind]
        return {"llama": hf.LlamaModel, "qwen2": hf.Qwen2Model, "mistral": hf.MistralModel}[kind](
            config(num_key_value_heads=2, **small))
    if kind == "gpt2":
        return hf.GPT2Model(hf.GPT2Config(n_embd=64, n_inner=128, n_layer=1, n_head=4, vocab_size=128,
                                          n_positions=64, bos_token_id=0, eos_token_id=0))
    if kind == "bert":
        return hf.BertModel(hf.BertConfig(**small), add_pooling_layer=False)
    return hf.T5EncoderModel(hf.T5Config(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=1, num_heads=4))


@pytest.mark.parametrize(("kind", "masked"), [("llama", False), *((kind, True) for kind in (
    "llama", "qwen2", "mistral", "gpt2", "bert", "t5"))])
def test_hf_models_fed_token_ids_and_a_padded_mask(kind: str, masked: bool) -> None:
    """The first thing users do with an HF model: call it with token ids (aten.embedding) and, for a padded
    batch, a 2-D attention mask (transformers builds the 4-D mask with aten.index.Tensor and ``&``)."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    network = _hf_network(hf, kind)
    cache = {} if kind in ("bert", "t5") else {"use_cache": False}

    def forward(m: nn.Module, ids: Any, mask: Any) -> Any:
        return m.network(input_ids=ids, attention_mask=mask if masked else None, **cache).last_hidden_state

    model = Fn(forward, network=network).eval()
    ids = torch.randint(0, 128, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    mask[1, 7:] = 0  # the second sequence is 7 tokens, padded to 10
    imported = gft.import_module(model, (ids, mask))
    assert '"graph.gather"' in str(imported.module)
    (want,) = torch_outputs(model, (ids, mask))
    got = gft.to_numpy(gft.compile_module(model, (ids, mask))(ids, mask))
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_hf_llama_fuses_its_mlp_and_norms(dtype: Any) -> None:
    """HF Llama's MLP (separate gate and up projections, reshaped) becomes one matmul and a swiglu; its RMSNorms
    after the residual adds fuse with them, in f32 and in bf16 (where HF casts to f32 and back)."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    torch.manual_seed(0)
    config = hf.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)

    def forward(m: nn.Module, ids: Any) -> Any:
        return m.llama(input_ids=ids, use_cache=False).last_hidden_state

    model = Fn(forward, llama=hf.LlamaModel(config).to(dtype)).eval()
    ids = torch.randint(0, 128, (1, 10))
    compiled = gft.compile_module(model, (ids,))
    fired = compiled.fusions
    norm = "add_rms_norm_fusion" if dtype == torch.float32 else "add_cast_rms_norm_cast_fusion"
    assert fired.get("inference_swiglu_fusion") == 2 and fired.get("matmul_weight_concat_fusion", 0) >= 2, fired
    assert fired.get(norm) == 4, fired  # every RMSNorm but the first follows a residual add: 4 of 5
    (want,) = torch_outputs(model, (ids,))
    got = gft.to_numpy(compiled(ids))
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2
    assert np.abs(got.astype(np.float32) - want.astype(np.float32)).max() <= tolerance * np.abs(want).max()


class CacheWrite(nn.Module):
    """A static KV cache written in place at the new positions, then read."""

    def forward(self, cache: Any, positions: Any, new: Any, scale: Any) -> Any:
        cache.index_copy_(2, positions, new)
        return cache.sum(dim=2) * scale


def test_inputs_written_in_place_are_an_error_or_leading_results() -> None:
    cache, positions, new = torch.zeros(1, 2, 8, 4), torch.tensor([3, 4]), randn(1, 2, 2, 4)
    with pytest.raises(GraphfuseError, match=r"the model mutates 'cache' \(USER_INPUT_MUTATION\): graphs are pure"):
        gft.import_module(CacheWrite(), (cache, positions, new, 2.0))
    program = torch.export.export(CacheWrite(), (cache.clone(), positions, new, 2.0))
    imported = gft.import_program(program, input_mutations="results")
    assert imported.mutated_inputs == [0] and imported.graph_ops["graph.scatter_update"] == 1
    written, total = graphfuse_compile(imported.module)(*imported.numpy_inputs(cache, positions, new, 2.0))
    want_cache = cache.clone()
    want = CacheWrite()(want_cache, positions, new, 2.0)
    assert_close([written], [want_cache.numpy()], 0.0, 0.0)
    assert_close([imported.unflatten([written, total])], [want.numpy()], 1e-6, 1e-6)
    with pytest.raises(GraphfuseError, match="input_mutations must be 'error' or 'results'"):
        gft.import_program(program, input_mutations="copy")  # type: ignore[arg-type]
    with pytest.raises(GraphfuseError, match="the model writes its input 'cache', which is imported as a constant"):
        gft.import_program(program, input_mutations="results", constant_inputs={0: cache})


class SymbolicSizes(nn.Module):
    """Positions, ones and a slice of a stored table, all as long as the input's dynamic sequence length."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.arange(64.0).reshape(1, 64))

    def forward(self, x: Any) -> Any:
        positions = torch.arange(x.shape[1])
        ones = x.new_ones(x.shape[0], x.shape[1])
        return x * positions + ones + self.table[:, :x.shape[1]], torch.full((2, x.shape[1]), 0.5)


def test_factories_and_slices_over_a_symbolic_size() -> None:
    """arange / new_ones / full over x.shape[1] and table[:, :x.shape[1]] under a dynamic sequence length become
    graph.iota along that dim of x (a gather at it for the slice); the graph runs at any length."""
    from torch.export import Dim

    model = SymbolicSizes().eval()
    imported = gft.import_module(model, (randn(2, 10),), dynamic_shapes=({1: Dim("seq", min=2, max=60)},))
    assert imported.graph_ops["graph.iota"] == 4 and imported.graph_ops["graph.gather"] == 1
    assert "tensor<2x?xf32>" in str(imported.module)
    for length in (3, 17, 60):
        x = randn(2, length)
        assert_close(imported.run_reference(x), [t.numpy() for t in model(x)], 1e-6, 1e-6)



class DynamicSequenceOps(nn.Module):
    """What a decoder does under a symbolic sequence length: rotary halves (a static dim of a dynamic tensor), the
    last position, a whole-dim slice, positions offset by a size, and causal attention."""

    def forward(self, x: Any, past: Any) -> Any:
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        positions = torch.arange(x.shape[1]) + past.shape[1]  # a size used as a number
        q = (x + rotated)[:, 0:].unsqueeze(1)
        attended = F.scaled_dot_product_attention(q, q, q, is_causal=True).squeeze(1)
        return attended[:, -1:, :] * (x.shape[1] + past.shape[1]), positions


def test_decoder_ops_over_a_symbolic_sequence_length() -> None:
    """Each compiles once for every length: slices of a static dim as a split, x[:, -1:] as a gather counted from
    the dim's size, a size in arithmetic as graph.dimension_size, the causal mask from iotas of both lengths."""
    from torch.export import Dim

    model = DynamicSequenceOps().eval()
    seq, past = Dim("seq", min=2, max=60), Dim("past", min=2, max=60)
    imported = gft.import_module(model, (randn(2, 10, 16), randn(2, 5)), dynamic_shapes=({1: seq}, {1: past}))
    ops = imported.graph_ops
    assert ops["graph.split"] == 2 and ops["graph.dimension_size"] >= 2 and ops["graph.gather"] >= 1, ops
    executable = graphfuse_compile(imported.module)
    for length, past_length in ((2, 3), (17, 2), (60, 41)):
        x, cache = randn(2, length, 16), randn(2, past_length)
        got = executable(x.numpy(), cache.numpy())
        assert_close(got, [t.numpy() for t in model(x, cache)], 1e-5, 1e-5)


class ExpandedBuffer(nn.Module):
    """BERT's token type ids: a [1, max] buffer sliced to the sequence and expanded to the batch."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("types", torch.arange(64).reshape(1, 64) % 3)

    def forward(self, x: Any) -> Any:
        batch, length = x.shape
        return x * self.types[:, :length].expand(batch, length)


def test_a_size_one_dim_expanded_to_symbolic_sizes() -> None:
    """expand(batch, seq) of a [1, seq] tensor with batch and seq symbolic: the tensor plus zeros of those sizes,
    compiled once for every batch and length."""
    from torch.export import Dim

    model = ExpandedBuffer().eval()
    dynamic = ({0: Dim("batch", min=2, max=8), 1: Dim("seq", min=2, max=60)},)
    imported = gft.import_module(model, (randn(2, 10),), dynamic_shapes=dynamic)
    assert "func.func @forward(%arg0: tensor<?x?xf32>) -> tensor<?x?xf32>" in str(imported.module)
    executable = graphfuse_compile(imported.module)
    for batch, length in ((2, 2), (5, 17), (8, 60)):
        x = randn(batch, length)
        (got,) = executable(x.numpy())
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-6)


class FirstPositions(nn.Module):
    def __init__(self, end: int) -> None:
        super().__init__()
        self.end = end

    def forward(self, x: Any) -> Any:
        return x[:, :self.end] * 2 - 1


def test_a_dynamic_dim_sliced_to_numbers_within_its_smallest_size() -> None:
    """x[:, :1] over a dynamic sequence length of at least 2 is a static slice, compiled once and exact at every
    length (transformers' masking_utils reads position_ids[:, :1] so under dynamic shapes)."""
    from torch.export import Dim

    dynamic = ({1: Dim("seq", min=2, max=60)},)
    imported = gft.import_module(FirstPositions(1).eval(), (randn(2, 10),), dynamic_shapes=dynamic)
    assert "(tensor<2x?xf32>) -> tensor<2x1xf32>" in str(imported.module)
    executable = graphfuse_compile(imported.module)
    for length in (2, 17, 60):
        x = randn(2, length)
        (got,) = executable(x.numpy())
        np.testing.assert_array_equal(got, (x[:, :1] * 2 - 1).numpy())
    # past the smallest length the slice would clamp: torch.export refuses that range itself
    with pytest.raises(GraphfuseError, match=r"Constraints violated \(seq\)"):
        gft.import_module(FirstPositions(3).eval(), (randn(2, 10),), dynamic_shapes=dynamic)


class EverySecond(torch.nn.Module):
    """GPT-J's and Cohere's interleaved rotary pairs, and other steps along static dims of a dynamic tensor."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x[..., ::2] * 2, x[..., 1::2] + 1, x[..., 1:7:3], x[..., ::3], x[:, :, 2:7:2, :], x[..., 14::3]


def test_steps_along_a_static_dim_of_a_dynamic_tensor() -> None:
    """x[..., ::2] over [batch, seq, heads, 16] with batch and seq dynamic: whole groups of the step seen as a dim
    (a reshape keeping the dynamic dims), the first of each split off, then the elements left: one graph for
    every length, exact; steps that divide the sliced length, steps that leave a rest, a step longer than it."""
    from torch.export import Dim

    dynamic = ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=60)},)
    imported = gft.import_module(EverySecond().eval(), (randn(2, 5, 8, 16),), dynamic_shapes=dynamic)
    assert "graph.slice" not in str(imported.module)
    executable = graphfuse_compile(imported.module)
    for shape in ((1, 2, 8, 16), (3, 17, 8, 16), (8, 60, 8, 16)):
        x = randn(*shape)
        for got, want in zip(executable(x.numpy()), EverySecond()(x), strict=True):
            np.testing.assert_array_equal(got, want.numpy())


class ViewsToSymbolicSizes(torch.nn.Module):
    """GPT-2's linear over rows ([b * s, n] viewed back as [b, s, n]), Bloom's [b, heads, s, d] viewed as
    [b * heads, s, d] (a product of a symbolic size and a number, and -1), and Falcon's index of one head."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        b, s, n = x.shape
        rows = self.proj(x.view(-1, n)).view(b, s, n)
        heads = x.view(b, s, 4, 8).transpose(1, 2).reshape(b * 4, -1, 8)
        return rows, heads * 2, x.view(b, s, 4, 8)[:, :, [-2]]


def test_views_to_symbolic_sizes_read_from_tensors() -> None:
    """A view to several symbolic sizes that are not the operand's dims in order: a reshape whose sizes operand
    carries them (one graph for every batch and length, batch 1 and length 1 included, exact but for the
    linear's sums); a size that is a product of symbolic sizes and numbers is the length of a line built so."""
    from torch.export import Dim

    dynamic = ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=60)},)
    module = ViewsToSymbolicSizes().eval()
    imported = gft.import_module(module, (randn(2, 5, 32),), dynamic_shapes=dynamic)
    reshapes = [line for line in str(imported.module).splitlines() if '"graph.reshape"(%' in line and ", %" in line]
    assert len(reshapes) >= 2, reshapes  # reshapes with a sizes operand
    executable = graphfuse_compile(imported.module)
    for shape in ((1, 1, 32), (3, 17, 32), (8, 60, 32), (1, 9, 32)):
        x = randn(*shape)
        with torch.no_grad():
            want = module(x)
        got = executable(x.numpy())
        assert [g.shape for g in got] == [tuple(w.shape) for w in want]
        np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got[1], want[1].numpy())
        np.testing.assert_array_equal(got[2], want[2].numpy())


class TokensByExpert(torch.nn.Module):
    """transformers' MoE routing over a dynamic number of tokens: the tokens per expert (histc), the tokens
    sorted by expert, and the inverse permutation written with index_put over an arange of the token count."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        experts = x.argmax(-1).view(-1)
        counts = torch.histc(experts.float(), bins=4, min=0, max=3)
        perm = torch.argsort(experts)
        inverse = torch.empty_like(perm)
        inverse[perm] = torch.arange(perm.size(0))
        return counts, perm, inverse, x.view(-1, 4)[perm][inverse] * 2


def test_tokens_by_expert_at_any_number_of_tokens() -> None:
    """Mixtral's and Qwen2-MoE's routing with batch and length dynamic: one graph for every token count (1
    token included), the same counts, permutations and values as PyTorch."""
    from torch.export import Dim

    dynamic = ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=60)},)
    module = TokensByExpert().eval()
    imported = gft.import_module(module, (randn(2, 5, 4),), dynamic_shapes=dynamic)
    executable = graphfuse_compile(imported.module)
    for shape in ((1, 1, 4), (3, 17, 4), (8, 60, 4)):
        x = randn(*shape)
        for got, want in zip(executable(x.numpy()), module(x), strict=True):
            np.testing.assert_array_equal(got, want.numpy())


class CausalConvolution(torch.nn.Module):
    """Mamba's causal depthwise convolution: ``s + 3`` outputs cut to the first ``s`` (the uncached path) or to
    the last ``s`` (after the cache's update), over a dynamic batch and length."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(8, 8, kernel_size=4, padding=3, groups=8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = x.shape[-1]
        out = self.conv(x)
        return out[:, :, :seq_len], out[:, :, -seq_len:]


def test_slices_of_a_dynamic_dim_to_a_symbolic_size_within_it() -> None:
    """``out[..., :s]`` and ``out[..., -s:]`` of a dim of ``s + 3``: the sizes' symbols prove ``s`` within it, so
    each is a gather (at the first s positions, at the last s); one graph for lengths 1 to 60, exact but for
    the convolution's sums."""
    from torch.export import Dim

    dynamic = ({0: Dim("batch", min=1, max=8), 2: Dim("seq", min=1, max=60)},)
    module = CausalConvolution().eval()
    imported = gft.import_module(module, (randn(2, 8, 5),), dynamic_shapes=dynamic)
    executable = graphfuse_compile(imported.module)
    for shape in ((1, 8, 1), (3, 8, 17), (8, 8, 60)):
        x = randn(*shape)
        with torch.no_grad():
            want = module(x)
        for got, w in zip(executable(x.numpy()), want, strict=True):
            assert got.shape == tuple(w.shape)
            np.testing.assert_allclose(got, w.numpy(), rtol=1e-5, atol=1e-6)



class _CompositeOps(nn.Module):
    """Composite ops kept whole (linear, layer_norm, attention), one decomposed (chunk), a constant built in the
    model (lift_fresh_copy), an in-place op on an intermediate (functionalized) and a dtype conversion."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 24)
        self.norm = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.proj(self.norm(x)).chunk(3, dim=-1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y.mul_(2.0)
        return (y + torch.tensor([1.0, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0, -8.0])).to(torch.float16)


#: ops that only a program exported with torch.export.export and decomposed again has (import_module traces once):
#: test_one_trace_imports_what_two_traces_import imports them
TWO_TRACE_OPS = {"aten._assert_tensor_metadata.default"}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_one_trace_imports_what_two_traces_import(dynamic: bool) -> None:
    """export_inference's one trace gives the module torch.export.export and run_decompositions({}) give."""
    from torch.export import Dim

    from graphfuse.frontends.torch.export import export_inference

    model, x = _CompositeOps().eval(), randn(2, 5, 8)
    shapes = ({1: Dim("seq", min=2, max=40)},) if dynamic else None
    with torch.no_grad():
        program, decomposed = export_inference(model, (x,), dynamic_shapes=shapes)
        two_traces = gft.import_program(torch.export.export(model, (x,), dynamic_shapes=shapes))
    assert decomposed and program.dialect == "ATEN"
    targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    assert {"aten.linear.default", "aten.layer_norm.default", "aten.scaled_dot_product_attention.default",
            "aten.lift_fresh_copy.default"} <= targets
    # The second trace keeps export's dtype checks (the importer drops them); the one trace has none.
    assert "aten._assert_tensor_metadata.default" not in targets
    assert "aten._assert_tensor_metadata.default" in two_traces.aten_ops
    one_trace = gft.import_program(program, decomposed=True)
    assert str(one_trace.module) == str(two_traces.module)
    assert str(gft.import_module(model, (x,), dynamic_shapes=shapes).module) == str(two_traces.module)
    got = graphfuse_compile(str(one_trace.module))(*one_trace.numpy_inputs(x))
    assert_close(got, torch_outputs(model, (x,)), rtol=1e-5, atol=1e-5)


def test_a_graph_with_a_number_input_keeps_the_two_traces() -> None:
    """A number input (a size Dynamo passes) is a constant after torch.export's training trace but would stay
    symbolic in the ATen trace: export_inference leaves such graphs to the two traces."""
    from graphfuse.frontends.torch.export import export_inference

    model, x = Fn(lambda m, x, n: torch.exp(x) * (n % 5)), randn(2, 4)
    with torch.no_grad():
        program, decomposed = export_inference(model, (x, 7))
    assert not decomposed and program.dialect == "TRAINING"
    imported = gft.import_program(program)
    got = run_function(imported.module, imported.numpy_inputs(x, 7))
    assert_close(got, torch_outputs(model, (x, 7)), rtol=1e-6, atol=1e-6)
