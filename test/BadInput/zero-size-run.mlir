// Zero-size dimensions: graph-fold-empty-tensors takes the empty tensors out of the graph before it is compiled
// (the CPU code generator's loop tiling asserts on empty iteration spaces), so graphfuse-run compiles and checks it.
// COMMAND: graphfuse-run %s --check
// EXIT: 0
func.func @f(%a: tensor<4x0xf32>, %g: tensor<0xf32>, %b: tensor<0xf32>) -> tensor<4x0xf32> {
  %0 = "graph.layer_norm"(%a, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
