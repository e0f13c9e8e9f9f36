// What matmul_elem_relu_fusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --matmul_elem_relu_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --matmul_elem_relu_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// CHECK-LABEL: func.func @matmul_shared
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.relu"
// CHECK-NEXT:    "graph.relu"
// WHY: pattern MatMulRelu not fused at {{.*}}: the matmul result has other users
// WHY: pattern MatMulRelu not fused at {{.*}}: the matmul result has other users
func.func @matmul_shared(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.relu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.relu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1, %2 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_returned
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.relu"
// WHY: pattern MatMulRelu not fused at {{.*}}: the matmul result is also a function result
func.func @matmul_returned(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.relu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Something between the matmul and the relu.
// CHECK-LABEL: func.func @not_adjacent
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.neg"
// CHECK-NEXT:    "graph.relu"
func.func @not_adjacent(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.neg"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.relu"(%1) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %2 : tensor<4x32xf32>
}
