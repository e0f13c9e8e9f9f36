// What ConvBatchnormFusionPass must not fold; the debug log says why.
// RUN: graphfuse-opt --split-input-file --ConvBatchnormFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --ConvBatchnormFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The seed's counter-example: batch_norm parameters that are not constants
// (here function arguments) cannot be folded at compile time.
// CHECK-LABEL: func.func @params_not_constant
// CHECK:         "graph.conv2d"
// CHECK-NEXT:    "graph.batch_norm"
// WHY: ConvBatchnormFusionPass: pattern ConvBatchnormFusion not fused at {{.*}}:{{[0-9]+}}:{{[0-9]+}}: batch_norm parameters mean, var are not constants
func.func @params_not_constant(%x: tensor<1x2x4x4xf32>, %mean: tensor<2xf32>, %var: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %mean, %var) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// Weights that are not constants (CANN: "dynamic weight input: no fusion").
// CHECK-LABEL: func.func @weights_not_constant
// CHECK:         "graph.batch_norm"
// WHY: pattern ConvBatchnormFusion not fused at {{.*}}: the conv2d weights are not a constant
func.func @weights_not_constant(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// The conv output has another user (here it is also returned): the unscaled conv must stay.
// CHECK-LABEL: func.func @conv_other_user
// CHECK:         %[[C:.*]] = "graph.conv2d"
// CHECK-NEXT:    %[[N:.*]] = "graph.batch_norm"(%[[C]]
// CHECK-NEXT:    return %[[N]], %[[C]]
// WHY: pattern ConvBatchnormFusion not fused at {{.*}}: the conv2d result has other users
func.func @conv_other_user(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1, %0 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// batch_norm on something that is not a conv: no match at all (matched_times=0).
// CHECK-LABEL: func.func @not_a_conv
// CHECK:         "graph.relu"
// CHECK-NEXT:    "graph.batch_norm"
// WHY:      pattern=ConvBatchnormFusion, matched_times=0, effected_times=0
// WHY-NEXT: pattern=ConvBiasAddBatchnormFusion, matched_times=0, effected_times=0
func.func @not_a_conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// The bias_add between conv and batch_norm has another user.
// CHECK-LABEL: func.func @bias_other_user
// CHECK:         "graph.conv2d"
// CHECK-NEXT:    "graph.bias_add"
// CHECK-NEXT:    "graph.batch_norm"
// WHY: pattern ConvBiasAddBatchnormFusion not fused at {{.*}}: the bias_add result has other users
func.func @bias_other_user(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.bias_add"(%0, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.batch_norm"(%1, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2, %1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A bias that is not a constant, and a bias_add along the width axis (not per channel).
// CHECK-LABEL: func.func @bias_not_foldable
// CHECK-COUNT-2: "graph.batch_norm"
// WHY-DAG: pattern ConvBiasAddBatchnormFusion not fused at {{.*}}: the bias of the bias_add is not a constant
// WHY-DAG: pattern ConvBiasAddBatchnormFusion not fused at {{.*}}: the bias_add adds along axis 3, not the channel axis 1
func.func @bias_not_foldable(%x: tensor<1x2x4x4xf32>, %b: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %q = arith.constant dense<1.0> : tensor<4xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.batch_norm"(%1, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %3 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = "graph.bias_add"(%3, %q) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %5 = "graph.batch_norm"(%4, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2, %5 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// var + epsilon = 0 for channel 1: the unfused result is not finite there, folding would hide it.
// CHECK-LABEL: func.func @zero_variance
// CHECK:         "graph.batch_norm"
// WHY: pattern ConvBatchnormFusion not fused at {{.*}}: var + epsilon is not positive for channel 1
func.func @zero_variance(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %var = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %var) {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// The folded weights would overflow f16 (65504 is the largest finite f16).
// CHECK-LABEL: func.func @overflow_f16
// CHECK:         "graph.batch_norm"
// WHY: pattern ConvBatchnormFusion not fused at {{.*}}: the folded weights or bias are not finite in f16
func.func @overflow_f16(%x: tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16> {
  %w = arith.constant dense<60000.0> : tensor<2x2x1x1xf16>
  %scale = arith.constant dense<[4.0, 1.0]> : tensor<2xf16>
  %p = arith.constant dense<[1.0, 1.0]> : tensor<2xf16>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x4x4xf16>
  %1 = "graph.batch_norm"(%0, %scale, %p, %p, %p) {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) -> tensor<1x2x4x4xf16>
  return %1 : tensor<1x2x4x4xf16>
}

// -----

// Weights with a dynamic output channel count (not a constant either).
// CHECK-LABEL: func.func @dynamic_channels
// CHECK:         "graph.batch_norm"
// WHY: pattern ConvBatchnormFusion not fused at {{.*}}: the conv2d output channel count is dynamic
func.func @dynamic_channels(%x: tensor<1x2x4x4xf32>, %w: tensor<?x2x1x1xf32>, %p: tensor<?xf32>) -> tensor<1x?x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<?x2x1x1xf32>) -> tensor<1x?x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<1x?x4x4xf32>
  return %1 : tensor<1x?x4x4xf32>
}
