// A softmax written as small ops (SoftmaxFusionPass's pattern) and a split into contiguous pieces
// (FusionVirtualOpSetSwitch marks it _no_task), for the seed's fusion_switch.cfg examples.
func.func @seed_switch(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %m = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = "graph.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %e = "graph.exp"(%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "graph.reduce_sum"(%e) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %p = "graph.div"(%e, %s) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %0:2 = "graph.split"(%p) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.neg"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}
