// What split_concat_fusion must keep; the debug log says why.
// RUN: graphfuse-opt --split-input-file --split_concat_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --split_concat_fusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Out of order: a rotation, not the operand.
// CHECK-LABEL: func.func @out_of_order
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
// WHY: pattern SplitConcat not fused at {{.*}}: the concat takes split results [1, 0], not a contiguous run in order
func.func @out_of_order(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %1 = "graph.concat"(%0#1, %0#0) {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A gap in the run, and a result taken twice.
// CHECK-LABEL: func.func @gaps
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
// CHECK-NEXT:    "graph.concat"
// WHY-DAG: pattern SplitConcat not fused at {{.*}}: the concat takes split results [0, 2], not a contiguous run in order
// WHY-DAG: pattern SplitConcat not fused at {{.*}}: the concat takes split results [1, 1], not a contiguous run in order
func.func @gaps(%x: tensor<4x12xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4, 4>} : (tensor<4x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
  %1 = "graph.concat"(%0#0, %0#2) {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %2 = "graph.concat"(%0#1, %0#1) {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Joined along another axis than the split's.
// CHECK-LABEL: func.func @other_axis
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
// WHY: pattern SplitConcat not fused at {{.*}}: the concat joins axis 0, the split cut axis 1
func.func @other_axis(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %1 = "graph.concat"(%0#0, %0#1) {axis = 0 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Results of two different splits: no match.
// CHECK-LABEL: func.func @two_splits
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
func.func @two_splits(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %1:2 = "graph.split"(%y) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %2 = "graph.concat"(%0#0, %1#1) {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A run of a split whose operand has a dynamic dim elsewhere: the slice bounds are unknown.
// CHECK-LABEL: func.func @dynamic_run
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
// WHY: pattern SplitConcat not fused at {{.*}}: the split operand tensor<?x9xf32> has a dynamic dim: the slice bounds are unknown
func.func @dynamic_run(%x: tensor<?x9xf32>) -> (tensor<?x6xf32>, tensor<?x3xf32>) {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 3, 3, 3>} : (tensor<?x9xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
  %1 = "graph.concat"(%0#0, %0#1) {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x6xf32>
  return %1, %0#2 : tensor<?x6xf32>, tensor<?x3xf32>
}
