// matmul -> gelu => graph.matmul_gelu, the approximation kept.
// RUN: graphfuse-opt --split-input-file --matmul_elem_gelu_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --matmul_elem_gelu_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// The default (erf) gelu, written or not.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT:    %[[A:.*]] = "graph.matmul_gelu"(%arg0, %arg1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.matmul_gelu"(%arg0, %arg1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
// COUNTS: GraphFusionPass[matmul_elem_gelu_fusion]: pattern=MatMulGelu, matched_times=2, effected_times=2
func.func @gelu_erf(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.gelu"(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %2 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %3 = "graph.gelu"(%2) {approximate = "none"} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1, %3 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_gelu"(%arg0, %arg1) {approximate = "tanh", transpose_b = true} : (tensor<2x4x16xbf16>, tensor<2x32x16xbf16>) -> tensor<2x4x32xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @gelu_tanh(%x: tensor<2x4x16xbf16>, %w: tensor<2x32x16xbf16>) -> tensor<2x4x32xbf16> {
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<2x4x16xbf16>, tensor<2x32x16xbf16>) -> tensor<2x4x32xbf16>
  %1 = "graph.gelu"(%0) {approximate = "tanh"} : (tensor<2x4x32xbf16>) -> tensor<2x4x32xbf16>
  return %1 : tensor<2x4x32xbf16>
}
