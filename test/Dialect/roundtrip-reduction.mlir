// Round trip of the reductions: graphfuse-opt (with graph-verify) and upstream mlir-opt
// (IRDL only) parse and print them unchanged.
// RUN: graphfuse-opt %s | graphfuse-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s

// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME:    %arg0: tensor<2x3x4xf32>) -> (tensor<2x1x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>) {
// CHECK-NEXT:    %0 = "graph.reduce_sum"(%arg0) {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %1 = "graph.reduce_sum"(%arg0) {axes = array<i64: -1, 0>, keep_dims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %2 = "graph.reduce_sum"(%arg0) {axes = array<i64>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<2x1x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>
func.func @reduce_sum(%a: tensor<2x3x4xf32>) -> (tensor<2x1x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>) {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  %1 = "graph.reduce_sum"(%a) {axes = array<i64: -1, 0>, keep_dims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // An empty axes list reduces nothing.
  %2 = "graph.reduce_sum"(%a) {axes = array<i64>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2 : tensor<2x1x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @reduce_all_axes(
// CHECK-SAME:    %arg0: tensor<2x3xi64>) -> (tensor<i64>, tensor<1x1xi64>) {
// CHECK-NEXT:    %0 = "graph.reduce_sum"(%arg0) {axes = array<i64: 0, 1>} : (tensor<2x3xi64>) -> tensor<i64>
// CHECK-NEXT:    %1 = "graph.reduce_max"(%arg0) {axes = array<i64: 0, 1>, keep_dims = true} : (tensor<2x3xi64>) -> tensor<1x1xi64>
// CHECK-NEXT:    return %0, %1 : tensor<i64>, tensor<1x1xi64>
func.func @reduce_all_axes(%a: tensor<2x3xi64>) -> (tensor<i64>, tensor<1x1xi64>) {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 0, 1>} : (tensor<2x3xi64>) -> tensor<i64>
  %1 = "graph.reduce_max"(%a) {axes = array<i64: 0, 1>, keep_dims = true} : (tensor<2x3xi64>) -> tensor<1x1xi64>
  return %0, %1 : tensor<i64>, tensor<1x1xi64>
}

// CHECK-LABEL: func.func @reduce_dynamic(
// CHECK-SAME:    %arg0: tensor<?x8xbf16>, %arg1: tensor<4x?xf16>) -> (tensor<?xbf16>, tensor<1x8xbf16>, tensor<4x1xf16>) {
// CHECK-NEXT:    %0 = "graph.reduce_mean"(%arg0) {axes = array<i64: 1>} : (tensor<?x8xbf16>) -> tensor<?xbf16>
// CHECK-NEXT:    %1 = "graph.reduce_mean"(%arg0) {axes = array<i64: 0>, keep_dims = true} : (tensor<?x8xbf16>) -> tensor<1x8xbf16>
// CHECK-NEXT:    %2 = "graph.reduce_min"(%arg1) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x?xf16>) -> tensor<4x1xf16>
// CHECK-NEXT:    return %0, %1, %2 : tensor<?xbf16>, tensor<1x8xbf16>, tensor<4x1xf16>
func.func @reduce_dynamic(%a: tensor<?x8xbf16>, %b: tensor<4x?xf16>) -> (tensor<?xbf16>, tensor<1x8xbf16>, tensor<4x1xf16>) {
  %0 = "graph.reduce_mean"(%a) {axes = array<i64: 1>} : (tensor<?x8xbf16>) -> tensor<?xbf16>
  %1 = "graph.reduce_mean"(%a) {axes = array<i64: 0>, keep_dims = true} : (tensor<?x8xbf16>) -> tensor<1x8xbf16>
  %2 = "graph.reduce_min"(%b) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x?xf16>) -> tensor<4x1xf16>
  return %0, %1, %2 : tensor<?xbf16>, tensor<1x8xbf16>, tensor<4x1xf16>
}

// CHECK-LABEL: func.func @reduce_integers(
// CHECK-SAME:    %arg0: tensor<4x8xi8>, %arg1: tensor<4x8xi32>) -> (tensor<8xi8>, tensor<4xi32>, tensor<4xi32>) {
// CHECK-NEXT:    %0 = "graph.reduce_max"(%arg0) {axes = array<i64: 0>} : (tensor<4x8xi8>) -> tensor<8xi8>
// CHECK-NEXT:    %1 = "graph.reduce_min"(%arg1) {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %2 = "graph.reduce_sum"(%arg1) {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<8xi8>, tensor<4xi32>, tensor<4xi32>
func.func @reduce_integers(%a: tensor<4x8xi8>, %b: tensor<4x8xi32>) -> (tensor<8xi8>, tensor<4xi32>, tensor<4xi32>) {
  %0 = "graph.reduce_max"(%a) {axes = array<i64: 0>} : (tensor<4x8xi8>) -> tensor<8xi8>
  %1 = "graph.reduce_min"(%b) {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
  %2 = "graph.reduce_sum"(%b) {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
  return %0, %1, %2 : tensor<8xi8>, tensor<4xi32>, tensor<4xi32>
}

// Summing an empty axis is fine (0); the mean of one is NaN.
// CHECK-LABEL: func.func @reduce_empty_axis(
// CHECK-SAME:    %arg0: tensor<4x0xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %0 = "graph.reduce_sum"(%arg0) {axes = array<i64: 1>} : (tensor<4x0xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %1 = "graph.reduce_mean"(%arg0) {axes = array<i64: 1>} : (tensor<4x0xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %0, %1 : tensor<4xf32>, tensor<4xf32>
func.func @reduce_empty_axis(%a: tensor<4x0xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>} : (tensor<4x0xf32>) -> tensor<4xf32>
  %1 = "graph.reduce_mean"(%a) {axes = array<i64: 1>} : (tensor<4x0xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// cumsum: the result has the operand's type; exclusive and reverse are ONNX CumSum's attributes.
// CHECK-LABEL: func.func @cumsum(
// CHECK-NEXT:    %0 = "graph.cumsum"(%arg0) {axis = 1 : i64} : (tensor<2x?xi64>) -> tensor<2x?xi64>
// CHECK-NEXT:    %1 = "graph.cumsum"(%arg1) {axis = -1 : i64, exclusive = true, reverse = true} : (tensor<5xbf16>) -> tensor<5xbf16>
func.func @cumsum(%a: tensor<2x?xi64>, %b: tensor<5xbf16>) -> (tensor<2x?xi64>, tensor<5xbf16>) {
  %0 = "graph.cumsum"(%a) {axis = 1 : i64} : (tensor<2x?xi64>) -> tensor<2x?xi64>
  %1 = "graph.cumsum"(%b) {axis = -1 : i64, exclusive = true, reverse = true} : (tensor<5xbf16>) -> tensor<5xbf16>
  return %0, %1 : tensor<2x?xi64>, tensor<5xbf16>
}
