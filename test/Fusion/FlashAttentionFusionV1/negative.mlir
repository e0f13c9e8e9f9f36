// What FlashAttentionFusionV1 must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --FlashAttentionFusionV1 %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --FlashAttentionFusionV1 %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The probabilities are also returned.
// CHECK-LABEL: func.func @probs_returned
// CHECK:         "graph.softmax"
// CHECK-NOT:     "graph.flash_attention"
// WHY: pattern FlashAttentionV1 not fused at {{.*}}: the graph.softmax result (probabilities) is also a function result
func.func @probs_returned(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x8xf32>) {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3, %2 : tensor<8x16xf32>, tensor<8x8xf32>
}

// -----

// The raw scores have another user.
// CHECK-LABEL: func.func @scores_shared
// CHECK-NOT:     "graph.flash_attention"
// WHY: pattern FlashAttentionV1 not fused at {{.*}}: the graph.matmul result (scores) has other users
func.func @scores_shared(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x8xf32>) {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = "graph.exp"(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3, %4 : tensor<8x16xf32>, tensor<8x8xf32>
}

// -----

// The softmax normalizes the queries' axis.
// CHECK-LABEL: func.func @softmax_axis
// CHECK-NOT:     "graph.flash_attention"
// WHY: pattern FlashAttentionV1 not fused at {{.*}}: the softmax runs along axis 0, not the last axis of the rank-2 scores
func.func @softmax_axis(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = 0 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// A scale that is not a constant, and a constant that is not one scalar.
// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT:     "graph.flash_attention"
// WHY-DAG: pattern FlashAttentionV1 not fused at {{.*}}: the scores are not multiplied by a constant scalar
// WHY-DAG: pattern FlashAttentionV1 not fused at {{.*}}: the scores are not multiplied by a constant scalar
func.func @scale_not_constant(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>, %s: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]> : tensor<8xf32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %s) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %5 = "graph.mul"(%4, %c) : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  %6 = "graph.softmax"(%5) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %7 = "graph.matmul"(%6, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3, %7 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// q k (no transpose of k) and q^T k^T do not fuse. A transpose of any perm is k^T for
// k = transpose(x, perm with its last two entries swapped): that one fuses, k rebuilt as a transpose.
// CHECK-LABEL: func.func @not_k_transposed
// CHECK:         %[[K:.*]] = "graph.transpose"(%arg2) {perm = array<i64: 1, 2, 0>}
// CHECK:         "graph.flash_attention"(%arg3, %[[K]], %arg3)
// CHECK-NOT:     "graph.flash_attention"
// WHY-DAG: pattern FlashAttentionV1 not fused at {{.*}}: the scores matmul multiplies by k, not by k transposed (transpose_b or a transpose of the last dims)
// WHY-DAG: pattern FlashAttentionV1 not fused at {{.*}}: the scores matmul transposes q (transpose_a)
func.func @not_k_transposed(%q: tensor<8x8xf32>, %k: tensor<8x8xf32>, %k3: tensor<8x2x8xf32>, %q3: tensor<2x8x8xf32>) -> (tensor<8x8xf32>, tensor<2x8x8xf32>, tensor<8x8xf32>) {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %k) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = "graph.transpose"(%k3) {perm = array<i64: 1, 0, 2>} : (tensor<8x2x8xf32>) -> tensor<2x8x8xf32>
  %4 = "graph.matmul"(%q3, %t) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %5 = "graph.mul"(%4, %c) : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %6 = "graph.softmax"(%5) {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %7 = "graph.matmul"(%6, %q3) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %8 = "graph.matmul"(%q, %k) {transpose_a = true, transpose_b = true} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %9 = "graph.mul"(%8, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %10 = "graph.softmax"(%9) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %11 = "graph.matmul"(%10, %k) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3, %7, %11 : tensor<8x8xf32>, tensor<2x8x8xf32>, tensor<8x8xf32>
}

// -----

// The second matmul reads v transposed; the mask enlarges the scores.
// CHECK-LABEL: func.func @bad_tail
// CHECK-NOT:     "graph.flash_attention"
// WHY-DAG: pattern FlashAttentionV1 not fused at {{.*}}: the matmul with v transposes an operand
// WHY-DAG: pattern FlashAttentionV1 not fused at {{.*}}: the mask broadcasts the scores to a larger shape
func.func @bad_tail(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<16x8xf32>, %mask: tensor<2x8x8xf32>) -> (tensor<8x16xf32>, tensor<2x8x16xf32>) {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) {transpose_b = true} : (tensor<8x8xf32>, tensor<16x8xf32>) -> tensor<8x16xf32>
  %4 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %5 = "graph.mul"(%4, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %6 = "graph.add"(%5, %mask) : (tensor<8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %7 = "graph.softmax"(%6) {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %8 = "graph.matmul"(%7, %k) : (tensor<2x8x8xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
  return %3, %8 : tensor<8x16xf32>, tensor<2x8x16xf32>
}

// -----

// V2's forms (division, pre-scaled q) and an unscaled attention are not V1's: no match, nothing logged.
// CHECK-LABEL: func.func @other_forms
// CHECK-NOT:     "graph.flash_attention"
// WHY-NOT: FlashAttentionV1 not fused
func.func @other_forms(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = arith.constant dense<4.000000e+00> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.div"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %5 = "graph.softmax"(%4) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = "graph.matmul"(%5, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3, %6 : tensor<8x16xf32>, tensor<8x16xf32>
}
