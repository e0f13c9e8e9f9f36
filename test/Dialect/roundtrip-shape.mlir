// Round trip of the data-movement ops: graphfuse-opt (with graph-verify) and upstream mlir-opt
// (IRDL only) parse and print them unchanged.
// RUN: graphfuse-opt %s | graphfuse-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %arg0: tensor<4x8xf32>, %arg1: tensor<?x8xi8>) -> (tensor<2x16xf32>, tensor<?x4xf32>, tensor<2x?x2xi8>, tensor<32xf32>) {
// CHECK-NEXT:    %0 = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:    %1 = "graph.reshape"(%0) : (tensor<2x16xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    %2 = "graph.reshape"(%arg1) : (tensor<?x8xi8>) -> tensor<2x?x2xi8>
// CHECK-NEXT:    %3 = "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT:    return %0, %1, %2, %3 : tensor<2x16xf32>, tensor<?x4xf32>, tensor<2x?x2xi8>, tensor<32xf32>
func.func @reshape(%a: tensor<4x8xf32>, %b: tensor<?x8xi8>) -> (tensor<2x16xf32>, tensor<?x4xf32>, tensor<2x?x2xi8>, tensor<32xf32>) {
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<2x16xf32>
  // One dynamic result dim, computed from the element count.
  %1 = "graph.reshape"(%0) : (tensor<2x16xf32>) -> tensor<?x4xf32>
  // A dynamic operand: element counts are not compared.
  %2 = "graph.reshape"(%b) : (tensor<?x8xi8>) -> tensor<2x?x2xi8>
  %3 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0, %1, %2, %3 : tensor<2x16xf32>, tensor<?x4xf32>, tensor<2x?x2xi8>, tensor<32xf32>
}

