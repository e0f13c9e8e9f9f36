// BatchNormSplitFusionPass splits an inference batch_norm y * s + t between its
// producer conv2d (the scale s goes into the weights) and its consumer's
// constant per-channel bias (the shift t = offset - mean * s goes into that bias).
// RUN: graphfuse-opt --split-input-file --BatchNormSplitFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --BatchNormSplitFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// s = [1, 0.5], t = [0.1 - 1, -0.2 - 1.5] = [-0.9, -1.7]; bias + t = [-0.4, -1.45].
// CHECK-LABEL: func.func @conv_bn_bias_add
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[-4.000000e-01, -1.450000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}2.500000e-01]], {{\[\[}}-5.000000e-01]]]]> : tensor<2x2x1x1xf32>
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %[[W]])
// CHECK-NEXT:    %[[Y:.*]] = "graph.bias_add"(%[[C]], %[[B]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[Y]]
// LOG: pattern=BatchNormSplitBiasAddFusion, matched_times=1, effected_times=1
// LOG: pattern=BatchNormSplitAddFusion, matched_times=0, effected_times=0
func.func @conv_bn_bias_add(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %bias = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %bias) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// The consumer may be an add of a per-channel constant (1, C, 1, 1), either operand order.
// CHECK-LABEL: func.func @conv_bn_add
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[-4.000000e-01, -1.450000e+00]> : tensor<2xf32>
// CHECK:         %[[C:.*]] = "graph.conv2d"
// CHECK-NEXT:    %[[Y:.*]] = "graph.bias_add"(%[[C]], %[[B]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[Y]]
// LOG: pattern=BatchNormSplitBiasAddFusion, matched_times=0, effected_times=0
// LOG: pattern=BatchNormSplitAddFusion, matched_times=1, effected_times=1
func.func @conv_bn_add(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %bias = arith.constant dense<[[[[0.5]], [[0.25]]]]> : tensor<1x2x1x1xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.add"(%bias, %1) : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// A scalar constant is a per-channel bias too (the same value for every channel).
// CHECK-LABEL: func.func @conv_bn_add_scalar
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[1.000000e-01, -0.699999988]> : tensor<2xf32>
// CHECK:         %[[C:.*]] = "graph.conv2d"
// CHECK-NEXT:    "graph.bias_add"(%[[C]], %[[B]]) {axis = 1 : i64}
func.func @conv_bn_add_scalar(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %offset = arith.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32}
      : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.add"(%1, %one) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// Strided, padded, grouped convs keep their attributes; dynamic N is fine.
// CHECK-LABEL: func.func @grouped
// CHECK:         %[[C:.*]] = "graph.conv2d"(%arg0, %{{.*}}) {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<?x4x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<?x2x3x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = "graph.bias_add"(%[[C]], %{{.*}}) {axis = 1 : i64}
// CHECK-NEXT:    return %[[Y]]
func.func @grouped(%x: tensor<?x4x6x6xf32>) -> tensor<?x2x3x6xf32> {
  %w = arith.constant dense<0.5> : tensor<2x2x3x3xf32>
  %p = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>}
      : (tensor<?x4x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<?x2x3x6xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<?x2x3x6xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3x6xf32>
  %2 = "graph.bias_add"(%1, %p) {axis = -3 : i64} : (tensor<?x2x3x6xf32>, tensor<2xf32>) -> tensor<?x2x3x6xf32>
  return %2 : tensor<?x2x3x6xf32>
}
