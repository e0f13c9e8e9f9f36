// ConvBatchnormFusionPass folds an inference batch_norm with constant parameters
// into the weights of the conv2d before it and one new bias_add:
//   w' = w * s[:, None, None, None], b' = (bias - mean) * s + offset, s = scale / sqrt(var + eps).
// RUN: graphfuse-opt --split-input-file --ConvBatchnormFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --ConvBatchnormFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// s = [2 / sqrt(4), 0.5 / sqrt(1)] = [1, 0.5]; b' = -mean * s + offset = [-0.9, -1.7].
// CHECK-LABEL: func.func @conv_bn
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[-0.899999976, -1.700000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}2.500000e-01]], {{\[\[}}-5.000000e-01]]]]> : tensor<2x2x1x1xf32>
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %[[W]]) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.bias_add"(%[[C]], %[[B]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[Y]]
// CHECK-NOT:     graph.batch_norm
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], GraphFusionPass[ConvBatchnormFusionPass]: pattern=ConvBatchnormFusion, matched_times=1, effected_times=1
// LOG: [INFO] RunOnePattern:GraphId[{{[0-9]+}}], GraphFusionPass[ConvBatchnormFusionPass]: pattern=ConvBiasAddBatchnormFusion, matched_times=0, effected_times=0
func.func @conv_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// A bias_add along axis 1 between conv and batch_norm is absorbed:
// b' = (bias - mean) * s + offset = [(3 - 1) * 1 + 0.1, (1 - 3) * 0.5 - 0.2] = [2.1, -1.2].
// CHECK-LABEL: func.func @conv_bias_bn
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[2.100000e+00, -1.200000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[W:.*]] = arith.constant {{.*}} : tensor<2x2x1x1xf32>
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %[[W]])
// CHECK-NEXT:    %[[Y:.*]] = "graph.bias_add"(%[[C]], %[[B]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[Y]]
// LOG: pattern=ConvBatchnormFusion, matched_times=0, effected_times=0
// LOG: pattern=ConvBiasAddBatchnormFusion, matched_times=1, effected_times=1
func.func @conv_bias_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %bias = arith.constant dense<[3.0, 1.0]> : tensor<2xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.bias_add"(%0, %bias) {axis = -3 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.batch_norm"(%1, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// The bias may be an add of a per-channel constant shaped (C, 1, 1), on either side.
// CHECK-LABEL: func.func @conv_add_bn
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[2.100000e+00, -1.200000e+00]> : tensor<2xf32>
// CHECK:         %[[C:.*]] = "graph.conv2d"
// CHECK-NEXT:    "graph.bias_add"(%[[C]], %[[B]]) {axis = 1 : i64}
// CHECK-NOT:     graph.add
func.func @conv_add_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %bias = arith.constant dense<[[[3.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.add"(%bias, %0) : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.batch_norm"(%1, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// The conv keeps its attributes (strides, pads, dilations, groups) as written;
// a depthwise conv (groups = C = O) folds the same way. N may be dynamic.
// CHECK-LABEL: func.func @grouped_strided
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %{{.*}}) {dilations = array<i64: 2, 1>, groups = 2 : i64, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 2>} : (tensor<?x2x9x9xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x4x5xf32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.bias_add"(%[[C]], %{{.*}}) {axis = 1 : i64}
// CHECK-NEXT:    return %[[Y]]
func.func @grouped_strided(%x: tensor<?x2x9x9xf32>) -> tensor<?x2x4x5xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x3x3xf32>
  %p = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 2>, dilations = array<i64: 2, 1>, groups = 2 : i64}
      : (tensor<?x2x9x9xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x4x5xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<?x2x4x5xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x4x5xf32>
  return %1 : tensor<?x2x4x5xf32>
}

// -----

// f16: the folded weights and bias are rounded once to f16.
// CHECK-LABEL: func.func @conv_bn_f16
// CHECK-DAG:     arith.constant dense<[-8.999020e-01, -1.700200e+00]> : tensor<2xf16>
// CHECK-DAG:     arith.constant {{.*}} : tensor<2x2x1x1xf16>
// CHECK:         "graph.conv2d"
// CHECK-NEXT:    "graph.bias_add"
// CHECK-NOT:     graph.batch_norm
func.func @conv_bn_f16(%x: tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf16>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf16>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf16>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf16>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf16>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x4x4xf16>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) -> tensor<1x2x4x4xf16>
  return %1 : tensor<1x2x4x4xf16>
}
