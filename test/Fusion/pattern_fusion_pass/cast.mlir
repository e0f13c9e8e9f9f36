// pattern_fusion_pass, TorchAir pattern 3: add_rms_norm's y -> view(-1, h) -> cast to f32 => add_rms_norm_cast,
// the view re-applied to its y_cast; y and the sum keep their users. TorchAir also registers the variant
// without the view.
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pattern_fusion_pass --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[pattern_fusion_pass]: pattern=AddRmsNormCast, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @view_cast
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_cast"(%arg0, %arg1, %arg2) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf32>, tensor<2x4x16xf16>, tensor<2x4x16xf16>)
// CHECK-NEXT:    %[[C:.*]] = "graph.reshape"(%[[F]]#0) : (tensor<2x4x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT:    return %[[C]], %[[F]]#1, %[[F]]#2
func.func @view_cast(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %g: tensor<16xf16>) -> (tensor<8x16xf32>, tensor<2x4x16xf16>, tensor<2x4x16xf16>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %v = "graph.reshape"(%y) : (tensor<2x4x16xf16>) -> tensor<8x16xf16>
  %c = "graph.cast"(%v) : (tensor<8x16xf16>) -> tensor<8x16xf32>
  return %c, %y, %s : tensor<8x16xf32>, tensor<2x4x16xf16>, tensor<2x4x16xf16>
}

// -----

// No view: the cast of y itself. bf16, dynamic rows.
// CHECK-LABEL: func.func @plain_cast
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_cast"(%arg0, %arg1, %arg2)
// CHECK-SAME:      -> (tensor<?x16xf32>, tensor<?x16xbf16>, tensor<?x16xbf16>)
// CHECK-NEXT:    return %[[F]]#0
func.func @plain_cast(%x1: tensor<?x16xbf16>, %x2: tensor<?x16xbf16>, %g: tensor<16xbf16>) -> tensor<?x16xf32> {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<16xbf16>) -> (tensor<?x16xbf16>, tensor<?x16xbf16>)
  %c = "graph.cast"(%y) : (tensor<?x16xbf16>) -> tensor<?x16xf32>
  return %c : tensor<?x16xf32>
}

// -----

// The view has another user: it stays and reads the fused y.
// CHECK-LABEL: func.func @view_kept
// CHECK-NEXT:    %[[F:.*]]:3 = "graph.add_rms_norm_cast"(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[C:.*]] = "graph.reshape"(%[[F]]#0) : (tensor<2x4x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT:    %[[V:.*]] = "graph.reshape"(%[[F]]#1) : (tensor<2x4x16xf16>) -> tensor<8x16xf16>
// CHECK-NEXT:    return %[[C]], %[[V]]
func.func @view_kept(%x1: tensor<2x4x16xf16>, %x2: tensor<2x4x16xf16>, %g: tensor<16xf16>) -> (tensor<8x16xf32>, tensor<8x16xf16>) {
  %y, %s = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<2x4x16xf16>, tensor<2x4x16xf16>, tensor<16xf16>) -> (tensor<2x4x16xf16>, tensor<2x4x16xf16>)
  %v = "graph.reshape"(%y) : (tensor<2x4x16xf16>) -> tensor<8x16xf16>
  %c = "graph.cast"(%v) : (tensor<8x16xf16>) -> tensor<8x16xf32>
  return %c, %v : tensor<8x16xf32>, tensor<8x16xf16>
}
