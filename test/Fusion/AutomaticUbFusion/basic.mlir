// AutomaticUbFusion: any connected group of UB-fusable ops whose live values fit the Unified Buffer.
// RUN: graphfuse-opt --split-input-file --AutomaticUbFusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --AutomaticUbFusion --log-level=info %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// Reductions, broadcasts back and elementwise ops in one kernel (the pattern passes would cut it).
// CHECK-LABEL: func.func @row_scale
// CHECK-NEXT:    %[[K:.*]] = call @row_scale_ub_auto_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]
// CHECK-LABEL: func.func private @row_scale_ub_auto_0
// CHECK-SAME:    graph.fusion_kind = "ub_auto", graph.kernel, graph.kernel_ops = ["graph.mul", "graph.reduce_max", "graph.div", "graph.mul"]
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], UBFusionPass[AutomaticUbFusion]: pattern=AutomaticUbFusion, matched_times=1, effected_times=1
func.func @row_scale(%x: tensor<8x16xf32>, %g: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = "graph.mul"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = "graph.reduce_max"(%0) {axes = array<i64: 1>, keep_dims = true} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %2 = "graph.div"(%0, %1) : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %3 = "graph.mul"(%2, %g) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// A matmul heads a kernel with layout ops and elementwise ops after it.
// CHECK-LABEL: func.func @matmul_head
// CHECK-NEXT:    %[[K:.*]] = call @matmul_head_ub_auto_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]
// CHECK:       graph.kernel_ops = ["graph.matmul", "graph.reshape", "graph.transpose", "graph.exp"]
func.func @matmul_head(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<2x4x4xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.reshape"(%0) : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %2 = "graph.transpose"(%1) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %3 = "graph.exp"(%2) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %3 : tensor<2x4x4xf32>
}

// -----

// The budget: each f32 value here is 4 KiB.  Fused whole, exp's result stays live until the add
// (3 values = 12 KiB at the peak); with ub-size=8192 only exp and tanh fit (2 values at a time), and
// neg would make exp's result, an output, live beside tanh's and its own.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(AutomaticUbFusion{ub-size=8192})' --split-input-file %s | FileCheck %s --check-prefix=SMALL
// RUN: graphfuse-opt --pass-pipeline='builtin.module(AutomaticUbFusion{ub-size=8192})' --split-input-file --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=SMALL-WHY
// CHECK-LABEL: func.func @budget
// CHECK-NEXT:    call @budget_ub_auto_0
// CHECK-NEXT:    return
// CHECK:       graph.kernel_ops = ["graph.exp", "graph.tanh", "graph.neg", "graph.add"]
// SMALL-LABEL: func.func @budget
// SMALL-NEXT:    %[[K:.*]]:2 = call @budget_ub_auto_0(%arg0)
// SMALL-NEXT:    %[[N:.*]] = "graph.neg"(%[[K]]#1)
// SMALL-NEXT:    %[[A:.*]] = "graph.add"(%[[N]], %[[K]]#0)
// SMALL-NEXT:    return %[[A]]
// SMALL:       graph.kernel_ops = ["graph.exp", "graph.tanh"]
// SMALL-WHY: AutomaticUbFusion: graph.neg at {{.*}} stays out of the kernel of graph.exp at {{.*}}: the kernel would keep 12288 bytes live in UB, more than its 8192 bytes
func.func @budget(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "graph.exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "graph.tanh"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "graph.neg"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = "graph.add"(%2, %0) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %3 : tensor<1024xf32>
}
