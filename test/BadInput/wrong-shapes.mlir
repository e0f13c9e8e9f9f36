// Shapes that the ops' rules reject.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:11:8: error: 'graph.reshape' operand tensor<8xf32> has 8 elements but result type tensor<3x3xf32> has 9
// EXPECT: %s:18:10: error: 'graph.split' sizes [4, 5] sum to 9, not to the size 8 of dimension 0 of tensor<8xf32>
// EXPECT: %s:25:8: error: 'graph.transpose' perm [0, 0] is not a permutation of [0, 1]
// EXPECT: %s:32:8: error: 'graph.matmul' contraction dimensions differ: operand a tensor<4x8xf32> has 8, operand b tensor<7x3xf32> has 7
// EXPECT: %s:39:8: error: 'graph.reduce_sum' axes 9223372036854775807 is out of range for rank 2
// EXPECT: %s:46:8: error: 'graph.slice' strides [0] must be positive
// EXPECT: %s:53:23: error: inferred shape of elements literal ([2]) does not match type ([4])
func.func @reshape_count(%a: tensor<8xf32>) -> tensor<3x3xf32> {
  %0 = "graph.reshape"(%a) : (tensor<8xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @split_sizes(%a: tensor<8xf32>) -> tensor<4xf32> {
  %0:2 = "graph.split"(%a) {axis = 0 : i64, sizes = array<i64: 4, 5>} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @not_a_permutation(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.transpose"(%a) {perm = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) -> tensor<4x3xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @axis_out_of_range(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 9223372036854775807>, keep_dims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @zero_stride(%a: tensor<8xf32>) -> tensor<4xf32> {
  %0 = "graph.slice"(%a) {start = array<i64: 0>, limit = array<i64: 8>, strides = array<i64: 0>} : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_literal_shape() -> tensor<4xf32> {
  %0 = arith.constant dense<[1.0, 2.0]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
