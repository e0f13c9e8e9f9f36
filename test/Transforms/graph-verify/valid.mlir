// graph-verify accepts valid graph IR unchanged and counts every graph op it checked (in all functions and nested regions, other ops not counted).
// RUN: graphfuse-opt --graph-verify %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(func.func(graph-verify))' %s | FileCheck %s
// RUN: graphfuse-opt --graph-verify --graph-cse --graph-verify --graph-dce --graph-verify %s | FileCheck %s --check-prefix=AFTER-PASSES
// RUN: graphfuse-opt --graph-verify --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: graphfuse-opt --graph-verify --graph-dce --graph-verify --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-AFTER-DCE
// The output is exactly what graphfuse-opt prints without the pass.
// RUN: graphfuse-opt %s > %t.plain
// RUN: graphfuse-opt --graph-verify %s > %t.verified
// RUN: diff %t.plain %t.verified

// 13 graph ops: 4 + 3 + 1 + 2 + 1 + 2; the arith, tensor, scf and func ops are not counted.
// STATS:      graph-verify
// STATS-NEXT:   (S) 13 num-ops-checked - Number of graph ops verified
// STATS-AFTER-DCE:      graph-verify
// STATS-AFTER-DCE-NEXT:   (S) 13 num-ops-checked - Number of graph ops verified
// STATS-AFTER-DCE-NEXT: graph-dce
// STATS-AFTER-DCE-NEXT:   (S) 3 num-erased - Number of dead operations erased
// STATS-AFTER-DCE-NEXT: graph-verify
// STATS-AFTER-DCE-NEXT:   (S) 11 num-ops-checked - Number of graph ops verified

// CHECK-LABEL: func.func @elementwise_and_broadcast
// CHECK-NEXT:    "graph.add"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    "graph.less"
// CHECK-NEXT:    "graph.select"
// CHECK-NEXT:    return
// AFTER-PASSES-LABEL: func.func @elementwise_and_broadcast
func.func @elementwise_and_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "graph.less"(%1, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %3 = "graph.select"(%2, %1, %a) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// Attributes: required ones, optional ones spelled out, and a discardable (dotted) one.
// CHECK-LABEL: func.func @attributes
// CHECK-NEXT:    "graph.reduce_sum"(%arg0) {axes = array<i64: -1>, keep_dims = true}
// CHECK-NEXT:    "graph.softmax"(%arg0) {axis = 0 : i64}
// CHECK-NEXT:    "graph.gelu"(%arg0) {approximate = "tanh", graph.kernel = "fused_0"}
func.func @attributes(%a: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.softmax"(%a) {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.gelu"(%a) {approximate = "tanh", graph.kernel = "fused_0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @dynamic_dims
// CHECK-NEXT:    "graph.exp"(%arg0) : (tensor<?x8xf16>) -> tensor<?x8xf16>
func.func @dynamic_dims(%a: tensor<?x8xf16>) -> tensor<?x8xf16> {
  %0 = "graph.exp"(%a) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  return %0 : tensor<?x8xf16>
}

// Ops in nested regions are checked (and counted) too.
// CHECK-LABEL: func.func @nested
// CHECK:         scf.if
// CHECK-NEXT:      "graph.neg"
// CHECK:         } else {
// CHECK-NEXT:      "graph.abs"
func.func @nested(%a: tensor<4xi32>, %c: i1) -> tensor<4xi32> {
  %r = scf.if %c -> tensor<4xi32> {
    %0 = "graph.neg"(%a) : (tensor<4xi32>) -> tensor<4xi32>
    scf.yield %0 : tensor<4xi32>
  } else {
    %1 = "graph.abs"(%a) : (tensor<4xi32>) -> tensor<4xi32>
    scf.yield %1 : tensor<4xi32>
  }
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @multi_result
// CHECK-NEXT:    "graph.split"
func.func @multi_result(%a: tensor<4x8xbf16>) -> (tensor<4x2xbf16>, tensor<4x6xbf16>) {
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xbf16>) -> (tensor<4x2xbf16>, tensor<4x6xbf16>)
  return %0#0, %0#1 : tensor<4x2xbf16>, tensor<4x6xbf16>
}

// Dead ops are valid too; graph-dce removes them (and the constant), and the next graph-verify counts two graph ops fewer.
// CHECK-LABEL: func.func @with_constant
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.transpose"
// AFTER-PASSES-LABEL: func.func @with_constant
// AFTER-PASSES-NEXT:    return %arg0
func.func @with_constant(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense<1.0> : tensor<4x4xf32>
  %0 = "graph.matmul"(%a, %w) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  return %a : tensor<2x4xf32>
}
