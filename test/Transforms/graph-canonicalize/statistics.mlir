// --mlir-pass-statistics reports folds and simplifications separately.
// RUN: graphfuse-opt --graph-canonicalize %s | FileCheck %s
// RUN: graphfuse-opt --graph-canonicalize --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: graphfuse-opt --graph-canonicalize --graph-canonicalize --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE

// CHECK-LABEL: func.func @counted
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[-2.000000e+00, -4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    return %[[C]], %[[R]], %arg1

// STATS:         ... Pass statistics report ...
// STATS:       graph-canonicalize
// STATS-NEXT:    (S) 2 num-folded - Number of graph ops constant-folded
// STATS-NEXT:    (S) 3 num-simplified - Number of graph op identities simplified

// A second run finds nothing left to do.
// TWICE:       graph-canonicalize
// TWICE-NEXT:    (S) 2 num-folded
// TWICE-NEXT:    (S) 3 num-simplified
// TWICE-NEXT:  graph-canonicalize
// TWICE-NEXT:    (S) 0 num-folded
// TWICE-NEXT:    (S) 0 num-simplified
func.func @counted(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<4xf32>) {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "graph.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "graph.neg"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "graph.reshape"(%x) : (tensor<2x3xf32>) -> tensor<6xf32>
  %3 = "graph.reshape"(%2) : (tensor<6xf32>) -> tensor<3x2xf32>
  %4 = "graph.transpose"(%y) {perm = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "graph.cast"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %3, %5 : tensor<2xf32>, tensor<3x2xf32>, tensor<4xf32>
}
