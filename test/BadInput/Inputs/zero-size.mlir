func.func @forward(%x: tensor<0x8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<0x8xf32>, tensor<8xf32>) -> tensor<0x8xf32>
  %1 = "graph.exp"(%0) : (tensor<0x8xf32>) -> tensor<0x8xf32>
  %2 = "graph.reduce_sum"(%1) {axes = array<i64: 0>, keep_dims = false} : (tensor<0x8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
