// What FlashAttentionFusionV2 must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --FlashAttentionFusionV2 %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --FlashAttentionFusionV2 %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Division by a value that is not a constant, by zero; a constant divided by the scores (no match).
// CHECK-LABEL: func.func @bad_divisors
// CHECK-NOT:     "graph.flash_attention"
// WHY-DAG: pattern FlashAttentionV2 not fused at {{.*}}: the scores are not divided by a finite non-zero constant scalar
// WHY-DAG: pattern FlashAttentionV2 not fused at {{.*}}: the scores are not divided by a finite non-zero constant scalar
func.func @bad_divisors(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>, %d: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.div"(%0, %d) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %5 = "graph.div"(%4, %zero) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %6 = "graph.softmax"(%5) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %7 = "graph.matmul"(%6, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %8 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %9 = "graph.div"(%zero, %8) : (tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %10 = "graph.softmax"(%9) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %11 = "graph.matmul"(%10, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3, %7, %11 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Unscaled scores, and a q scaled by a non-constant.
// CHECK-LABEL: func.func @unscaled
// CHECK-NOT:     "graph.flash_attention"
// WHY-DAG: pattern FlashAttentionV2 not fused at {{.*}}: the scores are not scaled (no constant mul/div of the scores or of q)
// WHY-DAG: pattern FlashAttentionV2 not fused at {{.*}}: q is not multiplied by a constant scalar
func.func @unscaled(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>, %s: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = "graph.matmul"(%1, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = "graph.mul"(%q, %s) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %4 = "graph.matmul"(%3, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %5 = "graph.softmax"(%4) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = "graph.matmul"(%5, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %2, %6 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// The pre-scaled q and the scaled scores are also function results.
// CHECK-LABEL: func.func @shared
// CHECK-NOT:     "graph.flash_attention"
// WHY-DAG: pattern FlashAttentionV2 not fused at {{.*}}: the graph.mul result (scaled q) is also a function result
// WHY-DAG: pattern FlashAttentionV2 not fused at {{.*}}: the graph.div result (scaled scores) is also a function result
func.func @shared(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>) {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.mul"(%q, %c) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %1 = "graph.matmul"(%0, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %5 = "graph.div"(%4, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %6 = "graph.softmax"(%5) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %7 = "graph.matmul"(%6, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3, %0, %7, %5 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>
}

// -----

// V1's form (scores multiplied by a constant) is not V2's: no match, nothing logged.
// CHECK-LABEL: func.func @v1_form
// CHECK-NOT:     "graph.flash_attention"
// WHY-NOT: FlashAttentionV2 not fused
func.func @v1_form(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %v) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
