// Ops defined by their expansion (MindSpore's Appendix 1 gradients and activations): graph-kernel-expand
// writes out the expansion their reference evaluates; on the CPU defaults these three are not expanded.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand)' %s | FileCheck %s --check-prefix=CPU

// SigmoidGrad(y, dy) = dy * (y * (1 - y)).
// CHECK-LABEL: func.func @sigmoid_grad
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = "graph.sub"(%[[ONE]], %arg0)
// CHECK-NEXT:    %[[P:.*]] = "graph.mul"(%arg0, %[[S]])
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%arg1, %[[P]])
// CHECK-NEXT:    return %[[R]]
// CPU-LABEL: func.func @sigmoid_grad
// CPU-NEXT:    "graph.sigmoid_grad"
func.func @sigmoid_grad(%y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.sigmoid_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// f16: computed in f32 between casts, rounded once.
// CHECK-LABEL: func.func @relu_grad_f16
// CHECK-NEXT:    %[[DY:.*]] = "graph.cast"(%arg0) : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = "graph.greater"(%[[X]], %[[Z]])
// CHECK-NEXT:    %[[S:.*]] = "graph.select"(%[[M]], %[[DY]], %[[Z]])
// CHECK-NEXT:    %[[R:.*]] = "graph.cast"(%[[S]]) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[R]]
// CPU-LABEL: func.func @relu_grad_f16
// CPU-NEXT:    "graph.relu_grad"
func.func @relu_grad_f16(%dy: tensor<4x8xf16>, %x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "graph.relu_grad"(%dy, %x) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// The attribute reaches the expansion.
// CHECK-LABEL: func.func @leaky_relu
// CHECK:         arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK:         "graph.select"
// CHECK-NOT:     graph.leaky_relu
// CPU-LABEL: func.func @leaky_relu
// CPU-NEXT:    "graph.leaky_relu"
func.func @leaky_relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.leaky_relu"(%x) {negative_slope = 2.500000e-01 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The CPU column of Appendix 1 expands TanhGrad by default.
// CHECK-LABEL: func.func @tanh_grad
// CHECK-NOT:     graph.tanh_grad
// CPU-LABEL: func.func @tanh_grad
// CPU-NOT:     graph.tanh_grad
// CPU:         "graph.mul"
func.func @tanh_grad(%y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.tanh_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
