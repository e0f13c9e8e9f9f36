// graph-fold-empty-tensors: every op result with a zero-size dimension becomes an empty constant, and ops reading
// an empty tensor into a non-empty result are folded by their semantics; afterwards empty tensors are only
// arguments, results and constants (graphfuse.compile runs it before the graph pipeline).
// RUN: graphfuse-opt --split-input-file --graph-fold-empty-tensors %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fold-empty-tensors)' %s | FileCheck %s
// RUN: graphfuse-opt --graph-fold-empty-tensors --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// A second run finds nothing left to fold.
// RUN: graphfuse-opt --graph-fold-empty-tensors %s | graphfuse-opt --graph-fold-empty-tensors --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-AGAIN

// STATS:      graph-fold-empty-tensors
// STATS-NEXT:   (S)  8 num-emptied  - Number of empty op results replaced by constants
// STATS-NEXT:   (S)  1 num-expanded - Number of ops reading an empty tensor expanded into basic ops, which were folded
// STATS-NEXT:   (S) 22 num-folded   - Number of ops reading an empty tensor folded into non-empty results
// STATS-AGAIN:      graph-fold-empty-tensors
// STATS-AGAIN-NEXT:   (S) 0 num-emptied
// STATS-AGAIN-NEXT:   (S) 0 num-expanded
// STATS-AGAIN-NEXT:   (S) 0 num-folded

// Empty results of a chain become one empty constant; the empty argument may still be returned as it is.
// CHECK-LABEL: func.func @empty_results
// CHECK-NEXT:    %[[E:.*]] = arith.constant dense<> : tensor<0x8xf32>
// CHECK-NEXT:    %[[X:.*]] = "graph.exp"(%arg1)
// CHECK-NEXT:    return %arg0, %[[E]], %[[X]]
func.func @empty_results(%x: tensor<0x8xf32>, %y: tensor<8xf32>) -> (tensor<0x8xf32>, tensor<0x8xf32>, tensor<8xf32>) {
  %0 = "graph.add"(%x, %y) : (tensor<0x8xf32>, tensor<8xf32>) -> tensor<0x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<0x8xf32>) -> tensor<0x8xf32>
  %2 = "graph.exp"(%y) : (tensor<8xf32>) -> tensor<8xf32>
  return %x, %1, %2 : tensor<0x8xf32>, tensor<0x8xf32>, tensor<8xf32>
}

// -----

// Reductions over an empty axis give the interpreter's values: a sum 0 (integers too), a mean NaN.
// CHECK-LABEL: func.func @reductions
// CHECK-DAG:     %[[SUM:.*]] = arith.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK-DAG:     %[[MEAN:.*]] = arith.constant dense<0x{{7FC00000|FFC00000}}> : tensor<3x1x4xf32>
// CHECK-DAG:     %[[INT:.*]] = arith.constant dense<0> : tensor<5xi32>
// CHECK-NOT:     graph.reduce
// CHECK:         return %[[SUM]], %[[MEAN]], %[[INT]]
func.func @reductions(%x: tensor<3x0x4xf32>, %i: tensor<0x5xi32>) -> (tensor<3x4xf32>, tensor<3x1x4xf32>, tensor<5xi32>) {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<3x0x4xf32>) -> tensor<3x4xf32>
  %1 = "graph.reduce_mean"(%x) {axes = array<i64: 1>, keep_dims = true} : (tensor<3x0x4xf32>) -> tensor<3x1x4xf32>
  %2 = "graph.reduce_sum"(%i) {axes = array<i64: 0>} : (tensor<0x5xi32>) -> tensor<5xi32>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<3x1x4xf32>, tensor<5xi32>
}

// -----

// concat drops its empty operands (the first, or all of the shared-type group); with one left it is that operand.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %[[A:.*]] = "graph.concat"(%arg0, %arg2, %arg2) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.concat"(%arg2, %arg0) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT:    return %[[A]], %[[B]], %arg0
func.func @concat(%x: tensor<4x3xf32>, %e: tensor<0x3xf32>, %y: tensor<2x3xf32>) -> (tensor<8x3xf32>, tensor<6x3xf32>, tensor<4x3xf32>) {
  %0 = "graph.concat"(%e, %x, %y, %y) {axis = 0 : i64} : (tensor<0x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  %1 = "graph.concat"(%y, %x, %e, %e) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<6x3xf32>
  %2 = "graph.concat"(%x, %e) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<0x3xf32>) -> tensor<4x3xf32>
  return %0, %1, %2 : tensor<8x3xf32>, tensor<6x3xf32>, tensor<4x3xf32>
}

