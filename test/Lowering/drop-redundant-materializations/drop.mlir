// drop-redundant-materializations: a materialize_in_destination of a value its producer already computes in that
// destination (after empty-tensor elimination) is removed; one whose value is computed elsewhere stays.
// RUN: graphfuse-opt %s --split-input-file --drop-redundant-materializations | FileCheck %s

// CHECK-LABEL: func.func @in_place(
// CHECK:         %[[A:.*]] = linalg.copy ins(%arg0 : tensor<4xf32>) outs(%arg1 : tensor<4xf32>)
// CHECK-NOT:     bufferization.materialize_in_destination
// CHECK:         return %[[A]]
func.func @in_place(%x: tensor<4xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %a = linalg.copy ins(%x : tensor<4xf32>) outs(%out : tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.materialize_in_destination %a in %out : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// Negative: computed into a tensor of its own.
// CHECK-LABEL: func.func @elsewhere(
// CHECK:         bufferization.materialize_in_destination %{{.*}} in %arg1
func.func @elsewhere(%x: tensor<4xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.materialize_in_destination %a in %out : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}
