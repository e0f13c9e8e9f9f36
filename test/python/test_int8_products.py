"""int8 products on the host's dot-product instructions (AVX512_VNNI's vpdpbusd): quant_batch_matmul compiled and
run against the exact integer product, with and without the instructions."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse.lowering import host

INT8_DOTS = "int8" in host.dot_products()
needs_int8_dots = pytest.mark.skipif(not INT8_DOTS, reason="needs a CPU with AVX512_VNNI (vpdpbusd)")
DOT_INTRINSIC = "llvm.x86.avx512.vpdpbusd.512"


def _qbmm_graph(m: int, k: int, n: int, transposed: bool = False, dtype: str = "f16",
                weight: np.ndarray | None = None) -> str:
    """quant_batch_matmul of x [m, k] by an int8 weight ([k, n], or [n, k] read transposed), per-column f32
    scales, the result in ``dtype``; the weight an argument, or the constant ``weight``."""
    w_shape = f"{n}x{k}" if transposed else f"{k}x{n}"
    flag = ", transpose_x2 = true" if transposed else ""
    if weight is None:
        head, w = f"%w: tensor<{w_shape}xi8>, ", "%w"
        constant = ""
    else:
        values = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in weight)
        head, w = "", "%wc"
        constant = f"%wc = arith.constant dense<[{values}]> : tensor<{w_shape}xi8>\n  "
    return f"""
func.func @qbmm(%x: tensor<{m}x{k}xi8>, {head}%s: tensor<{n}xf32>) -> tensor<{m}x{n}x{dtype}> {{
  {constant}%r = "graph.quant_batch_matmul"(%x, {w}, %s) {{dtype = "{dtype}"{flag}}}
      : (tensor<{m}x{k}xi8>, tensor<{w_shape}xi8>, tensor<{n}xf32>) -> tensor<{m}x{n}x{dtype}>
  return %r : tensor<{m}x{n}x{dtype}>
}}"""


def _inputs(m: int, k: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (k, n), dtype=np.int8)
    return x, w, (rng.random(n, dtype=np.float32) * 1e-4).astype(np.float32)


def _exact(x: np.ndarray, w: np.ndarray, scale: np.ndarray, dtype: type = np.float16) -> np.ndarray:
    """The integer product wrapped to i32 (as the op's i32 sums wrap), converted to f32, scaled, rounded once."""
    product = (x.astype(np.int64) @ w.astype(np.int64)).astype(np.uint64).astype(np.uint32).view(np.int32)
    return (product.astype(np.float32) * scale).astype(dtype)


def _run(text: str, *args: np.ndarray) -> tuple[np.ndarray, str]:
    executable = graphfuse.compile(text)
    (out,) = executable(*args)
    return np.asarray(out), executable.function.llvm_dialect_ir


@needs_int8_dots
@pytest.mark.parametrize("m, k, n", [(64, 256, 96), (37, 132, 72), (1, 4, 32), (130, 512, 200)])
@pytest.mark.parametrize("transposed", [False, True])
def test_quant_batch_matmul_on_dot_products_is_exact(m: int, k: int, n: int, transposed: bool) -> None:
    """Odd shapes included: rows not a multiple of the register tile, 33 quads of K, columns past the last whole
    panel (72 = 64 + 8, 200 = 3 x 64 + 8), a single quad; the weight as given and read transposed.  Integer sums
    are exact: the result is the exact product's, bit for bit."""
    x, w, scale = _inputs(m, k, n)
    out, llvm_ir = _run(_qbmm_graph(m, k, n, transposed), x, np.ascontiguousarray(w.T) if transposed else w, scale)
    assert DOT_INTRINSIC in llvm_ir
    np.testing.assert_array_equal(out, _exact(x, w, scale))


@needs_int8_dots
def test_quant_batch_matmul_extremes_and_wrapping() -> None:
    """-128 and 127 everywhere (A's -128 is the byte vpdpbusd reads as 0 once shifted; the compensation of B's
    columns is largest), and a K long enough that the i32 sums wrap (135168 x -128 x -128 > 2^31)."""
    m, k, n = 6, 1024, 64
    x = np.full((m, k), -128, np.int8)
    x[1] = 127
    x[2, ::2] = 127
    w = np.full((k, n), -128, np.int8)
    w[:, 1::3] = 127
    scale = np.full(n, 2.0**-20, np.float32)
    out, _ = _run(_qbmm_graph(m, k, n, dtype="f32"), x, w, scale)
    np.testing.assert_array_equal(out, _exact(x, w, scale, np.float32))
    m, k, n = 2, 135168, 16
    x, w = np.full((m, k), -128, np.int8), np.full((k, n), -128, np.int8)
    w[:, 3] = 1
    scale = np.ones(n, np.float32)
    out, _ = _run(_qbmm_graph(m, k, n, dtype="f32"), x, w, scale)
    want = _exact(x, w, scale, np.float32)
    assert want[0, 0] < 0  # 2^31 + 2^30 + ... wrapped past i32's largest value
    np.testing.assert_array_equal(out, want)


@needs_int8_dots
def test_quant_batch_matmul_constant_weight() -> None:
    """A constant weight is packed into quads, and its columns' compensation summed, when compiling."""
    m, k, n = 20, 64, 40
    x, w, scale = _inputs(m, k, n, seed=1)
    w[0] = -128
    out, llvm_ir = _run(_qbmm_graph(m, k, n, weight=w), x, scale)
    assert DOT_INTRINSIC in llvm_ir
    np.testing.assert_array_equal(out, _exact(x, w, scale))


def test_quant_batch_matmul_without_whole_quads_or_dot_products(monkeypatch: pytest.MonkeyPatch) -> None:
    """K = 6 (no whole quads), and any K with the dot products turned off: the i32 product, no dot instruction,
    the same exact result."""
    x, w, scale = _inputs(37, 6, 72)
    out, llvm_ir = _run(_qbmm_graph(37, 6, 72), x, w, scale)
    assert DOT_INTRINSIC not in llvm_ir
    np.testing.assert_array_equal(out, _exact(x, w, scale))
    monkeypatch.setenv(host.DOT_PRODUCTS_VARIABLE, "none")
    host.dot_products.cache_clear()
    try:
        x, w, scale = _inputs(37, 132, 72)
        out, llvm_ir = _run(_qbmm_graph(37, 132, 72), x, w, scale)
    finally:
        monkeypatch.delenv(host.DOT_PRODUCTS_VARIABLE)
        host.dot_products.cache_clear()
    assert DOT_INTRINSIC not in llvm_ir
    np.testing.assert_array_equal(out, _exact(x, w, scale))


@needs_int8_dots
def test_quant_batch_matmul_against_the_reference_interpreter() -> None:
    """The compiled product of quads is the reference interpreter's, bit for bit."""
    m, k, n = 37, 132, 72
    executable = graphfuse.compile(_qbmm_graph(m, k, n))
    x, w, scale = _inputs(m, k, n, seed=2)
    (out,) = executable(x, w, scale)
    (want,) = executable.reference(x, w, scale)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(want))


