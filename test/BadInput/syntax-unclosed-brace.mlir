// The function body is never closed.
// EXPECT: %s:5:28: error: expected operation name in quotes
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
