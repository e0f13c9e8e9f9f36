// Upstream mlir-opt with the IRDL definition: parses and round-trips graph IR, keeps graph ops through --canonicalize --cse (IRDL ops count as side-effecting), and rejects structurally invalid graph ops with its own errors.
// RUN: mlir-opt --irdl-file=%graph_irdl --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt --irdl-file=%graph_irdl --split-input-file --verify-diagnostics %s | mlir-opt --irdl-file=%graph_irdl --split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt --irdl-file=%graph_irdl --split-input-file --verify-diagnostics --mlir-print-op-generic %s | mlir-opt --irdl-file=%graph_irdl --split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt --irdl-file=%graph_irdl --split-input-file --verify-diagnostics --canonicalize --cse %s | FileCheck %s --check-prefix=UPSTREAM
// graphfuse-opt's own passes do merge and erase the graph ops (it exits 1 for the invalid chunks, which it also rejects).
// RUN: not graphfuse-opt --split-input-file --graph-cse --graph-dce %s 2>/dev/null | FileCheck %s --check-prefix=GRAPHFUSE
// Without annotations upstream reports the errors as usual, located in the whole file.
// RUN: not mlir-opt --irdl-file=%graph_irdl --split-input-file %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ERRORS
// Without the dialect definition upstream knows no graph ops at all.
// RUN: not mlir-opt --split-input-file %s 2>&1 >/dev/null | FileCheck %s --check-prefix=NO-DIALECT

// ROUNDTRIP-LABEL: func.func @duplicate_and_dead
// ROUNDTRIP-NEXT:    %[[C0:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// ROUNDTRIP-NEXT:    %[[C1:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// ROUNDTRIP-NEXT:    %[[A0:.*]] = "graph.add"(%arg0, %[[C0]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// ROUNDTRIP-NEXT:    %[[A1:.*]] = "graph.add"(%arg0, %[[C1]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// ROUNDTRIP-NEXT:    %[[M:.*]] = "graph.mul"(%[[A0]], %[[A1]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// ROUNDTRIP-NEXT:    "graph.exp"(%[[M]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// ROUNDTRIP-NEXT:    arith.addf %arg0, %arg0 : tensor<4x8xf32>
// ROUNDTRIP-NEXT:    return %[[M]] : tensor<4x8xf32>

// Upstream merges the constants and erases the dead arith.addf, but keeps both graph.add and the dead graph.exp.
// UPSTREAM-LABEL: func.func @duplicate_and_dead
// UPSTREAM-NEXT:    %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// UPSTREAM-NEXT:    %[[A0:.*]] = "graph.add"(%arg0, %[[C]])
// UPSTREAM-NEXT:    %[[A1:.*]] = "graph.add"(%arg0, %[[C]])
// UPSTREAM-NEXT:    %[[M:.*]] = "graph.mul"(%[[A0]], %[[A1]])
// UPSTREAM-NEXT:    "graph.exp"(%[[M]])
// UPSTREAM-NEXT:    return %[[M]]

// GRAPHFUSE-LABEL: func.func @duplicate_and_dead
// GRAPHFUSE-NEXT:    %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// GRAPHFUSE-NEXT:    %[[A:.*]] = "graph.add"(%arg0, %[[C]])
// GRAPHFUSE-NEXT:    %[[M:.*]] = "graph.mul"(%[[A]], %[[A]])
// GRAPHFUSE-NEXT:    arith.addf %arg0, %arg0
// GRAPHFUSE-NEXT:    return %[[M]]
func.func @duplicate_and_dead(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant dense<1.0> : tensor<8xf32>
  %c1 = arith.constant dense<1.0> : tensor<8xf32>
  // NO-DIALECT: {{.*}}upstream-mlir-opt.mlir:[[@LINE+1]]:19: error: operation being parsed with an unregistered dialect
  %0 = "graph.add"(%a, %c0) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %c1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.exp"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = arith.addf %a, %a : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Ops with attributes and several results round-trip unchanged.
// ROUNDTRIP-LABEL: func.func @attributes_and_results
// ROUNDTRIP-NEXT:    %[[S:.*]]:2 = "graph.split"(%arg0) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
// ROUNDTRIP-NEXT:    %[[R:.*]] = "graph.reduce_sum"(%[[S]]#1) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x6xf32>) -> tensor<4x1xf32>
// ROUNDTRIP-NEXT:    %[[G:.*]] = "graph.gelu"(%[[S]]#0) {approximate = "tanh"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// ROUNDTRIP-NEXT:    return %[[G]], %[[R]]
// UPSTREAM-LABEL: func.func @attributes_and_results
// UPSTREAM-NEXT:    "graph.split"
// UPSTREAM-NEXT:    "graph.reduce_sum"
// UPSTREAM-NEXT:    "graph.gelu"
func.func @attributes_and_results(%a: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>) {
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
  %1 = "graph.reduce_sum"(%0#1) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %2 = "graph.gelu"(%0#0) {approximate = "tanh"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %2, %1 : tensor<4x2xf32>, tensor<4x1xf32>
}

// -----

func.func @wrong_operand_count(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}upstream-mlir-opt.mlir:[[@LINE+2]]:8: error: op expects exactly 2 operands, but got 1
  // expected-error @+1 {{op expects exactly 2 operands, but got 1}}
  %0 = "graph.add"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @not_a_tensor(%a: f32) -> f32 {
  // ERRORS: {{.*}}upstream-mlir-opt.mlir:[[@LINE+2]]:8: error: expected base type 'builtin.tensor' but got 'builtin.f32'
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.f32'}}
  %0 = "graph.exp"(%a) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @missing_attribute(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}upstream-mlir-opt.mlir:[[@LINE+2]]:8: error: 'graph.transpose' op attribute "perm" is expected but not provided
  // expected-error @+1 {{'graph.transpose' op attribute "perm" is expected but not provided}}
  %0 = "graph.transpose"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @unknown_op(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}upstream-mlir-opt.mlir:[[@LINE+2]]:8: error: unregistered operation 'graph.nope' found in dialect ('graph') that does not allow unknown operations
  // expected-error @+1 {{unregistered operation 'graph.nope' found in dialect ('graph')}}
  %0 = "graph.nope"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
