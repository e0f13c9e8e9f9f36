// Found by the differential fuzzer (graphfuse.tools.fuzz): a concat whose first operand is a split result and
// whose other operand is a function argument made split_concat_fusion raise a TypeError (comparing the
// argument's missing producer with the split), failing graph-fusion with an internal error.
// RUN: graphfuse-opt --split-input-file --split_concat_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-fusion %s | FileCheck %s

// Not a run of the split's results: nothing to fuse, and no error.
// CHECK-LABEL: func.func @split_piece_and_argument
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
func.func @split_piece_and_argument(%x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %1 = "graph.concat"(%0#0, %y) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return %1 : tensor<2x5xf32>
}

// -----

// The same with the argument first (the split result second): the pattern looks at the first operand only.
// CHECK-LABEL: func.func @argument_and_split_piece
// CHECK-NEXT:    "graph.split"
// CHECK-NEXT:    "graph.concat"
func.func @argument_and_split_piece(%x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %1 = "graph.concat"(%y, %0#1) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  return %1 : tensor<2x5xf32>
}
