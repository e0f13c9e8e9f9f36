// x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0 -> x, for constants of one repeated value, any dtype,
// unless the constant broadcasts x to a bigger shape.  These are safe: unsafe-math=false keeps them.
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' %s | FileCheck %s

// CHECK-LABEL: func.func @mul_one
// CHECK-NEXT:    return %arg0, %arg0
// CHECK-NOT:     graph.
func.func @mul_one(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %0 = "graph.mul"(%x, %one) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%one, %x) : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A dense (non-splat) constant whose elements are all equal counts, and so does
// a 1-element one; integers too.
// CHECK-LABEL: func.func @mul_one_dense_int
// CHECK-NEXT:    return %arg0, %arg0
func.func @mul_one_dense_int(%x: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
  %ones = arith.constant dense<[1, 1, 1]> : tensor<3xi32>
  %one = arith.constant dense<[[1]]> : tensor<1x1xi32>
  %0 = "graph.mul"(%x, %ones) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = "graph.mul"(%one, %0) : (tensor<1x1xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @div_one
// CHECK-NEXT:    return %arg0, %arg1
func.func @div_one(%x: tensor<4xf16>, %i: tensor<4xi64>) -> (tensor<4xf16>, tensor<4xi64>) {
  %one = arith.constant dense<1.0> : tensor<4xf16>
  %ione = arith.constant dense<1> : tensor<i64>
  %0 = "graph.div"(%x, %one) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %1 = "graph.div"(%i, %ione) : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %0, %1 : tensor<4xf16>, tensor<4xi64>
}

// -----

// Zeros of both signs: x + (-0.0) is exact, x + (+0.0) only turns -0.0 into +0.0.
// CHECK-LABEL: func.func @add_zero
// CHECK-NEXT:    return %arg0, %arg0, %arg0
func.func @add_zero(%x: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %zero = arith.constant dense<0.0> : tensor<8xbf16>
  %nzero = arith.constant dense<-0.0> : tensor<bf16>
  %0 = "graph.add"(%x, %zero) : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %1 = "graph.add"(%zero, %x) : (tensor<8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %2 = "graph.add"(%nzero, %x) : (tensor<bf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %0, %1, %2 : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @sub_zero
// CHECK-NEXT:    return %arg0, %arg1
func.func @sub_zero(%x: tensor<3xi8>, %y: tensor<3xf32>) -> (tensor<3xi8>, tensor<3xf32>) {
  %zero = arith.constant dense<0> : tensor<3xi8>
  %fzero = arith.constant dense<0.0> : tensor<f32>
  %0 = "graph.sub"(%x, %zero) : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %1 = "graph.sub"(%y, %fzero) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xi8>, tensor<3xf32>
}

// -----

// A dynamic dim broadcast against a 1-element constant is still x's dim.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    return %arg0
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %one = arith.constant dense<1.0> : tensor<1x1xf32>
  %0 = "graph.mul"(%x, %one) : (tensor<?x8xf32>, tensor<1x1xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A chain simplifies completely; the ops between stay simplified in any order.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    return %[[E]]
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = "graph.mul"(%x, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "graph.add"(%0, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = "graph.exp"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.div"(%2, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = "graph.sub"(%3, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// Negative: the constant broadcasts x to a bigger shape, so x is not the result.
// CHECK-LABEL: func.func @broadcasting_zero
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT:    %[[O:.*]] = arith.constant dense<1.000000e+00> : tensor<2x1xf32>
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %[[Z]]) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[O]], %arg0) : (tensor<2x1xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    return %[[A]], %[[M]]
func.func @broadcasting_zero(%x: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<2x1xf32>
  %0 = "graph.add"(%x, %zero) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%one, %x) : (tensor<2x1xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<2x8xf32>
}

// -----

// Negative: x * 0 is not 0 (NaN * 0 and inf * 0 are NaN, -1 * 0 is -0.0), for
// any dtype; 0 * x, 0 / x, 1 / x and 1 - x are no identities either.
// CHECK-LABEL: func.func @mul_zero
// CHECK-COUNT-2: "graph.mul"
// CHECK:         "graph.div"
// CHECK-NEXT:    "graph.div"
// CHECK-NEXT:    "graph.sub"
// CHECK-NEXT:    return
func.func @mul_zero(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %izero = arith.constant dense<0> : tensor<i32>
  %0 = "graph.mul"(%x, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "graph.mul"(%izero, %i) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = "graph.div"(%zero, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.div"(%one, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.sub"(%one, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: operands that are not constants, constants of several values, and NaN.
// CHECK-LABEL: func.func @not_constant
// CHECK:         "graph.mul"(%arg0, %arg1)
// CHECK-NEXT:    "graph.add"(%arg0, %{{.*}})
// CHECK-NEXT:    "graph.mul"(%arg0, %{{.*}})
// CHECK-NEXT:    return
func.func @not_constant(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %mixed = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %nan = arith.constant dense<0x7FC00000> : tensor<2xf32>
  %0 = "graph.mul"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "graph.add"(%x, %mixed) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "graph.mul"(%x, %nan) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
