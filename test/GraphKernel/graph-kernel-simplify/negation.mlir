// 0 - x -> neg(x), x * -1 -> neg(x), x - neg(y) -> x + y (safe: unsafe-math=false keeps them).
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @zero_sub
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.neg"(%arg1) : (tensor<4xi8>) -> tensor<4xi8>
// CHECK-NEXT:    return %[[N]], %[[M]]
func.func @zero_sub(%x: tensor<4x8xf32>, %i: tensor<4xi8>) -> (tensor<4x8xf32>, tensor<4xi8>) {
  %zero = arith.constant dense<-0.0> : tensor<8xf32>
  %izero = arith.constant dense<0> : tensor<4xi8>
  %0 = "graph.sub"(%zero, %x) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.sub"(%izero, %i) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0, %1 : tensor<4x8xf32>, tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @mul_minus_one
// CHECK-NEXT:    %[[A:.*]] = "graph.neg"(%arg0) : (tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    %[[B:.*]] = "graph.neg"(%arg1) : (tensor<2x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @mul_minus_one(%x: tensor<4xf16>, %i: tensor<2x2xi64>) -> (tensor<4xf16>, tensor<2x2xi64>) {
  %m = arith.constant dense<-1.0> : tensor<4xf16>
  %im = arith.constant dense<[-1, -1]> : tensor<2xi64>
  %0 = "graph.mul"(%x, %m) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %1 = "graph.mul"(%im, %i) : (tensor<2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<4xf16>, tensor<2x2xi64>
}

// -----

// The neg is erased when the sub was its only user.
// CHECK-LABEL: func.func @sub_neg
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[A]]
func.func @sub_neg(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %n = "graph.neg"(%y) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = "graph.sub"(%x, %n) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The neg stays for its other users.
// CHECK-LABEL: func.func @sub_neg_shared
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg1)
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    return %[[A]], %[[N]]
func.func @sub_neg_shared(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %n = "graph.neg"(%y) : (tensor<4xi32>) -> tensor<4xi32>
  %0 = "graph.sub"(%x, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %n : tensor<4xi32>, tensor<4xi32>
}

// -----

// 0 - x then x' - neg: both rewrites compose (x - (0 - y) -> x + y).
// CHECK-LABEL: func.func @sub_zero_sub
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    return %[[A]]
func.func @sub_zero_sub(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = "graph.sub"(%zero, %y) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.sub"(%x, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// The new op keeps the location of the op it replaces.
// LOC-LABEL: func.func @neg_loc
// LOC:         "graph.neg"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc(#[[L:loc[0-9]*]])
// LOC:         #[[L]] = loc("the_mul")
func.func @neg_loc(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = arith.constant dense<-1.0> : tensor<f32>
  %0 = "graph.mul"(%x, %m) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("the_mul")
  return %0 : tensor<4xf32>
}

// -----

// Negative: neg(x) would have x's shape, not the broadcast result's; a neg on
// the left of a sub and -2 are no patterns; neg(x) - y stays.
// CHECK-LABEL: func.func @negation_negative
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT:    %[[M:.*]] = arith.constant dense<-2.000000e+00> : tensor<f32>
// CHECK-NEXT:    "graph.sub"(%[[Z]], %arg0) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    "graph.mul"(%arg0, %[[M]])
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0)
// CHECK-NEXT:    "graph.sub"(%[[N]], %arg1)
// CHECK-NEXT:    return
func.func @negation_negative(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant dense<0.0> : tensor<2x4xf32>
  %m2 = arith.constant dense<-2.0> : tensor<f32>
  %0 = "graph.sub"(%zero, %x) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = "graph.mul"(%x, %m2) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %n = "graph.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.sub"(%n, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>
}
