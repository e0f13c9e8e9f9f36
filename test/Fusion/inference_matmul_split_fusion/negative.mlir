// What inference_matmul_split_fusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --inference_matmul_split_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --inference_matmul_split_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// CHECK-LABEL: func.func @rows
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.split"
// WHY: pattern MatMulSplit not fused at {{.*}}: the split cuts axis 0, not the last axis of the rank-2 matmul result
func.func @rows(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1:2 = "graph.split"(%0) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4x32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>)
  return %1#0, %1#1 : tensor<2x32xf32>, tensor<2x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_shared
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.split"
// WHY: pattern MatMulSplit not fused at {{.*}}: the matmul result is also a function result
func.func @matmul_shared(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1:2 = "graph.split"(%0) {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return %1#0, %1#1, %0 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x32xf32>
}

// -----

// Two splits of one matmul: neither is its only user.
// CHECK-LABEL: func.func @two_splits
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.split"
// WHY: pattern MatMulSplit not fused at {{.*}}: the matmul result has other users
// WHY: pattern MatMulSplit not fused at {{.*}}: the matmul result has other users
func.func @two_splits(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1:2 = "graph.split"(%0) {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %2:2 = "graph.split"(%0) {axis = 1 : i64, sizes = array<i64: 8, 24>} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x24xf32>)
  return %1#0, %2#0 : tensor<4x16xf32>, tensor<4x8xf32>
}
