// matmul -> split along the last axis => graph.matmul_split.
// RUN: graphfuse-opt --split-input-file --inference_matmul_split_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --inference_matmul_split_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// A fused QKV projection.
// CHECK-LABEL: func.func @qkv
// CHECK-NEXT:    %[[R:.*]]:3 = "graph.matmul_split"(%arg0, %arg1) {sizes = array<i64: 16, 16, 16>, transpose_b = true} : (tensor<2x4x16xf16>, tensor<48x16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<2x4x16xf16>)
// CHECK-NEXT:    return %[[R]]#2, %[[R]]#0, %[[R]]#1
// COUNTS: GraphFusionPass[inference_matmul_split_fusion]: pattern=MatMulSplit, matched_times=1, effected_times=1
func.func @qkv(%x: tensor<2x4x16xf16>, %w: tensor<48x16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<2x4x16xf16>) {
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<48x16xf16>) -> tensor<2x4x48xf16>
  %1:3 = "graph.split"(%0) {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : (tensor<2x4x48xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  return %1#2, %1#0, %1#1 : tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<2x4x16xf16>
}

// -----

// Two unequal pieces (a gate/up projection), the results used by other ops.
// CHECK-LABEL: func.func @two_pieces
// CHECK-NEXT:    %[[R:.*]]:2 = "graph.matmul_split"(%arg0, %arg1) {sizes = array<i64: 24, 8>} : (tensor<4x16xf32>, tensor<16x32xf32>) -> (tensor<4x24xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %[[A:.*]] = "graph.exp"(%[[R]]#0)
// CHECK-NEXT:    %[[B:.*]] = "graph.neg"(%[[R]]#1)
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @two_pieces(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> (tensor<4x24xf32>, tensor<4x8xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1:2 = "graph.split"(%0) {axis = -1 : i64, sizes = array<i64: 24, 8>} : (tensor<4x32xf32>) -> (tensor<4x24xf32>, tensor<4x8xf32>)
  %2 = "graph.exp"(%1#0) : (tensor<4x24xf32>) -> tensor<4x24xf32>
  %3 = "graph.neg"(%1#1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2, %3 : tensor<4x24xf32>, tensor<4x8xf32>
}
