"""The collective ops' reference semantics: every rank of a group run at once (graphfuse.run_function_ranks)."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphfuseError, parse_module, run_function, run_function_ranks

COLLECTIVES = """func.func @f(%x: tensor<4x6xf32>)
    -> (tensor<4x6xf32>, tensor<4x12xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = "graph.all_reduce"(%x) {group_size = 2 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %1 = "graph.all_gather"(%x) {axis = -1 : i64, group_size = 2 : i64} : (tensor<4x6xf32>) -> tensor<4x12xf32>
  %2 = "graph.reduce_scatter"(%x) {group_size = 2 : i64} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  %3 = "graph.all_reduce"(%x) {group_size = 2 : i64, reduction = "max"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %4 = "graph.all_reduce"(%x) {group_size = 2 : i64, reduction = "min"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0, %1, %2, %3, %4 : tensor<4x6xf32>, tensor<4x12xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
"""


def _inputs(ranks: int, shape: tuple[int, ...], dtype=np.float32) -> list[np.ndarray]:
    return [np.random.default_rng(rank).standard_normal(shape).astype(dtype) for rank in range(ranks)]


def test_each_collective_over_two_ranks() -> None:
    xs = _inputs(2, (4, 6))
    results = run_function_ranks(parse_module(COLLECTIVES, "c.mlir"), [[x] for x in xs])
    total = xs[0] + xs[1]
    for rank, (summed, gathered, scattered, largest, smallest) in enumerate(results):
        assert np.array_equal(summed, total)
        assert np.array_equal(gathered, np.concatenate(xs, axis=1))
        assert np.array_equal(scattered, total[2 * rank:2 * rank + 2])
        assert np.array_equal(largest, np.maximum(*xs)) and np.array_equal(smallest, np.minimum(*xs))


def test_sums_in_rank_order_in_the_operand_type() -> None:
    """f16 adds in f32, rounded once at the end; integers wrap."""
    text = """func.func @f(%x: tensor<3xf16>, %i: tensor<2xi8>) -> (tensor<3xf16>, tensor<2xi8>) {
  %0 = "graph.all_reduce"(%x) {group_size = 4 : i64} : (tensor<3xf16>) -> tensor<3xf16>
  %1 = "graph.all_reduce"(%i) {group_size = 4 : i64} : (tensor<2xi8>) -> tensor<2xi8>
  return %0, %1 : tensor<3xf16>, tensor<2xi8>
}
"""
    xs = _inputs(4, (3,), np.float16)
    ints = [np.array([100, -100], np.int8)] * 4
    results = run_function_ranks(parse_module(text), [[x, i] for x, i in zip(xs, ints, strict=True)])
    want = xs[0].astype(np.float32)
    for x in xs[1:]:
        want = want + x.astype(np.float32)
    want = want.astype(np.float16)
    assert all(np.array_equal(r[0], want) for r in results)
    assert all(np.array_equal(r[1], np.array([-112, 112], np.int8)) for r in results)  # 400 wraps to -112


def test_row_parallel_matmul_all_reduce_is_the_whole_matmul() -> None:
    """Each rank holds a slice of the contraction: the summed partial products are the full product."""
    text = """func.func @f(%a: tensor<8x3xf32>, %b: tensor<3x5xf32>, %bias: tensor<5xf32>) -> tensor<8x5xf32> {
  %0 = "graph.matmul_all_reduce"(%a, %b, %bias) {group_size = 2 : i64}
      : (tensor<8x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}
"""
    rng = np.random.default_rng(7)
    a, b, bias = rng.standard_normal((8, 6)), rng.standard_normal((6, 5)), rng.standard_normal(5)
    a, b, bias = (v.astype(np.float32) for v in (a, b, bias))
    ranks = [[a[:, 3 * r:3 * r + 3].copy(), b[3 * r:3 * r + 3].copy(), bias] for r in range(2)]
    results = run_function_ranks(parse_module(text), ranks)
    np.testing.assert_allclose(results[0][0], a @ b + bias, rtol=1e-5, atol=1e-6)
    assert np.array_equal(results[0][0], results[1][0])


def test_one_module_per_rank() -> None:
    """After sharding each rank has its own graph (its own weights)."""
    text = """func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = arith.constant dense<[WEIGHT, WEIGHT]> : tensor<2xf32>
  %0 = "graph.mul"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
"""
    modules = [parse_module(text.replace("WEIGHT", w)) for w in ("2.0", "3.0")]
    x = np.ones(2, np.float32)
    results = run_function_ranks(modules, [[x], [x]])
    assert np.array_equal(results[1][0], np.full(2, 5.0, np.float32))


def test_errors() -> None:
    module = parse_module(COLLECTIVES, "c.mlir")
    xs = _inputs(3, (4, 6))
    with pytest.raises(GraphfuseError, match="runs over 2 ranks and needs every rank's value"):
        run_function(module, [xs[0]])
    with pytest.raises(GraphfuseError, match="runs over group 'world' of 2 ranks, but 3 ranks run"):
        run_function_ranks(module, [[x] for x in xs])
    with pytest.raises(GraphfuseError, match="2 modules for 3 ranks"):
        run_function_ranks([module, module], [[x] for x in xs])
    with pytest.raises(GraphfuseError, match="communicates with 2 ranks: a single-process compile cannot run it"):
        graphfuse.compile(module)
    from graphfuse.lowering.npu.compiler import compile_npu

    with pytest.raises(GraphfuseError, match="communicates with 2 ranks: the emulated NPU is one device"):
        compile_npu(module)
    # A rank that fails (a wrong input) releases the others waiting at the collective: an error, not a hang.
    with pytest.raises(GraphfuseError, match="input #0"):
        run_function_ranks(module, [[xs[0]], [xs[1][:2]]])


def test_one_rank_groups_compile_and_stay_through_dce() -> None:
    text = COLLECTIVES.replace("group_size = 2", "group_size = 1").replace("tensor<4x12xf32>", "tensor<4x6xf32>")
    text = text.replace("tensor<2x6xf32>", "tensor<4x6xf32>")
    module = parse_module(text)
    x = _inputs(1, (4, 6))[0]
    got = graphfuse.compile(module)(x)
    assert all(np.array_equal(g, x) for g in got)
    dead = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.all_reduce"(%x) {group_size = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
"""
    cleaned = parse_module(dead)
    graphfuse.run_pipeline(cleaned, "builtin.module(graph-dce)")
    assert "graph.all_reduce" in str(cleaned) and "graph.exp" not in str(cleaned)
