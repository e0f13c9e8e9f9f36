// Dialect constraints: a missing required attribute, operands that do not broadcast, i1 where a float is needed.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:7:8: error: 'graph.reduce_sum' op attribute "axes" is expected but not provided
// EXPECT: %s:14:8: error: 'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible
// EXPECT: %s:21:8: error: 'graph.exp' operand tensor<4xi1> must have a floating-point element type (f32, f16, bf16)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "graph.reduce_sum"(%a) {keep_dims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%a: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "graph.exp"(%a) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
