// Chains shape_reshape_2 must keep: the transpose moves data; the debug log says why.
// RUN: graphfuse-opt --split-input-file --shape_reshape_2 %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --shape_reshape_2 %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Merging attention heads: a real transpose.
// CHECK-LABEL: func.func @merge_heads
// CHECK-NEXT:    "graph.reshape"
// CHECK-NEXT:    "graph.transpose"
// CHECK-NEXT:    "graph.reshape"
// WHY: pattern ReshapeTransposeReshape not fused at {{.*}}: the transpose (perm [0, 2, 1, 3] of tensor<2x4x8x16xf32>) reorders dims of size other than 1: it moves data
func.func @merge_heads(%x: tensor<2x4x128xf32>) -> tensor<2x4x128xf32> {
  %0 = "graph.reshape"(%x) : (tensor<2x4x128xf32>) -> tensor<2x4x8x16xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %2 = "graph.reshape"(%1) : (tensor<2x8x4x16xf32>) -> tensor<2x4x128xf32>
  return %2 : tensor<2x4x128xf32>
}

// -----

// Dynamic dims might not be 1: swapping two of them is a data movement.
// CHECK-LABEL: func.func @dynamic_swap
// CHECK-NEXT:    "graph.transpose"
// CHECK-NEXT:    "graph.reshape"
// WHY: pattern ReshapeTransposeReshape not fused at {{.*}}: the transpose (perm [1, 0] of tensor<?x?xf32>) reorders dims of size other than 1: it moves data
func.func @dynamic_swap(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = "graph.reshape"(%0) : (tensor<?x?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// reshape -> transpose with no reshape after it is not this pass's pattern.
// CHECK-LABEL: func.func @no_outer_reshape
// CHECK-NEXT:    "graph.reshape"
// CHECK-NEXT:    "graph.transpose"
func.func @no_outer_reshape(%x: tensor<4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<4x1x8xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<4x1x8xf32>) -> tensor<1x4x8xf32>
  return %1 : tensor<1x4x8xf32>
}
