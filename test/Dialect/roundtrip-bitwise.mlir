// Round trip of the bitwise ops: graphfuse-opt (with graph-verify) and upstream mlir-opt (IRDL only) parse and
// print them unchanged.
// RUN: graphfuse-opt %s | graphfuse-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s

// CHECK-LABEL: func.func @integers(
// CHECK-NEXT:    %0 = "graph.bitwise_and"(%arg0, %arg1) : (tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
// CHECK-NEXT:    %1 = "graph.bitwise_or"(%arg0, %arg1) : (tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
// CHECK-NEXT:    %2 = "graph.bitwise_xor"(%0, %1) : (tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x4xi64>
// CHECK-NEXT:    %3 = "graph.bitwise_not"(%2) : (tensor<3x4xi64>) -> tensor<3x4xi64>
func.func @integers(%a: tensor<3x4xi64>, %b: tensor<4xi64>) -> tensor<3x4xi64> {
  %0 = "graph.bitwise_and"(%a, %b) : (tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
  %1 = "graph.bitwise_or"(%a, %b) : (tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
  %2 = "graph.bitwise_xor"(%0, %1) : (tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x4xi64>
  %3 = "graph.bitwise_not"(%2) : (tensor<3x4xi64>) -> tensor<3x4xi64>
  return %3 : tensor<3x4xi64>
}

// DeBERTa's ~mask on booleans; i8 and a dynamic dim.
// CHECK-LABEL: func.func @masks(
// CHECK-NEXT:    %0 = "graph.bitwise_not"(%arg0) : (tensor<?x12xi1>) -> tensor<?x12xi1>
// CHECK-NEXT:    %1 = "graph.bitwise_xor"(%arg1, %arg1) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
func.func @masks(%m: tensor<?x12xi1>, %b: tensor<2xi8>) -> (tensor<?x12xi1>, tensor<2xi8>) {
  %0 = "graph.bitwise_not"(%m) : (tensor<?x12xi1>) -> tensor<?x12xi1>
  %1 = "graph.bitwise_xor"(%b, %b) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %0, %1 : tensor<?x12xi1>, tensor<2xi8>
}
