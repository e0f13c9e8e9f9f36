// CANN's MatMulBiasAddFusionPass: the same rewrite as matmul_elem_biasadd_fusion, under CANN's switch name.
// RUN: graphfuse-opt --split-input-file --MatMulBiasAddFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --MatMulBiasAddFusionPass %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// Both names on: the second finds nothing left.
// RUN: graphfuse-opt --split-input-file --log-level=info --matmul_elem_biasadd_fusion --MatMulBiasAddFusionPass %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// Turned off in a CANN fusion_switch.cfg, it leaves the graph alone.
// RUN: echo '{"Switch":{"GraphFusion":{"MatMulBiasAddFusionPass":"off"}}}' > %t.cfg
// RUN: graphfuse-opt --split-input-file --fusion-switch-file=%t.cfg --MatMulBiasAddFusionPass %s | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @fully_connected
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2) {transpose_b = true} : (tensor<8x64xf16>, tensor<128x64xf16>, tensor<128xf16>) -> tensor<8x128xf16>
// CHECK-NEXT:    return %[[R]]
// LOG: GraphFusionPass[MatMulBiasAddFusionPass]: pattern=MatMulBiasAdd, matched_times=1, effected_times=1
// BOTH: GraphFusionPass[matmul_elem_biasadd_fusion]: pattern=MatMulBiasAdd, matched_times=1, effected_times=1
// BOTH: GraphFusionPass[MatMulBiasAddFusionPass]: pattern=MatMulBiasAdd, matched_times=0, effected_times=0
// OFF-LABEL: func.func @fully_connected
// OFF-NEXT:    "graph.matmul"
// OFF-NEXT:    "graph.bias_add"
func.func @fully_connected(%x: tensor<8x64xf16>, %w: tensor<128x64xf16>, %b: tensor<128xf16>) -> tensor<8x128xf16> {
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<8x64xf16>, tensor<128x64xf16>) -> tensor<8x128xf16>
  %1 = "graph.bias_add"(%0, %b) {axis = -1 : i64} : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  return %1 : tensor<8x128xf16>
}

// -----

// The add-of-a-1-D-bias form, bias first.
// CHECK-LABEL: func.func @add_bias
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2) : (tensor<2x8x64xf32>, tensor<64x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    return %[[R]]
// LOG: GraphFusionPass[MatMulBiasAddFusionPass]: pattern=MatMulAddBias, matched_times=1, effected_times=1
func.func @add_bias(%x: tensor<2x8x64xf32>, %w: tensor<64x16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %1 = "graph.add"(%b, %0) : (tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %1 : tensor<2x8x16xf32>
}
