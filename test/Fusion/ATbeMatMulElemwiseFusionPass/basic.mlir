// ATbeMatMulElemwiseFusionPass: a matmul and its elementwise epilogue become one UB kernel.
// RUN: graphfuse-opt --split-input-file --ATbeMatMulElemwiseFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(ATbeMatMulElemwiseFusionPass{max-epilogue=3})' %s | FileCheck %s --check-prefix=THREE
// RUN: graphfuse-opt --split-input-file --ATbeMatMulElemwiseFusionPass --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// matmul -> mul -> tanh: the matmul result and the product stay in UB.
// CHECK-LABEL: func.func @epilogue
// CHECK-NEXT:    %[[K:.*]] = call @epilogue_ub_matmul_elemwise_0(%arg0, %arg1, %arg2)
// CHECK-NEXT:    return %[[K]]
// CHECK-LABEL: func.func private @epilogue_ub_matmul_elemwise_0
// CHECK-SAME:    graph.fusion_kind = "ub_matmul_elemwise", graph.kernel, graph.kernel_ops = ["graph.matmul", "graph.mul", "graph.tanh"]
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[ATbeMatMulElemwiseFusionPass]: pattern=TbeMatMulElemwiseFusion, matched_times=1, effected_times=1
func.func @epilogue(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.tanh"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A fused matmul op (graph fusion's matmul_bias_add) heads the kernel too; the epilogue stops at
// max-epilogue=2 ops by default, 3 fit with max-epilogue=3.
// CHECK-LABEL: func.func @fused_head
// CHECK-NEXT:    %[[K:.*]] = call @fused_head_ub_matmul_elemwise_0(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%[[K]])
// CHECK-NEXT:    return %[[N]]
// CHECK:       graph.kernel_ops = ["graph.matmul_bias_add", "graph.relu", "graph.sqrt"]
// THREE-LABEL: func.func @fused_head
// THREE-NEXT:    call @fused_head_ub_matmul_elemwise_0
// THREE-NEXT:    return
// THREE:       graph.kernel_ops = ["graph.matmul_bias_add", "graph.relu", "graph.sqrt", "graph.neg"]
func.func @fused_head(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.matmul_bias_add"(%x, %w, %b) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.sqrt"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.neg"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// The matmul result is also returned: it is a second result of the kernel (written out once), the
// epilogue still reads it from UB.
// CHECK-LABEL: func.func @matmul_returned
// CHECK-NEXT:    %[[K:.*]]:2 = call @matmul_returned_ub_matmul_elemwise_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]#1, %[[K]]#0
func.func @matmul_returned(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.sigmoid"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}
