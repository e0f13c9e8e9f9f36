// Round trip of the sorting ops: graphfuse-opt (with graph-verify) and upstream mlir-opt (IRDL only) parse
// and print them unchanged.
// RUN: graphfuse-opt %s | graphfuse-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s

// CHECK-LABEL: func.func @router_topk(
// CHECK-SAME:    %arg0: tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>) {
// CHECK-NEXT:    %0:2 = "graph.topk"(%arg0) {k = 2 : i64} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>)
// CHECK-NEXT:    return %0#0, %0#1 : tensor<6x2xf32>, tensor<6x2xi64>
func.func @router_topk(%x: tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>) {
  %v, %i = "graph.topk"(%x) {k = 2 : i64} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>)
  return %v, %i : tensor<6x2xf32>, tensor<6x2xi64>
}

// Any axis, the smallest, unsorted; a dynamic dim elsewhere.
// CHECK-LABEL: func.func @smallest_along_axis_0(
// CHECK-NEXT:    %0:2 = "graph.topk"(%arg0) {axis = 0 : i64, k = 3 : i64, largest = false, sorted = false} : (tensor<5x?xi32>) -> (tensor<3x?xi32>, tensor<3x?xi64>)
func.func @smallest_along_axis_0(%x: tensor<5x?xi32>) -> (tensor<3x?xi32>, tensor<3x?xi64>) {
  %v, %i = "graph.topk"(%x) {axis = 0 : i64, k = 3 : i64, largest = false, sorted = false} : (tensor<5x?xi32>) -> (tensor<3x?xi32>, tensor<3x?xi64>)
  return %v, %i : tensor<3x?xi32>, tensor<3x?xi64>
}

// CHECK-LABEL: func.func @sort_expert_ids(
// CHECK-NEXT:    %0:2 = "graph.sort"(%arg0) : (tensor<24xi64>) -> (tensor<24xi64>, tensor<24xi64>)
// CHECK-NEXT:    %1:2 = "graph.sort"(%arg1) {axis = 1 : i64, descending = true, stable = true} : (tensor<2x7xbf16>) -> (tensor<2x7xbf16>, tensor<2x7xi64>)
func.func @sort_expert_ids(%ids: tensor<24xi64>, %x: tensor<2x7xbf16>) -> (tensor<24xi64>, tensor<24xi64>, tensor<2x7xbf16>, tensor<2x7xi64>) {
  %v, %i = "graph.sort"(%ids) : (tensor<24xi64>) -> (tensor<24xi64>, tensor<24xi64>)
  %w, %j = "graph.sort"(%x) {axis = 1 : i64, descending = true, stable = true} : (tensor<2x7xbf16>) -> (tensor<2x7xbf16>, tensor<2x7xi64>)
  return %v, %i, %w, %j : tensor<24xi64>, tensor<24xi64>, tensor<2x7xbf16>, tensor<2x7xi64>
}
