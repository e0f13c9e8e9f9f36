// graphfuse-run (compile) and graphfuse-opt see the same verifier error for a recursive function.
// COMMAND: graphfuse-run %s
// EXPECT: %s:14:8: error: recursive calls: @f -> @g -> @h -> @f; graphfuse does not support recursion (a cycle in the call graph)

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @h(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @h(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
