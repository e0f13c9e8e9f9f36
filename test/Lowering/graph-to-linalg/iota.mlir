// graph-to-linalg on graph.iota: a linalg.generic with no input writing linalg.index 0 (as i64) into a
// tensor.empty sized by the operand's dimension (tensor.dim when it is dynamic); the operand's elements are
// never read.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @positions_of_a_dynamic_sequence
// UPSTREAM: linalg.index 0

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @positions_of_a_dynamic_sequence
// CHECK:         %[[SEQ:.*]] = tensor.dim %arg0, %{{.*}} : tensor<2x?xf32>
// CHECK:         %[[EMPTY:.*]] = tensor.empty(%[[SEQ]]) : tensor<?xi64>
// CHECK:         linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel"]} outs(%[[EMPTY]] : tensor<?xi64>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[V:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           linalg.yield %[[V]] : i64
// CHECK-NOT:     graph.iota
func.func @positions_of_a_dynamic_sequence(%x: tensor<2x?xf32>) -> tensor<?xi64> {
  %0 = "graph.iota"(%x) {axis = -1 : i64} : (tensor<2x?xf32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// A static dimension: a static tensor.empty, no tensor.dim.
// CHECK-LABEL: func.func @static_rows
// CHECK-NOT:     tensor.dim
// CHECK:         tensor.empty() : tensor<6xi64>
// CHECK:         linalg.index 0
func.func @static_rows(%x: tensor<6x3xi1>) -> tensor<6xi64> {
  %0 = "graph.iota"(%x) {axis = 0 : i64} : (tensor<6x3xi1>) -> tensor<6xi64>
  return %0 : tensor<6xi64>
}
