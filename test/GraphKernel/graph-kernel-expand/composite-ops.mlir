// The composite ops added for the expander list (add_n, tile, squared_difference): round trip through
// graphfuse-opt (with graph-verify) and upstream mlir-opt (IRDL), and graph-verify's rules for them.
// RUN: graphfuse-opt %s --split-input-file | graphfuse-opt --split-input-file | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl --split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @composites
// CHECK-NEXT:    "graph.add_n"(%arg0, %arg0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    "graph.add_n"(%arg0, %arg0, %arg0, %arg0) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    "graph.tile"(%arg0) {multiples = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    "graph.tile"(%arg1) {multiples = array<i64: 3>} : (tensor<?xi1>) -> tensor<?xi1>
// CHECK-NEXT:    "graph.squared_difference"(%arg0, %arg2) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @composites(%x: tensor<2x3xf32>, %m: tensor<?xi1>, %y: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<?xi1>, tensor<2x3xf32>) {
  %0 = "graph.add_n"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "graph.add_n"(%x, %x, %x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "graph.tile"(%x) {multiples = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  %3 = "graph.tile"(%m) {multiples = array<i64: 3>} : (tensor<?xi1>) -> tensor<?xi1>
  %4 = "graph.squared_difference"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<?xi1>, tensor<2x3xf32>
}
