// What MatMulBiasAddFusionPass must not fuse (the same rules as matmul_elem_biasadd_fusion).
// RUN: graphfuse-opt --split-input-file --MatMulBiasAddFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --MatMulBiasAddFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// CHECK-LABEL: func.func @matmul_shared
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.bias_add"
// CHECK-NEXT:    "graph.relu"
// WHY: MatMulBiasAddFusionPass: pattern MatMulBiasAdd not fused at {{.*}}: the matmul result has other users
func.func @matmul_shared(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %2 = "graph.relu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1, %2 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func.func @bias_on_rows
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.bias_add"
// WHY: MatMulBiasAddFusionPass: pattern MatMulBiasAdd not fused at {{.*}}: the bias_add runs along axis -2, not the last axis of the rank-2 matmul result
func.func @bias_on_rows(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<4xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = -2 : i64} : (tensor<4x32xf32>, tensor<4xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}
