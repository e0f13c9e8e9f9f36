// matmul -> bias_add on the last axis, or -> add of a 1-D bias of the last dim => graph.matmul_bias_add.
// RUN: graphfuse-opt --split-input-file --matmul_elem_biasadd_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --matmul-elem-biasadd-fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --matmul_elem_biasadd_fusion --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC
// RUN: graphfuse-opt --split-input-file --log-level=info --matmul_elem_biasadd_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// CHECK-LABEL: func.func @bias_add
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2) : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    return %[[R]]
// The fused op's location lists the matmul and the bias_add.
// LOC-LABEL: func.func @bias_add
// LOC:         "graph.matmul_bias_add"{{.*}} loc(#[[FUSED:loc[0-9]+]])
// LOC:         #[[FUSED]] = loc(fused[#{{loc[0-9]+}}, #{{loc[0-9]+}}])
// COUNTS: GraphFusionPass[matmul_elem_biasadd_fusion]: pattern=MatMulBiasAdd, matched_times=1, effected_times=1
func.func @bias_add(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// Transpose flags move to the fused op; a batched matmul with an explicit last axis (2 of rank 3).
// CHECK-LABEL: func.func @batched_transposed
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2) {transpose_a = true, transpose_b = true} : (tensor<2x16x4xf16>, tensor<2x32x16xf16>, tensor<32xf16>) -> tensor<2x4x32xf16>
// CHECK-NEXT:    return %[[R]]
func.func @batched_transposed(%x: tensor<2x16x4xf16>, %w: tensor<2x32x16xf16>, %b: tensor<32xf16>) -> tensor<2x4x32xf16> {
  %0 = "graph.matmul"(%x, %w) {transpose_a = true, transpose_b = true} : (tensor<2x16x4xf16>, tensor<2x32x16xf16>) -> tensor<2x4x32xf16>
  %1 = "graph.bias_add"(%0, %b) {axis = 2 : i64} : (tensor<2x4x32xf16>, tensor<32xf16>) -> tensor<2x4x32xf16>
  return %1 : tensor<2x4x32xf16>
}

// -----

// An add of a 1-D constant shaped like the last dim is a bias add, in either operand order.
// CHECK-LABEL: func.func @add_constant_bias
// CHECK:         %[[B:.*]] = arith.constant dense<5.000000e-01> : tensor<32xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %[[B]])
// CHECK-NEXT:    return %[[R]]
// COUNTS: GraphFusionPass[matmul_elem_biasadd_fusion]: pattern=MatMulAddBias, matched_times=1, effected_times=1
func.func @add_constant_bias(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %b = arith.constant dense<0.5> : tensor<32xf32>
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%b, %0) : (tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func.func @add_value_bias
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2) : (tensor<3x4x16xbf16>, tensor<16x8xbf16>, tensor<8xbf16>) -> tensor<3x4x8xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @add_value_bias(%x: tensor<3x4x16xbf16>, %w: tensor<16x8xbf16>, %b: tensor<8xbf16>) -> tensor<3x4x8xbf16> {
  %0 = "graph.matmul"(%x, %w) : (tensor<3x4x16xbf16>, tensor<16x8xbf16>) -> tensor<3x4x8xbf16>
  %1 = "graph.add"(%0, %b) : (tensor<3x4x8xbf16>, tensor<8xbf16>) -> tensor<3x4x8xbf16>
  return %1 : tensor<3x4x8xbf16>
}

// -----

// A dynamic batch dim is fine: the bias runs along the static last dim.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2) : (tensor<?x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
func.func @dynamic_rows(%x: tensor<?x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<?x16xf32>, tensor<16x32xf32>) -> tensor<?x32xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}

// -----

// Two layers: both fuse, the second reading the first's fused result.
// CHECK-LABEL: func.func @two_layers
// CHECK-NEXT:    %[[A:.*]] = "graph.matmul_bias_add"(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[B:.*]] = "graph.matmul_bias_add"(%[[A]], %arg1, %arg2)
// CHECK-NEXT:    return %[[B]]
func.func @two_layers(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.bias_add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "graph.matmul"(%1, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %3 = "graph.add"(%2, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}
