// add_layer_norm_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --add_layer_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_layer_norm_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// The sum also feeds another op (the residual stream): add_layer_norm_ext_fusion's case.
// LOG: pattern AddLayerNormFusion not fused at {{.*}}: the add result has other users (add_layer_norm_ext_fusion fuses that case)
// CHECK-LABEL: func.func @residual_user
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.layer_norm"
// CHECK-NEXT:    "graph.mul"
// CHECK-NOT:     graph.add_layer_norm
func.func @residual_user(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m = "graph.mul"(%y, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// The sum is a function result.
// LOG: pattern AddLayerNormFusion not fused at {{.*}}: the add result has other users
// CHECK-LABEL: func.func @sum_returned
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.layer_norm"
func.func @sum_returned(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Both operands broadcast: neither can be x1 (the sum must have x1's shape).
// LOG: pattern AddLayerNormFusion not fused at {{.*}}: the add broadcasts both operands: neither has the sum's shape
// CHECK-LABEL: func.func @both_broadcast
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.layer_norm"
func.func @both_broadcast(%x1: tensor<4x1xf32>, %x2: tensor<1x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not an add (sub, bias_add): no match, nothing logged for them.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @not_an_add
// CHECK-NEXT:    "graph.sub"
// CHECK-NEXT:    "graph.layer_norm"
// CHECK-NEXT:    "graph.bias_add"
// CHECK-NEXT:    "graph.layer_norm"
// CHECK-NEXT:    "graph.layer_norm"
func.func @not_an_add(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %bias: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.sub"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = "graph.bias_add"(%x1, %bias) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = "graph.layer_norm"(%t, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %w = "graph.layer_norm"(%x1, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %z, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
