// Zero-size dimensions: graph passes and the reference interpreter handle them; the CPU code
// generator refuses them up front (its loop tiling asserts on empty iteration spaces).
// COMMAND: graphfuse-run %s --check
// EXPECT: %s:5:14: error: tensor<4x0xf32> has a zero-size dimension: the CPU code generator does not compile empty tensors (the reference interpreter, graphfuse.run_function, runs them)
func.func @f(%a: tensor<4x0xf32>, %g: tensor<0xf32>, %b: tensor<0xf32>) -> tensor<4x0xf32> {
  %0 = "graph.layer_norm"(%a, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
