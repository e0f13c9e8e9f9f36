// outline-fused-ops moves each fused or compound op left in a caller into a private kernel function of its
// own (graph.kernel), so that the kernel's loops are fused after lowering; basic ops and ops already inside
// kernels stay where they are.
// RUN: graphfuse-opt --split-input-file --outline-fused-ops %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --outline-fused-ops --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: outline-fused-ops
// STATS-NEXT: (S) 2 num-outlined

// CHECK-LABEL: func.func @block
// CHECK-NEXT:    %[[S:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    %[[N:.*]] = call @block_fused_0(%[[S]], %arg2, %arg3)
// CHECK-NEXT:    %[[P:.*]] = call @block_fused_1(%[[N]])
// CHECK-NEXT:    return %[[P]]
// CHECK:       func.func private @block_fused_0(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-SAME:    attributes {graph.fusion_kind = "layer_norm", graph.kernel, graph.kernel_ops = ["graph.layer_norm"]}
// CHECK-NEXT:    "graph.layer_norm"(%arg0, %arg1, %arg2)
// CHECK:       func.func private @block_fused_1(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-SAME:    graph.fusion_kind = "softmax"
func.func @block(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.layer_norm"(%0, %g, %b) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Negative case: nothing to outline, basic ops only and a fused op already inside a kernel.
// CHECK-LABEL: func.func @basic
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    call @basic_kernel_0
// CHECK-LABEL: func.func private @basic_kernel_0
// CHECK-NEXT:    "graph.softmax"
func.func @basic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = call @basic_kernel_0(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func private @basic_kernel_0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
