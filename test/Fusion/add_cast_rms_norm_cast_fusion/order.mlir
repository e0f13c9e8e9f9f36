// Run order: add_cast_rms_norm_cast_fusion before add_rms_norm_fusion (graph-fusion's order) fuses the whole
// cast chain; the other order fuses only its f32 add -> rms_norm and leaves the casts.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(add_cast_rms_norm_cast_fusion, add_rms_norm_fusion)' %s | FileCheck %s --check-prefix=GOOD
// RUN: graphfuse-opt --pass-pipeline='builtin.module(add_rms_norm_fusion, add_cast_rms_norm_cast_fusion)' %s | FileCheck %s --check-prefix=BAD

// GOOD-LABEL:  func.func @chain
// GOOD-NEXT:     %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2) {{.*}} -> (tensor<4x8xf16>, tensor<4x8xf32>)
// GOOD-NEXT:     return %[[F]]#0

// BAD-LABEL:   func.func @chain
// BAD-NEXT:      %[[A:.*]] = "graph.cast"(%arg0)
// BAD-NEXT:      %[[B:.*]] = "graph.cast"(%arg1)
// BAD-NEXT:      %[[F:.*]]:2 = "graph.add_rms_norm"(%[[A]], %[[B]], %arg2) {{.*}} -> (tensor<4x8xf32>, tensor<4x8xf32>)
// BAD-NEXT:      "graph.cast"(%[[F]]#0)
func.func @chain(%x1: tensor<4x8xf16>, %x2: tensor<4x8xf16>, %g: tensor<8xf32>) -> tensor<4x8xf16> {
  %a = "graph.cast"(%x1) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %b = "graph.cast"(%x2) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %s = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.cast"(%n) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
