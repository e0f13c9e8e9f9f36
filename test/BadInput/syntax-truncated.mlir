// The file ends in the middle of an op.
// EXPECT: %s:4:44: error: expected non-function type
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tens