func.func @add_norm(%x: tensor<16x64xf32>, %r: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %g = arith.constant dense<1.5> : tensor<64xf32>
  %b = arith.constant dense<0.25> : tensor<64xf32>
  %s = "graph.add"(%x, %r) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = "graph.layer_norm"(%s, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %z = "graph.relu"(%y) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %z : tensor<16x64xf32>
}
