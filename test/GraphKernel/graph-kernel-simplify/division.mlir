// x / c -> x * (1/c) for float constants: always for powers of two whose reciprocal
// the dtype holds (exact), for other finite nonzero c only with unsafe-math.
// RUN: graphfuse-opt --split-input-file --graph-kernel-simplify %s | FileCheck %s --check-prefixes=CHECK,UNSAFE
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-simplify{unsafe-math=false})' %s | FileCheck %s --check-prefixes=CHECK,SAFE

// CHECK-LABEL: func.func @power_of_two
// CHECK-DAG:     %[[Q:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK-DAG:     %[[H:.*]] = arith.constant dense<2.000000e+00> : tensor<2xbf16>
// CHECK:         %[[A:.*]] = "graph.mul"(%arg0, %[[Q]]) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[B:.*]] = "graph.mul"(%arg1, %[[H]]) : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @power_of_two(%x: tensor<4x8xf32>, %y: tensor<2xbf16>) -> (tensor<4x8xf32>, tensor<2xbf16>) {
  %four = arith.constant dense<4.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<2xbf16>
  %0 = "graph.div"(%x, %four) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = "graph.div"(%y, %half) : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  return %0, %1 : tensor<4x8xf32>, tensor<2xbf16>
}

// -----

// One value per element: each is inverted; the constant keeps its shape, so the
// broadcast is unchanged.  x / -1 becomes x * -1 and then neg(x).
// CHECK-LABEL: func.func @per_element
// CHECK:         %[[R:.*]] = arith.constant dense<[5.000000e-01, 2.000000e+00, -2.500000e-01, 1.000000e+00]> : tensor<4xf32>
// CHECK:         %[[A:.*]] = "graph.mul"(%arg0, %[[R]]) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    return %[[A]], %[[N]]
func.func @per_element(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %c = arith.constant dense<[2.0, 0.5, -4.0, 1.0]> : tensor<4xf32>
  %m = arith.constant dense<-1.0> : tensor<f32>
  %0 = "graph.div"(%x, %c) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %1 = "graph.div"(%x, %m) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// 2^127: its reciprocal 2^-127 is subnormal in f32 but exact.
// CHECK-LABEL: func.func @subnormal_reciprocal
// CHECK:         %[[R:.*]] = arith.constant dense<5.87747175E-39> : tensor<f32>
// CHECK:         "graph.mul"(%arg0, %[[R]])
func.func @subnormal_reciprocal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<1.70141183E+38> : tensor<f32>
  %0 = "graph.div"(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Not a power of two: rounded reciprocal under unsafe-math only.
// CHECK-LABEL: func.func @not_power_of_two
// UNSAFE-DAG:    %[[T:.*]] = arith.constant dense<0.333333343> : tensor<f32>
// UNSAFE-DAG:    %[[R:.*]] = arith.constant dense<[5.000000e-01, 0.333333343]> : tensor<2xf32>
// UNSAFE:        "graph.mul"(%arg0, %[[T]])
// UNSAFE-NEXT:   "graph.mul"(%arg1, %[[R]])
// SAFE-DAG:      %[[T:.*]] = arith.constant dense<3.000000e+00> : tensor<f32>
// SAFE-DAG:      %[[R:.*]] = arith.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// SAFE:          "graph.div"(%arg0, %[[T]])
// SAFE-NEXT:     "graph.div"(%arg1, %[[R]])
func.func @not_power_of_two(%x: tensor<4xf32>, %y: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %three = arith.constant dense<3.0> : tensor<f32>
  %mixed = arith.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %0 = "graph.div"(%x, %three) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "graph.div"(%y, %mixed) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<4xf32>, tensor<2xf32>
}

// -----

// Negative, even with unsafe-math: reciprocals the dtype cannot hold (f16's
// smallest subnormal 2^-24 and 1e-5 invert past 65504; 3e38 inverts to a
// subnormal f32), division by 0, inf or NaN, integer division, a variable divisor.
// CHECK-LABEL: func.func @division_negative
// CHECK-COUNT-8: "graph.div"
// CHECK-NOT:     "graph.mul"
func.func @division_negative(%h: tensor<4xf16>, %x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %tiny = arith.constant dense<0x0001> : tensor<f16>
  %small = arith.constant dense<1.0e-5> : tensor<f16>
  %huge = arith.constant dense<3.0e38> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %inf = arith.constant dense<0x7F800000> : tensor<f32>
  %nan = arith.constant dense<0x7FC00000> : tensor<f32>
  %four = arith.constant dense<4> : tensor<i32>
  %0 = "graph.div"(%h, %tiny) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %1 = "graph.div"(%h, %small) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %2 = "graph.div"(%x, %huge) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = "graph.div"(%x, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = "graph.div"(%x, %inf) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = "graph.div"(%x, %nan) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = "graph.div"(%i, %four) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %7 = "graph.div"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf16>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}
