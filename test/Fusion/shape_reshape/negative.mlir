// What shape_reshape leaves alone.
// RUN: graphfuse-opt --split-input-file --shape_reshape %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --shape_reshape %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The inner reshape has another user: it stays for it, the outer one reads x directly
// (a reshape moves no data, so nothing is computed twice).
// CHECK-LABEL: func.func @inner_shared
// CHECK-NEXT:    %[[A:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[A]])
// CHECK-NEXT:    return %[[B]], %[[E]]
// WHY-NOT: not fused
// WHY: GraphFusionPass[shape_reshape]: pattern=ReshapeReshape, matched_times=1, effected_times=1
func.func @inner_shared(%x: tensor<4x8xf32>) -> (tensor<2x16xf32>, tensor<32xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  %1 = "graph.reshape"(%0) : (tensor<32xf32>) -> tensor<2x16xf32>
  %2 = "graph.exp"(%0) : (tensor<32xf32>) -> tensor<32xf32>
  return %1, %2 : tensor<2x16xf32>, tensor<32xf32>
}

// -----

// A single reshape that changes the shape, a reshape of a transpose (shape_reshape_2's case),
// and a broadcast_to are not touched.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    "graph.reshape"(%arg0)
// CHECK-NEXT:    "graph.transpose"(%arg0)
// CHECK-NEXT:    "graph.reshape"
// CHECK-NEXT:    "graph.broadcast_to"(%arg1)
// CHECK-NEXT:    "graph.reshape"
// WHY-NOT: not fused
// WHY: GraphFusionPass[shape_reshape]: pattern=ReshapeReshape, matched_times=0, effected_times=0
func.func @untouched(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %0 = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  %1 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %2 = "graph.reshape"(%1) : (tensor<8x4xf32>) -> tensor<32xf32>
  %3 = "graph.broadcast_to"(%y) : (tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "graph.reshape"(%3) : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0, %2, %4 : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
}
