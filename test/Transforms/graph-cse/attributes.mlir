// graph-cse compares attributes as written: equal values merge whatever their order; different values, or a default left implicit versus spelled out, do not.
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-cse
// STATS-NEXT:   (S) 3 num-cse'd - Number of operations CSE'd

// CHECK-LABEL: func.func @same_attributes_any_order
// CHECK-NEXT:    %[[R:.*]] = "graph.reduce_sum"(%arg0) {axes = array<i64: 1>, keep_dims = true}
// CHECK-NEXT:    return %[[R]], %[[R]], %[[R]]
func.func @same_attributes_any_order(%a: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.reduce_sum"(%a) {keep_dims = true, axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0, %1, %2 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// Negative: different attribute values.
// CHECK-LABEL: func.func @different_values
// CHECK-NEXT:    "graph.softmax"(%arg0) {axis = 0 : i64}
// CHECK-NEXT:    "graph.softmax"(%arg0) {axis = 1 : i64}
// CHECK-NEXT:    return
func.func @different_values(%a: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = "graph.softmax"(%a) {axis = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = "graph.softmax"(%a) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Negative: reductions over different axes, and with and without keep_dims.
// CHECK-LABEL: func.func @different_axes_and_keep_dims
// CHECK-NEXT:    "graph.reduce_max"(%arg0) {axes = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    "graph.reduce_max"(%arg0) {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    "graph.reduce_max"(%arg0) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return
func.func @different_axes_and_keep_dims(%a: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.reduce_max"(%a) {axes = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %1 = "graph.reduce_max"(%a) {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %2 = "graph.reduce_max"(%a) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: the default axis (-1) left out versus written; graph-cse does not fill in defaults.
// CHECK-LABEL: func.func @implicit_default
// CHECK-NEXT:    "graph.softmax"(%arg0) : (tensor<2x8xf32>)
// CHECK-NEXT:    "graph.softmax"(%arg0) {axis = -1 : i64}
// CHECK-NEXT:    return
func.func @implicit_default(%a: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = "graph.softmax"(%a) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = "graph.softmax"(%a) {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Discardable (dotted) attributes count too: only the two ops tagged alike merge.
// CHECK-LABEL: func.func @discardable_attributes
// CHECK-NEXT:    %[[K0:.*]] = "graph.exp"(%arg0) {graph.kernel = "k0"}
// CHECK-NEXT:    %[[K1:.*]] = "graph.exp"(%arg0) {graph.kernel = "k1"}
// CHECK-NEXT:    %[[NONE:.*]] = "graph.exp"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return %[[K0]], %[[K1]], %[[K0]], %[[NONE]]
func.func @discardable_attributes(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.exp"(%a) {graph.kernel = "k0"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%a) {graph.kernel = "k1"} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.exp"(%a) {graph.kernel = "k0"} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
