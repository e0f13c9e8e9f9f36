// ConvConcatFusionPass: convolutions of one input, concatenated on channels, are one convolution whose
// filters are theirs in the concat's order; the input is read once.
// RUN: graphfuse-opt --split-input-file --ConvConcatFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --ConvConcatFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// CHECK-LABEL: func.func @two_convs
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]], {{\[\[\[}}5.000000e+00]], {{\[\[}}6.000000e+00]]]]> : tensor<3x2x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = "graph.conv2d"(%arg0, %[[W]]) : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    return %[[C]]
// LOG: pattern=ConvConcatFusion, matched_times=1, effected_times=1
func.func @two_convs(%x: tensor<1x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %w0 = arith.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %w1 = arith.constant dense<[[[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]]]> : tensor<2x2x1x1xf32>
  %0 = "graph.conv2d"(%x, %w0) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %1 = "graph.conv2d"(%x, %w1) : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %2 : tensor<1x3x3x3xf32>
}

// -----

// Strides, pads and dilations kept; a negative axis; a dynamic batch.
// CHECK-LABEL: func.func @strided
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %{{.*}}) {dilations = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x2x9x9xf16>, tensor<5x2x3x3xf16>) -> tensor<?x5x4x5xf16>
// CHECK-NEXT:    return %[[C]]
// CHECK-NOT:     graph.concat
func.func @strided(%x: tensor<?x2x9x9xf16>) -> tensor<?x5x4x5xf16> {
  %w0 = arith.constant dense<1.0> : tensor<2x2x3x3xf16>
  %w1 = arith.constant dense<2.0> : tensor<3x2x3x3xf16>
  %0 = "graph.conv2d"(%x, %w0) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 1>}
      : (tensor<?x2x9x9xf16>, tensor<2x2x3x3xf16>) -> tensor<?x2x4x5xf16>
  %1 = "graph.conv2d"(%x, %w1) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 1>}
      : (tensor<?x2x9x9xf16>, tensor<3x2x3x3xf16>) -> tensor<?x3x4x5xf16>
  %2 = "graph.concat"(%0, %1) {axis = -3 : i64} : (tensor<?x2x4x5xf16>, tensor<?x3x4x5xf16>) -> tensor<?x5x4x5xf16>
  return %2 : tensor<?x5x4x5xf16>
}
