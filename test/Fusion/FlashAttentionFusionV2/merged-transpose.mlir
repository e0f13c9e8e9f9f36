// k^T written as one transpose that also splits heads (what graph-canonicalize makes of two transposes):
// the pass rebuilds k = transpose(x, perm with its last two entries swapped) and fuses.
// RUN: graphfuse-opt --FlashAttentionFusionV2 %s | FileCheck %s

// CHECK-LABEL: func.func @merged
// CHECK:         %[[K:.*]] = "graph.transpose"(%arg1) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK:         "graph.flash_attention"(%arg0, %[[K]], %arg2) {scale = 5.000000e-01 : f32}
// CHECK-NOT:     "graph.softmax"
func.func @merged(%q: tensor<1x2x8x4xf32>, %kx: tensor<1x8x2x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %kt = "graph.transpose"(%kx) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x4xf32>) -> tensor<1x2x4x8xf32>
  %s = "graph.matmul"(%q, %kt) : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  %c = arith.constant dense<2.0> : tensor<f32>
  %d = "graph.div"(%s, %c) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %p = "graph.softmax"(%d) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = "graph.matmul"(%p, %v) : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
