// graph-kernel-cluster: elementwise chains, reductions with their producers, multi-output kernels, outlining.
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: graph-kernel-cluster
// STATS: (S) {{[0-9]+}} num-fused-ops

// An elementwise chain becomes one kernel; the caller calls it.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[R:.*]] = call @chain_kernel_0(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @chain_kernel_0
// CHECK-SAME:    attributes {graph.fusion_kind = "elementwise", graph.kernel, graph.kernel_ops = ["graph.add", "graph.exp", "graph.mul"]}
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    return
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A reduction takes its elementwise producers and a consumer that keeps the reduced shape;
// every value used outside becomes a kernel result.
// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    %[[R:.*]]:2 = call @reduce_kernel_0(%arg0)
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// CHECK-LABEL: func.func private @reduce_kernel_0
// CHECK-SAME:    graph.fusion_kind = "reduction"
// CHECK-SAME:    graph.kernel_ops = ["graph.exp", "graph.reduce_sum", "graph.sqrt"]
func.func @reduce(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %2 = "graph.sqrt"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A single op is not a kernel; ops outside the cluster list stay outside.
// CHECK-LABEL: func.func @nothing
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.softmax"
// CHECK-NEXT:    return
// CHECK-NOT:   graph.kernel
func.func @nothing(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
