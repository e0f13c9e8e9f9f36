// ConvToFullyConnectionFusionPass: a conv2d whose kernel covers its whole
// unpadded input (one output position) is a fully connected layer:
// reshape x to [N, C*H*W], matmul with w as [O, C*H*W] (transpose_b), reshape to [N, O, 1, 1].
// RUN: graphfuse-opt --split-input-file --ConvToFullyConnectionFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --ConvToFullyConnectionFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// CHECK-LABEL: func.func @weights_argument
// CHECK-NEXT:    %[[X:.*]] = "graph.reshape"(%arg0) : (tensor<2x3x4x4xf32>) -> tensor<2x48xf32>
// CHECK-NEXT:    %[[W:.*]] = "graph.reshape"(%arg1) : (tensor<8x3x4x4xf32>) -> tensor<8x48xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%[[X]], %[[W]]) {transpose_b = true} : (tensor<2x48xf32>, tensor<8x48xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.reshape"(%[[M]]) : (tensor<2x8xf32>) -> tensor<2x8x1x1xf32>
// CHECK-NEXT:    return %[[Y]]
// LOG: pattern=ConvToFullyConnectionFusion, matched_times=1, effected_times=1
func.func @weights_argument(%x: tensor<2x3x4x4xf32>, %w: tensor<8x3x4x4xf32>) -> tensor<2x8x1x1xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<2x3x4x4xf32>, tensor<8x3x4x4xf32>) -> tensor<2x8x1x1xf32>
  return %0 : tensor<2x8x1x1xf32>
}

// -----

// A constant weight is reshaped at compile time (row-major: [o, c, h, w] -> [o, c*H*W + h*W + w]).
// CHECK-LABEL: func.func @constant_weights
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>
// CHECK-DAG:     %[[X:.*]] = "graph.reshape"(%arg0) : (tensor<3x1x2x2xf32>) -> tensor<3x4xf32>
// CHECK:         "graph.matmul"(%[[X]], %[[W]]) {transpose_b = true}
// CHECK-NOT:     graph.conv2d
func.func @constant_weights(%x: tensor<3x1x2x2xf32>) -> tensor<3x2x1x1xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]]]> : tensor<2x1x2x2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<3x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<3x2x1x1xf32>
  return %0 : tensor<3x2x1x1xf32>
}

// -----

// Any stride gives the same single position; a dynamic batch dim stays dynamic.
// CHECK-LABEL: func.func @dynamic_batch_strided
// CHECK-NEXT:    %[[X:.*]] = "graph.reshape"(%arg0) : (tensor<?x2x3x5xf16>) -> tensor<?x30xf16>
// CHECK-NEXT:    %[[W:.*]] = "graph.reshape"(%arg1) : (tensor<4x2x3x5xf16>) -> tensor<4x30xf16>
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%[[X]], %[[W]]) {transpose_b = true} : (tensor<?x30xf16>, tensor<4x30xf16>) -> tensor<?x4xf16>
// CHECK-NEXT:    %[[Y:.*]] = "graph.reshape"(%[[M]]) : (tensor<?x4xf16>) -> tensor<?x4x1x1xf16>
func.func @dynamic_batch_strided(%x: tensor<?x2x3x5xf16>, %w: tensor<4x2x3x5xf16>) -> tensor<?x4x1x1xf16> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 2, 3>} : (tensor<?x2x3x5xf16>, tensor<4x2x3x5xf16>) -> tensor<?x4x1x1xf16>
  return %0 : tensor<?x4x1x1xf16>
}

// -----

// 1x1 images and kernels: the dilation does not matter either.
// CHECK-LABEL: func.func @one_by_one
// CHECK:         "graph.matmul"
// CHECK-NOT:     graph.conv2d
func.func @one_by_one(%x: tensor<5x6x1x1xf32>, %w: tensor<7x6x1x1xf32>) -> tensor<5x7x1x1xf32> {
  %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 3, 2>} : (tensor<5x6x1x1xf32>, tensor<7x6x1x1xf32>) -> tensor<5x7x1x1xf32>
  return %0 : tensor<5x7x1x1xf32>
}
