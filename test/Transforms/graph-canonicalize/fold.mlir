// Constant folding through the reference semantics of the graph ops.
// RUN: graphfuse-opt --split-input-file --graph-canonicalize %s | FileCheck %s

// CHECK-LABEL: func.func @fold_add
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]]
func.func @fold_add() -> tensor<2xf32> {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %0 = "graph.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A chain of foldable ops becomes one constant; broadcasting is followed.
// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    return %[[C]]
// CHECK-NOT:     graph.
func.func @fold_chain() -> tensor<2x2xf32> {
  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %0 = "graph.mul"(%a, %two) : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %1 = "graph.relu"(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

// Integer arithmetic wraps, as the reference says.
// CHECK-LABEL: func.func @fold_int_wraps
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[-128, 0]> : tensor<2xi8>
// CHECK-NEXT:    return %[[C]]
func.func @fold_int_wraps() -> tensor<2xi8> {
  %a = arith.constant dense<[127, -1]> : tensor<2xi8>
  %b = arith.constant dense<1> : tensor<2xi8>
  %0 = "graph.add"(%a, %b) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

// Comparisons fold to i1 constants; NaN compares unequal.
// CHECK-LABEL: func.func @fold_compare
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-NEXT:    return %[[C]]
func.func @fold_compare() -> tensor<3xi1> {
  %a = arith.constant dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>
  %b = arith.constant dense<[1.0, 3.0, 0x7FC00000]> : tensor<3xf32>
  %0 = "graph.equal"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Shape ops fold too: the result constant has the result type.
// CHECK-LABEL: func.func @fold_reshape_transpose
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<{{\[}}[0, 2, 4], [1, 3, 5]]> : tensor<2x3xi32>
// CHECK-NEXT:    return %[[C]]
func.func @fold_reshape_transpose() -> tensor<2x3xi32> {
  %a = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi32>
  %0 = "graph.reshape"(%a) : (tensor<6xi32>) -> tensor<3x2xi32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<3x2xi32>) -> tensor<2x3xi32>
  return %1 : tensor<2x3xi32>
}

// -----

// Multi-result ops fold into one constant per result.
// CHECK-LABEL: func.func @fold_split
// CHECK-DAG:     %[[A:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<3.000000e+00> : tensor<1xf32>
// CHECK-NOT:     graph.split
// CHECK:         return %[[B]], %[[A]]
func.func @fold_split() -> (tensor<1xf32>, tensor<2xf32>) {
  %a = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0:2 = "graph.split"(%a) {axis = 0 : i64, sizes = array<i64: 2, 1>} : (tensor<3xf32>) -> (tensor<2xf32>, tensor<1xf32>)
  return %0#1, %0#0 : tensor<1xf32>, tensor<2xf32>
}

// -----

// Results of different element types (dynamic_quant: i8 values, f32 scales).
// CHECK-LABEL: func.func @fold_dynamic_quant
// CHECK-DAG:     %[[Q:.*]] = arith.constant dense<{{\[}}[127, -64]]> : tensor<1x2xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{.*}}> : tensor<1xf32>
// CHECK-NOT:     graph.dynamic_quant
// CHECK:         return %[[Q]], %[[S]]
func.func @fold_dynamic_quant() -> (tensor<1x2xi8>, tensor<1xf32>) {
  %a = arith.constant dense<[[2.0, -1.0]]> : tensor<1x2xf32>
  %0:2 = "graph.dynamic_quant"(%a) : (tensor<1x2xf32>) -> (tensor<1x2xi8>, tensor<1xf32>)
  return %0#0, %0#1 : tensor<1x2xi8>, tensor<1xf32>
}

// -----

// Low-precision floats fold in their own type.
// CHECK-LABEL: func.func @fold_bf16
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[-1.500000e+00, 2.000000e+00]> : tensor<2xbf16>
// CHECK-NEXT:    return %[[C]]
func.func @fold_bf16() -> tensor<2xbf16> {
  %a = arith.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %0 = "graph.neg"(%a) : (tensor<2xbf16>) -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

// Negative: one operand is not a constant.
// CHECK-LABEL: func.func @no_fold_argument
// CHECK-NEXT:    %[[C:.*]] = arith.constant
// CHECK-NEXT:    %[[R:.*]] = "graph.add"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[R]]
func.func @no_fold_argument(%x: tensor<2xf32>) -> tensor<2xf32> {
  %b = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %0 = "graph.add"(%x, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Negative: a dynamic result type is never folded.
// CHECK-LABEL: func.func @no_fold_dynamic
// CHECK-NEXT:    %[[C:.*]] = arith.constant
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%[[C]]) : (tensor<6xf32>) -> tensor<?x2xf32>
// CHECK-NEXT:    return %[[R]]
func.func @no_fold_dynamic() -> tensor<?x2xf32> {
  %a = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<6xf32>
  %0 = "graph.reshape"(%a) : (tensor<6xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// The constant part folds; the op reading an argument stays.
// CHECK-LABEL: func.func @no_fold_partial
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<5.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%[[C]], %arg0)
// CHECK-NEXT:    return %[[R]]
func.func @no_fold_partial(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = arith.constant dense<2.0> : tensor<2xf32>
  %b = arith.constant dense<3.0> : tensor<2xf32>
  %0 = "graph.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "graph.mul"(%0, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// Rank-0 results keep their rank-0 type.
// CHECK-LABEL: func.func @fold_rank_0
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<10> : tensor<i32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<false> : tensor<i1>
// CHECK:         return %[[S]], %[[B]] : tensor<i32>, tensor<i1>
func.func @fold_rank_0() -> (tensor<i32>, tensor<i1>) {
  %a = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %t = arith.constant dense<true> : tensor<i1>
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 0>} : (tensor<4xi32>) -> tensor<i32>
  %1 = "graph.logical_not"(%t) : (tensor<i1>) -> tensor<i1>
  return %0, %1 : tensor<i32>, tensor<i1>
}
