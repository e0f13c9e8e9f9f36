// Transposes the matmul cannot take in; the debug log says why.
// RUN: graphfuse-opt --split-input-file --transpose_matmul_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --transpose_matmul_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The transpose moves the batch axis.
// CHECK-LABEL: func.func @batch_axis
// CHECK:         "graph.transpose"
// WHY: pattern TransposeMatMul not fused at {{.*}}: the transpose of operand 1 moves more than the last two axes
func.func @batch_axis(%a: tensor<2x8x16xf32>, %b: tensor<16x2x8xf32>) -> tensor<2x8x8xf32> {
  %0 = "graph.transpose"(%b) {perm = array<i64: 1, 0, 2>} : (tensor<16x2x8xf32>) -> tensor<2x16x8xf32>
  %1 = "graph.matmul"(%a, %0) : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  return %1 : tensor<2x8x8xf32>
}

// -----

// The transposed value is also returned.
// CHECK-LABEL: func.func @shared
// CHECK:         "graph.transpose"
// WHY: pattern TransposeMatMul not fused at {{.*}}: the transpose of operand 0 is also a function result
func.func @shared(%a: tensor<6x4xf32>, %b: tensor<6x5xf32>) -> (tensor<4x5xf32>, tensor<4x6xf32>) {
  %0 = "graph.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %1 = "graph.matmul"(%0, %b) : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  return %1, %0 : tensor<4x5xf32>, tensor<4x6xf32>
}
