// rms_norm_fusion: a hand-written RMSNorm of basic ops => rms_norm (the weight, or ones, as gamma).
// RUN: graphfuse-opt --split-input-file --rms_norm_fusion --graph-dce %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --rms_norm_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[rms_norm_fusion]: pattern=RmsNormFusion, matched_times=1, effected_times=1

// The form PyTorch exports: square, a mean kept over the last axis, eps added, rsqrt, times x, times the weight.
// CHECK-LABEL: func.func @weighted
// CHECK-NEXT:    %[[Y:.*]] = "graph.rms_norm"(%arg0, %arg1) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @weighted(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %sq = "graph.square"(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 2>, keep_dims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %n = "graph.mul"(%x, %r) : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %y = "graph.mul"(%w, %n) : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// No weight: gamma is ones. x * x for the square, eps first in the add, the reciprocal on the left of x,
// a negative axis. The epsilon is the f16 constant's value.
// CHECK-LABEL: func.func @unweighted
// CHECK:         %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<16xf16>
// CHECK:         %[[Y:.*]] = "graph.rms_norm"(%arg0, %[[ONES]]) {epsilon = 1.00135803E-5 : f32}
// CHECK-NEXT:    return %[[Y]]
func.func @unweighted(%x: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %eps = arith.constant dense<1.0e-05> : tensor<1x1xf16>
  %sq = "graph.mul"(%x, %x) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x16xf16>) -> tensor<4x1xf16>
  %s = "graph.add"(%eps, %ms) : (tensor<1x1xf16>, tensor<4x1xf16>) -> tensor<4x1xf16>
  %r = "graph.rsqrt"(%s) : (tensor<4x1xf16>) -> tensor<4x1xf16>
  %n = "graph.mul"(%r, %x) : (tensor<4x1xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  return %n : tensor<4x16xf16>
}

// -----

// transformers' bf16 form: cast to f32, the statistics in f32, cast back, then the bf16 weight. The f32 part
// becomes an f32 rms_norm with ones; the casts and the weight's product stay.
// CHECK-LABEL: func.func @mixed_precision
// CHECK:         %[[UP:.*]] = "graph.cast"(%arg0)
// CHECK-NEXT:    %[[Y:.*]] = "graph.rms_norm"(%[[UP]], %{{.*}}) {{.*}} : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
// CHECK-NEXT:    %[[DOWN:.*]] = "graph.cast"(%[[Y]])
// CHECK-NEXT:    "graph.mul"(%arg1, %[[DOWN]])
func.func @mixed_precision(%x: tensor<3x8xbf16>, %w: tensor<8xbf16>) -> tensor<3x8xbf16> {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %up = "graph.cast"(%x) : (tensor<3x8xbf16>) -> tensor<3x8xf32>
  %sq = "graph.pow"(%up, %two) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ms = "graph.reduce_mean"(%sq) {axes = array<i64: 1>, keep_dims = true} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %s = "graph.add"(%ms, %eps) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %r = "graph.rsqrt"(%s) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %n = "graph.mul"(%up, %r) : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %down = "graph.cast"(%n) : (tensor<3x8xf32>) -> tensor<3x8xbf16>
  %y = "graph.mul"(%w, %down) : (tensor<8xbf16>, tensor<3x8xbf16>) -> tensor<3x8xbf16>
  return %y : tensor<3x8xbf16>
}

// -----

// ONNX's forms (no rsqrt there): x * (1 / sqrt(s)), x * reciprocal(sqrt(s)) and x / sqrt(s), the weight on the right.
// CHECK-LABEL: func.func @onnx_forms
// CHECK-NEXT:    %[[A:.*]] = "graph.rms_norm"(%arg0, %arg1) {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:    %[[B:.*]] = "graph.rms_norm"(%arg0, %arg1) {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:    %[[C:.*]] = "graph.rms_norm"(%arg0, %arg1) {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
func.func @onnx_forms(%x: tensor<3x8xf32>, %w: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) {
  %eps = arith.constant dense<1.0e-06> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %sq1 = "graph.pow"(%x, %two) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ms1 = "graph.reduce_mean"(%sq1) {axes = array<i64: 1>, keep_dims = true} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %s1 = "graph.add"(%ms1, %eps) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %r1 = "graph.sqrt"(%s1) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %i1 = "graph.div"(%one, %r1) : (tensor<f32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %n1 = "graph.mul"(%x, %i1) : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %y1 = "graph.mul"(%n1, %w) : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  %sq2 = "graph.pow"(%x, %two) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ms2 = "graph.reduce_mean"(%sq2) {axes = array<i64: 1>, keep_dims = true} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %s2 = "graph.add"(%ms2, %eps) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %r2 = "graph.sqrt"(%s2) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %i2 = "graph.reciprocal"(%r2) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %n2 = "graph.mul"(%i2, %x) : (tensor<3x1xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  %y2 = "graph.mul"(%n2, %w) : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  %sq3 = "graph.pow"(%x, %two) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ms3 = "graph.reduce_mean"(%sq3) {axes = array<i64: 1>, keep_dims = true} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %s3 = "graph.add"(%ms3, %eps) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %r3 = "graph.sqrt"(%s3) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %n3 = "graph.div"(%x, %r3) : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %y3 = "graph.mul"(%n3, %w) : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  return %y1, %y2, %y3 : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>
}
