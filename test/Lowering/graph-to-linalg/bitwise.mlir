// graph-to-linalg on the bitwise ops: one elementwise generic each, arith.andi / ori / xori on the integers
// (booleans included); bitwise_not is an xor with all ones (-1, or true for i1).
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file --allow-unregistered-dialect | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-LABEL: func.func @integers
// UPSTREAM: arith.xori

// CHECK-LABEL: func.func @integers
// CHECK:         linalg.generic
// CHECK:           arith.andi %{{.*}}, %{{.*}} : i32
// CHECK:         linalg.generic
// CHECK:           arith.ori %{{.*}}, %{{.*}} : i32
// CHECK:         linalg.generic
// CHECK:           arith.xori %{{.*}}, %{{.*}} : i32
// CHECK:         linalg.generic
// CHECK:           %[[ONES:.*]] = arith.constant -1 : i32
// CHECK:           arith.xori %{{.*}}, %[[ONES]] : i32
// CHECK-NOT:     graph.
func.func @integers(%a: tensor<3x4xi32>, %b: tensor<4xi32>) -> tensor<3x4xi32> {
  %0 = "graph.bitwise_and"(%a, %b) : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %1 = "graph.bitwise_or"(%0, %b) : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %2 = "graph.bitwise_xor"(%1, %a) : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
  %3 = "graph.bitwise_not"(%2) : (tensor<3x4xi32>) -> tensor<3x4xi32>
  return %3 : tensor<3x4xi32>
}

// -----

// A boolean's complement is its negation: an xor with true, not with an integer's -1.
// CHECK-LABEL: func.func @mask
// CHECK-NOT:     arith.constant -1
// CHECK:         linalg.generic
// CHECK:           %[[TRUE:.*]] = arith.constant true
// CHECK:           arith.xori %{{.*}}, %[[TRUE]] : i1
// CHECK-NOT:     graph.
func.func @mask(%m: tensor<4x12xi1>) -> tensor<4x12xi1> {
  %0 = "graph.bitwise_not"(%m) : (tensor<4x12xi1>) -> tensor<4x12xi1>
  return %0 : tensor<4x12xi1>
}
