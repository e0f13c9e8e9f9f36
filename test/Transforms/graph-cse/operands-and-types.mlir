// graph-cse needs the same operands in the same order and the same result types: commuted operands and different result types are not merged.
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-cse
// STATS-NEXT:   (S) 1 num-cse'd - Number of operations CSE'd

// Negative: add is commutative, but graph-cse does not know it.
// CHECK-LABEL: func.func @operand_order
// CHECK-NEXT:    %[[AB:.*]] = "graph.add"(%arg0, %arg1)
// CHECK-NEXT:    %[[BA:.*]] = "graph.add"(%arg1, %arg0)
// CHECK-NEXT:    "graph.mul"(%[[AB]], %[[BA]])
func.func @operand_order(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.add"(%b, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Negative: a repeated operand is not the same as two different ones.
// CHECK-LABEL: func.func @repeated_operand
// CHECK-NEXT:    "graph.sub"(%arg0, %arg0)
// CHECK-NEXT:    "graph.sub"(%arg0, %arg1)
func.func @repeated_operand(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.sub"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: casts to different element types, reshapes to different shapes.
// CHECK-LABEL: func.func @result_types
// CHECK-NEXT:    "graph.cast"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-NEXT:    "graph.cast"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT:    "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:    "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT:    return
func.func @result_types(%a: tensor<4x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xbf16>, tensor<2x16xf32>, tensor<32xf32>) {
  %0 = "graph.cast"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %1 = "graph.cast"(%a) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %2 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<2x16xf32>
  %3 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0, %1, %2, %3 : tensor<4x8xf16>, tensor<4x8xbf16>, tensor<2x16xf32>, tensor<32xf32>
}

// -----

// Negative: a reshape to a dynamic dimension versus one to the static shape.
// CHECK-LABEL: func.func @static_versus_dynamic_result
// CHECK-NEXT:    "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    "graph.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @static_versus_dynamic_result(%a: tensor<4x8xf32>) -> (tensor<?x8xf32>, tensor<4x8xf32>) {
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<4x8xf32>
}

// -----

// Same result type, same operands: merged even though written on different lines far apart.
// CHECK-LABEL: func.func @same_cast
// CHECK-NEXT:    %[[C:.*]] = "graph.cast"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-NEXT:    "graph.neg"(%arg0)
// CHECK-NEXT:    return %[[C]], %{{.*}}, %[[C]]
func.func @same_cast(%a: tensor<4x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>) {
  %0 = "graph.cast"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %1 = "graph.neg"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.cast"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %0, %1, %2 : tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>
}