// -----

// Phi-3's partial rotary embedding with the whole head rotated: the pass-through slice is empty and concatenated
// back, so the concat is the rotated part alone.
// CHECK-LABEL: func.func @empty_slice_concatenated_back
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0)
// CHECK-NEXT:    return %[[N]]
func.func @empty_slice_concatenated_back(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %rest = "graph.slice"(%x) {start = array<i64: 0, 0, 8>, limit = array<i64: 2, 4, 8>} : (tensor<2x4x8xf32>) -> tensor<2x4x0xf32>
  %0 = "graph.neg"(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = "graph.exp"(%rest) : (tensor<2x4x0xf32>) -> tensor<2x4x0xf32>
  %2 = "graph.concat"(%0, %1) {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<2x4x0xf32>) -> tensor<2x4x8xf32>
  return %2 : tensor<2x4x8xf32>
}

// -----

// split drops its empty pieces; one piece left is the whole operand (the sizes add up to the axis).
// CHECK-LABEL: func.func @split
// CHECK-NEXT:    %[[P:.*]]:2 = "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x5xf32>)
// CHECK-NEXT:    %[[E:.*]] = arith.constant dense<> : tensor<4x0xf32>
// CHECK-NEXT:    return %[[P]]#0, %[[E]], %[[P]]#1, %arg0
func.func @split(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x0xf32>, tensor<4x5xf32>, tensor<4x8xf32>) {
  %0:3 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 3, 0, 5>} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x0xf32>, tensor<4x5xf32>)
  %1:2 = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 0, 4>} : (tensor<4x8xf32>) -> (tensor<0x8xf32>, tensor<4x8xf32>)
  return %0#0, %0#1, %0#2, %1#1 : tensor<4x3xf32>, tensor<4x0xf32>, tensor<4x5xf32>, tensor<4x8xf32>
}

// -----

