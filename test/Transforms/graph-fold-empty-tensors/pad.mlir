// graph-fold-empty-tensors on graph.pad: padding an empty operand (constant mode; the other modes have nothing to
// repeat, and the dialect rejects them) gives the padding value everywhere, zeros without one.
// RUN: graphfuse-opt --split-input-file --graph-fold-empty-tensors %s | FileCheck %s

// CHECK-LABEL: func.func @padding_only
// CHECK-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%arg1) : (tensor<f32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    return %[[B]], %[[Z]]
func.func @padding_only(%x: tensor<0x3xf32>, %v: tensor<f32>) -> (tensor<2x5xf32>, tensor<2x3xf32>) {
  %0 = "graph.pad"(%x, %v) {low = array<i64: 1, 1>, high = array<i64: 1, 1>} : (tensor<0x3xf32>, tensor<f32>) -> tensor<2x5xf32>
  %1 = "graph.pad"(%x) {low = array<i64: 2, 0>, high = array<i64: 0, 0>} : (tensor<0x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x3xf32>
}

// -----

// Negative: a pad that keeps an empty dimension empty is an empty constant like any other empty result; a pad of
// a non-empty operand stays.
// CHECK-LABEL: func.func @still_empty
// CHECK-NEXT:    %[[E:.*]] = arith.constant dense<> : tensor<0x5xf32>
// CHECK-NEXT:    %[[P:.*]] = "graph.pad"(%arg1)
// CHECK-NEXT:    return %[[E]], %[[P]]
func.func @still_empty(%x: tensor<0x3xf32>, %y: tensor<2x3xf32>) -> (tensor<0x5xf32>, tensor<2x5xf32>) {
  %0 = "graph.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 1>, mode = "reflect"} : (tensor<0x3xf32>) -> tensor<0x5xf32>
  %1 = "graph.pad"(%y) {low = array<i64: 0, 1>, high = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0, %1 : tensor<0x5xf32>, tensor<2x5xf32>
}
