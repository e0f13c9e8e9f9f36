// graph-dce erases graph ops, arith.constant and tensor.empty whose results are unused, whole dead chains in one run.
// RUN: graphfuse-opt --split-input-file --graph-dce %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(func.func(graph-dce))' %s | FileCheck %s
// Upstream canonicalize keeps dead graph ops (IRDL ops count as side-effecting).
// RUN: graphfuse-opt --split-input-file --canonicalize %s | FileCheck %s --check-prefix=UPSTREAM
// RUN: graphfuse-opt --graph-dce --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// A second run finds nothing left to erase.
// RUN: graphfuse-opt --graph-dce %s | graphfuse-opt --graph-dce --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-AGAIN

// STATS:      graph-dce
// STATS-NEXT:   (S) 11 num-erased - Number of dead operations erased
// STATS-AGAIN:      graph-dce
// STATS-AGAIN-NEXT:   (S) 0 num-erased - Number of dead operations erased

// CHECK-LABEL: func.func @dead_op
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%arg0, %arg0)
// CHECK-NEXT:    return %[[M]]
// UPSTREAM-LABEL: func.func @dead_op
// UPSTREAM-NEXT:    "graph.mul"
// UPSTREAM-NEXT:    "graph.exp"
func.func @dead_op(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.mul"(%a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A chain whose last op is unused goes entirely; the live op before it stays.
// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT:    %[[S:.*]] = "graph.sqrt"(%arg0)
// CHECK-NEXT:    return %[[S]]
func.func @dead_chain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.abs"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.sqrt"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// A dead op feeding a live one is not dead: only the unused tail goes.
// CHECK-LABEL: func.func @partly_live
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%[[E]])
// CHECK-NEXT:    return %[[N]]
func.func @partly_live(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.log"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Unused constants and empty tensors go, and so does a constant only a dead graph op used.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[M]]
func.func @constants(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant dense<1.0> : tensor<4xf32>
  %c2 = arith.constant dense<2.0> : tensor<4xf32>
  %c3 = arith.constant dense<3.0> : tensor<4xf32>
  %i = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  %0 = "graph.mul"(%a, %c2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.add"(%a, %c3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Negative: nothing dead, nothing erased.
// CHECK-LABEL: func.func @all_live
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[L:.*]] = "graph.log"(%arg0)
// CHECK-NEXT:    return %[[E]], %[[L]]
func.func @all_live(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.log"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Dynamic shapes make no difference.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    return %arg0 : tensor<?x4xf32>
func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "graph.exp"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}
