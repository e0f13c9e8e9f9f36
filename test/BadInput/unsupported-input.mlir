// What the MLIR verifier accepts but graphfuse cannot process: a tensor encoding on a graph op, a constant
// whose values live in a (here missing) resource blob.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:7:8: error: 'graph.exp' does not take tensors with an encoding, got tensor<4xf32, "enc">
// EXPECT: %s:14:8: error: tensor constants must be written dense<...>; graphfuse cannot read dense_resource<blob> : tensor<4xf32>
func.func @f(%a: tensor<4xf32, "enc">) -> tensor<4xf32, "enc"> {
  %0 = "graph.exp"(%a) : (tensor<4xf32, "enc">) -> tensor<4xf32, "enc">
  return %0 : tensor<4xf32, "enc">
}

// -----

func.func @f() -> tensor<4xf32> {
  %0 = arith.constant dense_resource<blob> : tensor<4xf32>
  %1 = "graph.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
