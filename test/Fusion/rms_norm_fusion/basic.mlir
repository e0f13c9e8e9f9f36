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
