// TbeReduceElemwiseFusionPass: a reduction with its elementwise producers and reduced-shape consumers.
// RUN: graphfuse-opt --split-input-file --TbeReduceElemwiseFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --TbeReduceElemwiseFusionPass --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// mul -> square -> reduce_sum -> sqrt: the full-size products are reduced where they are computed.
// CHECK-LABEL: func.func @norm
// CHECK-NEXT:    %[[K:.*]] = call @norm_ub_reduce_elemwise_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]
// CHECK-LABEL: func.func private @norm_ub_reduce_elemwise_0
// CHECK-SAME:    graph.fusion_kind = "ub_reduce_elemwise", graph.kernel, graph.kernel_ops = ["graph.mul", "graph.square", "graph.reduce_sum", "graph.sqrt"]
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[TbeReduceElemwiseFusionPass]: pattern=TbeReduceElemwiseFusion, matched_times=1, effected_times=1
func.func @norm(%x: tensor<4x16xf32>, %s: tensor<4x16xf32>) -> tensor<4xf32> {
  %0 = "graph.mul"(%x, %s) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.square"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = "graph.reduce_sum"(%1) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  %3 = "graph.sqrt"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// RMS normalization written out: square -> reduce_mean -> add eps -> rsqrt fuse (the reduced value is
// [4, 1]); the final mul broadcasts it back to [4, 16] and stays outside (a second pass over x).
// CHECK-LABEL: func.func @rms
// CHECK-NEXT:    %[[K:.*]] = call @rms_ub_reduce_elemwise_0(%arg0)
// CHECK-NEXT:    %[[Y:.*]] = "graph.mul"(%arg0, %[[K]])
// CHECK-NEXT:    return %[[Y]]
// CHECK:       graph.kernel_ops = ["graph.square", "graph.reduce_mean", "graph.add", "graph.rsqrt"]
func.func @rms(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<1xf32>
  %0 = "graph.square"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.reduce_mean"(%0) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %2 = "graph.add"(%1, %eps) : (tensor<4x1xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  %3 = "graph.rsqrt"(%2) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = "graph.mul"(%x, %3) : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %4 : tensor<4x16xf32>
}

// -----

// A DAG of producers: mul reads exp and feeds the reduction through add; everything joins.
// CHECK-LABEL: func.func @producer_dag
// CHECK-NEXT:    call @producer_dag_ub_reduce_elemwise_0(%arg0)
// CHECK-NEXT:    return
// CHECK:       graph.kernel_ops = ["graph.exp", "graph.mul", "graph.add", "graph.reduce_sum"]
func.func @producer_dag(%x: tensor<4x16xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.mul"(%0, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
