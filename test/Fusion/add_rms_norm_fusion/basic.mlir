// add_rms_norm_fusion: add -> rms_norm => add_rms_norm; other users of the sum read its sum result.
// RUN: graphfuse-opt --split-input-file --add_rms_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_rms_norm_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[add_rms_norm_fusion]: pattern=AddRmsNormFusion, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @f32
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2) {epsilon = 9.99999997E-7 : f32}
// CHECK-SAME:      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    return %[[F]]#0 : tensor<4x8xf32>
func.func @f32(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The residual sum is returned and used again: both read the fused sum. The epsilon carries over.
// CHECK-LABEL: func.func @residual_bf16
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2) {epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      -> (tensor<2x3x16xbf16>, tensor<2x3x16xbf16>)
// CHECK-NEXT:    %[[N:.*]] = "graph.add"(%[[F]]#1, %[[F]]#0)
// CHECK-NEXT:    return %[[N]], %[[F]]#1
func.func @residual_bf16(%x1: tensor<2x3x16xbf16>, %x2: tensor<2x3x16xbf16>, %g: tensor<16xbf16>) -> (tensor<2x3x16xbf16>, tensor<2x3x16xbf16>) {
  %s = "graph.add"(%x1, %x2) : (tensor<2x3x16xbf16>, tensor<2x3x16xbf16>) -> tensor<2x3x16xbf16>
  %y = "graph.rms_norm"(%s, %g) {epsilon = 1.0e-5 : f32} : (tensor<2x3x16xbf16>, tensor<16xbf16>) -> tensor<2x3x16xbf16>
  %n = "graph.add"(%s, %y) : (tensor<2x3x16xbf16>, tensor<2x3x16xbf16>) -> tensor<2x3x16xbf16>
  return %n, %s : tensor<2x3x16xbf16>, tensor<2x3x16xbf16>
}

// -----

// A chain of residual blocks: each add -> rms_norm fuses, the next add reads the previous sum.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[A:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[B:.*]]:2 = "graph.add_rms_norm"(%[[A]]#1, %[[A]]#0, %arg2)
// CHECK-NEXT:    return %[[B]]#0, %[[B]]#1
func.func @chain(%x: tensor<4x8xf16>, %r: tensor<4x8xf16>, %g: tensor<8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>) {
  %s1 = "graph.add"(%x, %r) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %y1 = "graph.rms_norm"(%s1, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %s2 = "graph.add"(%s1, %y1) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %y2 = "graph.rms_norm"(%s2, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %y2, %s2 : tensor<4x8xf16>, tensor<4x8xf16>
}

// -----

// A broadcast residual: the operand with the sum's shape becomes x1.
// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg1, %arg0, %arg2)
// CHECK-SAME:      : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
func.func @broadcast(%bias: tensor<8xf32>, %x: tensor<?x8xf32>, %g: tensor<8xf32>) -> tensor<?x8xf32> {
  %s = "graph.add"(%bias, %x) : (tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = "graph.rms_norm"(%s, %g) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
