// add_rms_norm_quant_fusion: add -> rms_norm -> quantize => add_rms_norm_quant; other users of the sum read its sum.
// RUN: graphfuse-opt --split-input-file --add_rms_norm_quant_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_rms_norm_quant_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[add_rms_norm_quant_fusion]: pattern=AddRmsNormQuantFusion, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @per_tensor
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<1xf32>
// CHECK-DAG:     %[[O:.*]] = arith.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK:         %[[F:.*]]:2 = "graph.add_rms_norm_quant"(%arg0, %arg1, %arg2, %[[S]], %[[O]]) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<16xf16>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x16xi8>, tensor<4x16xf16>)
// CHECK-NEXT:    return %[[F]]#0
func.func @per_tensor(%x1: tensor<4x16xf16>, %x2: tensor<4x16xf16>, %g: tensor<16xf16>) -> tensor<4x16xi8> {
  %scale = arith.constant dense<2.0> : tensor<1xf32>
  %offset = arith.constant dense<0.0> : tensor<1xf32>
  %s = "graph.add"(%x1, %x2) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %q = "graph.quantize"(%y, %scale, %offset) : (tensor<4x16xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16xi8>
  return %q : tensor<4x16xi8>
}

// -----

// The residual sum is returned; per-channel parameters.
// CHECK-LABEL: func.func @residual_per_channel
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm_quant"(%arg0, %arg1, %arg2, %arg3, %arg4) {epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      -> (tensor<2x3x8xi8>, tensor<2x3x8xbf16>)
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
func.func @residual_per_channel(%x1: tensor<2x3x8xbf16>, %x2: tensor<2x3x8xbf16>, %g: tensor<8xbf16>, %sc: tensor<8xf32>, %of: tensor<8xf32>) -> (tensor<2x3x8xi8>, tensor<2x3x8xbf16>) {
  %s = "graph.add"(%x1, %x2) : (tensor<2x3x8xbf16>, tensor<2x3x8xbf16>) -> tensor<2x3x8xbf16>
  %y = "graph.rms_norm"(%s, %g) {epsilon = 1.0e-5 : f32} : (tensor<2x3x8xbf16>, tensor<8xbf16>) -> tensor<2x3x8xbf16>
  %q = "graph.quantize"(%y, %sc, %of) : (tensor<2x3x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xi8>
  return %q, %s : tensor<2x3x8xi8>, tensor<2x3x8xbf16>
}
