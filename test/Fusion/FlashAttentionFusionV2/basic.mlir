// softmax(q k^T / c [+ mask]) @ v, or q scaled before the first matmul => graph.flash_attention.
// RUN: graphfuse-opt --split-input-file --FlashAttentionFusionV2 %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --FlashAttentionFusionV2 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// Division of the scores by sqrt(d) = 8: scale 1/8.
// CHECK-LABEL: func.func @divided
// CHECK-NEXT:    %[[R:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2, %arg3) {scale = 1.250000e-01 : f32} : (tensor<2x8x64xf16>, tensor<2x8x64xf16>, tensor<2x8x64xf16>, tensor<8x8xf16>) -> tensor<2x8x64xf16>
// CHECK-NEXT:    return %[[R]]
// COUNTS: GraphFusionPass[FlashAttentionFusionV2]: pattern=FlashAttentionV2, matched_times=1, effected_times=1
func.func @divided(%q: tensor<2x8x64xf16>, %k: tensor<2x8x64xf16>, %v: tensor<2x8x64xf16>, %mask: tensor<8x8xf16>) -> tensor<2x8x64xf16> {
  %c = arith.constant dense<8.000000e+00> : tensor<f16>
  %kt = "graph.transpose"(%k) {perm = array<i64: 0, 2, 1>} : (tensor<2x8x64xf16>) -> tensor<2x64x8xf16>
  %0 = "graph.matmul"(%q, %kt) : (tensor<2x8x64xf16>, tensor<2x64x8xf16>) -> tensor<2x8x8xf16>
  %1 = "graph.div"(%0, %c) : (tensor<2x8x8xf16>, tensor<f16>) -> tensor<2x8x8xf16>
  %2 = "graph.add"(%1, %mask) : (tensor<2x8x8xf16>, tensor<8x8xf16>) -> tensor<2x8x8xf16>
  %3 = "graph.softmax"(%2) {axis = -1 : i64} : (tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %4 = "graph.matmul"(%3, %v) : (tensor<2x8x8xf16>, tensor<2x8x64xf16>) -> tensor<2x8x64xf16>
  return %4 : tensor<2x8x64xf16>
}

// -----

// q multiplied by the scale before the scores matmul (either operand order), and q divided by a constant.
// CHECK-LABEL: func.func @prescaled_q
// CHECK-NEXT:    %[[A:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2) {scale = 2.500000e-01 : f32} : (tensor<4x16xf32>, tensor<6x16xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2, %arg3) {scale = 2.500000e-01 : f32} : (tensor<4x16xf32>, tensor<6x16xf32>, tensor<6x8xf32>, tensor<1x6xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[C:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2) {scale = 0.333333343 : f32} : (tensor<4x16xf32>, tensor<6x16xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
// COUNTS: GraphFusionPass[FlashAttentionFusionV2]: pattern=FlashAttentionV2, matched_times=3, effected_times=3
func.func @prescaled_q(%q: tensor<4x16xf32>, %k: tensor<6x16xf32>, %v: tensor<6x8xf32>, %mask: tensor<1x6xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %three = arith.constant dense<3.000000e+00> : tensor<1x1xf32>
  %0 = "graph.mul"(%q, %c) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %1 = "graph.matmul"(%0, %k) {transpose_b = true} : (tensor<4x16xf32>, tensor<6x16xf32>) -> tensor<4x6xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.mul"(%c, %q) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %5 = "graph.matmul"(%4, %k) {transpose_b = true} : (tensor<4x16xf32>, tensor<6x16xf32>) -> tensor<4x6xf32>
  %6 = "graph.add"(%mask, %5) : (tensor<1x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %7 = "graph.softmax"(%6) {axis = 1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %8 = "graph.matmul"(%7, %v) : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  %9 = "graph.div"(%q, %three) : (tensor<4x16xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
  %10 = "graph.matmul"(%9, %k) {transpose_b = true} : (tensor<4x16xf32>, tensor<6x16xf32>) -> tensor<4x6xf32>
  %11 = "graph.softmax"(%10) {axis = -1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %12 = "graph.matmul"(%11, %v) : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  return %3, %8, %12 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
