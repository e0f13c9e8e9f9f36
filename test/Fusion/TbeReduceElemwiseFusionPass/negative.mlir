// What TbeReduceElemwiseFusionPass must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --TbeReduceElemwiseFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --TbeReduceElemwiseFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// A reduction alone, whose only consumer broadcasts the reduced value back (x - max(x)).
// CHECK-LABEL: func.func @broadcast_back
// CHECK-NOT:     call
// CHECK:         "graph.reduce_max"
// CHECK-NEXT:    "graph.sub"
// WHY: TbeReduceElemwiseFusionPass: pattern TbeReduceElemwiseFusion not fused at {{.*}}negative.mlir:{{[0-9]+}}:{{[0-9]+}}: graph.sub at {{.*}} cannot join it: it broadcasts the reduced value back to the full shape (a second pass over the input)
// WHY: UBFusionPass[TbeReduceElemwiseFusionPass]: pattern=TbeReduceElemwiseFusion, matched_times=1, effected_times=0
func.func @broadcast_back(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// A reduction of a reduction: the second is not elementwise, so neither finds a partner (no match).
// CHECK-LABEL: func.func @two_reductions
// CHECK-NOT:     call
// CHECK:         "graph.reduce_sum"
// CHECK-NEXT:    "graph.reduce_max"
// WHY-NOT: not fused
// WHY: UBFusionPass[TbeReduceElemwiseFusionPass]: pattern=TbeReduceElemwiseFusion, matched_times=0, effected_times=0
func.func @two_reductions(%x: tensor<4x16xf32>) -> tensor<f32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  %1 = "graph.reduce_max"(%0) {axes = array<i64: 0>, keep_dims = false} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// exp feeds the reduction and joins it; the mul reads exp without feeding the reduction: it is no
// consumer of the reduced value, so it stays out (exp's result is a second kernel result).
// CHECK-LABEL: func.func @sibling
// CHECK-NEXT:    %[[K:.*]]:2 = call @sibling_ub_reduce_elemwise_0(%arg0)
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[K]]#0, %arg0)
// CHECK-NEXT:    return %[[K]]#1, %[[M]]
// WHY: TbeReduceElemwiseFusionPass: graph.mul at {{.*}} stays out of the kernel of graph.reduce_sum at {{.*}}: it consumes an op before the reduction without feeding the reduction
func.func @sibling(%x: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4x16xf32>) {
  %0 = "graph.exp"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  %2 = "graph.mul"(%0, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1, %2 : tensor<4xf32>, tensor<4x16xf32>
}
