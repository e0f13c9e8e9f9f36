func.func @silu_rms(%x: tensor<2x16xf32>, %g: tensor<16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %s = "graph.sigmoid"(%x) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %y = "graph.mul"(%s, %x) : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %sq = "graph.mul"(%x, %x) : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = "graph.reduce_mean"(%sq) {axes = array<i64: -1>, keep_dims = true} : (tensor<2x16xf32>) -> tensor<2x1xf32>
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %a = "graph.add"(%m, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %r = "graph.rsqrt"(%a) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<2x16xf32>, tensor<2x1xf32>) -> tensor<2x16xf32>
  %z = "graph.mul"(%n, %g) : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %y, %z : tensor<2x16xf32>, tensor<2x16xf32>
}