// CHECK-LABEL: func.func @reshape_to_given_sizes(
// CHECK-NEXT:    %0 = "graph.reshape"(%arg0, %arg1) : (tensor<?x256xf32>, tensor<?x?x1xi1>) -> tensor<?x?x256xf32>
// CHECK-NEXT:    %1 = "graph.reshape"(%arg2, %arg3) : (tensor<?x8x?xf32>, tensor<1x1x?xi64>) -> tensor<?x1x?xf32>
func.func @reshape_to_given_sizes(%a: tensor<?x256xf32>, %sa: tensor<?x?x1xi1>, %b: tensor<?x8x?xf32>, %sb: tensor<1x1x?xi64>) -> (tensor<?x?x256xf32>, tensor<?x1x?xf32>) {
  // Both dynamic dims are those of the sizes operand.
  %0 = "graph.reshape"(%a, %sa) : (tensor<?x256xf32>, tensor<?x?x1xi1>) -> tensor<?x?x256xf32>
  // The last from the sizes operand, the first the element count over the others.
  %1 = "graph.reshape"(%b, %sb) : (tensor<?x8x?xf32>, tensor<1x1x?xi64>) -> tensor<?x1x?xf32>
  return %0, %1 : tensor<?x?x256xf32>, tensor<?x1x?xf32>
}

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME:    %arg0: tensor<1x8xi64>, %arg1: tensor<?x1xf16>) -> (tensor<3x4x8xi64>, tensor<?x6xf16>) {
// CHECK-NEXT:    %0 = "graph.broadcast_to"(%arg0) : (tensor<1x8xi64>) -> tensor<3x4x8xi64>
// CHECK-NEXT:    %1 = "graph.broadcast_to"(%arg1) : (tensor<?x1xf16>) -> tensor<?x6xf16>
// CHECK-NEXT:    return %0, %1 : tensor<3x4x8xi64>, tensor<?x6xf16>
func.func @broadcast_to(%a: tensor<1x8xi64>, %b: tensor<?x1xf16>) -> (tensor<3x4x8xi64>, tensor<?x6xf16>) {
  %0 = "graph.broadcast_to"(%a) : (tensor<1x8xi64>) -> tensor<3x4x8xi64>
  // A dynamic result dim comes from the same (dynamic, not broadcast) operand dim.
  %1 = "graph.broadcast_to"(%b) : (tensor<?x1xf16>) -> tensor<?x6xf16>
  return %0, %1 : tensor<3x4x8xi64>, tensor<?x6xf16>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %arg0: tensor<2x?x8xi1>, %arg1: tensor<4x8xbf16>) -> (tensor<8x2x?xi1>, tensor<8x4xbf16>) {
// CHECK-NEXT:    %0 = "graph.transpose"(%arg0) {perm = array<i64: 2, 0, 1>} : (tensor<2x?x8xi1>) -> tensor<8x2x?xi1>
// CHECK-NEXT:    %1 = "graph.transpose"(%arg1) {perm = array<i64: 1, 0>} : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT:    return %0, %1 : tensor<8x2x?xi1>, tensor<8x4xbf16>
func.func @transpose(%a: tensor<2x?x8xi1>, %b: tensor<4x8xbf16>) -> (tensor<8x2x?xi1>, tensor<8x4xbf16>) {
  %0 = "graph.transpose"(%a) {perm = array<i64: 2, 0, 1>} : (tensor<2x?x8xi1>) -> tensor<8x2x?xi1>
  %1 = "graph.transpose"(%b) {perm = array<i64: 1, 0>} : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
  return %0, %1 : tensor<8x2x?xi1>, tensor<8x4xbf16>
}

// concat: two operands of any shapes, then any number sharing one type (the IRDL variadic group).
// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %arg0: tensor<4x8xi32>, %arg1: tensor<4x2xi32>, %arg2: tensor<4x3xi32>) -> (tensor<4x10xi32>, tensor<4x16xi32>, tensor<12x8xi32>) {
// CHECK-NEXT:    %0 = "graph.concat"(%arg0, %arg1) {axis = 1 : i64} : (tensor<4x8xi32>, tensor<4x2xi32>) -> tensor<4x10xi32>
// CHECK-NEXT:    %1 = "graph.concat"(%arg0, %arg1, %arg2, %arg2) {axis = -1 : i64} : (tensor<4x8xi32>, tensor<4x2xi32>, tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x16xi32>
// CHECK-NEXT:    %2 = "graph.concat"(%arg0, %arg0, %arg0) {axis = 0 : i64} : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<12x8xi32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<4x10xi32>, tensor<4x16xi32>, tensor<12x8xi32>
func.func @concat(%a: tensor<4x8xi32>, %b: tensor<4x2xi32>, %c: tensor<4x3xi32>) -> (tensor<4x10xi32>, tensor<4x16xi32>, tensor<12x8xi32>) {
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<4x8xi32>, tensor<4x2xi32>) -> tensor<4x10xi32>
  %1 = "graph.concat"(%a, %b, %c, %c) {axis = -1 : i64} : (tensor<4x8xi32>, tensor<4x2xi32>, tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x16xi32>
  %2 = "graph.concat"(%a, %a, %a) {axis = 0 : i64} : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<12x8xi32>
  return %0, %1, %2 : tensor<4x10xi32>, tensor<4x16xi32>, tensor<12x8xi32>
}

// CHECK-LABEL: func.func @concat_dynamic(
// CHECK-SAME:    %arg0: tensor<?x8xf32>, %arg1: tensor<4x8xf32>) -> (tensor<?x8xf32>, tensor<4x16xf32>) {
// CHECK-NEXT:    %0 = "graph.concat"(%arg0, %arg1) {axis = 0 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %1 = "graph.concat"(%arg0, %arg1) {axis = 1 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    return %0, %1 : tensor<?x8xf32>, tensor<4x16xf32>
func.func @concat_dynamic(%a: tensor<?x8xf32>, %b: tensor<4x8xf32>) -> (tensor<?x8xf32>, tensor<4x16xf32>) {
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<4x16xf32>
}

// split: results first, second, then any number of pieces of one size.
// CHECK-LABEL: func.func @split(
// CHECK-SAME:    %arg0: tensor<4x10xf16>) -> (tensor<4x1xf16>, tensor<4x3xf16>, tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>) {
// CHECK-NEXT:    %0:5 = "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 1, 3, 2, 2, 2>} : (tensor<4x10xf16>) -> (tensor<4x1xf16>, tensor<4x3xf16>, tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>)
// CHECK-NEXT:    return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<4x1xf16>, tensor<4x3xf16>, tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>
func.func @split(%a: tensor<4x10xf16>) -> (tensor<4x1xf16>, tensor<4x3xf16>, tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>) {
  %0:5 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 1, 3, 2, 2, 2>} : (tensor<4x10xf16>) -> (tensor<4x1xf16>, tensor<4x3xf16>, tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<4x1xf16>, tensor<4x3xf16>, tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>
}

// CHECK-LABEL: func.func @split_dynamic(
// CHECK-SAME:    %arg0: tensor<?x8xi8>) -> (tensor<?x6xi8>, tensor<?x2xi8>) {
// CHECK-NEXT:    %0:2 = "graph.split"(%arg0) {axis = -1 : i64, sizes = array<i64: 6, 2>} : (tensor<?x8xi8>) -> (tensor<?x6xi8>, tensor<?x2xi8>)
// CHECK-NEXT:    return %0#0, %0#1 : tensor<?x6xi8>, tensor<?x2xi8>
func.func @split_dynamic(%a: tensor<?x8xi8>) -> (tensor<?x6xi8>, tensor<?x2xi8>) {
  %0:2 = "graph.split"(%a) {axis = -1 : i64, sizes = array<i64: 6, 2>} : (tensor<?x8xi8>) -> (tensor<?x6xi8>, tensor<?x2xi8>)
  return %0#0, %0#1 : tensor<?x6xi8>, tensor<?x2xi8>
}

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %arg0: tensor<4x8xf32>, %arg1: tensor<?x8xi64>) -> (tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x8xi64>, tensor<0x8xf32>) {
// CHECK-NEXT:    %0 = "graph.slice"(%arg0) {limit = array<i64: 3, 8>, start = array<i64: 1, 0>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %1 = "graph.slice"(%arg0) {limit = array<i64: 4, 8>, start = array<i64: 0, 5>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %2 = "graph.slice"(%arg1) {limit = array<i64: 4, 8>, start = array<i64: 2, 0>} : (tensor<?x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT:    %3 = "graph.slice"(%arg0) {limit = array<i64: 2, 8>, start = array<i64: 2, 0>} : (tensor<4x8xf32>) -> tensor<0x8xf32>
// CHECK-NEXT:    return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x8xi64>, tensor<0x8xf32>
func.func @slice(%a: tensor<4x8xf32>, %b: tensor<?x8xi64>) -> (tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x8xi64>, tensor<0x8xf32>) {
  %0 = "graph.slice"(%a) {start = array<i64: 1, 0>, limit = array<i64: 3, 8>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = "graph.slice"(%a) {start = array<i64: 0, 5>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // Only the upper bound of a dynamic dim goes unchecked.
  %2 = "graph.slice"(%b) {start = array<i64: 2, 0>, limit = array<i64: 4, 8>} : (tensor<?x8xi64>) -> tensor<2x8xi64>
  %3 = "graph.slice"(%a) {start = array<i64: 2, 0>, limit = array<i64: 2, 8>} : (tensor<4x8xf32>) -> tensor<0x8xf32>
  return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x8xi64>, tensor<0x8xf32>
}

// Indices of any rank (a scalar removes the axis), dynamic dims from data and from the indices.
// CHECK-LABEL: func.func @gather(
// CHECK-NEXT:    %0 = "graph.gather"(%arg0, %arg1) : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %1 = "graph.gather"(%arg0, %arg2) {axis = -1 : i64} : (tensor<10x4xf32>, tensor<i32>) -> tensor<10xf32>
// CHECK-NEXT:    %2 = "graph.gather"(%arg3, %arg4) {axis = 1 : i64} : (tensor<?x7xbf16>, tensor<?xi64>) -> tensor<?x?xbf16>
func.func @gather(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>, %s: tensor<i32>, %d: tensor<?x7xbf16>, %j: tensor<?xi64>) -> (tensor<2x3x4xf32>, tensor<10xf32>, tensor<?x?xbf16>) {
  %0 = "graph.gather"(%w, %i) : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = "graph.gather"(%w, %s) {axis = -1 : i64} : (tensor<10x4xf32>, tensor<i32>) -> tensor<10xf32>
  %2 = "graph.gather"(%d, %j) {axis = 1 : i64} : (tensor<?x7xbf16>, tensor<?xi64>) -> tensor<?x?xbf16>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<10xf32>, tensor<?x?xbf16>
}

// scatter_update: the result has data's type; indices of any rank, dynamic dims in data and updates.
// CHECK-LABEL: func.func @scatter_update(
// CHECK-NEXT:    %0 = "graph.scatter_update"(%arg0, %arg1, %arg2) {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<3xi64>, tensor<1x2x3x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT:    %1 = "graph.scatter_update"(%arg3, %arg4, %arg5) : (tensor<?x4xbf16>, tensor<i32>, tensor<4xbf16>) -> tensor<?x4xbf16>
func.func @scatter_update(%c: tensor<1x2x8x4xf32>, %p: tensor<3xi64>, %n: tensor<1x2x3x4xf32>, %d: tensor<?x4xbf16>, %s: tensor<i32>, %r: tensor<4xbf16>) -> (tensor<1x2x8x4xf32>, tensor<?x4xbf16>) {
  %0 = "graph.scatter_update"(%c, %p, %n) {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<3xi64>, tensor<1x2x3x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = "graph.scatter_update"(%d, %s, %r) : (tensor<?x4xbf16>, tensor<i32>, tensor<4xbf16>) -> tensor<?x4xbf16>
  return %0, %1 : tensor<1x2x8x4xf32>, tensor<?x4xbf16>
}

// gather_elements: the result has the indices' shape and data's element type.
// CHECK-LABEL: func.func @gather_elements(
// CHECK-NEXT:    %0 = "graph.gather_elements"(%arg0, %arg1) {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
func.func @gather_elements(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = "graph.gather_elements"(%x, %i) {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// iota: i64 positions along one dim of the operand, dynamic when that dim is.
// CHECK-LABEL: func.func @iota(
// CHECK-NEXT:    %0 = "graph.iota"(%arg0) {axis = 1 : i64} : (tensor<2x?xbf16>) -> tensor<?xi64>
func.func @iota(%x: tensor<2x?xbf16>) -> tensor<?xi64> {
  %0 = "graph.iota"(%x) {axis = 1 : i64} : (tensor<2x?xbf16>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// pad: every mode; negative pads crop; constant mode takes an optional rank-0 padding value of the operand's type
// (token ids: i64); a dynamic dim stays dynamic.
// CHECK-LABEL: func.func @pad(
// CHECK-NEXT:    %0 = "graph.pad"(%arg0) {high = array<i64: 0, 0, 2, 1>, low = array<i64: 0, 0, 1, 2>} : (tensor<2x3x5x7xf32>) -> tensor<2x3x8x10xf32>
// CHECK-NEXT:    %1 = "graph.pad"(%arg0) {high = array<i64: 0, 0, 4, 6>, low = array<i64: 0, 0, 4, -1>, mode = "reflect"} : (tensor<2x3x5x7xf32>) -> tensor<2x3x13x12xf32>
// CHECK-NEXT:    %2 = "graph.pad"(%arg0) {high = array<i64: 0, 0, 9, 0>, low = array<i64: 1, 0, 0, 3>, mode = "replicate"} : (tensor<2x3x5x7xf32>) -> tensor<3x3x14x10xf32>
// CHECK-NEXT:    %3 = "graph.pad"(%arg0) {high = array<i64: 0, 0, 4, -2>, low = array<i64: 0, 0, 5, 5>, mode = "circular"} : (tensor<2x3x5x7xf32>) -> tensor<2x3x14x10xf32>
// CHECK-NEXT:    %4 = "graph.pad"(%arg1, %arg2) {high = array<i64: 0, 1>, low = array<i64: 0, 0>, mode = "constant"} : (tensor<4x12xi64>, tensor<i64>) -> tensor<4x13xi64>
// CHECK-NEXT:    %5 = "graph.pad"(%arg3) {high = array<i64: 0, -3>, low = array<i64: 2, 0>} : (tensor<?x8xbf16>) -> tensor<?x5xbf16>
func.func @pad(%x: tensor<2x3x5x7xf32>, %ids: tensor<4x12xi64>, %zero: tensor<i64>, %d: tensor<?x8xbf16>) -> (tensor<2x3x8x10xf32>, tensor<2x3x13x12xf32>, tensor<3x3x14x10xf32>, tensor<2x3x14x10xf32>, tensor<4x13xi64>, tensor<?x5xbf16>) {
  %0 = "graph.pad"(%x) {low = array<i64: 0, 0, 1, 2>, high = array<i64: 0, 0, 2, 1>} : (tensor<2x3x5x7xf32>) -> tensor<2x3x8x10xf32>
  // Each reflect pad is smaller than its dim; a negative pad crops.
  %1 = "graph.pad"(%x) {low = array<i64: 0, 0, 4, -1>, high = array<i64: 0, 0, 4, 6>, mode = "reflect"} : (tensor<2x3x5x7xf32>) -> tensor<2x3x13x12xf32>
  // replicate repeats an edge any number of times.
  %2 = "graph.pad"(%x) {low = array<i64: 1, 0, 0, 3>, high = array<i64: 0, 0, 9, 0>, mode = "replicate"} : (tensor<2x3x5x7xf32>) -> tensor<3x3x14x10xf32>
  // circular wraps at most once around what the negative pads leave (5 of 7).
  %3 = "graph.pad"(%x) {low = array<i64: 0, 0, 5, 5>, high = array<i64: 0, 0, 4, -2>, mode = "circular"} : (tensor<2x3x5x7xf32>) -> tensor<2x3x14x10xf32>
  %4 = "graph.pad"(%ids, %zero) {low = array<i64: 0, 0>, high = array<i64: 0, 1>, mode = "constant"} : (tensor<4x12xi64>, tensor<i64>) -> tensor<4x13xi64>
  %5 = "graph.pad"(%d) {low = array<i64: 2, 0>, high = array<i64: 0, -3>} : (tensor<?x8xbf16>) -> tensor<?x5xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3x8x10xf32>, tensor<2x3x13x12xf32>, tensor<3x3x14x10xf32>, tensor<2x3x14x10xf32>, tensor<4x13xi64>, tensor<?x5xbf16>
}
