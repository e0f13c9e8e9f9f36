// graph-dce inside regions: dead ops in nested blocks go, and an outer op used only by a dead nested op goes with it.
// RUN: graphfuse-opt --split-input-file --graph-dce %s | FileCheck %s
// RUN: graphfuse-opt --graph-dce --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-dce
// STATS-NEXT:   (S) 5 num-erased - Number of dead operations erased

// CHECK-LABEL: func.func @in_branches
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0)
// CHECK-NEXT:    scf.if %arg1
// CHECK-NEXT:      scf.yield %[[N]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %arg0
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if %arg1 {
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @in_branches(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %r = scf.if %c -> tensor<4xf32> {
    %2 = "graph.abs"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %1 : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  scf.if %c {
    %3 = "graph.sqrt"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// In a loop: the dead op in the body goes, the loop-carried one stays.
// CHECK-LABEL: func.func @in_loop
// CHECK-NEXT:    scf.for {{.*}} iter_args(%[[ACC:.*]] = %arg0)
// CHECK-NEXT:      %[[M:.*]] = "graph.mul"(%[[ACC]], %[[ACC]])
// CHECK-NEXT:      scf.yield %[[M]]
func.func @in_loop(%a: tensor<4xf32>, %lb: index, %ub: index, %step: index) -> tensor<4xf32> {
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %a) -> tensor<4xf32> {
    %m = "graph.mul"(%acc, %acc) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %k = arith.constant dense<2.0> : tensor<4xf32>
    %d = "graph.div"(%m, %k) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
