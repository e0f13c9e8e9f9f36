// transpose: identity perms vanish, chains compose.
// RUN: graphfuse-opt --split-input-file --graph-canonicalize %s | FileCheck %s

// CHECK-LABEL: func.func @transpose_identity
// CHECK-NEXT:    return %arg0
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_inverse_pair
// CHECK-NEXT:    return %arg0
func.func @transpose_inverse_pair(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// result dim i = x dim p1[p2[i]]: p1 = [1, 2, 0], p2 = [1, 0, 2] -> [2, 1, 0].
// CHECK-LABEL: func.func @transpose_compose
// CHECK-NEXT:    %[[T:.*]] = "graph.transpose"(%arg0) {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:    return %[[T]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// Dynamic dims travel with the composed perm.
// CHECK-LABEL: func.func @transpose_compose_dynamic
// CHECK-NEXT:    %[[T:.*]] = "graph.transpose"(%arg0) {perm = array<i64: 2, 0, 1>} : (tensor<?x3x4xf32>) -> tensor<4x?x3xf32>
// CHECK-NEXT:    return %[[T]]
func.func @transpose_compose_dynamic(%x: tensor<?x3x4xf32>) -> tensor<4x?x3xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 0, 2, 1>} : (tensor<?x3x4xf32>) -> tensor<?x4x3xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<?x4x3xf32>) -> tensor<4x?x3xf32>
  return %1 : tensor<4x?x3xf32>
}

// -----

// The inner transpose has another use: it stays.
// CHECK-LABEL: func.func @transpose_chain_shared
// CHECK-NEXT:    %[[A:.*]] = "graph.transpose"(%arg0) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    return %arg0, %[[A]]
func.func @transpose_chain_shared(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1, %0 : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// Negative: a non-identity perm stays, even when it keeps the type.
// CHECK-LABEL: func.func @transpose_square
// CHECK-NEXT:    %[[T:.*]] = "graph.transpose"(%arg0) {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    return %[[T]]
func.func @transpose_square(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Negative: transposes separated by another op do not compose.
// CHECK-LABEL: func.func @transpose_not_adjacent
// CHECK-NEXT:    "graph.transpose"
// CHECK-NEXT:    "graph.neg"
// CHECK-NEXT:    "graph.transpose"
func.func @transpose_not_adjacent(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "graph.neg"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "graph.transpose"(%1) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
