// graph-cse also merges arith.constant (same value and type) and tensor.empty, and graph ops become identical once their constant operands merge.
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-cse
// STATS-NEXT:   (S) 5 num-cse'd - Number of operations CSE'd

// The same value spelled two ways is one constant.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf16>
// CHECK-NEXT:    %[[IDX:.*]] = arith.constant 1 : index
// CHECK-NEXT:    return %[[ONE]], %[[ONE]], %[[TWO]], %[[HALF]], %[[IDX]], %[[IDX]]
func.func @constants() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, index, index) {
  %0 = arith.constant dense<1.0> : tensor<4xf32>
  %1 = arith.constant dense<1.000000e+00> : tensor<4xf32>
  %2 = arith.constant dense<2.0> : tensor<4xf32>
  %3 = arith.constant dense<1.0> : tensor<4xf16>
  %4 = arith.constant 1 : index
  %5 = arith.constant 1 : index
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, index, index
}

// -----

// CHECK-LABEL: func.func @constant_operands
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<8xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%arg0, %[[C]])
// CHECK-NEXT:    return %[[M]], %[[M]]
func.func @constant_operands(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant dense<0.5> : tensor<8xf32>
  %0 = "graph.mul"(%a, %c0) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %c1 = arith.constant dense<0.5> : tensor<8xf32>
  %1 = "graph.mul"(%a, %c1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @empty_tensors
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[F:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT:    return %[[E]], %[[E]], %[[F]]
func.func @empty_tensors() -> (tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) {
  %0 = tensor.empty() : tensor<4xf32>
  %1 = tensor.empty() : tensor<4xf32>
  %2 = tensor.empty() : tensor<8xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<8xf32>
}

// -----

// Negative: different constants make different graph ops.
// CHECK-LABEL: func.func @different_constant_operands
// CHECK-NEXT:    %[[C0:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT:    %[[C1:.*]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-NEXT:    "graph.add"(%arg0, %[[C0]])
// CHECK-NEXT:    "graph.add"(%arg0, %[[C1]])
func.func @different_constant_operands(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant dense<1.0> : tensor<8xf32>
  %c1 = arith.constant dense<2.0> : tensor<8xf32>
  %0 = "graph.add"(%a, %c0) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %c1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
