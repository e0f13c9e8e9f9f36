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
