"""bf16 products on the host's dot-product instructions (AVX512_BF16's vdpbf16ps): compiled code against an f64
reference and against PyTorch eager, through graphfuse.compile and through the torch.compile backend."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
import torch

import graphfuse
from graphfuse.frontends.torch_backend import CompilerConfig, get_backend
from graphfuse.lowering import host

BF16_DOTS = "bf16" in host.dot_products()
needs_bf16_dots = pytest.mark.skipif(not BF16_DOTS, reason="needs a CPU with AVX512_BF16 (vdpbf16ps)")
DOT_INTRINSIC = "llvm.x86.avx512bf16.dpbf16ps.512"


def _linear_graph(m: int, k: int, n: int) -> str:
    """PyTorch's bf16 linear + gelu as its importer writes it: operands widened to f32, the bias added to the f32
    product, gelu, one rounding to bf16."""
    return f"""
func.func @linear(%x: tensor<{m}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>, %b: tensor<{n}xf32>) -> tensor<{m}x{n}xbf16> {{
  %xf = "graph.cast"(%x) : (tensor<{m}x{k}xbf16>) -> tensor<{m}x{k}xf32>
  %wf = "graph.cast"(%w) : (tensor<{n}x{k}xbf16>) -> tensor<{n}x{k}xf32>
  %p = "graph.matmul"(%xf, %wf) {{transpose_b = true}}
      : (tensor<{m}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<{m}x{n}xf32>
  %s = "graph.add"(%p, %b) : (tensor<{m}x{n}xf32>, tensor<{n}xf32>) -> tensor<{m}x{n}xf32>
  %g = "graph.gelu"(%s) {{approximate = "tanh"}} : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = "graph.cast"(%g) : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xbf16>
  return %r : tensor<{m}x{n}xbf16>
}}"""


def _inputs(m: int, k: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k), np.float32).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((n, k), np.float32) / np.sqrt(k)).astype(ml_dtypes.bfloat16)
    return x, w, rng.standard_normal(n, np.float32)


def _reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """gelu(x @ w^T + b) in f64 (tanh form)."""
    y = x.astype(np.float64) @ w.astype(np.float64).T + b
    return 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y**3)))


def _eager(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    as_tensor = lambda a: torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)  # noqa: E731
    y = torch.nn.functional.linear(as_tensor(x), as_tensor(w), torch.from_numpy(b).to(torch.bfloat16))
    return torch.nn.functional.gelu(y, approximate="tanh").float().numpy()


def _bound(x: np.ndarray, w: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per output, what f32 sums of the K exact products, gelu in f32 and one rounding to bf16 may be off by: the
    sum's error (K * 2^-24 of the sum of the products' magnitudes, gelu's slope at most 1.13), 2^-20 of gelu's
    value for its own arithmetic, and half a bf16 step of the result (2^-8 of it: 8 significant bits)."""
    k = x.shape[1]
    magnitude = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T
    return 1.13 * k * 2.0**-24 * magnitude + np.abs(ref) * (2.0**-8 + 2.0**-20) + 2.0**-133


@needs_bf16_dots
@pytest.mark.parametrize("m, k, n", [(64, 256, 96), (37, 70, 72), (33, 2, 32), (130, 512, 200)])
def test_bf16_linear_on_dot_products_within_its_bound(m: int, k: int, n: int) -> None:
    """Odd shapes included: rows not a multiple of the register tile, 35 pairs of K, columns past the last whole
    panel (72 = 64 + 8), a single pair of K.  (Fewer rows than ROW_DOT_ROWS take the row dots, below.)"""
    executable = graphfuse.compile(_linear_graph(m, k, n))
    assert DOT_INTRINSIC in executable.function.llvm_dialect_ir
    x, w, b = _inputs(m, k, n)
    (out,) = executable(x, w, b)
    ref = _reference(x, w, b)
    error = np.abs(out.astype(np.float64) - ref)
    assert np.all(error <= _bound(x, w, ref)), float(np.max(error - _bound(x, w, ref)))
    # no worse than PyTorch's own bf16 linear on the same inputs (bf16's rounding of the result dominates both)
    assert error.max() <= np.abs(_eager(x, w, b) - ref).max() * 1.01 + 1e-30


@pytest.mark.parametrize("m, k, n", [(1, 2, 32), (1, 700, 72), (4, 256, 130)])
def test_bf16_linear_of_few_rows_reads_the_weight_narrow(m: int, k: int, n: int) -> None:
    """A decoded token's linear layer (a few rows, the weight an argument): the row dots read the bf16 weight as
    it is stored and widen it in registers (no copy of it into panels: the lit tests of
    select-contraction-schedules show the IR); the same bound."""
    executable = graphfuse.compile(_linear_graph(m, k, n))
    llvm_ir = executable.function.llvm_dialect_ir
    assert DOT_INTRINSIC not in llvm_ir
    x, w, b = _inputs(m, k, n)
    (out,) = executable(x, w, b)
    ref = _reference(x, w, b)
    assert np.all(np.abs(out.astype(np.float64) - ref) <= _bound(x, w, ref))


@needs_bf16_dots
@pytest.mark.parametrize("m", [16, 48])
def test_bf16_linear_special_values_as_eager(m: int) -> None:
    """NaN and infinities propagate as in PyTorch; a row of -0 gives the same (signed) zeros: on the row dots
    reading the bf16 weight (16 rows) and on the pair dot products (48)."""
    k, n = 64, 32
    x, w, b = _inputs(m, k, n, seed=1)
    x[0, 3] = np.nan
    x[1, 5] = np.inf
    w[7, 9] = -np.inf
    x[2, :] = -0.0
    b[:] = 0.0
    executable = graphfuse.compile(_linear_graph(m, k, n))
    assert (DOT_INTRINSIC in executable.function.llvm_dialect_ir) == (m > 32)
    (out,) = executable(x, w, b)
    eager = _eager(x, w, b)
    np.testing.assert_array_equal(np.isnan(out.astype(np.float32)), np.isnan(eager))
    finite = np.isfinite(eager)
    np.testing.assert_array_equal(out.astype(np.float32)[~finite & ~np.isnan(eager)], eager[~finite & ~np.isnan(eager)])
    numbers = ~np.isnan(eager[2])  # -0 x -inf (column 7) is NaN, whose sign means nothing
    assert numbers.sum() == n - 1
    assert np.signbit(out.astype(np.float32)[2][numbers]).tolist() == np.signbit(eager[2][numbers]).tolist()


def test_bf16_linear_without_dot_products_is_f32(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the host has none (or they are turned off), the same graph computes in f32 and rounds once: the same
    bound holds and no dot instruction is emitted."""
    monkeypatch.setenv(host.DOT_PRODUCTS_VARIABLE, "none")
    host.dot_products.cache_clear()
    try:
        m, k, n = 37, 70, 72
        executable = graphfuse.compile(_linear_graph(m, k, n))
        assert DOT_INTRINSIC not in executable.function.llvm_dialect_ir
        x, w, b = _inputs(m, k, n)
        (out,) = executable(x, w, b)
    finally:
        monkeypatch.delenv(host.DOT_PRODUCTS_VARIABLE)
        host.dot_products.cache_clear()
    ref = _reference(x, w, b)
    assert np.all(np.abs(out.astype(np.float64) - ref) <= _bound(x, w, ref))


@needs_bf16_dots
@pytest.mark.parametrize("rows", [1, 33])
def test_bf16_linear_through_the_backend_strict(rows: int) -> None:
    """nn.Linear in bf16 with gelu, as a user calls it: compiled whole (fallback="error"), its weight an argument
    of each call, the result as eager's to within one bf16 step of the largest output."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(256, 160).to(torch.bfloat16)
    model = torch.nn.Sequential(layer, torch.nn.GELU(approximate="tanh"))
    compiled = torch.compile(model, backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
    x = torch.randn(rows, 256).to(torch.bfloat16)
    with torch.no_grad():
        got, want = compiled(x), model(x)
        exact = torch.nn.functional.gelu(torch.nn.functional.linear(x.double(), layer.weight.double(),
                                                                    layer.bias.double()), approximate="tanh")
    assert got.dtype == torch.bfloat16
    assert (got.double() - exact).abs().max() <= (want.double() - exact).abs().max() * 1.01


@pytest.mark.parametrize("dots", ["host", "none"])
def test_bf16_batched_matmul_through_the_backend(dots: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attention's batched products in bf16 (32 batches, more than are unrolled), with and without the dot
    products: compiled whole, within eager's error of the exact product."""
    if dots == "none":
        monkeypatch.setenv(host.DOT_PRODUCTS_VARIABLE, "none")
    host.dot_products.cache_clear()
    try:
        torch._dynamo.reset()
        q = torch.randn(32, 64, 32).to(torch.bfloat16)
        k = torch.randn(32, 32, 64).to(torch.bfloat16)
        compiled = torch.compile(torch.bmm, backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
        with torch.no_grad():
            got, want = compiled(q, k), torch.bmm(q, k)
    finally:
        host.dot_products.cache_clear()
        torch._dynamo.reset()
    exact = torch.bmm(q.double(), k.double())
    assert got.dtype == torch.bfloat16
    assert (got.double() - exact).abs().max() <= (want.double() - exact).abs().max() * 1.01


def test_bf16_rank_4_product_runs_on_register_tiles() -> None:
    """Attention's scores computed by the model itself (Gemma 2's soft-capped attention: q @ k^T on [batch, heads,
    tokens, dims] in bf16): the rank-4 contraction is a batched matmul of widened operands on f32 register tiles
    (vector FMAs), not bf16 loops LLVM leaves scalar; through the backend, compiled whole, within eager's error."""
    graph = """
func.func @scores(%q: tensor<2x4x64x8xbf16>, %k: tensor<2x4x8x48xbf16>) -> tensor<2x4x64x48xbf16> {
  %s = "graph.matmul"(%q, %k) : (tensor<2x4x64x8xbf16>, tensor<2x4x8x48xbf16>) -> tensor<2x4x64x48xbf16>
  return %s : tensor<2x4x64x48xbf16>
}"""
    llvm_ir = graphfuse.compile(graph).function.llvm_dialect_ir
    assert re.search(r"llvm\.intr\.fmuladd\(.*\) : \(vector<\d+xf32>", llvm_ir)
    torch._dynamo.reset()
    try:
        q = torch.randn(2, 4, 64, 8).to(torch.bfloat16)
        k = torch.randn(2, 4, 48, 8).to(torch.bfloat16)

        def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            return q @ k.transpose(-1, -2)

        compiled = torch.compile(scores, backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
        with torch.no_grad():
            got, want = compiled(q, k), scores(q, k)
    finally:
        torch._dynamo.reset()
    exact = q.double() @ k.double().transpose(-1, -2)
    assert got.dtype == torch.bfloat16
    assert (got.double() - exact).abs().max() <= (want.double() - exact).abs().max() * 1.01


@needs_bf16_dots
def test_bf16_linear_against_the_reference_interpreter() -> None:
    """The compiled product of pairs against the reference interpreter (f32 sums of the widened operands, one
    rounding): equal but for the order of the f32 sums, each output within one bf16 step of the interpreter's."""
    m, k, n = 37, 70, 72
    executable = graphfuse.compile(_linear_graph(m, k, n))
    assert DOT_INTRINSIC in executable.function.llvm_dialect_ir
    x, w, b = _inputs(m, k, n, seed=2)
    (out,) = executable(x, w, b)
    (want,) = executable.reference(x, w, b)
    got, want = out.astype(np.float64), np.asarray(want, np.float64)
    step = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(want), 2.0**-126))) - 7)  # one bf16 step at each value
    assert np.all(np.abs(got - want) <= step), float(np.max(np.abs(got - want) / step))
    assert np.mean(got == want) > 0.9  # most outputs are the interpreter's bits


def test_bf16_linear_with_rows_counted_at_run_time() -> None:
    """A prompt's tokens through a bf16 linear layer compiled with dynamic rows (torch.compile(dynamic=True)):
    the f32 products of dynamic rows on widened operands, within eager's error at 3, 17 and 40 rows."""
    torch.manual_seed(0)
    torch._dynamo.reset()
    layer = torch.nn.Linear(64, 96).to(torch.bfloat16)
    compiled = torch.compile(layer, dynamic=True,
                             backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
    for rows in (3, 17, 40):
        x = torch.randn(rows, 64).to(torch.bfloat16)
        with torch.no_grad():
            got, want = compiled(x), layer(x)
        exact = torch.nn.functional.linear(x.double(), layer.weight.double(), layer.bias.double())
        assert got.dtype == torch.bfloat16
        assert (got.double() - exact).abs().max() <= (want.double() - exact).abs().max() * 1.01
    torch._dynamo.reset()


@needs_bf16_dots
def test_bf16_linear_of_a_computed_activation_reads_it_narrow() -> None:
    """A layer's bf16 input computed in the same graph (a residual add and a scale, as after a norm): the widening
    of it stays out of the producing kernel (graph-kernel-cluster), so the product reads the bf16 values on the
    dot products rather than an f32 copy of them; the same bound and the reference interpreter's values."""
    m, k, n = 48, 96, 64
    graph = f"""
func.func @layer(%x: tensor<{m}x{k}xbf16>, %r: tensor<{m}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>, %b: tensor<{n}xf32>)
    -> tensor<{m}x{n}xbf16> {{
  %s = "graph.add"(%x, %r) : (tensor<{m}x{k}xbf16>, tensor<{m}x{k}xbf16>) -> tensor<{m}x{k}xbf16>
  %h = "graph.mul"(%s, %s) : (tensor<{m}x{k}xbf16>, tensor<{m}x{k}xbf16>) -> tensor<{m}x{k}xbf16>
  %hf = "graph.cast"(%h) : (tensor<{m}x{k}xbf16>) -> tensor<{m}x{k}xf32>
  %wf = "graph.cast"(%w) : (tensor<{n}x{k}xbf16>) -> tensor<{n}x{k}xf32>
  %p = "graph.matmul"(%hf, %wf) {{transpose_b = true}}
      : (tensor<{m}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<{m}x{n}xf32>
  %y = "graph.add"(%p, %b) : (tensor<{m}x{n}xf32>, tensor<{n}xf32>) -> tensor<{m}x{n}xf32>
  %o = "graph.cast"(%y) : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xbf16>
  return %o : tensor<{m}x{n}xbf16>
}}"""
    executable = graphfuse.compile(graph)
    llvm_ir = executable.function.llvm_dialect_ir
    assert DOT_INTRINSIC in llvm_ir
    x, w, b = _inputs(m, k, n, seed=3)
    r, _, _ = _inputs(m, k, n, seed=4)
    (out,) = executable(x, r, w, b)
    (want,) = executable.reference(x, r, w, b)
    s = (x.astype(np.float32) + r.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    h = (s * s).astype(ml_dtypes.bfloat16)
    exact = h.astype(np.float64) @ w.astype(np.float64).T + b
    magnitude = np.abs(h.astype(np.float64)) @ np.abs(w.astype(np.float64)).T
    bound = k * 2.0**-24 * magnitude + np.abs(exact) * 2.0**-8 + 2.0**-133
    assert np.all(np.abs(out.astype(np.float64) - exact) <= bound)
    step = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(np.asarray(want, np.float64)), 2.0**-126))) - 7)
    assert np.all(np.abs(out.astype(np.float64) - np.asarray(want, np.float64)) <= step)
