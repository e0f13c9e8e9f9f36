"""The reference interpreter on whole graphs, checked against independent numpy code."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.builder import GraphBuilder, ModuleBuilder
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.run_checks import IntegerDivisionByZeroError
from graphfuse.dialect.verifier import verify_operation

BF16 = ml_dtypes.bfloat16


def parse(text: str) -> ir.Module:
    """Parse ``text`` in a fresh context with the graph dialect; it must pass graph-verify."""
    context = make_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
    assert verify_operation(module.operation) == []
    return module


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# --------------------------------------------------------------------------
# Whole graphs from text.

MLP = """
func.func @mlp(%x: tensor<?x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>,
               %w2: tensor<8x3xf32>, %b2: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = "graph.matmul"(%x, %w1) : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.add"(%0, %b1) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %2 = "graph.relu"(%1) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = "graph.matmul"(%2, %w2) : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %4 = "graph.bias_add"(%3, %b2) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
"""


def _mlp_reference(x, w1, b1, w2, b2):
    hidden = np.maximum(x.astype(np.float64) @ w1 + b1, 0.0)
    return hidden @ w2 + b2


def test_two_layer_mlp(rng) -> None:
    module = parse(MLP)
    params = [_f32(rng, 4, 8), _f32(rng, 8), _f32(rng, 8, 3), _f32(rng, 3)]
    x = _f32(rng, 5, 4)
    (out,) = run_function(module, [x, *params])
    assert out.dtype == np.float32 and out.shape == (5, 3)
    np.testing.assert_allclose(out, _mlp_reference(x, *params), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch", [1, 3])
def test_dynamic_batch_runs_with_different_shapes(rng, batch: int) -> None:
    module = parse(MLP)
    params = [_f32(rng, 4, 8), _f32(rng, 8), _f32(rng, 8, 3), _f32(rng, 3)]
    x = _f32(rng, batch, 4)
    (out,) = run_function(module, [x, *params])
    assert out.shape == (batch, 3)
    np.testing.assert_allclose(out, _mlp_reference(x, *params), rtol=1e-5, atol=1e-5)


def test_one_module_runs_twice_with_two_shapes(rng) -> None:
    module = parse(MLP)
    params = [_f32(rng, 4, 8), _f32(rng, 8), _f32(rng, 8, 3), _f32(rng, 3)]
    for batch in (2, 7):
        x = _f32(rng, batch, 4)
        (out,) = run_function(module, [x, *params])
        np.testing.assert_allclose(out, _mlp_reference(x, *params), rtol=1e-5, atol=1e-5)


ATTENTION = """
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %scale = arith.constant dense<0.353553385> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
  %1 = "graph.mul"(%0, %scale) : (tensor<2x4x6xf32>, tensor<f32>) -> tensor<2x4x6xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<2x4x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
  return %3 : tensor<2x4x8xf32>
}
"""


def test_attention_block(rng) -> None:
    q, k, v = _f32(rng, 2, 4, 8), _f32(rng, 2, 6, 8), _f32(rng, 2, 6, 8)
    (out,) = run_function(parse(ATTENTION), [q, k, v])
    scores = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k) / math.sqrt(8)
    expected = np.einsum("bqk,bkd->bqd", _softmax(scores), v)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


LAYER_NORM_GELU = """
func.func @block(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %0 = "graph.layer_norm"(%x, %g, %b) {epsilon = 1.000000e-03 : f32}
      : (tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  %1 = "graph.gelu"(%0) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %2 = "graph.gelu"(%0) {approximate = "tanh"} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %1, %2 : tensor<3x8xf32>, tensor<3x8xf32>
}
"""


def test_layer_norm_then_gelu(rng) -> None:
    x = (_f32(rng, 3, 8) * 4 + 10).astype(np.float32)
    g, b = _f32(rng, 8), _f32(rng, 8)
    exact, approx = run_function(parse(LAYER_NORM_GELU), [x, g, b])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x64 - mean) / np.sqrt(var + 1e-3) * g + b
    np.testing.assert_allclose(exact, 0.5 * y * (1 + _erf(y / math.sqrt(2))), rtol=1e-5, atol=1e-5)
    tanh = 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y**3)))
    np.testing.assert_allclose(approx, tanh, rtol=1e-5, atol=1e-5)


SPLIT_CONCAT = """
func.func @shuffle(%x: tensor<2x8xi32>) -> (tensor<2x8xi32>, tensor<2x8xi32>) {
  %0:4 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 1, 3, 2, 2>}
      : (tensor<2x8xi32>) -> (tensor<2x1xi32>, tensor<2x3xi32>, tensor<2x2xi32>, tensor<2x2xi32>)
  %1 = "graph.concat"(%0#0, %0#1, %0#2, %0#3) {axis = 1 : i64}
      : (tensor<2x1xi32>, tensor<2x3xi32>, tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x8xi32>
  %2 = "graph.concat"(%0#1, %0#0, %0#3, %0#2) {axis = -1 : i64}
      : (tensor<2x3xi32>, tensor<2x1xi32>, tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x8xi32>
  return %1, %2 : tensor<2x8xi32>, tensor<2x8xi32>
}
"""


def test_split_concat_round_trip() -> None:
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    same, shuffled = run_function(parse(SPLIT_CONCAT), [x])
    np.testing.assert_array_equal(same, x)
    pieces = np.split(x, [1, 4, 6], axis=1)
    np.testing.assert_array_equal(shuffled, np.concatenate([pieces[1], pieces[0], pieces[3], pieces[2]], axis=1))
    assert shuffled.dtype == np.int32


CALL = """
func.func private @scale_shift(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.mul"(%x, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.sub"(%0, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @scale_shift(%x, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @scale_shift(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


def test_call_to_private_function(rng) -> None:
    module = parse(CALL)
    x, s = _f32(rng, 4), _f32(rng, 4)
    first = x * s - s
    expected = first * x - x
    (out,) = run_function(module, [x, s])  # the private function is skipped as the default entry
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    (direct,) = run_function(module, [x, s], entry="scale_shift")
    np.testing.assert_allclose(direct, first, rtol=1e-6)


MULTI = """
func.func @stats(%x: tensor<3x5xf32>)
    -> (tensor<3xf32>, tensor<3x1xf32>, tensor<3x5xi8>, tensor<3xf32>, tensor<3x5xi1>) {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<3x5xf32>) -> tensor<3xf32>
  %1 = "graph.reduce_mean"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<3x5xf32>) -> tensor<3x1xf32>
  %2:2 = "graph.dynamic_quant"(%x) : (tensor<3x5xf32>) -> (tensor<3x5xi8>, tensor<3xf32>)
  %3 = "graph.greater"(%x, %1) : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xi1>
  return %0, %1, %2#0, %2#1, %3 : tensor<3xf32>, tensor<3x1xf32>, tensor<3x5xi8>, tensor<3xf32>, tensor<3x5xi1>
}
"""


def test_multiple_results(rng) -> None:
    x = _f32(rng, 3, 5)
    mx, mean, q, scale, above = run_function(parse(MULTI), [x])
    np.testing.assert_allclose(mx, x.max(axis=1))
    np.testing.assert_allclose(mean, x.mean(axis=1, keepdims=True), rtol=1e-6)
    expected_scale = np.abs(x).max(axis=1) / 127
    np.testing.assert_allclose(scale, expected_scale, rtol=1e-6)
    assert q.dtype == np.int8 and above.dtype == np.bool_
    np.testing.assert_array_equal(q, np.clip(np.rint(x / expected_scale[:, None]), -128, 127).astype(np.int8))
    np.testing.assert_array_equal(above, x > x.mean(axis=1, keepdims=True))


CONSTANTS = """
func.func @consts(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2x3xi32>) {
  %splat = arith.constant dense<2.500000e-01> : tensor<2x3xf32>
  %table = arith.constant dense<[[1.0, -2.0, 3.5], [0.0, 4.0, -0.5]]> : tensor<2x3xf32>
  %mask = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %bf = arith.constant dense<[1.5, -2.0, 0.1]> : tensor<3xbf16>
  %bfs = arith.constant dense<3.0> : tensor<bf16>
  %ints = arith.constant dense<[[7, -8, 9]]> : tensor<1x3xi32>
  %yes = arith.constant dense<true> : tensor<2x1xi1>
  %0 = "graph.mul"(%x, %splat) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "graph.add"(%0, %table) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "graph.select"(%mask, %1, %x) : (tensor<3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "graph.cast"(%2) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %4 = "graph.mul"(%3, %bf) : (tensor<2x3xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
  %5 = "graph.add"(%4, %bfs) : (tensor<2x3xbf16>, tensor<bf16>) -> tensor<2x3xbf16>
  %zero = arith.constant dense<0> : tensor<i32>
  %6 = "graph.select"(%yes, %ints, %zero) : (tensor<2x1xi1>, tensor<1x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  return %2, %5, %6 : tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2x3xi32>
}
"""


def test_arith_constant_inputs() -> None:
    x = np.array([[4.0, 8.0, -4.0], [1.0, 2.0, 3.0]], np.float32)
    selected, bf, ints = run_function(parse(CONSTANTS), [x])
    table = np.array([[1.0, -2.0, 3.5], [0.0, 4.0, -0.5]], np.float32)
    expected = np.where([True, False, True], x * 0.25 + table, x)
    np.testing.assert_allclose(selected, expected)
    assert bf.dtype == BF16 and bf.shape == (2, 3)
    bf_consts = np.array([1.5, -2.0, 0.1], BF16).astype(np.float32)
    step = (expected.astype(BF16).astype(np.float32) * bf_consts).astype(BF16).astype(np.float32)
    np.testing.assert_array_equal(bf.astype(np.float32), (step + 3.0).astype(BF16).astype(np.float32))
    np.testing.assert_array_equal(ints, np.array([[7, -8, 9], [7, -8, 9]], np.int32))
    assert ints.dtype == np.int32


def test_constant_only_function() -> None:
    module = parse(
        """
        func.func @k() -> (tensor<4xi1>, tensor<2xbf16>, tensor<2x2xi8>) {
          %0 = arith.constant dense<[false, true, true, false]> : tensor<4xi1>
          %1 = arith.constant dense<[-1.25, 3.0e+02]> : tensor<2xbf16>
          %2 = arith.constant dense<-3> : tensor<2x2xi8>
          return %0, %1, %2 : tensor<4xi1>, tensor<2xbf16>, tensor<2x2xi8>
        }
        """
    )
    mask, bf, i8 = run_function(module, [])
    np.testing.assert_array_equal(mask, [False, True, True, False])
    assert mask.dtype == np.bool_
    assert bf.dtype == BF16
    np.testing.assert_array_equal(bf.astype(np.float32), [-1.25, 300.0])
    np.testing.assert_array_equal(i8, np.full((2, 2), -3, np.int8))


def test_f16_and_integer_graph() -> None:
    module = parse(
        """
        func.func @mixed(%a: tensor<4xf16>, %i: tensor<4xi64>) -> (tensor<4xf16>, tensor<4xi64>) {
          %0 = "graph.square"(%a) : (tensor<4xf16>) -> tensor<4xf16>
          %1 = "graph.cast"(%0) : (tensor<4xf16>) -> tensor<4xi64>
          %2 = "graph.div"(%1, %i) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
          return %0, %2 : tensor<4xf16>, tensor<4xi64>
        }
        """
    )
    a = np.array([1.5, -2.5, 3.0, 10.0], np.float16)
    i = np.array([2, -2, 5, 7], np.int64)
    sq, q = run_function(module, [a, i])
    assert sq.dtype == np.float16 and q.dtype == np.int64
    np.testing.assert_array_equal(sq, a * a)
    # C-style integer division: truncation toward zero; x / 0 raises, located at the op.
    np.testing.assert_array_equal(q, [1, -3, 1, 14])
    with pytest.raises(IntegerDivisionByZeroError, match=r":5:\d+: error: integer division by zero in graph.div"):
        run_function(module, [a, np.array([2, -2, 0, 7], np.int64)])


# --------------------------------------------------------------------------
# Graphs from the builder.


def test_built_mlp_with_constant_weights(rng) -> None:
    w1, b1, w2, b2 = _f32(rng, 4, 8), _f32(rng, 8), _f32(rng, 8, 3), _f32(rng, 3)
    b = GraphBuilder("mlp")
    x = b.arg((None, 4))
    hidden = b.relu(x @ b.const(w1) + b.const(b1))
    b.ret(b.bias_add(hidden @ b.const(w2), b.const(b2)))
    assert verify_operation(b.module.operation) == []
    for batch in (1, 4):
        xs = _f32(rng, batch, 4)
        (out,) = run_function(b.module, [xs])
        np.testing.assert_allclose(out, _mlp_reference(xs, w1, b1, w2, b2), rtol=1e-5, atol=1e-5)


def test_built_attention_and_call(rng) -> None:
    mb = ModuleBuilder()
    head = mb.function("head", private=True)
    q, k, v = head.arg((4, 8)), head.arg((6, 8)), head.arg((6, 8))
    scores = head.matmul(q, k, transpose_b=True) * (1 / math.sqrt(8))
    head.ret(head.softmax(scores) @ v)
    main = mb.function("main")
    q2, k2, v2 = main.arg((4, 8)), main.arg((6, 8)), main.arg((6, 8))
    main.ret(q2, k2, v2)
    assert verify_operation(mb.module.operation) == []
    inputs = [_f32(rng, 4, 8), _f32(rng, 6, 8), _f32(rng, 6, 8)]
    (out,) = run_function(mb.module, inputs, entry="head")
    expected = _softmax(inputs[0].astype(np.float64) @ inputs[1].T / math.sqrt(8)) @ inputs[2]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # The default entry is the first public function: main, which returns its inputs.
    outs = run_function(mb.module, inputs)
    for got, want in zip(outs, inputs, strict=True):
        np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------
# Inputs: errors, layouts, empty arrays.

ADD = """
func.func @first(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @second(%a: tensor<2xi32>) -> tensor<2xi32> {
  return %a : tensor<2xi32>
}
"""


def test_wrong_number_of_inputs() -> None:
    with pytest.raises(GraphfuseError, match=r"function 'first' takes 2 inputs, got 1"):
        run_function(parse(ADD), [np.zeros((2, 3), np.float32)])
    with pytest.raises(GraphfuseError, match=r"function 'second' takes 1 inputs, got 0"):
        run_function(parse(ADD), [], entry="second")


def test_wrong_dtype() -> None:
    with pytest.raises(GraphfuseError) as info:
        run_function(parse(ADD), [np.zeros((2, 3), np.float64), np.zeros(3, np.float32)])
    assert str(info.value) == "error: input #0 has numpy dtype float64, expected f32 for tensor<?x3xf32>"
    with pytest.raises(GraphfuseError, match=r"input #1 is tensor<3xf16> \(float16 array of shape \(3,\)\), "
                                             r"expected tensor<3xf32>"):
        run_function(parse(ADD), [np.zeros((2, 3), np.float32), np.zeros(3, np.float16)])


def test_wrong_shape() -> None:
    with pytest.raises(GraphfuseError) as info:
        run_function(parse(ADD), [np.zeros((2, 4), np.float32), np.zeros(3, np.float32)])
    assert "input #0 is tensor<2x4xf32> (float32 array of shape (2, 4)), expected tensor<?x3xf32>" in str(info.value)
    with pytest.raises(GraphfuseError, match=r"input #1 is tensor<1x3xf32>"):
        run_function(parse(ADD), [np.zeros((2, 3), np.float32), np.zeros((1, 3), np.float32)])


def test_unknown_entry_lists_functions() -> None:
    with pytest.raises(GraphfuseError) as info:
        run_function(parse(ADD), [], entry="third")
    assert "no function named 'third' in the module (functions: first, second)" in str(info.value)


def test_non_contiguous_inputs_work() -> None:
    base = np.arange(24, dtype=np.float32).reshape(6, 4)
    a = base[::2, 1:]  # strided rows, offset columns: shape (3, 3)
    b = np.arange(6, dtype=np.float32)[::2]
    assert not a.flags.c_contiguous and not b.flags.c_contiguous
    (out,) = run_function(parse(ADD), [a, b])
    np.testing.assert_array_equal(out, a + b)
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert not fortran.flags.c_contiguous
    (out,) = run_function(parse(ADD), [fortran, b])
    np.testing.assert_array_equal(out, fortran + b)


def test_zero_size_inputs_work() -> None:
    (out,) = run_function(parse(ADD), [np.zeros((0, 3), np.float32), np.ones(3, np.float32)])
    assert out.shape == (0, 3) and out.dtype == np.float32
    module = parse(
        """
        func.func @norm(%x: tensor<?x4xf32>, %g: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi8>, tensor<?xf32>) {
          %0 = "graph.layer_norm"(%x, %g, %g) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
          %1 = "graph.softmax"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
          %2:2 = "graph.dynamic_quant"(%1) : (tensor<?x4xf32>) -> (tensor<?x4xi8>, tensor<?xf32>)
          return %1, %2#0, %2#1 : tensor<?x4xf32>, tensor<?x4xi8>, tensor<?xf32>
        }
        """
    )
    y, q, s = run_function(module, [np.zeros((0, 4), np.float32), np.ones(4, np.float32)])
    assert (y.shape, q.shape, s.shape) == ((0, 4), (0, 4), (0,))


def test_empty_dynamic_axis_of_reduce_max_is_a_clear_error() -> None:
    module = parse(
        """
        func.func @m(%x: tensor<2x?xf32>) -> tensor<2xf32> {
          %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<2x?xf32>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }
        """
    )
    with pytest.raises(GraphfuseError, match=r"'graph.reduce_max' cannot reduce an empty axis with reduce_max"):
        run_function(module, [np.zeros((2, 0), np.float32)])


def test_dynamic_dims_that_disagree_at_run_time() -> None:
    module = parse(
        """
        func.func @mm(%a: tensor<2x?xf32>, %b: tensor<?x3xf32>) -> tensor<2x3xf32> {
          %0 = "graph.matmul"(%a, %b) : (tensor<2x?xf32>, tensor<?x3xf32>) -> tensor<2x3xf32>
          return %0 : tensor<2x3xf32>
        }
        """
    )
    with pytest.raises(GraphfuseError) as info:
        run_function(module, [np.zeros((2, 4), np.float32), np.zeros((5, 3), np.float32)])
    message = str(info.value)
    assert "'graph.matmul' contraction dimensions differ" in message
    assert message.startswith("-:3:")  # the op's location in the parsed text
