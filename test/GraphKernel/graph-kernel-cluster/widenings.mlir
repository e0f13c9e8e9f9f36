// An exact widening (bf16 -> f32, int8 -> f32) that only products read, as factors, stays out of its producer's
// kernel: lowered alone it is a widening the product reads through (narrow-contraction-operands), where in the
// kernel it would be the kernel's f32 result. A cast that rounds, or whose result something else reads too, or
// that feeds a bias, joins as before.
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-cluster --log-level=debug %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY

// A bf16 linear with a bias as PyTorch computes it (f32 product of widened operands): the widening of the
// activation stays out of the kernel of the ops that made it.
// CHECK-LABEL: func.func @bf16_linear
// CHECK:         %[[K:.*]] = call @bf16_linear_kernel_0(%arg0)
// CHECK-SAME:      -> tensor<4x16xbf16>
// CHECK:         %[[A:.*]] = "graph.cast"(%[[K]]) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
// CHECK:         "graph.matmul_bias_add"(%[[A]],
// CHECK-LABEL: func.func private @bf16_linear_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.mul", "graph.add"]
// WHY: graph.cast at {{.*}}widenings.mlir:[[@LINE+6]]:8 stays out of kernels: it exactly widens a contraction's operand
// WHY-NEXT: graph.cast at {{.*}}widenings.mlir:[[@LINE+6]]:8 stays out of kernels
func.func @bf16_linear(%x: tensor<4x16xbf16>, %w: tensor<32x16xbf16>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %c = arith.constant dense<2.0> : tensor<4x16xbf16>
  %0 = "graph.mul"(%x, %c) : (tensor<4x16xbf16>, tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %1 = "graph.add"(%0, %x) : (tensor<4x16xbf16>, tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %2 = "graph.cast"(%1) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
  %3 = "graph.cast"(%w) : (tensor<32x16xbf16>) -> tensor<32x16xf32>
  %4 = "graph.matmul_bias_add"(%2, %3, %b) {transpose_b = true} : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// int8 -> f32 is exact too (an int8 weight widened for the row dots).
// CHECK-LABEL: func.func @int8_weight
// CHECK:         call @int8_weight_kernel_0
// CHECK:         "graph.cast"({{.*}}) : (tensor<16x32xi8>) -> tensor<16x32xf32>
// CHECK:         "graph.matmul"
// WHY: graph.cast at {{.*}}widenings.mlir:[[@LINE+5]]:8 stays out of kernels
func.func @int8_weight(%x: tensor<2x16xf32>, %w: tensor<16x32xi8>) -> tensor<2x32xf32> {
  %c = arith.constant dense<1> : tensor<16x32xi8>
  %0 = "graph.add"(%w, %c) : (tensor<16x32xi8>, tensor<16x32xi8>) -> tensor<16x32xi8>
  %1 = "graph.abs"(%0) : (tensor<16x32xi8>) -> tensor<16x32xi8>
  %2 = "graph.cast"(%1) : (tensor<16x32xi8>) -> tensor<16x32xf32>
  %3 = "graph.matmul"(%x, %2) : (tensor<2x16xf32>, tensor<16x32xf32>) -> tensor<2x32xf32>
  return %3 : tensor<2x32xf32>
}

// -----

// Negative: the widened value is also read by an add, so the cast joins the kernel (its result is computed
// anyway); and a widening that feeds the bias joins too (the bias is read once, not in the product).
// CHECK-LABEL: func.func @shared_and_bias
// CHECK:         %[[K:.*]]:2 = call @shared_and_bias_kernel_0
// CHECK:         %[[B:.*]] = call @shared_and_bias_kernel_1
// CHECK:         "graph.matmul_bias_add"(%[[K]]#0, %arg1, %[[B]])
// CHECK-LABEL: func.func private @shared_and_bias_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.neg", "graph.cast", "graph.add"]
// CHECK-LABEL: func.func private @shared_and_bias_kernel_1
// CHECK-SAME:    graph.kernel_ops = ["graph.neg", "graph.cast"]
// WHY-NOT: stays out of kernels
func.func @shared_and_bias(%x: tensor<4x16xbf16>, %w: tensor<32x16xf32>, %b: tensor<32xbf16>) -> (tensor<4x32xf32>, tensor<4x16xf32>) {
  %0 = "graph.neg"(%x) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %1 = "graph.cast"(%0) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
  %2 = "graph.add"(%1, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = "graph.neg"(%b) : (tensor<32xbf16>) -> tensor<32xbf16>
  %4 = "graph.cast"(%3) : (tensor<32xbf16>) -> tensor<32xf32>
  %5 = "graph.matmul_bias_add"(%1, %w, %4) {transpose_b = true} : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %5, %2 : tensor<4x32xf32>, tensor<4x16xf32>
}

// -----

// Negative: f32 -> bf16 rounds, and i32 -> f32 is not exact: each joins its producer's kernel.
// CHECK-LABEL: func.func @inexact
// CHECK:         call @inexact_kernel_0
// CHECK:         call @inexact_kernel_1
// CHECK-LABEL: func.func private @inexact_kernel_0
// CHECK-SAME:    graph.kernel_ops = ["graph.neg", "graph.cast"]
// CHECK-LABEL: func.func private @inexact_kernel_1
// CHECK-SAME:    graph.kernel_ops = ["graph.abs", "graph.cast"]
// WHY-NOT: stays out of kernels
func.func @inexact(%x: tensor<4x16xf32>, %w: tensor<16x8xbf16>, %i: tensor<16x8xi32>, %v: tensor<4x16xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  %0 = "graph.neg"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.cast"(%0) : (tensor<4x16xf32>) -> tensor<4x16xbf16>
  %2 = "graph.matmul"(%1, %w) : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %3 = "graph.abs"(%i) : (tensor<16x8xi32>) -> tensor<16x8xi32>
  %4 = "graph.cast"(%3) : (tensor<16x8xi32>) -> tensor<16x8xf32>
  %5 = "graph.matmul"(%v, %4) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %2, %5 : tensor<4x8xbf16>, tensor<4x8xf32>
}
