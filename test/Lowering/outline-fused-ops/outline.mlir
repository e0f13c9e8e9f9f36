// outline-fused-ops moves each fused or compound op left in a caller into a private kernel function of its
// own (graph.kernel), so that the kernel's loops are fused after lowering; a row or elementwise compound op
// takes the lone elementwise ops next to it into its kernel, and a 2-D product its epilogue (absorb, the CPU
// opt levels' setting); basic ops used elsewhere and ops already inside kernels stay where they are.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(outline-fused-ops{absorb=true})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(outline-fused-ops{absorb=true})' --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: graphfuse-opt --split-input-file --outline-fused-ops %s | FileCheck %s --check-prefix=ALONE
// STATS: outline-fused-ops
// STATS-NEXT: (S) 11 num-absorbed
// STATS-NEXT: (S) 11 num-outlined

// The add before the layer norm is computed in its kernel; the softmax after it is a compound op of its own.
// CHECK-LABEL: func.func @block
// CHECK-NEXT:    %[[N:.*]] = call @block_fused_0(%arg0, %arg1, %arg2, %arg3)
// CHECK-NEXT:    %[[P:.*]] = call @block_fused_1(%[[N]])
// CHECK-NEXT:    return %[[P]]
// CHECK:       func.func private @block_fused_0(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<8xf32>, %arg3: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-SAME:    attributes {graph.fusion_kind = "layer_norm", graph.kernel, graph.kernel_ops = ["graph.add", "graph.layer_norm"]}
// CHECK-NEXT:    %[[S:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    "graph.layer_norm"(%[[S]], %arg2, %arg3)
// CHECK:       func.func private @block_fused_1(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-SAME:    graph.fusion_kind = "softmax"
// ALONE-LABEL: func.func @block
// ALONE-NEXT:    %[[S:.*]] = "graph.add"(%arg0, %arg1)
// ALONE-NEXT:    call @block_fused_0(%[[S]], %arg2, %arg3)
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

// -----

// A scale before a softmax (a chain of two producers) and a cast after it join the softmax's kernel.
// CHECK-LABEL: func.func @scaled_softmax
// CHECK-NEXT:    %[[K:.*]] = call @scaled_softmax_fused_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[K]]
// CHECK:       func.func private @scaled_softmax_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.mul", "graph.add", "graph.softmax", "graph.cast"]
// ALONE-LABEL: func.func @scaled_softmax
// ALONE-NEXT:    arith.constant
// ALONE-NEXT:    "graph.mul"
// ALONE-NEXT:    "graph.add"
// ALONE-NEXT:    call @scaled_softmax_fused_0
// ALONE-NEXT:    "graph.cast"
func.func @scaled_softmax(%x: tensor<4x8xf32>, %mask: tensor<8xf32>) -> tensor<4x8xf16> {
  %c = arith.constant dense<0.125> : tensor<f32>
  %0 = "graph.mul"(%x, %c) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%0, %mask) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.cast"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %3 : tensor<4x8xf16>
}

// -----

