// add_layer_norm_fusion: add (used by nothing else) -> layer_norm => add_layer_norm.
// RUN: graphfuse-opt --split-input-file --add_layer_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add-layer-norm-fusion --log-level=info %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: graphfuse-opt --split-input-file --add_layer_norm_fusion --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC

// LOG: GraphFusionPass[add_layer_norm_fusion]: pattern=AddLayerNormFusion, matched_times=1, effected_times=1

// CHECK-LABEL: func.func @f16
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg0, %arg1, %arg2, %arg3) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf16>)
// CHECK-NEXT:    return %[[F]]#0 : tensor<2x4x8xf16>
// LOC-LABEL: func.func @f16
// LOC:         "graph.add_layer_norm"{{.*}} loc(#[[FUSED:loc[0-9]+]])
// LOC-DAG:     #[[ADD:loc[0-9]+]] = loc("the_add")
// LOC-DAG:     #[[LN:loc[0-9]+]] = loc("the_layer_norm")
// LOC-DAG:     #[[FUSED]] = loc(fused[#[[ADD]], #[[LN]]])
func.func @f16(%x1: tensor<2x4x8xf16>, %x2: tensor<2x4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<2x4x8xf16> {
  %s = "graph.add"(%x1, %x2) : (tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16> loc("the_add")
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16> loc("the_layer_norm")
  return %y : tensor<2x4x8xf16>
}

// -----

// The attributes of the layer_norm carry over; the operand with the sum's shape becomes x1.
// CHECK-LABEL: func.func @broadcast_and_attributes
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%arg1, %arg0, %arg2, %arg3) {begin_norm_axis = 1 : i64, epsilon = 1.000000e-03 : f32}
// CHECK-SAME:      : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK-NEXT:    return %[[F]]#0
func.func @broadcast_and_attributes(%bias: tensor<8xf32>, %x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %s = "graph.add"(%bias, %x) : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Dynamic leading dims are fine; surrounding ops are untouched.
// CHECK-LABEL: func.func @dynamic_in_context
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_layer_norm"(%[[E]], %arg1, %arg2, %arg3) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-SAME:      -> (tensor<?x8xbf16>, tensor<?x8xbf16>)
// CHECK-NEXT:    %[[R:.*]] = "graph.relu"(%[[F]]#0)
// CHECK-NEXT:    return %[[R]]
func.func @dynamic_in_context(%x1: tensor<?x8xbf16>, %x2: tensor<?x8xbf16>, %g: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<?x8xbf16> {
  %e = "graph.exp"(%x1) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %s = "graph.add"(%e, %x2) : (tensor<?x8xbf16>, tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<?x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<?x8xbf16>
  %r = "graph.relu"(%y) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  return %r : tensor<?x8xbf16>
}
