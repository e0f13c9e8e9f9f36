// concat of a split's results, in order, along its axis => the operand, or a slice of it for a run.
// RUN: graphfuse-opt --split-input-file --split_concat_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --split_concat_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// CHECK-LABEL: func.func @whole
// CHECK-NEXT:    return %arg0
// COUNTS: GraphFusionPass[split_concat_fusion]: pattern=SplitConcat, matched_times=1, effected_times=1
func.func @whole(%x: tensor<4x12xf32>) -> tensor<4x12xf32> {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 4, 4, 4>} : (tensor<4x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
  %1 = "graph.concat"(%0#0, %0#1, %0#2) {axis = -1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  return %1 : tensor<4x12xf32>
}

// -----

// A contiguous run becomes a slice; the split stays for its other result.
// CHECK-LABEL: func.func @run
// CHECK-NEXT:    %[[S:.*]]:3 = "graph.split"(%arg0)
// CHECK-NEXT:    %[[R:.*]] = "graph.slice"(%arg0) {limit = array<i64: 6, 2, 3>, start = array<i64: 2, 0, 0>} : (tensor<6x2x3xi8>) -> tensor<4x2x3xi8>
// CHECK-NEXT:    return %[[R]], %[[S]]#0
func.func @run(%x: tensor<6x2x3xi8>) -> (tensor<4x2x3xi8>, tensor<2x2x3xi8>) {
  %0:3 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<6x2x3xi8>) -> (tensor<2x2x3xi8>, tensor<2x2x3xi8>, tensor<2x2x3xi8>)
  %1 = "graph.concat"(%0#1, %0#2) {axis = 0 : i64} : (tensor<2x2x3xi8>, tensor<2x2x3xi8>) -> tensor<4x2x3xi8>
  return %1, %0#0 : tensor<4x2x3xi8>, tensor<2x2x3xi8>
}

// -----

// Two runs of one split: both slices, the split goes away.
// CHECK-LABEL: func.func @two_runs
// CHECK-NEXT:    %[[A:.*]] = "graph.slice"(%arg0) {limit = array<i64: 4, 6>, start = array<i64: 0, 0>}
// CHECK-NEXT:    %[[B:.*]] = "graph.slice"(%arg0) {limit = array<i64: 4, 9>, start = array<i64: 0, 3>}
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @two_runs(%x: tensor<4x9xf16>) -> (tensor<4x6xf16>, tensor<4x6xf16>) {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 3, 3, 3>} : (tensor<4x9xf16>) -> (tensor<4x3xf16>, tensor<4x3xf16>, tensor<4x3xf16>)
  %1 = "graph.concat"(%0#0, %0#1) {axis = 1 : i64} : (tensor<4x3xf16>, tensor<4x3xf16>) -> tensor<4x6xf16>
  %2 = "graph.concat"(%0#1, %0#2) {axis = 1 : i64} : (tensor<4x3xf16>, tensor<4x3xf16>) -> tensor<4x6xf16>
  return %1, %2 : tensor<4x6xf16>, tensor<4x6xf16>
}

// -----

// A dynamic dim on the split axis is fine when all results are joined.
// CHECK-LABEL: func.func @dynamic_whole
// CHECK-NEXT:    return %arg0
func.func @dynamic_whole(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 5, 3>} : (tensor<?x8xf32>) -> (tensor<?x5xf32>, tensor<?x3xf32>)
  %1 = "graph.concat"(%0#0, %0#1) {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x3xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
