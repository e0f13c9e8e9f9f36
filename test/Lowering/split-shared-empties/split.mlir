// split-shared-empties: each use of a tensor.empty gets its own (CSE merges them; bufferization then sees two ops
// writing one tensor); a tensor.empty used once is left alone.
// RUN: graphfuse-opt %s --split-input-file --split-shared-empties | FileCheck %s

// CHECK-LABEL: func.func @shared(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = linalg.copy ins(%arg0 : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT:    linalg.copy ins(%[[A]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: one use, one empty.
// CHECK-LABEL: func.func @single(
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT:     tensor.empty
func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
