// pattern_fusion_pass, TorchAir pattern 1: add_rms_norm's y -> dynamic_quant(y, smooth_scales)
// => add_rms_norm_dynamic_quant(x1, x2, gamma, smooth_scales).
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pattern-fusion-pass --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[pattern_fusion_pass]: pattern=AddRmsNormDynamicQuant, matched_times=1, effected_times=1
// LOG: GraphFusionPass[pattern_fusion_pass]: pattern=AddRmsNormDynamicQuantFlatten, matched_times=0, effected_times=0
// LOG: GraphFusionPass[pattern_fusion_pass]: pattern=AddRmsNormCast, matched_times=0, effected_times=0

// CHECK-LABEL: func.func @smooth
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_dynamic_quant"(%arg0, %arg1, %arg2, %arg3) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>, tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>, tensor<2x4x16xf16>)
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
func.func @smooth(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %g: tensor<16xf16>, %sm: tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %q, %sc = "graph.dynamic_quant"(%y, %sm) : (tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>)
  return %q, %sc : tensor<2x4x16xi8>, tensor<2x4xf32>
}

// -----

// The sum (x_out) is used: it reads the fused op's sum. The epsilon carries over.
// CHECK-LABEL: func.func @with_sum
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_dynamic_quant"(%arg0, %arg1, %arg2, %arg3) {epsilon = 1.000000e-03 : f32}
// CHECK-NEXT:    %[[N:.*]] = "graph.exp"(%[[F]]#2)
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1, %[[N]]
func.func @with_sum(%x1: tensor<8x32xbf16>, %x2: tensor<8x32xbf16>, %g: tensor<32xbf16>, %sm: tensor<32xbf16>) -> (tensor<8x32xi8>, tensor<8xf32>, tensor<8x32xbf16>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) {epsilon = 1.0e-3 : f32} : (tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xbf16>)
  %q, %sc = "graph.dynamic_quant"(%y, %sm) : (tensor<8x32xbf16>, tensor<32xbf16>) -> (tensor<8x32xi8>, tensor<8xf32>)
  %n = "graph.exp"(%s) : (tensor<8x32xbf16>) -> tensor<8x32xbf16>
  return %q, %sc, %n : tensor<8x32xi8>, tensor<8xf32>, tensor<8x32xbf16>
}
