// What BatchNormSplitFusionPass must not split; the debug log says why.
// RUN: graphfuse-opt --split-input-file --BatchNormSplitFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --BatchNormSplitFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// No bias after the batch_norm: nothing to take the shift (ConvBatchnormFusionPass's case).
// CHECK-LABEL: func.func @no_bias_consumer
// CHECK:         "graph.conv2d"
// CHECK-NEXT:    "graph.batch_norm"
// CHECK-NEXT:    "graph.relu"
// WHY:      pattern=BatchNormSplitBiasAddFusion, matched_times=0, effected_times=0
// WHY-NEXT: pattern=BatchNormSplitAddFusion, matched_times=0, effected_times=0
func.func @no_bias_consumer(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.relu"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// The batch_norm result has another user: it must stay, unshifted.
// CHECK-LABEL: func.func @bn_other_user
// CHECK:         "graph.batch_norm"
// WHY: pattern BatchNormSplitBiasAddFusion not fused at {{.*}}: the batch_norm result has other users
func.func @bn_other_user(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2, %1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// The conv result has another user: its weights cannot take the scale.
// CHECK-LABEL: func.func @conv_other_user
// CHECK:         "graph.batch_norm"
// WHY: pattern BatchNormSplitBiasAddFusion not fused at {{.*}}: the conv2d result has other users
func.func @conv_other_user(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2, %0 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Non-constant pieces: the consumer's bias, the batch_norm parameters, the conv weights.
// CHECK-LABEL: func.func @not_constant
// CHECK-COUNT-3: "graph.batch_norm"
// WHY-DAG: pattern BatchNormSplitBiasAddFusion not fused at {{.*}}: the bias of the bias_add is not a constant
// WHY-DAG: pattern BatchNormSplitBiasAddFusion not fused at {{.*}}: batch_norm parameters offset are not constants
// WHY-DAG: pattern BatchNormSplitBiasAddFusion not fused at {{.*}}: the conv2d weights are not a constant
func.func @not_constant(%x: tensor<1x2x4x4xf32>, %b: tensor<2xf32>, %wv: tensor<2x2x1x1xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %b) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %3 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = "graph.batch_norm"(%3, %p, %b, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %5 = "graph.bias_add"(%4, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %6 = "graph.conv2d"(%x, %wv) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %7 = "graph.batch_norm"(%6, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %8 = "graph.bias_add"(%7, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2, %5, %8 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Adds that are not a per-channel bias: one that broadcasts the batch_norm result to
// a larger shape, one whose constant varies along the width axis.
// CHECK-LABEL: func.func @add_not_per_channel
// CHECK-COUNT-2: "graph.batch_norm"
// WHY-DAG: pattern BatchNormSplitAddFusion not fused at {{.*}}: the add broadcasts its other operand to a larger shape
// WHY-DAG: pattern BatchNormSplitAddFusion not fused at {{.*}}: the added constant of shape (4,) is not a per-channel bias
func.func @add_not_per_channel(%x: tensor<1x2x4x4xf32>) -> (tensor<3x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %big = arith.constant dense<1.0> : tensor<3x1x1x1xf32>
  %row = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.add"(%1, %big) : (tensor<1x2x4x4xf32>, tensor<3x1x1x1xf32>) -> tensor<3x2x4x4xf32>
  %3 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = "graph.batch_norm"(%3, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %5 = "graph.add"(%4, %row) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  return %2, %5 : tensor<3x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// The batch_norm's input is not a conv: no match.
// CHECK-LABEL: func.func @bn_of_relu
// CHECK:         "graph.batch_norm"
// WHY:      pattern=BatchNormSplitBiasAddFusion, matched_times=0, effected_times=0
func.func @bn_of_relu(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// Weights with a dynamic output channel count (not a constant either).
// CHECK-LABEL: func.func @dynamic_channels
// CHECK:         "graph.batch_norm"
// WHY: pattern BatchNormSplitBiasAddFusion not fused at {{.*}}: the conv2d output channel count is dynamic
func.func @dynamic_channels(%x: tensor<1x2x4x4xf32>, %w: tensor<?x2x1x1xf32>, %p: tensor<?xf32>) -> tensor<1x?x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<?x2x1x1xf32>) -> tensor<1x?x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<1x?x4x4xf32>
  %2 = "graph.bias_add"(%1, %p) {axis = 1 : i64} : (tensor<1x?x4x4xf32>, tensor<?xf32>) -> tensor<1x?x4x4xf32>
  return %2 : tensor<1x?x4x4xf32>
}
