// f16/bf16: composites whose references compute in f32 (one rounding at the end) expand between casts, so the
// expansion rounds once too; composites that are exact in the narrow type (square, relu, add_n, bias_add,
// squared_difference, tile) stay in it.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{backend=npu enable-ops=Softmax,RmsNorm})' %s | FileCheck %s

// CHECK-LABEL: func.func @softmax_f16
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg0) : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK-NEXT:    "graph.reduce_max"(%[[X]]) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK:         %[[R:.*]] = "graph.div"
// CHECK-NEXT:    %[[Y:.*]] = "graph.cast"(%[[R]]) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[Y]]
func.func @softmax_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Every float operand is cast (gamma too).
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg0) : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[G:.*]] = "graph.cast"(%arg1) : (tensor<8xbf16>) -> tensor<8xf32>
// CHECK:         %[[R:.*]] = "graph.mul"(%{{.*}}, %[[G]]) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.cast"(%[[R]]) : (tensor<2x8xf32>) -> tensor<2x8xbf16>
// CHECK-NEXT:    return %[[Y]]
func.func @rms_norm_bf16(%x: tensor<2x8xbf16>, %g: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %0 = "graph.rms_norm"(%x, %g) : (tensor<2x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

// CHECK-LABEL: func.func @sigmoid_f16
// CHECK-NEXT:    %[[X:.*]] = "graph.cast"(%arg0) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK:         %[[NUM:.*]] = "graph.select"
// CHECK-NEXT:    %[[S:.*]] = "graph.div"(%[[NUM]],
// CHECK-NEXT:    %[[Y:.*]] = "graph.cast"(%[[S]]) : (tensor<8xf32>) -> tensor<8xf16>
// CHECK-NEXT:    return %[[Y]]
func.func @sigmoid_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = "graph.sigmoid"(%x) : (tensor<8xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// CHECK-LABEL: func.func @exact_in_f16
// CHECK-NOT:     "graph.cast"
// CHECK:         "graph.mul"(%arg0, %arg0) : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK-NOT:     "graph.cast"
// CHECK:         return
func.func @exact_in_f16(%x: tensor<8xf16>, %b: tensor<8xf16>) -> (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) {
  %0 = "graph.square"(%x) : (tensor<8xf16>) -> tensor<8xf16>
  %1 = "graph.relu"(%x) : (tensor<8xf16>) -> tensor<8xf16>
  %2 = "graph.add_n"(%x, %b) : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  %3 = "graph.squared_difference"(%x, %b) : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  return %0, %1, %2, %3 : tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>
}
