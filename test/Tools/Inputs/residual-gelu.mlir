// A residual gelu block used by graphfuse-run.test: x + gelu(x * w + b), with a boolean mask result.
func.func @block(%x: tensor<16x32xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xi1>) {
  %0 = "graph.mul"(%x, %w) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %1 = "graph.add"(%0, %b) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = "graph.gelu"(%1) {approximate = "tanh"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %3 = "graph.add"(%x, %2) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %4 = "graph.greater"(%3, %x) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xi1>
  return %3, %4 : tensor<16x32xf32>, tensor<16x32xi1>
}

func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
