// add_cast_rms_norm_cast_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --add_cast_rms_norm_cast_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_cast_rms_norm_cast_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// The f32 normalized value is used elsewhere: the fused op only returns it rounded to f16.
// LOG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: the f32 rms_norm result has other users
// CHECK-LABEL: func.func @norm_used
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @norm_used(%x1: tensor<4x8xf16>, %x2: tensor<4x8xf16>, %g: tensor<8xf32>) -> (tensor<4x8xf16>, tensor<4x8xf32>) {
  %a = "graph.cast"(%x1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %b = "graph.cast"(%x2) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %s = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.cast"(%n) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %y, %n : tensor<4x8xf16>, tensor<4x8xf32>
}

// -----

// The result goes to bf16 while the inputs are f16: y would have the wrong type.
// LOG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: the final cast goes to bf16, not back to the inputs' f16
// CHECK-LABEL: func.func @other_target
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @other_target(%x1: tensor<4x8xf16>, %x2: tensor<4x8xf16>, %g: tensor<8xf32>) -> tensor<4x8xbf16> {
  %a = "graph.cast"(%x1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %b = "graph.cast"(%x2) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %s = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.cast"(%n) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Inputs of different types (f16 and bf16), or integers cast up: not the pattern's low-precision floats.
// LOG-DAG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: the add's operands are not both cast from one of f16/bf16 (got f16 and bf16)
// LOG-DAG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: the add's operands are not both cast from one of f16/bf16 (got i32 and i32)
// CHECK-LABEL: func.func @mixed_inputs
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @mixed_inputs(%x1: tensor<4x8xf16>, %x2: tensor<4x8xbf16>, %i1: tensor<4x8xi32>, %i2: tensor<4x8xi32>, %g: tensor<8xf32>) -> (tensor<4x8xf16>, tensor<4x8xi32>) {
  %a = "graph.cast"(%x1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %b = "graph.cast"(%x2) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %s = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.cast"(%n) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %c = "graph.cast"(%i1) : (tensor<4x8xi32>) -> tensor<4x8xf32>
  %d = "graph.cast"(%i2) : (tensor<4x8xi32>) -> tensor<4x8xf32>
  %t = "graph.add"(%c, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "graph.rms_norm"(%t, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = "graph.cast"(%m) : (tensor<4x8xf32>) -> tensor<4x8xi32>
  return %y, %z : tensor<4x8xf16>, tensor<4x8xi32>
}

// -----

// The add computes in f16 (bf16 inputs cast to f16), not f32.
// LOG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: the add computes in f16, not f32
// CHECK-LABEL: func.func @not_f32
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @not_f32(%x1: tensor<4x8xbf16>, %x2: tensor<4x8xbf16>, %g: tensor<8xf16>) -> tensor<4x8xbf16> {
  %a = "graph.cast"(%x1) : (tensor<4x8xbf16>) -> tensor<4x8xf16>
  %b = "graph.cast"(%x2) : (tensor<4x8xbf16>) -> tensor<4x8xf16>
  %s = "graph.add"(%a, %b) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %y = "graph.cast"(%n) : (tensor<4x8xf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Only one operand is cast (the other is f32 already): no match.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @one_operand_cast
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @one_operand_cast(%x1: tensor<4x8xf16>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf16> {
  %a = "graph.cast"(%x1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %s = "graph.add"(%a, %r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.cast"(%n) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// The sum rounded to bf16 first, but gamma an f32 argument: its values may not be bf16 values, and the
// fused op in bf16 would multiply by them rounded.
// LOG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: gamma is an f32 value computed at run time, not a bf16 value cast to f32
// CHECK-LABEL: func.func @sum_then_cast_f32_gamma
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @sum_then_cast_f32_gamma(%x1: tensor<2x4xbf16>, %x2: tensor<2x4xbf16>, %g: tensor<4xf32>) -> tensor<2x4xbf16> {
  %s = "graph.add"(%x1, %x2) : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %w = "graph.cast"(%s) : (tensor<2x4xbf16>) -> tensor<2x4xf32>
  %n = "graph.rms_norm"(%w, %g) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = "graph.cast"(%n) : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// LOG: pattern AddCastRmsNormCastFusion not fused at {{.*}}: gamma holds f32 values that bf16 does not hold exactly
// CHECK-LABEL: func.func @sum_then_cast_inexact_gamma
// CHECK-NOT:     graph.add_rms_norm
// CHECK:         return
func.func @sum_then_cast_inexact_gamma(%x1: tensor<2x4xbf16>, %x2: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %g = arith.constant dense<[1.0, 0.5, 0.1, 3.0]> : tensor<4xf32>
  %s = "graph.add"(%x1, %x2) : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %w = "graph.cast"(%s) : (tensor<2x4xbf16>) -> tensor<2x4xf32>
  %n = "graph.rms_norm"(%w, %g) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = "graph.cast"(%n) : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}
