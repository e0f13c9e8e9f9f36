// reshape -> transpose -> reshape chains that keep the element order => one reshape.
// RUN: graphfuse-opt --split-input-file --shape_reshape_2 %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --shape_reshape_2 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// The transpose only moves a size-1 dim: the chain is the identity.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    return %arg0
// COUNTS: GraphFusionPass[shape_reshape_2]: pattern=ReshapeTransposeReshape, matched_times=1, effected_times=1
func.func @identity(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<4x1x64xf32>) -> tensor<1x4x64xf32>
  %2 = "graph.reshape"(%1) : (tensor<1x4x64xf32>) -> tensor<4x64xf32>
  return %2 : tensor<4x64xf32>
}

// -----

// Heads of size 1 moved around: one reshape to the final shape.
// CHECK-LABEL: func.func @one_reshape
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<2x8x16xf16>) -> tensor<16x16xf16>
// CHECK-NEXT:    return %[[R]]
func.func @one_reshape(%x: tensor<2x8x16xf16>) -> tensor<16x16xf16> {
  %0 = "graph.reshape"(%x) : (tensor<2x8x16xf16>) -> tensor<2x8x1x16xf16>
  %1 = "graph.transpose"(%0) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x1x16xf16>) -> tensor<2x1x8x16xf16>
  %2 = "graph.reshape"(%1) : (tensor<2x1x8x16xf16>) -> tensor<16x16xf16>
  return %2 : tensor<16x16xf16>
}

// -----

// Without the inner reshape (transpose -> reshape), with several unit dims and a dynamic dim that keeps its place.
// CHECK-LABEL: func.func @transpose_reshape
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<1x?x1x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    return %[[R]]
func.func @transpose_reshape(%x: tensor<1x?x1x8xf32>) -> tensor<?x8xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 2, 1, 3, 0>} : (tensor<1x?x1x8xf32>) -> tensor<1x?x8x1xf32>
  %1 = "graph.reshape"(%0) : (tensor<1x?x8x1xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// The transpose and inner reshape have other users: they stay for them.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %[[A:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<4x1x8xf32>
// CHECK-NEXT:    %[[T:.*]] = "graph.transpose"(%[[A]])
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT:    return %[[R]], %[[T]]
func.func @shared(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<1x4x8xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<4x1x8xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<4x1x8xf32>) -> tensor<1x4x8xf32>
  %2 = "graph.reshape"(%1) : (tensor<1x4x8xf32>) -> tensor<32xf32>
  return %2, %1 : tensor<32xf32>, tensor<1x4x8xf32>
}