@pytest.mark.parametrize("flags, machine, found", [
    ({"avx512f", "avx512_bf16", "avx512_vnni"}, "x86_64", {"bf16", "int8"}),
    ({"avx512f", "avx512_vnni"}, "x86_64", {"int8"}),
    ({"avx2", "avx_vnni"}, "x86_64", set()),  # AVX-VNNI's 256-bit form alone: not used
    ({"avx512f", "avx512_vnni"}, "aarch64", set()),
])
def test_dot_products_come_from_the_cpu_flags(flags: set[str], machine: str, found: set[str]) -> None:
    assert host.dot_products_from_flags(flags, machine) == found


@pytest.mark.parametrize("choice, chosen", [("none", set()), ("int8", {"int8"}), ("bf16+int8", {"bf16", "int8"})])
def test_dot_products_option_values(choice: str, chosen: set[str]) -> None:
    assert host.dot_product_choice_problem("p", choice) is None
    assert host.chosen_dot_products(choice) == chosen


@pytest.mark.parametrize("choice", ["int4", "bf16+", "", "bf16,int8"])
def test_dot_products_option_rejects(choice: str) -> None:
    problem = host.dot_product_choice_problem("p", choice)
    assert problem is not None and "instruction sets joined by '+'" in problem


def test_int8_weight_only_linear_through_the_backend_strict() -> None:
    """A bf16 linear layer with an int8 weight and a scale per output (weight-only quantization, as gpt-fast
    writes it: linear(x, weight.to(x.dtype)) * scales), a decoded token's row and a prompt's 40: compiled whole
    (fallback="error"), within eager's error of the exact product."""
    import torch

    from bench.generate import int8_weight_linear_class
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    torch.manual_seed(0)
    layer = int8_weight_linear_class()(torch.nn.Linear(256, 160).to(torch.bfloat16))
    compiled = torch.compile(layer, backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
    for rows in (1, 40):
        x = torch.randn(rows, 256).to(torch.bfloat16)
        with torch.no_grad():
            got, want = compiled(x), layer(x)
        weight = layer.weight.double() * layer.scales.double()[:, None]
        exact = x.double() @ weight.T + layer.bias.double()
        assert got.dtype == torch.bfloat16
        assert (got.double() - exact).abs().max() <= (want.double() - exact).abs().max() * 1.01 + 1e-6
