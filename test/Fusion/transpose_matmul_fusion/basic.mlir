// transpose_matmul_fusion: a transpose of the last two axes feeding a matmul becomes the matmul's transpose flag;
// off by default (MindSpore's log example shows it disabled), enable_pass turns it on.
// RUN: graphfuse-opt --split-input-file --transpose_matmul_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-flags=--enable_pass=transpose_matmul_fusion --graph-fusion %s | FileCheck %s --check-prefix=ENABLED
// RUN: graphfuse-opt --split-input-file --log-level=info --graph-fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF

// The second operand transposed (attention's q @ k^T), batch axis kept.
// CHECK-LABEL: func.func @scores
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg0, %arg1) {transpose_b = true} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x8xf32>
// CHECK-NEXT:    return %[[M]]
// ENABLED-LABEL: func.func @scores
// ENABLED-NEXT:    "graph.matmul"(%arg0, %arg1) {transpose_b = true}
// OFF: graph kernel pass transpose_matmul_fusion is disabled
func.func @scores(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>) -> tensor<2x8x8xf32> {
  %0 = "graph.transpose"(%k) {perm = array<i64: 0, 2, 1>} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %1 = "graph.matmul"(%q, %0) : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  return %1 : tensor<2x8x8xf32>
}

// -----

// Both operands; the first already had transpose_a, which the transpose cancels.
// CHECK-LABEL: func.func @both
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg0, %arg1) {transpose_b = true} : (tensor<4x6xf16>, tensor<5x6xf16>) -> tensor<4x5xf16>
// CHECK-NEXT:    return %[[M]]
func.func @both(%a: tensor<4x6xf16>, %b: tensor<5x6xf16>) -> tensor<4x5xf16> {
  %0 = "graph.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<4x6xf16>) -> tensor<6x4xf16>
  %1 = "graph.transpose"(%b) {perm = array<i64: 1, 0>} : (tensor<5x6xf16>) -> tensor<6x5xf16>
  %2 = "graph.matmul"(%0, %1) {transpose_a = true} : (tensor<6x4xf16>, tensor<6x5xf16>) -> tensor<4x5xf16>
  return %2 : tensor<4x5xf16>
}
