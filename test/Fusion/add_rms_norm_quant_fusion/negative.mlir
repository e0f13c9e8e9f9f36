// add_rms_norm_quant_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --add_rms_norm_quant_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --add_rms_norm_quant_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// The normalized value is also returned: add_rms_norm_quant does not produce it.
// LOG: pattern AddRmsNormQuantFusion not fused at {{.*}}: the rms_norm result has other users
// CHECK-LABEL: func.func @norm_returned
// CHECK-NEXT:    "graph.add"
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.quantize"
func.func @norm_returned(%x1: tensor<4x8xf16>, %x2: tensor<4x8xf16>, %g: tensor<8xf16>, %p: tensor<1xf32>) -> (tensor<4x8xi8>, tensor<4x8xf16>) {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q, %y : tensor<4x8xi8>, tensor<4x8xf16>
}

// -----

// Both add operands broadcast.
// LOG: pattern AddRmsNormQuantFusion not fused at {{.*}}: the add broadcasts both operands
// CHECK-LABEL: func.func @both_broadcast
// CHECK-NOT:     graph.add_rms_norm_quant
// CHECK:         return
func.func @both_broadcast(%x1: tensor<4x1xf32>, %x2: tensor<1x8xf32>, %g: tensor<8xf32>, %p: tensor<1xf32>) -> tensor<4x8xi8> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// No add before the norm (rms_norm_quant_fusion's case), or the add already fused into add_rms_norm
// (add_rms_norm_fusion ran first): no match.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @no_add
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.quantize"
// CHECK-NEXT:    "graph.add_rms_norm"
// CHECK-NEXT:    "graph.quantize"
func.func @no_add(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %g: tensor<8xf32>, %p: tensor<1xf32>) -> (tensor<4x8xi8>, tensor<4x8xi8>) {
  %y = "graph.rms_norm"(%x1, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  %z:2 = "graph.add_rms_norm"(%x1, %x2, %g) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %r = "graph.quantize"(%z#0, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q, %r : tensor<4x8xi8>, tensor<4x8xi8>
}
