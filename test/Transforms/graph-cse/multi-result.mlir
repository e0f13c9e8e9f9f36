// graph-cse merges multi-result graph ops as a whole: every result of the duplicate is replaced by the matching result of the first op.
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-cse
// STATS-NEXT:   (S) 2 num-cse'd - Number of operations CSE'd

// CHECK-LABEL: func.func @split
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 2, 6>}
// CHECK-NEXT:    return %[[S]]#0, %[[S]]#1
func.func @split(%a: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>) {
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
  %1:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
  return %0#0, %1#1 : tensor<4x2xf32>, tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_quant
// CHECK-NEXT:    %[[Q:.*]]:2 = "graph.dynamic_quant"(%arg0)
// CHECK-NEXT:    return %[[Q]]#0, %[[Q]]#1, %[[Q]]#1
func.func @dynamic_quant(%a: tensor<4x16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "graph.dynamic_quant"(%a) : (tensor<4x16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  %1:2 = "graph.dynamic_quant"(%a) : (tensor<4x16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return %0#0, %0#1, %1#1 : tensor<4x16xi8>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: splits with different sizes, and with a different number of pieces.
// CHECK-LABEL: func.func @different_splits
// CHECK-NEXT:    "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 2, 6>}
// CHECK-NEXT:    "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 4, 4>}
// CHECK-NEXT:    "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 2, 2, 4>}
// CHECK-NEXT:    return
func.func @different_splits(%a: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
  %1:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %2:3 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 2, 4>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>)
  return %0#0, %1#0, %2#2 : tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