// Negative cases: a producer whose result is also returned stays outside; a consumer reading a value defined
// after the softmax stays outside (the kernel would have to wait for it); a consumer that broadcasts the
// result to a larger shape stays outside; a matmul form takes nothing.
// CHECK-LABEL: func.func @kept_apart
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%arg0, %arg0)
// CHECK-NEXT:    %[[S:.*]] = call @kept_apart_fused_0(%[[M]])
// CHECK-NEXT:    %[[L:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%[[S]], %[[L]])
// CHECK-NEXT:    %[[B:.*]] = "graph.add"(%[[S]], %arg1)
// CHECK-NEXT:    %[[R:.*]] = "graph.relu"(%arg0)
// CHECK-NEXT:    %[[G:.*]] = call @kept_apart_fused_1(%[[R]], %arg2, %arg3)
// CHECK-NEXT:    return %[[M]], %[[A]], %[[B]], %[[G]]
// CHECK:       func.func private @kept_apart_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.softmax"]
// CHECK:       func.func private @kept_apart_fused_1
// CHECK-SAME:    graph.kernel_ops = ["graph.matmul_bias_add"]
func.func @kept_apart(%x: tensor<4x8xf32>, %y: tensor<2x4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.mul"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.add"(%1, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.add"(%1, %y) : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %5 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = "graph.matmul_bias_add"(%5, %w, %bias) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0, %3, %4, %6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>
}

// -----

// An elementwise kernel (graph-kernel fusion's) whose result only the softmax reads is inlined into the
// softmax's kernel; one that the function also returns stays a call.
// CHECK-LABEL: func.func @kernel_prologue
// CHECK-NEXT:    %[[S:.*]] = call @kernel_prologue_fused_0(%arg0, %arg1)
// CHECK-NEXT:    %[[K:.*]] = call @shared_kernel(%arg0, %arg1)
// CHECK-NEXT:    %[[T:.*]] = call @kernel_prologue_fused_1(%[[K]])
// CHECK-NEXT:    return %[[S]], %[[T]], %[[K]]
// CHECK-NOT:   func.func private @scale_kernel
// CHECK:       func.func private @kernel_prologue_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.mul", "graph.add", "graph.softmax"]
// CHECK-NEXT:    arith.constant dense<1.250000e-01>
// CHECK-NEXT:    "graph.mul"(%arg0, %{{.*}})
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.softmax"
// CHECK:       func.func private @kernel_prologue_fused_1
// CHECK-SAME:    graph.kernel_ops = ["graph.softmax"]
// ALONE-LABEL: func.func @kernel_prologue
// ALONE-NEXT:    call @scale_kernel
func.func @kernel_prologue(%x: tensor<4x8xf32>, %mask: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = call @scale_kernel(%x, %mask) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = call @shared_kernel(%x, %mask) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = "graph.softmax"(%2) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %3, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
func.func private @scale_kernel(%x: tensor<4x8xf32>, %mask: tensor<8xf32>) -> tensor<4x8xf32> attributes {graph.kernel, graph.fusion_kind = "elementwise"} {
  %c = arith.constant dense<0.125> : tensor<f32>
  %0 = "graph.mul"(%x, %c) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%0, %mask) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func private @shared_kernel(%x: tensor<4x8xf32>, %mask: tensor<8xf32>) -> tensor<4x8xf32> attributes {graph.kernel, graph.fusion_kind = "elementwise"} {
  %0 = "graph.add"(%x, %mask) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Two operands from one multi-result kernel: inlined once, both read from the copies.
// CHECK-LABEL: func.func @two_results
// CHECK-NEXT:    %[[N:.*]]:2 = call @two_results_fused_0(%arg0, %arg1)
// CHECK-NEXT:    return %[[N]]#0, %[[N]]#1
// CHECK:       func.func private @two_results_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.exp", "graph.neg", "graph.add_rms_norm"]
func.func @two_results(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = call @pair_kernel(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %1:2 = "graph.add_rms_norm"(%0#0, %0#1, %g) {epsilon = 1.0e-06 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %1#0, %1#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func private @pair_kernel(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {graph.kernel, graph.fusion_kind = "parallel"} {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A 2-D product takes its epilogue: the elementwise kernel reading only its result and earlier values is
// inlined, and with the lone residual add after it joins the product's kernel (its constant moved before the
// product); its inputs' producers stay outside.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-NEXT:    %[[R:.*]] = "graph.relu"(%arg0)
// CHECK-NEXT:    %[[E:.*]] = call @matmul_epilogue_fused_0(%[[R]], %arg1, %arg2, %arg3)
// CHECK-NEXT:    return %[[E]]
// CHECK-NOT:   func.func private @act_kernel
// CHECK:       func.func private @matmul_epilogue_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.matmul_bias_add", "graph.mul", "graph.tanh", "graph.add"]
// CHECK-NEXT:    arith.constant dense<5.000000e-01>
// CHECK-NEXT:    %[[P:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[P]], %{{.*}})
// CHECK-NEXT:    %[[T:.*]] = "graph.tanh"(%[[M]])
// CHECK-NEXT:    "graph.add"(%[[T]], %arg3)
// ALONE-LABEL: func.func @matmul_epilogue
// ALONE:         call @act_kernel
func.func @matmul_epilogue(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf32>, %res: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.matmul_bias_add"(%0, %w, %bias) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = call @act_kernel(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.add"(%2, %res) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
func.func private @act_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel, graph.fusion_kind = "elementwise"} {
  %c = arith.constant dense<0.5> : tensor<f32>
  %0 = "graph.mul"(%x, %c) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = "graph.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Epilogues kept out: a kernel that also reads a value computed after the product, a kernel that broadcasts
// the product to a larger shape, and any consumer of a batched (3-D) product.
// CHECK-LABEL: func.func @matmul_epilogue_kept_apart
// CHECK-NEXT:    %[[P:.*]] = call @matmul_epilogue_kept_apart_fused_0(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[L:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[A:.*]] = call @late_kernel(%[[P]], %[[L]])
// CHECK-NEXT:    %[[B:.*]] = call @wide_kernel(%[[P]], %arg3)
// CHECK-NEXT:    %[[Q:.*]] = call @matmul_epilogue_kept_apart_fused_1(%arg3, %arg4)
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%[[Q]])
// CHECK-NEXT:    return %[[A]], %[[B]], %[[N]]
// CHECK:       func.func private @matmul_epilogue_kept_apart_fused_0
// CHECK-SAME:    graph.kernel_ops = ["graph.matmul_bias_add"]
// CHECK:       func.func private @matmul_epilogue_kept_apart_fused_1
// CHECK-SAME:    graph.kernel_ops = ["graph.matmul_add"]
func.func @matmul_epilogue_kept_apart(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf32>,
    %y: tensor<2x4x8xf32>, %w3: tensor<2x8x8xf32>) -> (tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = "graph.matmul_bias_add"(%x, %w, %bias) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = call @late_kernel(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = call @wide_kernel(%0, %y) : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %4 = "graph.matmul_add"(%y, %w3, %y) : (tensor<2x4x8xf32>, tensor<2x8x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %5 = "graph.neg"(%4) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %2, %3, %5 : tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
func.func private @late_kernel(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel, graph.fusion_kind = "elementwise"} {
  %0 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func private @wide_kernel(%x: tensor<4x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {graph.kernel, graph.fusion_kind = "elementwise"} {
  %0 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}
