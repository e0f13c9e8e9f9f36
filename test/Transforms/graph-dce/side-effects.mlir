// graph-dce erases only graph ops, arith.constant and tensor.empty: a dead call or a dead op of another dialect stays, and so does everything it uses.
// RUN: graphfuse-opt --split-input-file --graph-dce %s | FileCheck %s
// RUN: graphfuse-opt --graph-dce --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS:      graph-dce
// STATS-NEXT:   (S) 1 num-erased - Number of dead operations erased

// CHECK-LABEL: func.func private @external
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// Negative: the call result is unused, but the call may have side effects; the graph op it uses stays too.
// CHECK-LABEL: func.func @dead_call
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    call @external(%[[E]])
// CHECK-NEXT:    return %arg0
func.func @dead_call(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @external(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Negative: arith.addf is pure but not graph-dce's to erase (upstream canonicalize does it).
// CHECK-LABEL: func.func @other_dialect
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    arith.addf %[[E]], %[[E]]
// CHECK-NEXT:    return %arg0
func.func @other_dialect(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = arith.addf %0, %0 : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Negative: an op used only by a terminator is live.
// CHECK-LABEL: func.func @used_by_yield
// CHECK-NEXT:    %[[N:.*]] = "graph.neg"(%arg0)
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      scf.yield %[[N]]
func.func @used_by_yield(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = scf.if %c -> tensor<4xf32> {
    scf.yield %0 : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

// The dead graph op next to a live call goes; the call stays.
// CHECK-LABEL: func.func private @external_too
func.func private @external_too(tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: func.func @mixed
// CHECK-NEXT:    %[[R:.*]] = call @external_too(%arg0)
// CHECK-NEXT:    return %[[R]]
func.func @mixed(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @external_too(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
