// graph-cse never merges across an isolated-from-above region (a nested module or function).
// RUN: graphfuse-opt --graph-cse %s | FileCheck %s

// CHECK-LABEL: func.func @outer
// CHECK:         arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-LABEL: func.func @inner
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    return %[[C]]
func.func @outer() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}
module @nested {
  func.func @inner() -> tensor<4xf32> {
    %d = arith.constant dense<1.0> : tensor<4xf32>
    return %d : tensor<4xf32>
  }
}
