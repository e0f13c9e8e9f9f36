// The lowering passes run directly on a zero-size graph: tile-kernel-rows must leave the kernel untiled (with a
// reason in its log), not abort.
// COMMAND: graphfuse-opt %s --pass-pipeline=builtin.module(graph-kernel-fusion,outline-fused-ops,graph-to-linalg,fuse-kernel-loops,tile-kernel-rows)
// EXIT: 0
func.func @f(%a: tensor<4x0xf32>, %g: tensor<0xf32>, %b: tensor<0xf32>) -> tensor<4x0xf32> {
  %0 = "graph.layer_norm"(%a, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
