// exp(x)^2 then a matmul: overflows to Inf for x > 44 (enable_debug_mode names the kernel).
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%0, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.matmul"(%1, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
