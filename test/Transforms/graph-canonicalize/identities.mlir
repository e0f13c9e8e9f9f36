// Exact identities of graph ops (arithmetic ones such as x + 0 are left alone).
// RUN: graphfuse-opt --split-input-file --graph-canonicalize %s | FileCheck %s

// CHECK-LABEL: func.func @cast_same_type
// CHECK-NEXT:    return %arg0
func.func @cast_same_type(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "graph.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Negative: a real cast, and a cast chain (rounds twice), stay.
// CHECK-LABEL: func.func @cast_changes_type
// CHECK-NEXT:    %[[A:.*]] = "graph.cast"(%arg0) : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %[[B:.*]] = "graph.cast"(%[[A]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    return %[[B]]
func.func @cast_changes_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.cast"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  %1 = "graph.cast"(%0) : (tensor<4xf16>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// concat of one input and split into one piece would be their operand, but the
// dialect requires at least two pieces; concat and split of several stay.
// CHECK-LABEL: func.func @concat_split_pieces
// CHECK-NEXT:    %[[C:.*]] = "graph.concat"(%arg0, %arg0)
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%arg0)
// CHECK-NEXT:    return %[[C]], %[[S]]#0, %[[S]]#1
func.func @concat_split_pieces(%x: tensor<2x3xf32>) -> (tensor<2x6xf32>, tensor<2x3xf32>, tensor<2x0xf32>) {
  %0 = "graph.concat"(%x, %x) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %1:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 3, 0>} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>)
  return %0, %1#0, %1#1 : tensor<2x6xf32>, tensor<2x3xf32>, tensor<2x0xf32>
}

// -----

// CHECK-LABEL: func.func @slice_whole
// CHECK-NEXT:    return %arg0, %arg0, %arg1
func.func @slice_whole(%x: tensor<4x8xf32>, %y: tensor<1x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xi32>) {
  %0 = "graph.slice"(%x) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.slice"(%x) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // A stride over a dimension of size 1 still takes everything.
  %2 = "graph.slice"(%y) {start = array<i64: 0, 0>, limit = array<i64: 1, 8>, strides = array<i64: 5, 1>} : (tensor<1x8xi32>) -> tensor<1x8xi32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xi32>
}

// -----

// Negative: part of the operand, a stride, or a dynamic dimension.
// CHECK-LABEL: func.func @slice_part
// CHECK-NEXT:    "graph.slice"(%arg0) {limit = array<i64: 4, 8>, start = array<i64: 1, 0>}
// CHECK-NEXT:    "graph.slice"(%arg0) {limit = array<i64: 4, 8>, start = array<i64: 0, 0>, strides = array<i64: 2, 1>}
// CHECK-NEXT:    "graph.slice"(%arg1)
// CHECK-NEXT:    return
func.func @slice_part(%x: tensor<4x8xf32>, %y: tensor<?x8xf32>) -> (tensor<3x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.slice"(%x) {start = array<i64: 1, 0>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<3x8xf32>
  %1 = "graph.slice"(%x) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>, strides = array<i64: 2, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %2 = "graph.slice"(%y) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>} : (tensor<?x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<3x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @double_negation
// CHECK-NEXT:    return %arg0, %arg1
func.func @double_negation(%x: tensor<4xi32>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi1>) {
  %0 = "graph.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  %1 = "graph.neg"(%0) : (tensor<4xi32>) -> tensor<4xi32>
  %2 = "graph.logical_not"(%b) : (tensor<4xi1>) -> tensor<4xi1>
  %3 = "graph.logical_not"(%2) : (tensor<4xi1>) -> tensor<4xi1>
  return %1, %3 : tensor<4xi32>, tensor<4xi1>
}

// -----

// Three negations leave one; a shared inner neg stays for its other user.
// CHECK-LABEL: func.func @triple_negation
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0)
// CHECK-NEXT:    return %[[N]], %arg0
func.func @triple_negation(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// f(f(x)) -> f(x) for idempotent ops.
// CHECK-LABEL: func.func @idempotent
// CHECK-NEXT:    %[[A:.*]] = "graph.abs"(%arg0)
// CHECK-NEXT:    %[[R:.*]] = "graph.relu"(%[[A]])
// CHECK-NEXT:    %[[F:.*]] = "graph.floor"(%[[R]])
// CHECK-NEXT:    return %[[F]]
func.func @idempotent(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.abs"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.abs"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.relu"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.floor"(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.floor"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// Negative: different ops in a row, and exp is not idempotent.
// CHECK-LABEL: func.func @not_idempotent
// CHECK-NEXT:    "graph.floor"
// CHECK-NEXT:    "graph.ceil"
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.exp"
func.func @not_idempotent(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.floor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.ceil"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.exp"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.exp"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @same_operands
// CHECK-NEXT:    return %arg0, %arg0, %arg1, %arg1
func.func @same_operands(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>) {
  %0 = "graph.maximum"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.minimum"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.logical_and"(%b, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %3 = "graph.logical_or"(%b, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Negative: arithmetic identities are left to a later pass (x + 0 is not exact for x = -0.0).
// CHECK-LABEL: func.func @arithmetic_left_alone
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    "graph.maximum"(%arg0, %arg1)
// CHECK-NEXT:    "graph.add"(%arg0, %arg0)
// CHECK-NEXT:    "graph.sub"(%arg0, %arg0)
// CHECK-NEXT:    "graph.mul"(%arg0,
// CHECK-NEXT:    "graph.add"(%arg0,
func.func @arithmetic_left_alone(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %0 = "graph.maximum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.sub"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.mul"(%x, %one) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.add"(%x, %zero) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_no_axes
// CHECK-NEXT:    return %arg0, %arg0
func.func @reduce_no_axes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.reduce_max"(%x) {axes = array<i64>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Negative: a real reduction, even over a dimension of size 1.
// CHECK-LABEL: func.func @reduce_axis
// CHECK-NEXT:    "graph.reduce_sum"(%arg0)
// CHECK-NEXT:    return
func.func @reduce_axis(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0>, keep_dims = true} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// CHECK-LABEL: func.func @select_known
// CHECK-NEXT:    return %arg1, %arg1, %arg2
func.func @select_known(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = arith.constant dense<true> : tensor<4xi1>
  %f = arith.constant dense<false> : tensor<i1>
  %0 = "graph.select"(%c, %x, %x) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.select"(%t, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.select"(%f, %x, %y) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: a mixed constant condition, and a condition that broadcasts the branch.
// CHECK-LABEL: func.func @select_unknown
// CHECK:         "graph.select"(%{{.*}}, %arg0, %arg1)
// CHECK-NEXT:    "graph.select"(%{{.*}}, %arg0, %arg0) : (tensor<2x4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func @select_unknown(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<2x4xi1>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  %m = arith.constant dense<[true, false, true, true]> : tensor<4xi1>
  %0 = "graph.select"(%m, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.select"(%c, %x, %x) : (tensor<2x4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<4xf32>, tensor<2x4xf32>
}
