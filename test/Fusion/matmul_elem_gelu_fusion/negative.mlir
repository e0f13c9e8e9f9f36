// What matmul_elem_gelu_fusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --matmul_elem_gelu_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --matmul_elem_gelu_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// CHECK-LABEL: func.func @matmul_shared
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.gelu"
// CHECK-NEXT:    "graph.add"
// WHY: pattern MatMulGelu not fused at {{.*}}: the matmul result has other users
func.func @matmul_shared(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.gelu"(%0) {approximate = "tanh"} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.add"(%1, %0) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %2 : tensor<4x32xf32>
}

// -----

// fast_gelu is a different function; a gelu of a non-matmul does not match either.
// CHECK-LABEL: func.func @other_activations
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.fast_gelu"
// CHECK-NEXT:    "graph.gelu"
func.func @other_activations(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x32xf32>, tensor<4x16xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.fast_gelu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.gelu"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1, %2 : tensor<4x32xf32>, tensor<4x16xf32>
}
