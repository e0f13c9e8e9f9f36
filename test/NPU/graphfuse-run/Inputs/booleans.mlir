// Masks combined and selected, fused into kernels at opt levels 1-3 (found by the structure fuzzer): the
// booleans are held as bytes in GM and on chip.
func.func @fuzz(%arg0: tensor<3x4xf16>, %arg1: tensor<3x4xi1>, %arg3: tensor<3x4xf16>) -> (tensor<3x4xf16>, tensor<3x4xi1>) {
  %0 = "graph.logical_not"(%arg1) : (tensor<3x4xi1>) -> tensor<3x4xi1>
  %1 = "graph.logical_not"(%arg1) : (tensor<3x4xi1>) -> tensor<3x4xi1>
  %2 = "graph.logical_or"(%0, %1) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %3 = "graph.logical_or"(%2, %0) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %4 = "graph.logical_and"(%0, %2) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %5 = "graph.select"(%4, %arg3, %arg0) : (tensor<3x4xi1>, tensor<3x4xf16>, tensor<3x4xf16>) -> tensor<3x4xf16>
  %7 = "graph.logical_and"(%4, %3) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %13 = "graph.logical_and"(%7, %0) : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  return %5, %13 : tensor<3x4xf16>, tensor<3x4xi1>
}
