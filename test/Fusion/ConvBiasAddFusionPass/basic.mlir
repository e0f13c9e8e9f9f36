// ConvBiasAddFusionPass: a bias added to a conv2d's channels becomes the conv2d's own bias operand, which
// starts its accumulator (the seed's conv + biasAdd accumulated in place); the add is gone.
// RUN: graphfuse-opt --split-input-file --ConvBiasAddFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --ConvBiasAddFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// A bias_add along the channel axis; the bias is an argument (not a constant).
// CHECK-LABEL: func.func @bias_add
// CHECK-NEXT:    %[[C:.*]] = "graph.conv2d"(%arg0, %arg1, %arg2) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    return %[[C]]
// LOG: GraphFusionPass[ConvBiasAddFusionPass]: pattern=ConvBiasAddFusion, matched_times=1, effected_times=1
func.func @bias_add(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = -3 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// An add of a per-channel constant (1xCx1x1), constant first, in a grouped f16 conv with a dynamic batch:
// the bias becomes a 1-D constant; strides, groups and the activation after it stay.
// CHECK-LABEL: func.func @add_constant
// CHECK-NEXT:    %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf16>
// CHECK-NEXT:    %[[C:.*]] = "graph.conv2d"(%arg0, %arg1, %[[B]]) {groups = 2 : i64, strides = array<i64: 2, 2>} : (tensor<?x4x6x6xf16>, tensor<4x2x1x1xf16>, tensor<4xf16>) -> tensor<?x4x3x3xf16>
// CHECK-NEXT:    %[[R:.*]] = "graph.relu"(%[[C]])
// CHECK-NEXT:    return %[[R]]
// LOG: GraphFusionPass[ConvBiasAddFusionPass]: pattern=ConvAddFusion, matched_times=1, effected_times=1
func.func @add_constant(%x: tensor<?x4x6x6xf16>, %w: tensor<4x2x1x1xf16>) -> tensor<?x4x3x3xf16> {
  %c = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]]> : tensor<1x4x1x1xf16>
  %0 = "graph.conv2d"(%x, %w) {groups = 2 : i64, strides = array<i64: 2, 2>} : (tensor<?x4x6x6xf16>, tensor<4x2x1x1xf16>) -> tensor<?x4x3x3xf16>
  %1 = "graph.add"(%c, %0) : (tensor<1x4x1x1xf16>, tensor<?x4x3x3xf16>) -> tensor<?x4x3x3xf16>
  %2 = "graph.relu"(%1) : (tensor<?x4x3x3xf16>) -> tensor<?x4x3x3xf16>
  return %2 : tensor<?x4x3x3xf16>
}

// -----

// One scalar constant added everywhere is a bias of that value on every channel.
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT:    %[[B:.*]] = arith.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = "graph.conv2d"(%arg0, %arg1, %[[B]])
// CHECK-NEXT:    return %[[C]]
func.func @scalar(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %c = arith.constant dense<0.5> : tensor<f32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %1 = "graph.add"(%0, %c) : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  return %1 : tensor<1x2x3x3xf32>
}

// -----

// An add of a per-channel value that is not a constant (a model's bias as a [C, 1, 1] argument): reshaped to
// [C] and made the conv2d's bias.
// CHECK-LABEL: func.func @add_argument
// CHECK-NEXT:    %[[B:.*]] = "graph.reshape"(%arg2) : (tensor<3x1x1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[C:.*]] = "graph.conv2d"(%arg0, %arg1, %[[B]]) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    return %[[C]]
func.func @add_argument(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  %1 = "graph.add"(%b, %0) : (tensor<3x1x1xf32>, tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  return %1 : tensor<1x3x2x2xf32>
}
