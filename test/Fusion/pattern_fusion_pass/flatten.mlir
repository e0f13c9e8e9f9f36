// pattern_fusion_pass, TorchAir pattern 2: add_rms_norm's y -> flatten(0, 1) -> dynamic_quant (no smooth
// scales) whose scale is viewed as (-1, 1) => add_rms_norm_dynamic_quant, the flatten and the view re-applied
// to its outputs so every user sees the same shapes.
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[pattern_fusion_pass]: pattern=AddRmsNormDynamicQuantFlatten, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @flatten
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_dynamic_quant"(%arg0, %arg1, %arg2) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xi8>, tensor<2x4xf32>, tensor<2x4x16xf16>)
// CHECK-NEXT:    %[[Q:.*]] = "graph.reshape"(%[[F]]#0) : (tensor<2x4x16xi8>) -> tensor<8x16xi8>
// CHECK-NEXT:    %[[S:.*]] = "graph.reshape"(%[[F]]#1) : (tensor<2x4xf32>) -> tensor<8x1xf32>
// CHECK-NEXT:    return %[[Q]], %[[S]], %[[F]]#2
func.func @flatten(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %g: tensor<16xf16>) -> (tensor<8x16xi8>, tensor<8x1xf32>, tensor<2x4x16xf16>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %flat = "graph.reshape"(%y) : (tensor<2x4x16xf16>) -> tensor<8x16xf16>
  %q, %sc = "graph.dynamic_quant"(%flat) : (tensor<8x16xf16>) -> (tensor<8x16xi8>, tensor<8xf32>)
  %col = "graph.reshape"(%sc) : (tensor<8xf32>) -> tensor<8x1xf32>
  return %q, %col, %s : tensor<8x16xi8>, tensor<8x1xf32>, tensor<2x4x16xf16>
}

// -----

// Dynamic batch and sequence dims (the view is (-1, 1) as written in TorchAir); the flat scale is
// also used directly: it gets its own reshape of the fused scale.
// CHECK-LABEL: func.func @dynamic_and_flat_scale_user
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_dynamic_quant"(%arg0, %arg1, %arg2)
// CHECK-SAME:      -> (tensor<?x4x16xi8>, tensor<?x4xf32>, tensor<?x4x16xbf16>)
// CHECK-NEXT:    %[[Q:.*]] = "graph.reshape"(%[[F]]#0) : (tensor<?x4x16xi8>) -> tensor<?x16xi8>
// CHECK-NEXT:    %[[C:.*]] = "graph.reshape"(%[[F]]#1) : (tensor<?x4xf32>) -> tensor<?x1xf32>
// CHECK-NEXT:    %[[S:.*]] = "graph.reshape"(%[[F]]#1) : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[S]])
// CHECK-NEXT:    return %[[Q]], %[[C]], %[[E]]
func.func @dynamic_and_flat_scale_user(%x1: tensor<?x4x16xbf16>, %x2: tensor<?x4x16xbf16>, %g: tensor<16xbf16>) -> (tensor<?x16xi8>, tensor<?x1xf32>, tensor<?xf32>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<?x4x16xbf16>, tensor<?x4x16xbf16>, tensor<16xbf16>) -> (tensor<?x4x16xbf16>, tensor<?x4x16xbf16>)
  %flat = "graph.reshape"(%y) : (tensor<?x4x16xbf16>) -> tensor<?x16xbf16>
  %q, %sc = "graph.dynamic_quant"(%flat) : (tensor<?x16xbf16>) -> (tensor<?x16xi8>, tensor<?xf32>)
  %col = "graph.reshape"(%sc) : (tensor<?xf32>) -> tensor<?x1xf32>
  %e = "graph.exp"(%sc) : (tensor<?xf32>) -> tensor<?xf32>
  return %q, %col, %e : tensor<?x16xi8>, tensor<?x1xf32>, tensor<?xf32>
}
