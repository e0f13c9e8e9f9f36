// Attributes of the wrong kind or with a value outside the allowed set.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:9:8: error: 'graph.reduce_sum' attribute 'keep_dims' must be a bool (true or false), got 1 : i64
// EXPECT: %s:16:8: error: 'graph.transpose' attribute 'perm' must be an array<i64: ...>, got array<i32: 1, 0>
// EXPECT: %s:23:8: error: expected base attribute 'builtin.dense_array' but got 'builtin.dense_int_or_fp_elements'
// EXPECT: %s:30:8: error: 'graph.gelu' attribute 'approximate' must be one of "none", "tanh", got "fast"
// EXPECT: %s:37:8: error: 'graph.conv2d' attribute 'groups' must be positive, got 0
func.func @bool_given_int(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @i32_array(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.transpose"(%a) {perm = array<i32: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @dense_instead_of_array(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.transpose"(%a) {perm = dense<[1, 0]> : tensor<2xi64>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @unknown_enum_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.gelu"(%a) {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @zero_groups(%a: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "graph.conv2d"(%a, %w) {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
