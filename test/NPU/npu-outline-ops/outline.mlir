// npu-outline-ops: on the NPU every task is a kernel reading GM and writing GM, so each graph op left
// outside a kernel is outlined as a kernel of its own.  A split marked as no task (FusionVirtualOpSetSwitch,
// `_no_task` / `npu.no_task`) is a view: its consumers take the split's input and slice it themselves.
// RUN: graphfuse-opt %s --split-input-file --npu-outline-ops | FileCheck %s

// One kernel per op; the constant is copied into the kernel that reads it; arguments become read-only.
// CHECK-LABEL: func.func @two_ops(%arg0: tensor<4x8xf32> {bufferization.writable = false})
// CHECK-NEXT:    %[[A:.*]] = call @two_ops_add_1(%arg0)
// CHECK-NEXT:    %[[B:.*]] = call @two_ops_exp_2(%[[A]])
// CHECK-NEXT:    return %[[B]]
// CHECK-LABEL: func.func private @two_ops_add_1
// CHECK-SAME:      graph.fusion_kind = "add", graph.kernel
// CHECK:         arith.constant dense<1.000000e+00>
// CHECK:         "graph.add"
// CHECK-LABEL: func.func private @two_ops_exp_2
func.func @two_ops(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %0 = "graph.add"(%x, %c) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A no-task split is no kernel: each consumer kernel gets the split's input and takes its slice.
// CHECK-LABEL: func.func @view_split
// CHECK-NOT:     "graph.split"
// CHECK:         call @view_split_silu_1(%arg0) : (tensor<4x16xf32>) -> tensor<4x8xf32>
// CHECK:         call @view_split_mul_2(%arg0, %{{.*}}) : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-LABEL: func.func private @view_split_silu_1(%arg0: tensor<4x16xf32>
// CHECK-SAME:      graph.kernel_ops = ["graph.split", "graph.silu"]
// CHECK-NEXT:    %{{.*}}:2 = "graph.split"(%arg0)
// CHECK-LABEL: func.func private @view_split_mul_2
func.func @view_split(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %gate, %up = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 8, 8>, npu.no_task = true} : (tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %s = "graph.silu"(%gate) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.mul"(%s, %up) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A kernel already outlined (by graph-kernel or UB fusion) reading a no-task split: the split moves into
// the kernel, which now takes the split's input.
// CHECK-LABEL: func.func @kernel_reads_view
// CHECK-NOT:     "graph.split"
// CHECK:         call @fused(%arg0) : (tensor<4x16xf32>) -> tensor<4x8xf32>
// CHECK-LABEL: func.func private @fused(%arg0: tensor<4x16xf32>
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%arg0)
// CHECK-NEXT:    "graph.exp"(%[[S]]#1)
func.func @kernel_reads_view(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %a, %b = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 8, 8>, npu.no_task = true} : (tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %y = call @fused(%b) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
func.func private @fused(%b: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel, graph.fusion_kind = "exp"} {
  %0 = "graph.exp"(%b) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Negative case: a split without the attribute is a task; it is outlined like any op.
// CHECK-LABEL: func.func @task_split
// CHECK:         call @task_split_split_0(%arg0)
// CHECK-LABEL: func.func private @task_split_split_0
// CHECK-SAME:      graph.fusion_kind = "split"
func.func @task_split(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a, %b = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 8, 8>} : (tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
