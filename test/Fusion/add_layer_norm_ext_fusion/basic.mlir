// add_layer_norm_ext_fusion: add -> layer_norm where the sum also feeds other ops (the residual stream)
// => add_layer_norm, whose sum result replaces the add everywhere else.
// RUN: graphfuse-opt --split-input-file --add_layer_norm_ext_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_layer_norm_ext_fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// LOG: GraphFusionPass[add_layer_norm_ext_fusion]: pattern=AddLayerNormExtFusion, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg0, %arg1, %arg2, %arg3) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf16>)
// CHECK-NEXT:    %[[N:.*]] = "graph.add"(%[[F]]#1, %[[F]]#0)
// CHECK-NEXT:    return %[[N]], %[[F]]#1
func.func @residual(%x1: tensor<2x4x8xf16>, %x2: tensor<2x4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf16>) {
  %s = "graph.add"(%x1, %x2) : (tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16>
  %n = "graph.add"(%s, %y) : (tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %n, %s : tensor<2x4x8xf16>, tensor<2x4x8xf16>
}

// -----

// The sum is used before the layer_norm: the fused op goes before that first user.
// CHECK-LABEL: func.func @used_before
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg0, %arg1, %arg2, %arg3)
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[F]]#1, %[[F]]#1)
// CHECK-NEXT:    return %[[F]]#0, %[[M]]
func.func @used_before(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "graph.mul"(%s, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Two layer norms of one residual sum: one of them fuses (the driver picks which), the other
// then reads add_layer_norm's sum, not an add, and stays.
// CHECK-LABEL: func.func @two_norms
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg0, %arg1,
// CHECK-NEXT:    %[[Z:.*]] = "graph.layer_norm"(%[[F]]#1,
// CHECK-NEXT:    return
func.func @two_norms(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = "graph.layer_norm"(%s, %b, %g) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}
