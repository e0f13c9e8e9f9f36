// graphfuse and upstream passes run in one pipeline, in order.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(graph-cse,canonicalize,graph-dce)' %s | FileCheck %s
// RUN: graphfuse-opt --graph-cse --canonicalize --graph-dce %s | FileCheck %s
// RUN: graphfuse-opt --pass-pipeline='builtin.module(func.func(graph-cse,canonicalize),graph-dce)' %s | FileCheck %s

// CHECK-LABEL: func.func @duplicate_and_dead
// CHECK-NEXT:    %[[SUM:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    %[[PROD:.*]] = "graph.mul"(%[[SUM]], %[[SUM]])
// CHECK-NEXT:    return %[[PROD]]
func.func @duplicate_and_dead(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.exp"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
