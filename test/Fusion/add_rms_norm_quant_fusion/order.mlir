// Run order: add_rms_norm_quant_fusion before rms_norm_quant_fusion and add_rms_norm_fusion (MindSpore's order)
// fuses the whole add -> rms_norm -> quantize chain; the other order leaves two ops.
// RUN: graphfuse-opt --pass-pipeline='builtin.module(add_rms_norm_quant_fusion, rms_norm_quant_fusion, add_rms_norm_fusion)' %s | FileCheck %s --check-prefix=GOOD
// RUN: graphfuse-opt --pass-pipeline='builtin.module(add_rms_norm_fusion, add_rms_norm_quant_fusion)' %s | FileCheck %s --check-prefix=NORM-FIRST
// RUN: graphfuse-opt --pass-pipeline='builtin.module(rms_norm_quant_fusion, add_rms_norm_quant_fusion)' %s | FileCheck %s --check-prefix=QUANT-FIRST

// GOOD-LABEL:  func.func @chain
// GOOD-NEXT:     %[[F:.*]]:2 = "graph.add_rms_norm_quant"(%arg0, %arg1, %arg2, %arg3, %arg3)
// GOOD-NEXT:     return %[[F]]#0

// NORM-FIRST-LABEL: func.func @chain
// NORM-FIRST-NEXT:    %[[F:.*]]:2 = "graph.add_rms_norm"(%arg0, %arg1, %arg2)
// NORM-FIRST-NEXT:    "graph.quantize"(%[[F]]#0, %arg3, %arg3)

// QUANT-FIRST-LABEL: func.func @chain
// QUANT-FIRST-NEXT:    %[[S:.*]] = "graph.add"(%arg0, %arg1)
// QUANT-FIRST-NEXT:    "graph.rms_norm_quant"(%[[S]], %arg2, %arg3, %arg3)
func.func @chain(%x1: tensor<4x8xf16>, %x2: tensor<4x8xf16>, %g: tensor<8xf16>, %p: tensor<1xf32>) -> tensor<4x8xi8> {
  %s = "graph.add"(%x1, %x2) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %y = "graph.rms_norm"(%s, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %q = "graph.quantize"(%y, %p, %p) : (tensor<4x8xf16>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}
