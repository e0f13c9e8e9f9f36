// add_layer_norm_ext_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --add_layer_norm_ext_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_layer_norm_ext_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// A single-use add is add_layer_norm_fusion's case: no match here.
// LOG-NOT: AddLayerNormExtFusion not fused at {{.*}}:6:
// CHECK-LABEL: func.func @single_use
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.layer_norm"
func.func @single_use(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The sum is used before the layer_norm, whose gamma is computed after that use:
// no place for the fused op is both after gamma and before the sum's first use.
// LOG: pattern AddLayerNormExtFusion not fused at {{.*}}: an operand of the fused op is defined after a user of an intermediate
// CHECK-LABEL: func.func @gamma_after_use
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.layer_norm"
func.func @gamma_after_use(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "graph.mul"(%s, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g2 = "graph.exp"(%g) : (tensor<8xf32>) -> tensor<8xf32>
  %y = "graph.layer_norm"(%s, %g2, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Both operands broadcast.
// LOG: pattern AddLayerNormExtFusion not fused at {{.*}}: the add broadcasts both operands
// CHECK-LABEL: func.func @both_broadcast
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.layer_norm"
func.func @both_broadcast(%x1: tensor<4x1xf32>, %x2: tensor<1x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.add"(%x1, %x2) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = "graph.layer_norm"(%s, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}