// With other dims dynamic too: Phi-3's rotary part of each head all of it, the part passed through empty, put
// back together by a concat. The split and the concat both fold away.
// CHECK-LABEL: func.func @split_dynamic
// CHECK-NEXT:    %[[R:.*]] = "graph.neg"(%arg0) : (tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32>
// CHECK-NEXT:    return %[[R]]
func.func @split_dynamic(%x: tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32> {
  %0:2 = "graph.split"(%x) {axis = -1 : i64, sizes = array<i64: 32, 0>} : (tensor<?x8x?x32xf32>) -> (tensor<?x8x?x32xf32>, tensor<?x8x?x0xf32>)
  %1 = "graph.neg"(%0#0) : (tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32>
  %2 = "graph.concat"(%1, %0#1) {axis = -1 : i64} : (tensor<?x8x?x32xf32>, tensor<?x8x?x0xf32>) -> tensor<?x8x?x32xf32>
  return %2 : tensor<?x8x?x32xf32>
}

// -----

// A contraction of size 0 is zeros (batched too); a fused epilogue then applies to the zeros.
// CHECK-LABEL: func.func @matmuls
// CHECK-DAG:     %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<4x6xf32>
// CHECK-DAG:     %[[ZB:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3x5xf32>
// CHECK-DAG:     %[[ZZ:.*]] = arith.constant dense<0.000000e+00> : tensor<4x6xf32>
// CHECK:         %[[B:.*]] = "graph.bias_add"(%[[ZZ]], %arg4) {axis = -1 : i64}
// CHECK-NOT:     graph.matmul
// CHECK:         return %[[Z]], %[[ZB]], %[[B]]
func.func @matmuls(%a: tensor<4x0xf32>, %w: tensor<0x6xf32>, %q: tensor<2x3x0xf32>, %k: tensor<2x5x0xf32>, %bias: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<2x3x5xf32>, tensor<4x6xf32>) {
  %0 = "graph.matmul"(%a, %w) : (tensor<4x0xf32>, tensor<0x6xf32>) -> tensor<4x6xf32>
  %1 = "graph.matmul"(%q, %k) {transpose_b = true} : (tensor<2x3x0xf32>, tensor<2x5x0xf32>) -> tensor<2x3x5xf32>
  %2 = "graph.matmul_bias_add"(%a, %w, %bias) : (tensor<4x0xf32>, tensor<0x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<4x6xf32>, tensor<2x3x5xf32>, tensor<4x6xf32>
}

// -----

// Attention over no key is zeros; a scatter of no update is its data.
// CHECK-LABEL: func.func @attention_and_scatter
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1x2x4x8xf32>
// CHECK-NEXT:    return %[[Z]], %arg3
func.func @attention_and_scatter(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x0x8xf32>, %v: tensor<1x2x0x8xf32>, %d: tensor<4x8xf32>, %i: tensor<0xi64>, %u: tensor<4x0xf32>) -> (tensor<1x2x4x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.flash_attention"(%q, %k, %v) {scale = 0.25 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>) -> tensor<1x2x4x8xf32>
  %1 = "graph.scatter_update"(%d, %i, %u) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<0xi64>, tensor<4x0xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<1x2x4x8xf32>, tensor<4x8xf32>
}

// -----

// A grouped matmul with no contraction, or with no group, gives no row a product: zeros, whatever the ends.
// CHECK-LABEL: func.func @grouped_matmul_of_nothing
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:    %[[Z2:.*]] = arith.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:    return %[[Z]], %[[Z2]]
func.func @grouped_matmul_of_nothing(%x: tensor<4x0xf32>, %w: tensor<2x0x3xf32>, %ends: tensor<2xi64>, %y: tensor<4x2xf32>, %none: tensor<0x3x2xf32>, %no_ends: tensor<0xi32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<4x0xf32>, tensor<2x0x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %1 = "graph.grouped_matmul"(%y, %none, %no_ends) {transpose_weights = true} : (tensor<4x2xf32>, tensor<0x3x2xf32>, tensor<0xi32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Any other op whose operands are all empty or constant is evaluated by its reference.
// CHECK-LABEL: func.func @evaluated
// CHECK-DAG:     %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6]> : tensor<7xi64>
// CHECK-DAG:     %[[X2:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG:     %[[Y2:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         return %[[IOTA]], %[[X2]], %[[Y2]]
func.func @evaluated(%like: tensor<0x7xf32>, %x: tensor<0x8xf32>) -> (tensor<7xi64>, tensor<f32>, tensor<f32>) {
  %0 = "graph.iota"(%like) {axis = 1 : i64} : (tensor<0x7xf32>) -> tensor<7xi64>
  %1:2 = "graph.square_sum_all"(%x, %x) : (tensor<0x8xf32>, tensor<0x8xf32>) -> (tensor<f32>, tensor<f32>)
  return %0, %1#0, %1#1 : tensor<7xi64>, tensor<f32>, tensor<f32>
}

// -----

// An op with an expansion into basic ops, some of them reading an empty tensor and others not, is expanded and
// the pieces are folded: the sum of squares of nothing is 0, that of y is left to compute.
// CHECK-LABEL: func.func @expanded
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[SQ:.*]] = "graph.mul"(%arg1, %arg1)
// CHECK-NEXT:    %[[S:.*]] = "graph.reduce_sum"(%[[SQ]]) {axes = array<i64: 0, 1>, keep_dims = false}
// CHECK-NEXT:    return %[[Z]], %[[S]]
func.func @expanded(%x: tensor<0x8xf32>, %y: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "graph.square_sum_all"(%x, %y) : (tensor<0x8xf32>, tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

// A call's empty results are known (the call stays for its other results); the callee folds its own.
// CHECK-LABEL: func.func @caller
// CHECK-NEXT:    %[[E:.*]] = arith.constant dense<> : tensor<0x4xf32>
// CHECK-NEXT:    %[[C:.*]]:2 = call @callee(%arg0)
// CHECK-NEXT:    return %[[C]]#0, %[[E]]
// CHECK-LABEL: func.func private @callee
// CHECK-NEXT:    %[[S:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[E2:.*]] = arith.constant dense<> : tensor<0x4xf32>
// CHECK-NEXT:    return %[[S]], %[[E2]]
func.func @caller(%x: tensor<0x4xf32>) -> (tensor<4xf32>, tensor<0x4xf32>) {
  %0:2 = call @callee(%x) : (tensor<0x4xf32>) -> (tensor<4xf32>, tensor<0x4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<0x4xf32>
}
func.func private @callee(%x: tensor<0x4xf32>) -> (tensor<4xf32>, tensor<0x4xf32>) {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<0x4xf32>) -> tensor<4xf32>
  %1 = "graph.relu"(%x) : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %0, %1 : tensor<4xf32>, tensor<0x4xf32>
}
