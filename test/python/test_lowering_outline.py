"""outline-fused-ops takes lone elementwise ops into a compound op's kernel; the CPU level's cluster list
takes the elementwise activations.  At opt level 2 nothing of these graphs is left a loop nest of its own,
and the compiled numbers match the reference interpreter."""

from __future__ import annotations

import re

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.builder import GraphBuilder


def _top_level_graph_ops(fused_graph: str, entry: str) -> list[str]:
    body = fused_graph.split(f"func.func @{entry}(", 1)[1].split("\n  }\n", 1)[0]
    return re.findall(r'"(graph\.[a-z_0-9]+)"', body)


def _check(module, entry: str, *arrays: np.ndarray) -> graphfuse.Executable:
    executable = graphfuse.compile(module, entry=entry, opt_level=2)
    for got, want in zip(executable(*arrays), executable.reference(*arrays), strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    return executable


@pytest.mark.parametrize("shape", [(64, 128), (3, 5, 33)])
def test_scaled_masked_softmax_is_one_kernel(shape: tuple[int, ...]) -> None:
    b = GraphBuilder("attention_probs")
    scores, mask = b.arg(shape), b.arg(shape[-1:])
    scaled = b.add(b.mul(scores, b.const(np.float32(0.125))), mask)
    b.ret(b.cast(b.softmax(scaled, axis=-1), "f16"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    m = np.where(rng.random(shape[-1:]) < 0.2, -1e4, 0).astype(np.float32)
    executable = _check(b.module, "attention_probs", x, m)
    assert _top_level_graph_ops(executable.fused_graph, "attention_probs") == []
    assert 'graph.kernel_ops = ["graph.mul", "graph.add", "graph.softmax", "graph.cast"]' in executable.fused_graph


def test_silu_joins_the_gated_product() -> None:
    b = GraphBuilder("mlp")
    gate, up = b.arg((32, 48)), b.arg((32, 48))
    b.ret(b.mul(b.silu(gate), up))
    rng = np.random.default_rng(1)
    executable = _check(b.module, "mlp", *(rng.standard_normal((32, 48), dtype=np.float32) for _ in range(2)))
    assert _top_level_graph_ops(executable.fused_graph, "mlp") == []


def test_a_producer_used_twice_stays_outside() -> None:
    b = GraphBuilder("twice")
    x = b.arg((16, 40))
    scaled = b.mul(x, x)
    b.ret(b.softmax(scaled, axis=-1), scaled)
    executable = _check(b.module, "twice", np.random.default_rng(2).standard_normal((16, 40), dtype=np.float32))
    assert "graph.softmax" not in _top_level_graph_ops(executable.fused_graph, "twice")


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_batched_rows_product_takes_its_epilogue_in_2d(dtype: str) -> None:
    """A linear layer on [batch, seq, hidden] with a gelu (falcon's matmul_gelu, 3-D by 2-D) runs as the 2-D
    product of the rows, its gelu applied per block of C (the lit test batched-rows.mlir shows the reshapes):
    the same numbers as the reference interpreter, odd row and column counts included."""
    import ml_dtypes

    b = GraphBuilder("falcon_mlp")
    x, w = b.arg((3, 37, 64), dtype), b.arg((64, 72), dtype)
    b.ret(b.matmul_gelu(x, w, approximate="none"))
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((3, 37, 64), dtype=np.float32), rng.standard_normal((64, 72), dtype=np.float32)]
    if dtype == "bf16":
        arrays = [a.astype(ml_dtypes.bfloat16) for a in arrays]
    executable = graphfuse.compile(b.module, entry="falcon_mlp", opt_level=2)
    assert 'func.func @falcon_mlp' in executable.fused_graph
    assert re.search(r'"graph\.matmul_gelu"\([^)]*\) [^:]*: \(tensor<111x64x', executable.fused_graph)
    (got,), (want,) = executable(*arrays), executable.reference(*arrays)
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if dtype == "f32":
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    else:  # the f32 sums in another order may round the product to the next bf16 value: one step of it through
        # gelu (slope at most 1.13), and one step of the result
        product = np.asarray(arrays[0], np.float64) @ np.asarray(arrays[1], np.float64)
        step = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(want), 2.0**-126))) - 7)
        assert np.all(np.abs(got - want) <= 1.13 * 2.0**-7 * np.abs(product) + step)
