// rms_norm_quant_fusion: what must not fuse.
// RUN: graphfuse-opt --split-input-file --rms_norm_quant_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --rms_norm_quant_fusion --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// The normalized value is also returned: rms_norm_quant does not produce it.
// LOG: pattern RmsNormQuantFusion not fused at {{.*}}: the rms_norm result has other users
// CHECK-LABEL: func.func @norm_returned
// CHECK-NEXT:    "graph.rms_norm"
// CHECK-NEXT:    "graph.quantize"
func.func @norm_returned(%x: tensor<4x8xf16>, %g: tensor<8xf16>, %p: tensor<1xf32>) -> (tensor<4x8xi8>, tensor<4x8xf16>) {
  %y = "graph.rms_norm"(%x, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q, %y : tensor<4x8xi8>, tensor<4x8xf16>
}

// -----

// Two quantizations of one norm: neither may absorb it.
// LOG: pattern RmsNormQuantFusion not fused at {{.*}}: the rms_norm result has other users
// LOG: pattern RmsNormQuantFusion not fused at {{.*}}: the rms_norm result has other users
// CHECK-LABEL: func.func @two_quantizations
// CHECK-NOT:     graph.rms_norm_quant
// CHECK:         return
func.func @two_quantizations(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %p: tensor<1xf32>, %c: tensor<8xf32>) -> (tensor<4x8xi8>, tensor<4x8xi8>) {
  %y = "graph.rms_norm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  %r = "graph.quantize"(%y, %c, %c) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xi8>
  return %q, %r : tensor<4x8xi8>, tensor<4x8xi8>
}

// -----

// The quantized value is not a normalization (a layer_norm, an argument): no match.
// LOG-NOT: not fused
// CHECK-LABEL: func.func @not_rms_norm
// CHECK-NEXT:    "graph.layer_norm"
// CHECK-NEXT:    "graph.quantize"
// CHECK-NEXT:    "graph.quantize"
func.func @not_rms_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %p: tensor<1xf32>) -> (tensor<4x8xi8>, tensor<4x8xi8>) {
  %y = "graph.layer_norm"(%x, %g, %g) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  %r = "graph.quantize"(%x, %p, %p) : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q, %r : tensor<4x8xi8>, tensor<4x8xi8>
}
