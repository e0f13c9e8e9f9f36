// SoftmaxSmallOpFusionPass: reduce_max -> sub -> exp -> reduce_sum -> div along
// one axis (keep_dims = true) is softmax along that axis.
// RUN: graphfuse-opt --split-input-file --SoftmaxSmallOpFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --SoftmaxSmallOpFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// CHECK-LABEL: func.func @last_axis
// CHECK-NEXT:    %[[S:.*]] = "graph.softmax"(%arg0) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[S]]
// LOG: pattern=SoftmaxSmallOpFusion, matched_times=1, effected_times=1
func.func @last_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %4 = "graph.div"(%2, %3) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// A middle axis of a rank-3 f16 tensor with a dynamic dim.
// CHECK-LABEL: func.func @middle_axis
// CHECK-NEXT:    %[[S:.*]] = "graph.softmax"(%arg0) {axis = 1 : i64} : (tensor<?x5x3xf16>) -> tensor<?x5x3xf16>
// CHECK-NEXT:    return %[[S]]
func.func @middle_axis(%x: tensor<?x5x3xf16>) -> tensor<?x5x3xf16> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<?x5x3xf16>) -> tensor<?x1x3xf16>
  %1 = "graph.sub"(%x, %0) : (tensor<?x5x3xf16>, tensor<?x1x3xf16>) -> tensor<?x5x3xf16>
  %2 = "graph.exp"(%1) : (tensor<?x5x3xf16>) -> tensor<?x5x3xf16>
  %3 = "graph.reduce_sum"(%2) {axes = array<i64: -2>, keep_dims = true} : (tensor<?x5x3xf16>) -> tensor<?x1x3xf16>
  %4 = "graph.div"(%2, %3) : (tensor<?x5x3xf16>, tensor<?x1x3xf16>) -> tensor<?x5x3xf16>
  return %4 : tensor<?x5x3xf16>
}
