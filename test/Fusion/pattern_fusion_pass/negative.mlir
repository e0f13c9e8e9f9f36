// pattern_fusion_pass: what must not fuse.
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// y is also returned: add_rms_norm_dynamic_quant does not produce it.
// LOG: pattern AddRmsNormDynamicQuant not fused at {{.*}}: the add_rms_norm y has other users
// CHECK-LABEL: func.func @y_used
// CHECK-NEXT:    "graph.add_rms_norm"
// CHECK-NEXT:    "graph.dynamic_quant"
func.func @y_used(%x1: tensor<4x16xf16>, %x2: tensor<4x16xf16>, %g: tensor<16xf16>, %sm: tensor<16xf16>) -> (tensor<4x16xi8>, tensor<4x16xf16>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<16xf16>) -> (tensor<4x16xf16>, tensor<4x16xf16>)
  %q, %sc = "graph.dynamic_quant"(%y, %sm) : (tensor<4x16xf16>, tensor<16xf16>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return %q, %y : tensor<4x16xi8>, tensor<4x16xf16>
}

// -----

// flatten(0, 1) of a 2-D y would merge the quantized axis: the rows are not y's.
// LOG: pattern AddRmsNormDynamicQuantFlatten not fused at {{.*}}: flatten(0, 1) of a 2-D y merges the quantized axis
// CHECK-LABEL: func.func @flatten_2d
// CHECK-NEXT:    "graph.add_rms_norm"
// CHECK-NEXT:    "graph.reshape"
// CHECK-NEXT:    "graph.dynamic_quant"
func.func @flatten_2d(%x1: tensor<4x16xf16>, %x2: tensor<4x16xf16>, %g: tensor<16xf16>) -> (tensor<64xi8>, tensor<1x1xf32>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<16xf16>) -> (tensor<4x16xf16>, tensor<4x16xf16>)
  %flat = "graph.reshape"(%y) : (tensor<4x16xf16>) -> tensor<64xf16>
  %q, %sc = "graph.dynamic_quant"(%flat) : (tensor<64xf16>) -> (tensor<64xi8>, tensor<f32>)
  %col = "graph.reshape"(%sc) : (tensor<f32>) -> tensor<1x1xf32>
  return %q, %col : tensor<64xi8>, tensor<1x1xf32>
}

// -----

// The flattened y feeds another op too.
// LOG: pattern AddRmsNormDynamicQuantFlatten not fused at {{.*}}: the flattened y has other users
// CHECK-LABEL: func.func @flat_used
// CHECK-NOT:     graph.add_rms_norm_dynamic_quant
// CHECK:         return
func.func @flat_used(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %g: tensor<16xf16>) -> (tensor<8x16xi8>, tensor<8x1xf32>, tensor<8x16xf16>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %flat = "graph.reshape"(%y) : (tensor<2x4x16xf16>) -> tensor<8x16xf16>
  %q, %sc = "graph.dynamic_quant"(%flat) : (tensor<8x16xf16>) -> (tensor<8x16xi8>, tensor<8xf32>)
  %col = "graph.reshape"(%sc) : (tensor<8xf32>) -> tensor<8x1xf32>
  return %q, %col, %flat : tensor<8x16xi8>, tensor<8x1xf32>, tensor<8x16xf16>
}

// -----

// Not TorchAir's patterns (no match, nothing logged): a reshape that is not flatten(0, 1) (it splits the
// last axis), a scale without the (-1, 1) view, a dynamic_quant without smooth scales reading y directly,
// a cast to f16, a view to (-1, 8) whose last dim is not h, and the sum (not y) quantized.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @other_shapes
// CHECK-NOT:     graph.add_rms_norm_dynamic_quant
// CHECK-NOT:     graph.add_rms_norm_cast
// CHECK:         return
func.func @other_shapes(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %g: tensor<16xf16>, %sm: tensor<16xf16>)
    -> (tensor<8x2x8xi8>, tensor<8x2x1xf32>, tensor<8x16xi8>, tensor<8xf32>, tensor<2x4x16xi8>, tensor<2x4xf32>, tensor<2x4x16xf16>, tensor<16x8xf32>, tensor<2x4x16xi8>) {
  %y1, %s1 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %r1 = "graph.reshape"(%y1) : (tensor<2x4x16xf16>) -> tensor<8x2x8xf16>
  %q1, %c1 = "graph.dynamic_quant"(%r1) : (tensor<8x2x8xf16>) -> (tensor<8x2x8xi8>, tensor<8x2xf32>)
  %v1 = "graph.reshape"(%c1) : (tensor<8x2xf32>) -> tensor<8x2x1xf32>
  %y2, %s2 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %r2 = "graph.reshape"(%y2) : (tensor<2x4x16xf16>) -> tensor<8x16xf16>
  %q2, %c2 = "graph.dynamic_quant"(%r2) : (tensor<8x16xf16>) -> (tensor<8x16xi8>, tensor<8xf32>)
  %y3, %s3 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %q3, %c3 = "graph.dynamic_quant"(%y3) : (tensor<2x4x16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>)
  %y4, %s4 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %c4 = "graph.cast"(%y4) : (tensor<2x4x16xf16>) -> tensor<2x4x16xf16>
  %y5, %s5 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %v5 = "graph.reshape"(%y5) : (tensor<2x4x16xf16>) -> tensor<16x8xf16>
  %c5 = "graph.cast"(%v5) : (tensor<16x8xf16>) -> tensor<16x8xf32>
  %y6, %s6 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %q6, %c6 = "graph.dynamic_quant"(%s6, %sm) : (tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>)
  return %q1, %v1, %q2, %c2, %q3, %c3, %c4, %c5, %q6 : tensor<8x2x8xi8>, tensor<8x2x1xf32>, tensor<8x16xi8>, tensor<8xf32>, tensor<2x4x16xi8>, tensor<2x4xf32>, tensor<2x4x16xf16>, tensor<16x8xf32>, tensor<2x4x16xi8>
}

// -----

// Mixed-precision add_rms_norm (f32 gamma): the fused quant op takes one element type only.
// LOG: pattern AddRmsNormDynamicQuant not fused at {{.*}}: the fused op would be invalid: operand gamma tensor<16xf32> must have the element type of x1 tensor<4x16xf16>
// CHECK-LABEL: func.func @mixed_precision
// CHECK-NEXT:    "graph.add_rms_norm"
// CHECK-NEXT:    "graph.dynamic_quant"
func.func @mixed_precision(%x1: tensor<4x16xf16>, %x2: tensor<4x16xf16>, %g: tensor<16xf32>, %sm: tensor<16xf16>) -> (tensor<4x16xi8>, tensor<4xf32>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<16xf32>) -> (tensor<4x16xf16>, tensor<4x16xf32>)
  %q, %sc = "graph.dynamic_quant"(%y, %sm) : (tensor<4x16xf16>, tensor<16xf16>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return %q, %sc : tensor<4x16xi8>, tensor<4xf32>
}
