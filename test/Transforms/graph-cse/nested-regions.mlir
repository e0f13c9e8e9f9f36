// graph-cse inside regions: an op in a nested region merges into an identical op that dominates it, but never into one in a sibling region or one nested deeper.
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-cse
// STATS-NEXT:   (S) 5 num-cse'd - Number of operations CSE'd

// The copies in both branches merge into the op before the scf.if.
// CHECK-LABEL: func.func @into_region
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    scf.if %arg1
// CHECK-NEXT:      scf.yield %[[E]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[N:.*]] = "graph.neg"(%[[E]])
// CHECK-NEXT:      scf.yield %[[N]]
func.func @into_region(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = scf.if %c -> tensor<4xf32> {
    %2 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %2 : tensor<4xf32>
  } else {
    %3 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "graph.neg"(%3) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %4 : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

// Negative: the branches do not dominate each other, nor the op after the scf.if.
// CHECK-LABEL: func.func @siblings
// CHECK-NEXT:    scf.if %arg1
// CHECK-NEXT:      "graph.neg"(%arg0)
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      "graph.neg"(%arg0)
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    "graph.neg"(%arg0)
func.func @siblings(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = scf.if %c -> tensor<4xf32> {
    %1 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %1 : tensor<4xf32>
  } else {
    %2 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %2 : tensor<4xf32>
  }
  %3 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "graph.add"(%0, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// In a loop body: the constant merges into the one outside, which makes the two muls identical.
// CHECK-LABEL: func.func @loop
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    scf.for {{.*}} iter_args(%[[ACC:.*]] = %arg0)
// CHECK-NEXT:      %[[M:.*]] = "graph.mul"(%[[ACC]], %[[C]])
// CHECK-NEXT:      %[[S:.*]] = "graph.add"(%[[M]], %[[M]])
// CHECK-NEXT:      scf.yield %[[S]]
func.func @loop(%a: tensor<4xf32>, %lb: index, %ub: index, %step: index) -> tensor<4xf32> {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %a) -> tensor<4xf32> {
    %k = arith.constant dense<2.0> : tensor<4xf32>
    %m = "graph.mul"(%acc, %k) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n = "graph.mul"(%acc, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = "graph.add"(%m, %n) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Two levels deep: the innermost copy merges into the outermost op.
// CHECK-LABEL: func.func @two_levels
// CHECK-NEXT:    %[[S:.*]] = "graph.sqrt"(%arg0)
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        scf.yield %[[S]]
func.func @two_levels(%a: tensor<4xf32>, %c: i1, %d: i1) -> tensor<4xf32> {
  %0 = "graph.sqrt"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = scf.if %c -> tensor<4xf32> {
    %2 = scf.if %d -> tensor<4xf32> {
      %3 = "graph.sqrt"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      scf.yield %3 : tensor<4xf32>
    } else {
      scf.yield %a : tensor<4xf32>
    }
    scf.yield %2 : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}
