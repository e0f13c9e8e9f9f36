func.func @double_neg(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
