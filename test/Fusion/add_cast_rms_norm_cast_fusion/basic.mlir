// add_cast_rms_norm_cast_fusion: cast(x1), cast(x2) from f16/bf16 to f32 -> add -> rms_norm (f32) -> cast back
// => add_rms_norm(x1, x2, gamma) in its mixed-precision form (f32 gamma): it computes in f32 internally,
// so y and the f32 sum are bit for bit those of the cast chain.
// RUN: graphfuse-opt --split-input-file --add_cast_rms_norm_cast_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_cast_rms_norm_cast_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[add_cast_rms_norm_cast_fusion]: pattern=AddCastRmsNormCastFusion, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @f16
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<8xf32>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf32>)
// CHECK-NEXT:    return %[[F]]#0 : tensor<2x4x8xf16>
func.func @f16(%x1: tensor<2x4x8xf16>, %x2: tensor<2x4x8xf16>, %g: tensor<8xf32>) -> tensor<2x4x8xf16> {
  %a = "graph.cast"(%x1) : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
  %b = "graph.cast"(%x2) : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
  %s = "graph.add"(%a, %b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %y = "graph.cast"(%n) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf16>
  return %y : tensor<2x4x8xf16>
}

// -----

// bf16; the f32 sum is also returned (the fused op's f32 sum), and the first input cast has another
// user, so it stays.
// CHECK-LABEL: func.func @bf16_with_users
// CHECK-NEXT:    %[[A:.*]] = "graph.cast"(%arg0) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2) {epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      : (tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<16xf32>) -> (tensor<4x16xbf16>, tensor<4x16xf32>)
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[A]])
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1, %[[E]]
func.func @bf16_with_users(%x1: tensor<4x16xbf16>, %x2: tensor<4x16xbf16>, %g: tensor<16xf32>) -> (tensor<4x16xbf16>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %a = "graph.cast"(%x1) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
  %b = "graph.cast"(%x2) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
  %s = "graph.add"(%a, %b) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = "graph.rms_norm"(%s, %g) {epsilon = 1.0e-5 : f32} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %y = "graph.cast"(%n) : (tensor<4x16xf32>) -> tensor<4x16xbf16>
  %e = "graph.exp"(%a) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %s, %e : tensor<4x16xbf16>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// One cast used for both operands (x + x), and a broadcast second operand: the operand with the sum's shape is x1.
// CHECK-LABEL: func.func @same_and_broadcast
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg0, %arg2)
// CHECK-NEXT:    %[[G:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2)
// CHECK-SAME:      : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf32>) -> (tensor<4x8xf16>, tensor<4x8xf32>)
// CHECK-NEXT:    return %[[F]]#0, %[[G]]#0
func.func @same_and_broadcast(%x1: tensor<4x8xf16>, %bias: tensor<8xf16>, %g: tensor<8xf32>) -> (tensor<4x8xf16>, tensor<4x8xf16>) {
  %a = "graph.cast"(%x1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %s = "graph.add"(%a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.cast"(%n) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %b = "graph.cast"(%bias) : (tensor<8xf16>) -> tensor<8xf32>
  %t = "graph.add"(%b, %a) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "graph.rms_norm"(%t, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = "graph.cast"(%m) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %y, %z : tensor<4x8xf16>, tensor<4x8xf16>
}

// -----

// HF's bf16 RMSNorm after a residual add (MindSpore's AddCastRmsNormCast order): the sum in bf16, cast to
// f32, normalized, cast back => add_rms_norm in bf16 (its rms_norm computes in f32 and rounds once), gamma
// narrowed to bf16: a constant whose values bf16 holds exactly, or the bf16 operand of gamma's own cast.
// The residual sum keeps its users.
// CHECK-LABEL: func.func @bf16_sum_then_cast
// CHECK:         %[[G:.*]] = arith.constant dense<[1.000000e+00, 5.000000e-01, -2.000000e+00, 3.000000e+00]> : tensor<4xbf16>
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %[[G]]) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<4xbf16>) -> (tensor<2x4xbf16>, tensor<2x4xbf16>)
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
func.func @bf16_sum_then_cast(%x1: tensor<2x4xbf16>, %x2: tensor<2x4xbf16>) -> (tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %g = arith.constant dense<[1.0, 0.5, -2.0, 3.0]> : tensor<4xf32>
  %s = "graph.add"(%x1, %x2) : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %w = "graph.cast"(%s) : (tensor<2x4xbf16>) -> tensor<2x4xf32>
  %n = "graph.rms_norm"(%w, %g) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = "graph.cast"(%n) : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  return %y, %s : tensor<2x4xbf16>, tensor<2x4xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_sum_then_cast_gamma_cast
// CHECK:         %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2)
// CHECK-SAME:      : (tensor<3x8xf16>, tensor<3x8xf16>, tensor<8xf16>) -> (tensor<3x8xf16>, tensor<3x8xf16>)
// CHECK-NEXT:    return %[[F]]#0
func.func @f16_sum_then_cast_gamma_cast(%x1: tensor<3x8xf16>, %x2: tensor<3x8xf16>, %g16: tensor<8xf16>) -> tensor<3x8xf16> {
  %g = "graph.cast"(%g16) : (tensor<8xf16>) -> tensor<8xf32>
  %s = "graph.add"(%x1, %x2) : (tensor<3x8xf16>, tensor<3x8xf16>) -> tensor<3x8xf16>
  %w = "graph.cast"(%s) : (tensor<3x8xf16>) -> tensor<3x8xf32>
  %n = "graph.rms_norm"(%w, %g) : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  %y = "graph.cast"(%n) : (tensor<3x8xf32>) -> tensor<3x8xf16>
  return %y : tensor<3x8xf16>
}
