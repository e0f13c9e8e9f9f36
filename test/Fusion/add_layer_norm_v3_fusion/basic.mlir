// add_layer_norm_v3_fusion: bias_add(x, bias) on the last axis -> layer_norm => add_layer_norm(x, bias, gamma, beta).
// RUN: graphfuse-opt --split-input-file --add_layer_norm_v3_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_layer_norm_v3_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[add_layer_norm_v3_fusion]: pattern=AddLayerNormV3Fusion, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @bias_add
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg0, %arg1, %arg2, %arg3) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf16>)
// CHECK-NEXT:    return %[[F]]#0
func.func @bias_add(%x: tensor<2x4x8xf16>, %bias: tensor<8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<2x4x8xf16> {
  %s = "graph.bias_add"(%x, %bias) : (tensor<2x4x8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16>
  return %y : tensor<2x4x8xf16>
}

// -----

// axis = rank - 1 is the last axis too; the bias_add result is also returned: the fused sum stands for it.
// LOG: GraphFusionPass[add_layer_norm_v3_fusion]: pattern=AddLayerNormV3Fusion, matched_times=1, effected_times=1
// CHECK-LABEL: func.func @positive_axis_with_residual
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg0, %arg1, %arg2, %arg3) {begin_norm_axis = 2 : i64, epsilon = 1.000000e-03 : f32}
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[F]]#1, %[[F]]#0)
// CHECK-NEXT:    return %[[M]], %[[F]]#1
func.func @positive_axis_with_residual(%x: tensor<2x4x8xf32>, %bias: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %s = "graph.bias_add"(%x, %bias) {axis = 2 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) {begin_norm_axis = 2 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %m = "graph.mul"(%s, %y) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %m, %s : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
