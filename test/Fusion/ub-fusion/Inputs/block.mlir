// A block with something for every UB fusion pass: a matmul epilogue, a reduction, an elementwise chain,
// a reshape the automatic pass takes, and a split along axis 0.
func.func @block(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %g: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<64xf32>, tensor<8xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = "graph.relu"(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = "graph.mul"(%1, %g) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %3:2 = "graph.split"(%2) {axis = 0 : i64, sizes = array<i64: 4, 4>} : (tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %4 = "graph.exp"(%3#0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %5 = "graph.neg"(%4) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %6 = "graph.reshape"(%3#1) : (tensor<4x16xf32>) -> tensor<64xf32>
  %7 = "graph.tanh"(%6) : (tensor<64xf32>) -> tensor<64xf32>
  %8 = "graph.square"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %9 = "graph.reduce_sum"(%8) {axes = array<i64: 1>, keep_dims = false} : (tensor<8x16xf32>) -> tensor<8xf32>
  %10 = "graph.sqrt"(%9) : (tensor<8xf32>) -> tensor<8xf32>
  return %5, %7, %10 : tensor<4x16xf32>, tensor<64xf32>, tensor<8xf32>
}
