// Which composite ops expand by default: Appendix 1's CPU column (the default backend) and its Ascend
// column (backend=npu). softmax, log_softmax, layer_norm, rms_norm and batch_norm never expand by default.
// RUN: graphfuse-opt --split-input-file --graph-kernel-expand %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph_kernel_expand %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=cpu})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu})' %s | FileCheck %s --check-prefix=NPU

// Expanded on both backends.
// CHECK-LABEL: func.func @cpu_and_npu
// CHECK-NOT:     "graph.square"
// CHECK-NOT:     "graph.relu"
// CHECK-NOT:     "graph.gelu"
// CHECK-NOT:     "graph.bias_add"
// CHECK-NOT:     "graph.add_n"
// CHECK-NOT:     "graph.tile"
// CHECK:         return
// NPU-LABEL: func.func @cpu_and_npu
// NPU-NOT:       "graph.square"
// NPU-NOT:       "graph.relu"
// NPU-NOT:       "graph.gelu"
// NPU-NOT:       "graph.bias_add"
// NPU-NOT:       "graph.add_n"
// NPU-NOT:       "graph.tile"
// NPU:           return
func.func @cpu_and_npu(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) {
  %0 = "graph.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.gelu"(%x) {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.bias_add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "graph.add_n"(%x, %x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "graph.tile"(%x) {multiples = array<i64: 2, 1>} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>
}

// -----

// Ascend only: the CPU backend leaves these alone.
// CHECK-LABEL: func.func @npu_only
// CHECK:         "graph.fast_gelu"
// CHECK:         "graph.silu"
// CHECK:         "graph.sigmoid"
// CHECK:         "graph.squared_difference"
// CHECK:         "graph.reduce_mean"
// CHECK:         "graph.erf"
// CHECK:         "graph.tanh"
// NPU-LABEL: func.func @npu_only
// NPU-NOT:       "graph.fast_gelu"
// NPU-NOT:       "graph.silu"
// NPU-NOT:       "graph.sigmoid"
// NPU-NOT:       "graph.squared_difference"
// NPU-NOT:       "graph.reduce_mean"
// NPU-NOT:       "graph.erf"
// NPU-NOT:       "graph.tanh"
// NPU:           return
func.func @npu_only(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.fast_gelu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.squared_difference"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "graph.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %5 = "graph.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = "graph.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Off by default everywhere (N for CPU and Ascend; rms_norm and batch_norm are not listed): left alone.
// CHECK-LABEL: func.func @never_by_default
// CHECK-NEXT:    "graph.softmax"
// CHECK-NEXT:    "graph.log_softmax"
// CHECK-NEXT:    "graph.layer_norm"
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.batch_norm"
// CHECK-NEXT:    return
// NPU-LABEL: func.func @never_by_default
// NPU-NEXT:      "graph.softmax"
// NPU-NEXT:      "graph.log_softmax"
// NPU-NEXT:      "graph.layer_norm"
// NPU-NEXT:      "graph.rms_norm"
// NPU-NEXT:      "graph.batch_norm"
// NPU-NEXT:      return
func.func @never_by_default(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %c: tensor<3xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %1 = "graph.log_softmax"(%x) {axis = -1 : i64} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %2 = "graph.layer_norm"(%x, %g, %g) : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %3 = "graph.rms_norm"(%x, %g) : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %4 = "graph.batch_norm"(%x, %c, %c, %c, %c) : (tensor<2x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// Basic ops are never touched.
// CHECK-LABEL: func.func @basic_ops
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    return
// NPU-LABEL: func.func @basic_ops
// NPU-NEXT:      "graph.exp"
// NPU-NEXT:      "graph.add"
func.func @basic_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.add"(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
