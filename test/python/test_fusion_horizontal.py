"""matmul_weight_concat_fusion: products of one input by constant weights merge into one product and a split;
the compiled numbers match the reference interpreter on the unfused graph, and the pass is switchable."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.pipelines.fusion.horizontal import MatmulWeightConcatFusion


def _projections(transpose_b: bool, sizes: tuple[int, ...], k: int = 40, rows: tuple[int, ...] = (2, 7)):
    rng = np.random.default_rng(sum(sizes))
    b = GraphBuilder("projections")
    x = b.arg((*rows, k))
    outs = []
    for n in sizes:
        w = rng.standard_normal((n, k) if transpose_b else (k, n), dtype=np.float32)
        y = b.matmul(x, b.const(w), transpose_b=True) if transpose_b else b.matmul(x, b.const(w))
        outs.append(b.exp(b.mul(y, b.const(np.float32(0.05)))))
    b.ret(*outs)
    return b.module, rng.standard_normal((*rows, k), dtype=np.float32)


@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("sizes", [(24, 24, 24), (33, 17)])
def test_merged_products_match_the_reference(transpose_b: bool, sizes: tuple[int, ...]) -> None:
    module, x = _projections(transpose_b, sizes)
    executable = graphfuse.compile(module, opt_level=2)
    assert executable.fused_graph.count('"graph.matmul_split"(') == 1
    assert '"graph.matmul"(' not in executable.fused_graph
    for got, want in zip(executable(x), executable.reference(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_switched_off_the_products_stay_apart() -> None:
    module, x = _projections(True, (24, 24))
    executable = graphfuse.compile(module, opt_level=2, pipeline=None,
                                   graph_kernel_flags=f"--disable_pass={MatmulWeightConcatFusion.name}")
    assert executable.fused_graph.count('"graph.matmul"(') == 2
    for got, want in zip(executable(x), executable.reference(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_opt_level_zero_merges_nothing() -> None:
    module, _ = _projections(True, (8, 8))
    assert graphfuse.compile(module, opt_level=0).fused_graph.count('"graph.matmul"(') == 2
