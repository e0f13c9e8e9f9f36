// SplitConvConcatFusionPass: split(x) on channels -> one conv2d per piece ->
// concat on channels, in the same order, is one grouped conv2d whose weights
// are the convs' weights concatenated on the output-channel axis.
// RUN: graphfuse-opt --split-input-file --SplitConvConcatFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --SplitConvConcatFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// CHECK-LABEL: func.func @two_pieces
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = "graph.conv2d"(%arg0, %[[W]]) {groups = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    return %[[C]]
// LOG: pattern=SplitConvConcatFusion, matched_times=1, effected_times=1
func.func @two_pieces(%x: tensor<1x4x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w0 = arith.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %w1 = arith.constant dense<[[[[3.0]], [[4.0]]]]> : tensor<1x2x1x1xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
  %1 = "graph.conv2d"(%0#0, %w0) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.conv2d"(%0#1, %w1) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %3 : tensor<1x2x3x3xf32>
}

// -----

// Three pieces, negative axes, strides / pads / dilations kept, dynamic batch.
// CHECK-LABEL: func.func @three_pieces
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %{{.*}}) {dilations = array<i64: 1, 2>, groups = 3 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 1>} : (tensor<?x6x7x7xf16>, tensor<12x2x3x3xf16>) -> tensor<?x12x3x4xf16>
// CHECK-NEXT:    return %[[C]]
// CHECK-NOT:     graph.split
func.func @three_pieces(%x: tensor<?x6x7x7xf16>) -> tensor<?x12x3x4xf16> {
  %w0 = arith.constant dense<1.0> : tensor<4x2x3x3xf16>
  %w1 = arith.constant dense<2.0> : tensor<4x2x3x3xf16>
  %w2 = arith.constant dense<3.0> : tensor<4x2x3x3xf16>
  %0:3 = "graph.split"(%x) {axis = -3 : i64, sizes = array<i64: 2, 2, 2>}
      : (tensor<?x6x7x7xf16>) -> (tensor<?x2x7x7xf16>, tensor<?x2x7x7xf16>, tensor<?x2x7x7xf16>)
  %1 = "graph.conv2d"(%0#0, %w0) {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 2>}
      : (tensor<?x2x7x7xf16>, tensor<4x2x3x3xf16>) -> tensor<?x4x3x4xf16>
  %2 = "graph.conv2d"(%0#1, %w1) {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 2>}
      : (tensor<?x2x7x7xf16>, tensor<4x2x3x3xf16>) -> tensor<?x4x3x4xf16>
  %3 = "graph.conv2d"(%0#2, %w2) {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 2>}
      : (tensor<?x2x7x7xf16>, tensor<4x2x3x3xf16>) -> tensor<?x4x3x4xf16>
  %4 = "graph.concat"(%1, %2, %3) {axis = -3 : i64}
      : (tensor<?x4x3x4xf16>, tensor<?x4x3x4xf16>, tensor<?x4x3x4xf16>) -> tensor<?x12x3x4xf16>
  return %4 : tensor<?x12x3x4xf16>
}
