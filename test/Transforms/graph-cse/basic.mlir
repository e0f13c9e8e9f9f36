// graph-cse merges identical graph ops (same name, operands, attributes, result types) into the first one, cascading through their users.
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-cse)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(func.func(graph-cse))' %s | FileCheck %s
// Upstream cse leaves every graph op alone.
// RUN: graphfuse-opt --split-input-file --cse %s | FileCheck %s --check-prefix=UPSTREAM
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// A second run finds nothing left to merge.
// RUN: graphfuse-opt --graph-cse %s | graphfuse-opt --graph-cse --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-AGAIN

// STATS:      graph-cse
// STATS-NEXT:   (S) 6 num-cse'd - Number of operations CSE'd
// STATS-AGAIN:      graph-cse
// STATS-AGAIN-NEXT:   (S) 0 num-cse'd - Number of operations CSE'd

// CHECK-LABEL: func.func @duplicate
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.mul"(%[[A]], %[[A]])
// CHECK-NEXT:    return %[[M]]
// UPSTREAM-LABEL: func.func @duplicate
// UPSTREAM-NEXT:    "graph.add"(%arg0, %arg1)
// UPSTREAM-NEXT:    "graph.add"(%arg0, %arg1)
func.func @duplicate(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Merging exp makes the two negs identical, which makes them merge too.
// CHECK-LABEL: func.func @cascade
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%[[E]])
// CHECK-NEXT:    %[[S:.*]] = "graph.add"(%[[N]], %[[N]])
// CHECK-NEXT:    return %[[S]]
func.func @cascade(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "graph.neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.add"(%2, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// Three copies become one; every use, including the return, takes the first.
// CHECK-LABEL: func.func @three_copies
// CHECK-NEXT:    %[[S:.*]] = "graph.sigmoid"(%arg0)
// CHECK-NEXT:    return %[[S]], %[[S]], %[[S]]
func.func @three_copies(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.sigmoid"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.sigmoid"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.sigmoid"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A merged op that is now unused is not graph-cse's business: nothing is erased besides the duplicates.
// CHECK-LABEL: func.func @dead_duplicates
// CHECK-NEXT:    "graph.relu"(%arg0)
// CHECK-NEXT:    return %arg0
func.func @dead_duplicates(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Negative: the same op on different operands, and different ops on the same operand.
// CHECK-LABEL: func.func @different_operands_or_ops
// CHECK-NEXT:    "graph.exp"(%arg0)
// CHECK-NEXT:    "graph.exp"(%arg1)
// CHECK-NEXT:    "graph.log"(%arg0)
// CHECK-NEXT:    return
func.func @different_operands_or_ops(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.log"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: identical ops in different functions stay, one per function.
// CHECK-LABEL: func.func @first_function
// CHECK-NEXT:    "graph.tanh"(%arg0)
// CHECK-LABEL: func.func @second_function
// CHECK-NEXT:    "graph.tanh"(%arg0)
func.func @first_function(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @second_function(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
