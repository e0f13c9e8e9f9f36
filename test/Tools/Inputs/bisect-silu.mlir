// An MLP whose activations are written x * sigmoid(x); the third has an odd width (7).
// bisect-plugin.py plants a silu fusion that is wrong on odd widths only.
func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x7xf32>, %w3: tensor<7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<4x16xf32> {
  %s0 = "graph.sigmoid"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %a0 = "graph.mul"(%x, %s0) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %m1 = "graph.matmul"(%a0, %w1) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %s1 = "graph.sigmoid"(%m1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %a1 = "graph.mul"(%m1, %s1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %m2 = "graph.matmul"(%a1, %w2) : (tensor<4x16xf32>, tensor<16x7xf32>) -> tensor<4x7xf32>
  %s2 = "graph.sigmoid"(%m2) : (tensor<4x7xf32>) -> tensor<4x7xf32>
  %a2 = "graph.mul"(%m2, %s2) : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  %m3 = "graph.matmul"(%a2, %w3) : (tensor<4x7xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  %s3 = "graph.sigmoid"(%m3) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %a3 = "graph.mul"(%s3, %m3) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = "graph.add"(%a3, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = "graph.layer_norm"(%r, %gamma, %beta) {begin_norm_axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
