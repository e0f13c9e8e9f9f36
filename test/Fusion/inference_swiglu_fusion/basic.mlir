// silu(first half) * second half of the last axis => graph.swiglu.
// RUN: graphfuse-opt --split-input-file --inference_swiglu_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --inference_swiglu_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// CHECK-LABEL: func.func @split_form
// CHECK-NEXT:    %[[R:.*]] = "graph.swiglu"(%arg0) : (tensor<4x64xf16>) -> tensor<4x32xf16>
// CHECK-NEXT:    return %[[R]]
// COUNTS: GraphFusionPass[inference_swiglu_fusion]: pattern=Swiglu, matched_times=1, effected_times=1
func.func @split_form(%x: tensor<4x64xf16>) -> tensor<4x32xf16> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<4x64xf16>) -> (tensor<4x32xf16>, tensor<4x32xf16>)
  %1 = "graph.silu"(%0#0) : (tensor<4x32xf16>) -> tensor<4x32xf16>
  %2 = "graph.mul"(%1, %0#1) : (tensor<4x32xf16>, tensor<4x32xf16>) -> tensor<4x32xf16>
  return %2 : tensor<4x32xf16>
}

// -----

// The mul's operands swapped, the axis written as a positive number, a rank-3 input.
// CHECK-LABEL: func.func @swapped_rank3
// CHECK-NEXT:    %[[R:.*]] = "graph.swiglu"(%arg0) : (tensor<2x3x16xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    return %[[R]]
func.func @swapped_rank3(%x: tensor<2x3x16xf32>) -> tensor<2x3x8xf32> {
  %0:2 = "graph.split"(%x) {axis = 2 : i64, sizes = array<i64: 8, 8>} : (tensor<2x3x16xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %2 = "graph.mul"(%0#1, %1) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %2 : tensor<2x3x8xf32>
}

// -----

// MindSpore's form: two slices of the halves.
// CHECK-LABEL: func.func @slice_form
// CHECK-NEXT:    %[[R:.*]] = "graph.swiglu"(%arg0) : (tensor<2x4x16xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @slice_form(%x: tensor<2x4x16xbf16>) -> tensor<2x4x8xbf16> {
  %0 = "graph.slice"(%x) {start = array<i64: 0, 0, 0>, limit = array<i64: 2, 4, 8>} : (tensor<2x4x16xbf16>) -> tensor<2x4x8xbf16>
  %1 = "graph.slice"(%x) {start = array<i64: 0, 0, 8>, limit = array<i64: 2, 4, 16>, strides = array<i64: 1, 1, 1>} : (tensor<2x4x16xbf16>) -> tensor<2x4x8xbf16>
  %2 = "graph.silu"(%0) : (tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  %3 = "graph.mul"(%2, %1) : (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  return %3 : tensor<2x4x8xbf16>
}

// -----

// A dynamic row count is fine in the split form.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NEXT:    %[[R:.*]] = "graph.swiglu"(%arg0) : (tensor<?x64xf32>) -> tensor<?x32xf32>
func.func @dynamic_rows(%x: tensor<?x64xf32>) -> tensor<?x32xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 32>} : (tensor<?x64xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>)
  %1 = "graph.silu"(%0#0) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %2 = "graph.mul"(%1, %0#1) : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %2 : tensor<?x32xf32>
}

// -----

// A linear layer's halves viewed as [batch, seq, n] (HF Llama's MLP after matmul_weight_concat_fusion): the
// reshapes regroup the leading dims only, alike; x is reshaped as they were and fused.
// CHECK-LABEL: func.func @reshaped_halves
// CHECK-NEXT:    %[[X:.*]] = "graph.reshape"(%arg0) : (tensor<10x256xf32>) -> tensor<2x5x256xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.swiglu"(%[[X]]) : (tensor<2x5x256xf32>) -> tensor<2x5x128xf32>
// CHECK-NEXT:    return %[[R]]
func.func @reshaped_halves(%x: tensor<10x256xf32>) -> tensor<2x5x128xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 128, 128>} : (tensor<10x256xf32>) -> (tensor<10x128xf32>, tensor<10x128xf32>)
  %1 = "graph.reshape"(%0#0) : (tensor<10x128xf32>) -> tensor<2x5x128xf32>
  %2 = "graph.silu"(%1) : (tensor<2x5x128xf32>) -> tensor<2x5x128xf32>
  %3 = "graph.reshape"(%0#1) : (tensor<10x128xf32>) -> tensor<2x5x128xf32>
  %4 = "graph.mul"(%2, %3) : (tensor<2x5x128xf32>, tensor<2x5x128xf32>) -> tensor<2x5x128xf32>
  return %4 : tensor<2x5x128xf32>
}
