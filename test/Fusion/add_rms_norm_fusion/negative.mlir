// add_rms_norm_fusion: what must not fuse, and what it leaves for the quant fusions.
// RUN: graphfuse-opt --split-input-file --add_rms_norm_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_rms_norm_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Both operands broadcast.
// LOG: pattern AddRmsNormFusion not fused at {{.*}}: the add broadcasts both operands
// CHECK-LABEL: func.func @both_broadcast
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.rms_norm"
func.func @both_broadcast(%x1: tensor<4x1xf32>, %x2: tensor<1x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not an add: a sub, an argument, a mul.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @not_an_add
// CHECK-NEXT:    "graph.sub"
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.mul"
// CHECK-NEXT:    "graph.rms_norm"
func.func @not_an_add(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = "graph.sub"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = "graph.rms_norm"(%x1, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m = "graph.mul"(%x1, %x2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %w = "graph.rms_norm"(%m, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %z, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Run alone on add -> rms_norm -> quantize it takes the add -> rms_norm part, leaving
// add_rms_norm -> quantize, which add_rms_norm_quant_fusion no longer matches: that pass runs first.
// CHECK-LABEL: func.func @before_quant
// CHECK-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2)
// CHECK-NEXT:    "graph.quantize"(%[[F]]#0, %arg3, %arg3)
func.func @before_quant(%x1: tensor<4x8xf16>, %x2: tensor<4x8xf16>, %g: tensor<8xf16>, %p: tensor<1xf32>) -> tensor<4x8xi8> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}
