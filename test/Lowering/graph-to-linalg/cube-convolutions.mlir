// graph-to-linalg{cube-convolutions} (the NPU's lowering) keeps each convolution of one group a
// linalg.conv_2d_nchw_fchw, the cube op npu-buffer-assign tiles, whatever the host's registers; without the
// option the same convolutions become the CPU's forms (a direct generic or im2col + contract).
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg{cube-convolutions})' %s | FileCheck %s --check-prefix=CUBE
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s --check-prefix=CPU

// Wide rows (the CPU's direct form) and a bias (the accumulator's start).
// CUBE-LABEL: func.func @wide
// CUBE:         tensor.pad
// CUBE:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>)
// CUBE:         linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CPU-LABEL: func.func @wide
// CPU-NOT:     linalg.conv_2d_nchw_fchw
// CPU:         return
func.func @wide(%x: tensor<1x4x32x32xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x32x32xf32> {
  %0 = "graph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x32x32xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x32x32xf32>
  return %0 : tensor<1x8x32x32xf32>
}

// -----

// Strided and narrow (the CPU's im2col form).
// CUBE-LABEL: func.func @strided
// CUBE:         linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CPU-LABEL: func.func @strided
// CPU-NOT:     linalg.conv_2d_nchw_fchw
// CPU:         linalg.contract
func.func @strided(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Negative case: a depthwise convolution is a named depthwise op either way.
// CUBE-LABEL: func.func @depthwise
// CUBE-NOT:     linalg.conv_2d_nchw_fchw
// CUBE:         linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
