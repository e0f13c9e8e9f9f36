// Cycles through a third kernel: a merge is legal only when no path between the two groups leaves them,
// and a path may run through another kernel as well as through a single op. After clustering every
// function must still verify (graphfuse-opt verifies after each pass), and the outlined calls must be
// in dependency order.
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster --log-level=debug %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY

// exp starts kernel A, neg kernel B; softmax (not a cluster op) carries A's value into B's add. The mul
// reads both exp and neg: next to exp it would close the cycle A -> softmax -> B -> A, although no single
// op outside the two lies on a path from exp to the mul (the path runs through B). So the mul joins B.
// CHECK-LABEL: func.func @through_kernel
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[S:.*]] = "graph.softmax"(%[[E]])
// CHECK-NEXT:    %[[B:.*]]:2 = call @through_kernel_kernel_0(%arg0, %[[S]], %[[E]])
// CHECK-NEXT:    return %[[B]]#0, %[[B]]#1
// CHECK-LABEL: func.func private @through_kernel_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.neg", "graph.add", "graph.mul"]
// WHY: graph-kernel-cluster: graph.mul at {{.*}}cycles.mlir:[[@LINE+6]]:{{[0-9]+}} did not join the kernel of graph.exp: a path between them runs outside the kernel (the kernel would form a cycle)
func.func @through_kernel(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %x1 = "graph.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = "graph.neg"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "graph.softmax"(%x1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = "graph.add"(%y1, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %x2 = "graph.mul"(%x1, %y1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y2, %x2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A diamond: both arms and the join fuse into one kernel (no path leaves the group).
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT:    %[[K:.*]] = call @diamond_kernel_0(%arg0)
// CHECK-NEXT:    return %[[K]]
// CHECK-LABEL: func.func private @diamond_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.exp", "graph.neg", "graph.abs", "graph.add"]
func.func @diamond(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = "graph.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.neg"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = "graph.abs"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "graph.add"(%n, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
