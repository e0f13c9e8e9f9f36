// pow(x, 1) -> x and pow(x, 2) -> x * x always; pow(x, 0.5) is in unsafe.mlir.
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' %s | FileCheck %s

// CHECK-LABEL: func.func @pow_one
// CHECK-NEXT:    return %arg0, %arg1
func.func @pow_one(%x: tensor<4x8xf32>, %i: tensor<4xi32>) -> (tensor<4x8xf32>, tensor<4xi32>) {
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %ione = arith.constant dense<1> : tensor<i32>
  %0 = "graph.pow"(%x, %one) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.pow"(%i, %ione) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %0, %1 : tensor<4x8xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @pow_two
// CHECK-NEXT:    %[[A:.*]] = "graph.mul"(%arg0, %arg0) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[B:.*]] = "graph.mul"(%arg1, %arg1) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @pow_two(%x: tensor<4x8xf16>, %i: tensor<4xi8>) -> (tensor<4x8xf16>, tensor<4xi8>) {
  %two = arith.constant dense<2.0> : tensor<f16>
  %itwo = arith.constant dense<[2, 2, 2, 2]> : tensor<4xi8>
  %0 = "graph.pow"(%x, %two) : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %1 = "graph.pow"(%i, %itwo) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0, %1 : tensor<4x8xf16>, tensor<4xi8>
}

// -----

// Negative: other exponents, exponents of several values, a broadcasting
// exponent, a constant base, a variable exponent; pow(x, 0) is left alone.
// CHECK-LABEL: func.func @pow_negative
// CHECK-COUNT-6: "graph.pow"
// CHECK-NOT:     "graph.mul"
func.func @pow_negative(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %three = arith.constant dense<3.0> : tensor<f32>
  %mixed = arith.constant dense<[1.0, 2.0, 1.0, 2.0]> : tensor<4xf32>
  %two = arith.constant dense<2.0> : tensor<2x4xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = "graph.pow"(%x, %three) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "graph.pow"(%x, %mixed) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.pow"(%x, %two) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "graph.pow"(%three, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.pow"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.pow"(%x, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
