// add_layer_norm_v3_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --add_layer_norm_v3_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_layer_norm_v3_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// A bias along the channel axis 1 is not x + bias with numpy broadcasting.
// LOG: pattern AddLayerNormV3Fusion not fused at {{.*}}: the bias_add does not run along the last axis
// CHECK-LABEL: func.func @channel_axis
// CHECK-NEXT:    "graph.bias_add"
// CHECK-NEXT:    "graph.layer_norm"
func.func @channel_axis(%x: tensor<2x3x4xf32>, %bias: tensor<3xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %s = "graph.bias_add"(%x, %bias) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %y = "graph.layer_norm"(%s, %g, %b) {begin_norm_axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A plain add is add_layer_norm_fusion's, not v3's.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @plain_add
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.layer_norm"
func.func @plain_add(%x: tensor<4x8xf32>, %bias: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x, %bias) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
