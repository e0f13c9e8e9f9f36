func.func @split_rows(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %1 = "graph.exp"(%0#0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.neg"(%0#1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}
