"""The dynamic-shape checks' plan (lowering/shape_checks.py): a call infers the ops that read a value of dynamic
shape alone, and tells the same shapes and the same errors as inferring every op."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.lowering.shape_checks import ShapePlan

#: A decoding step's shape: a static chain on the token's [1, 64] (a norm's and a linear layer's ops), and the
#: attention's ops over the cache's length ``?`` (the cache and the new key concatenated, scores, softmax).
DECODE_STEP = """
func.func @step(%x: tensor<1x64xf32>, %w: tensor<64x64xf32>, %cache: tensor<?x64xf32>)
    -> (tensor<1x64xf32>, tensor<?x64xf32>) {
  %s = "graph.mul"(%x, %x) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  %n = "graph.add"(%s, %x) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  %k = "graph.matmul"(%n, %w) : (tensor<1x64xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
  %keys = "graph.concat"(%cache, %k) {axis = 0 : i64} : (tensor<?x64xf32>, tensor<1x64xf32>) -> tensor<?x64xf32>
  %scores = "graph.matmul"(%k, %keys) {transpose_b = true} : (tensor<1x64xf32>, tensor<?x64xf32>) -> tensor<1x?xf32>
  %p = "graph.softmax"(%scores) {axis = -1 : i64} : (tensor<1x?xf32>) -> tensor<1x?xf32>
  %o = "graph.matmul"(%p, %keys) : (tensor<1x?xf32>, tensor<?x64xf32>) -> tensor<1x64xf32>
  return %o, %keys : tensor<1x64xf32>, tensor<?x64xf32>
}"""


def _plan(text: str, entry: str) -> ShapePlan:
    return ShapePlan(graphfuse.parse_module(text), entry)


def test_a_call_infers_the_ops_of_dynamic_shape_alone() -> None:
    """Of the seven ops, the four reading the cache's length (concat, scores, softmax, the weighted sum) run
    per call; the shapes are those of inferring every op, at every length."""
    plan = _plan(DECODE_STEP, "step")
    assert plan.ops_per_call == 4
    for length in (0, 1, 7, 300):
        shapes = [(1, 64), (64, 64), (length, 64)]
        assert plan.result_shapes(shapes) == plan.result_shapes(shapes, every_op=True) == [(1, 64), (length + 1, 64)]


def test_a_static_graph_infers_nothing_per_call() -> None:
    plan = _plan("""
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}""", "f")
    assert plan.ops_per_call == 0
    assert plan.result_shapes([(4, 8)]) == [(4, 8)]


def test_disagreeing_sizes_are_the_same_errors() -> None:
    """Operands of different dynamic sizes, and a dynamic size that would broadcast: the errors name the op, with
    the plan as when every op is inferred."""
    plan = _plan("""
func.func @f(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>, %c: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %e = "graph.exp"(%c) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = "graph.add"(%a, %b) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}""", "f")
    assert plan.ops_per_call == 1
    for every_op in (False, True):
        with pytest.raises(GraphfuseError, match=r"called with inputs of shapes \(3, 8\), \(5, 8\), \(4, 8\): "
                                                 r"'graph\.add' operands .* are not broadcast-compatible"):
            plan.result_shapes([(3, 8), (5, 8), (4, 8)], every_op=every_op)
        with pytest.raises(GraphfuseError, match=r"operand #1 of 'graph\.add' \(tensor<\?x8xf32>\) has size 1 in "
                                                 r"its dynamic dimension 0, broadcast to 3"):
            plan.result_shapes([(3, 8), (1, 8), (4, 8)], every_op=every_op)


def test_a_static_input_of_another_size_is_checked_op_by_op() -> None:
    """An input of static type given another size: every op is inferred again, and the one it breaks says so."""
    plan = _plan(DECODE_STEP, "step")
    with pytest.raises(GraphfuseError, match=r"'graph\.(mul|add|matmul|concat)'"):
        plan.result_shapes([(2, 32), (64, 64), (5, 64)])


def test_through_the_compiled_function_at_new_lengths() -> None:
    """The JIT's executable sizes its dynamic result by the plan at each new length: the values of the graph."""
    executable = graphfuse.compile(DECODE_STEP)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32) / 8
    for length in (3, 4, 40):
        cache = rng.standard_normal((length, 64)).astype(np.float32)
        out, keys = executable(x, w, cache)
        want_out, want_keys = executable.reference(x, w, cache)
        assert keys.shape == (length + 1, 64)
        np.testing.assert_allclose(keys, want_keys, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out, want_out, rtol=1e-4, atol=1e-5)
