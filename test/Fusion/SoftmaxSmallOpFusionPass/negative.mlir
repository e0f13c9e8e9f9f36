// Chains that are not a softmax; the debug log says why.
// RUN: graphfuse-opt --split-input-file --SoftmaxSmallOpFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --SoftmaxSmallOpFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// keep_dims = false: the row maxima broadcast along the wrong axis of x.
// CHECK-LABEL: func.func @no_keep_dims
// CHECK-NOT:     graph.softmax
// WHY: pattern SoftmaxSmallOpFusion not fused at {{.*}}: reduce_max and reduce_sum must keep the reduced dim (keep_dims = true) to broadcast back
func.func @no_keep_dims(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %2 = "graph.exp"(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %4 : tensor<4x4xf32>
}

// -----

// The max and the sum reduce different axes.
// CHECK-LABEL: func.func @different_axes
// CHECK-NOT:     graph.softmax
// WHY: pattern SoftmaxSmallOpFusion not fused at {{.*}}: reduce_max reduces axis 1 but reduce_sum axis 0
func.func @different_axes(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x4xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  %2 = "graph.exp"(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 0>, keep_dims = true} : (tensor<4x4xf32>) -> tensor<1x4xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  return %4 : tensor<4x4xf32>
}

// -----

// Two reduced axes (softmax normalizes one).
// CHECK-LABEL: func.func @two_axes
// CHECK-NOT:     graph.softmax
// WHY: pattern SoftmaxSmallOpFusion not fused at {{.*}}: reduce_max and reduce_sum must reduce exactly one axis
func.func @two_axes(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<2x4x4xf32>) -> tensor<2x1x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<2x4x4xf32>
  %2 = "graph.exp"(%1) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<2x4x4xf32>) -> tensor<2x1x1xf32>
  %4 = "graph.div"(%2, %3) : (tensor<2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<2x4x4xf32>
  return %4 : tensor<2x4x4xf32>
}

// -----

// The exp (and, in the second chain, the max) has another user.
// CHECK-LABEL: func.func @intermediate_users
// CHECK-NOT:     graph.softmax
// WHY-DAG: pattern SoftmaxSmallOpFusion not fused at {{.*}}: the exp result has users besides the reduce_sum and the div
// WHY-DAG: pattern SoftmaxSmallOpFusion not fused at {{.*}}: the reduce_max result has other users
func.func @intermediate_users(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>) {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %5 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %6 = "graph.sub"(%x, %5) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = "graph.exp"(%6) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = "graph.reduce_sum"(%7) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %9 = "graph.div"(%7, %8) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %4, %2, %9, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// The max is taken over another tensor than the one shifted: no match.
// CHECK-LABEL: func.func @other_tensor
// CHECK-NOT:     graph.softmax
// WHY: pattern=SoftmaxSmallOpFusion, matched_times=0, effected_times=0
func.func @other_tensor(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.reduce_max"(%y) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
