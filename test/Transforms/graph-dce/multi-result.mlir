// graph-dce erases a multi-result graph op only when none of its results is used.
// RUN: graphfuse-opt --split-input-file --graph-dce %s | FileCheck %s
// RUN: graphfuse-opt --graph-dce --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-dce
// STATS-NEXT:   (S) 4 num-erased - Number of dead operations erased

// Negative: one used result keeps the whole split.
// CHECK-LABEL: func.func @one_result_used
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 2, 6>}
// CHECK-NEXT:    return %[[S]]#1
func.func @one_result_used(%a: tensor<4x8xf32>) -> tensor<4x6xf32> {
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
  return %0#1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @no_result_used
// CHECK-NEXT:    return %arg0
func.func @no_result_used(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
  return %a : tensor<4x8xf32>
}

// -----

// The only user of the middle result is dead: once it goes, the split goes too.
// CHECK-LABEL: func.func @user_of_one_result_dead
// CHECK-NEXT:    return %arg0
func.func @user_of_one_result_dead(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0:3 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 2, 4>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>)
  %1 = "graph.exp"(%0#1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %a : tensor<4x8xf32>
}

// -----

// Negative: the scale result of dynamic_quant is used, so the op stays although y is not.
// CHECK-LABEL: func.func @dynamic_quant
// CHECK-NEXT:    %[[Q:.*]]:2 = "graph.dynamic_quant"(%arg0)
// CHECK-NEXT:    return %[[Q]]#1
func.func @dynamic_quant(%a: tensor<4x16xf32>) -> tensor<4xf32> {
  %0:2 = "graph.dynamic_quant"(%a) : (tensor<4x16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_quant_dead
// CHECK-NEXT:    return %arg0
func.func @dynamic_quant_dead(%a: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0:2 = "graph.dynamic_quant"(%a) : (tensor<4x16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return %a : tensor<4x16xf32>
}
