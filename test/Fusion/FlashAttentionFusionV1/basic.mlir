// softmax(q k^T * c [+ mask]) @ v => graph.flash_attention (exact).
// RUN: graphfuse-opt --split-input-file --FlashAttentionFusionV1 %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --FlashAttentionFusionV1 --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC
// RUN: graphfuse-opt --split-input-file --log-level=info --FlashAttentionFusionV1 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// k^T through transpose_b, a broadcast mask added after the scale.
// CHECK-LABEL: func.func @masked
// CHECK-NEXT:    %[[R:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2, %arg3) {scale = 1.250000e-01 : f32} : (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>, tensor<2x4x8x32xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x32xf32>
// CHECK-NEXT:    return %[[R]]
// The fused location lists the five replaced ops.
// LOC-LABEL: func.func @masked
// LOC:         "graph.flash_attention"{{.*}} loc(#[[FUSED:loc[0-9]+]])
// LOC:         #[[FUSED]] = loc(fused[#{{loc[0-9]+}}, #{{loc[0-9]+}}, #{{loc[0-9]+}}, #{{loc[0-9]+}}, #{{loc[0-9]+}}])
// COUNTS: GraphFusionPass[FlashAttentionFusionV1]: pattern=FlashAttentionV1, matched_times=1, effected_times=1
func.func @masked(%q: tensor<2x4x8x64xf32>, %k: tensor<2x4x8x64xf32>, %v: tensor<2x4x8x32xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<2x4x8x32xf32> {
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) -> tensor<2x4x8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %2 = "graph.add"(%1, %mask) : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %3 = "graph.softmax"(%2) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %4 = "graph.matmul"(%3, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x32xf32>
  return %4 : tensor<2x4x8x32xf32>
}

// -----

// k^T through a transpose of the last two dims (erased with the chain), no mask,
// the constant first in the mul, a 1-element f16 constant (the scale is its exact f16 value), softmax axis
// written positive.
// CHECK-LABEL: func.func @transposed_k
// CHECK-NEXT:    %[[R:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2) {scale = 0.300048828 : f32} : (tensor<3x5x16xf16>, tensor<3x7x16xf16>, tensor<3x7x4xf16>) -> tensor<3x5x4xf16>
// CHECK-NEXT:    return %[[R]]
func.func @transposed_k(%q: tensor<3x5x16xf16>, %k: tensor<3x7x16xf16>, %v: tensor<3x7x4xf16>) -> tensor<3x5x4xf16> {
  %c = arith.constant dense<3.000000e-01> : tensor<1xf16>
  %kt = "graph.transpose"(%k) {perm = array<i64: 0, 2, 1>} : (tensor<3x7x16xf16>) -> tensor<3x16x7xf16>
  %0 = "graph.matmul"(%q, %kt) : (tensor<3x5x16xf16>, tensor<3x16x7xf16>) -> tensor<3x5x7xf16>
  %1 = "graph.mul"(%c, %0) : (tensor<1xf16>, tensor<3x5x7xf16>) -> tensor<3x5x7xf16>
  %2 = "graph.softmax"(%1) {axis = 2 : i64} : (tensor<3x5x7xf16>) -> tensor<3x5x7xf16>
  %3 = "graph.matmul"(%2, %v) : (tensor<3x5x7xf16>, tensor<3x7x4xf16>) -> tensor<3x5x4xf16>
  return %3 : tensor<3x5x4xf16>
}

// -----

// The mask first in the add; k shared by heads (a 2-D k broadcast over the batch); a transpose of k
// that is also used elsewhere stays for that user.
// CHECK-LABEL: func.func @mask_first
// CHECK-NEXT:    %[[T:.*]] = "graph.transpose"(%arg1)
// CHECK-NEXT:    %[[R:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2, %arg3) {scale = 5.000000e-01 : f32} : (tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    return %[[R]], %[[T]]
func.func @mask_first(%q: tensor<2x8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>, %mask: tensor<8x8xf32>) -> (tensor<2x8x16xf32>, tensor<16x8xf32>) {
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %kt = "graph.transpose"(%k) {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %0 = "graph.matmul"(%q, %kt) : (tensor<2x8x16xf32>, tensor<16x8xf32>) -> tensor<2x8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %2 = "graph.add"(%mask, %1) : (tensor<8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %3 = "graph.softmax"(%2) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %4 = "graph.matmul"(%3, %v) : (tensor<2x8x8xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
  return %4, %kt : tensor<2x8x16xf32>, tensor<16x8xf32>
}

// -----

// PyTorch's attention (the importer's safe_softmax): the fused op keeps its probabilities' semantics.
// CHECK-LABEL: func.func @safe_softmax
// CHECK-NEXT:    %[[R:.*]] = "graph.flash_attention"(%arg0, %arg1, %arg2, %arg3) {safe_softmax = true, scale = 1.250000e-01 : f32} : (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>, tensor<2x4x8x32xf32>, tensor<2x1x8x8xf32>) -> tensor<2x4x8x32xf32>
// CHECK-NEXT:    return %[[R]]
func.func @safe_softmax(%q: tensor<2x4x8x64xf32>, %k: tensor<2x4x8x64xf32>, %v: tensor<2x4x8x32xf32>, %mask: tensor<2x1x8x8xf32>) -> tensor<2x4x8x32xf32> {
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %0 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) -> tensor<2x4x8x8xf32>
  %1 = "graph.mul"(%0, %c) : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %2 = "graph.add"(%1, %mask) : (tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %3 = "graph.safe_softmax"(%2) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %4 = "graph.matmul"(%3, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x32xf32>
  return %4 : tensor<2x4x8x32xf32>
}
