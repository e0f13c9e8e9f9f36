// graph-cse only merges graph ops, arith.constant and tensor.empty: calls and other dialects' ops stay, even when identical (upstream cse handles the pure ones).
// RUN: graphfuse-opt --split-input-file --graph-cse %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-cse --cse %s | FileCheck %s --check-prefix=WITH-CSE
// RUN: graphfuse-opt --graph-cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-cse
// STATS-NEXT:   (S) 1 num-cse'd - Number of operations CSE'd

// CHECK-LABEL: func.func private @external
// WITH-CSE-LABEL: func.func private @external
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// Negative: two identical calls may have side effects.
// CHECK-LABEL: func.func @calls
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    call @external(%[[E]])
// CHECK-NEXT:    call @external(%[[E]])
// WITH-CSE-LABEL: func.func @calls
// WITH-CSE-NEXT:    "graph.exp"
// WITH-CSE-NEXT:    call @external
// WITH-CSE-NEXT:    call @external
func.func @calls(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @external(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = func.call @external(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %3 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative for graph-cse: arith.addf is not one of its ops; upstream cse merges it.
// CHECK-LABEL: func.func @other_dialects
// CHECK-NEXT:    arith.addf %arg0, %arg0
// CHECK-NEXT:    arith.addf %arg0, %arg0
// WITH-CSE-LABEL: func.func @other_dialects
// WITH-CSE-NEXT:    %[[S:.*]] = arith.addf %arg0, %arg0
// WITH-CSE-NEXT:    return %[[S]], %[[S]]
func.func @other_dialects(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = arith.addf %a, %a : tensor<4xf32>
  %1 = arith.addf %a, %a : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: an op with regions is never merged, even when it looks the same.
// CHECK-LABEL: func.func @region_ops
// CHECK-COUNT-2: scf.if %arg1 -> (tensor<4xf32>)
func.func @region_ops(%a: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = scf.if %c -> tensor<4xf32> {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  %1 = scf.if %c -> tensor<4xf32> {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
