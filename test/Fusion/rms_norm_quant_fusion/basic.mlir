// rms_norm_quant_fusion: rms_norm -> quantize => rms_norm_quant.
// RUN: graphfuse-opt --split-input-file --rms_norm_quant_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --rms_norm_quant_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[rms_norm_quant_fusion]: pattern=RmsNormQuantFusion, matched_times=1, effected_times=1

// Per-tensor constants.
// CHECK-LABEL: func.func @per_tensor
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<4.000000e+00> : tensor<1xf32>
// CHECK-DAG:     %[[O:.*]] = arith.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK:         %[[Q:.*]] = "graph.rms_norm_quant"(%arg0, %arg1, %[[S]], %[[O]]) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<4x16xf16>, tensor<16xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16xi8>
// CHECK-NEXT:    return %[[Q]]
func.func @per_tensor(%x: tensor<4x16xf16>, %g: tensor<16xf16>) -> tensor<4x16xi8> {
  %s = arith.constant dense<4.0> : tensor<1xf32>
  %o = arith.constant dense<1.0> : tensor<1xf32>
  %y = "graph.rms_norm"(%x, %g) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %q = "graph.quantize"(%y, %s, %o) : (tensor<4x16xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16xi8>
  return %q : tensor<4x16xi8>
}

// -----

// Per-channel scale and offset given as arguments; bf16; epsilon carried over.
// CHECK-LABEL: func.func @per_channel
// CHECK-NEXT:    %[[Q:.*]] = "graph.rms_norm_quant"(%arg0, %arg1, %arg2, %arg3) {epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      : (tensor<2x3x8xbf16>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xi8>
// CHECK-NEXT:    return %[[Q]]
func.func @per_channel(%x: tensor<2x3x8xbf16>, %g: tensor<8xbf16>, %s: tensor<8xf32>, %o: tensor<8xf32>) -> tensor<2x3x8xi8> {
  %y = "graph.rms_norm"(%x, %g) {epsilon = 1.0e-5 : f32} : (tensor<2x3x8xbf16>, tensor<8xbf16>) -> tensor<2x3x8xbf16>
  %q = "graph.quantize"(%y, %s, %o) : (tensor<2x3x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xi8>
  return %q : tensor<2x3x8xi8>
}

// -----

// Run alone on add -> rms_norm -> quantize it takes the rms_norm -> quantize part and leaves the add:
// add_rms_norm_quant_fusion must run first.
// CHECK-LABEL: func.func @after_add
// CHECK-NEXT:    %[[S:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    %[[Q:.*]] = "graph.rms_norm_quant"(%[[S]], %arg2, %arg3, %arg3)
// CHECK-NEXT:    return %[[Q]]
func.func @after_add(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %p: tensor<1xf32>) -> tensor<4x8xi8> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}
