// --verify-diagnostics: every error expected by an expected-error annotation (@+N, @-N, @above, @below or on the op's own line; with or without a space before @) makes the run pass.
// RUN: graphfuse-opt --verify-diagnostics --split-input-file %s | FileCheck %s
// RUN: graphfuse-opt --verify-diagnostics --split-input-file --graph-cse --graph-dce %s | FileCheck %s
// Without the flag the same input fails with the errors the annotations expect.
// RUN: not graphfuse-opt --split-input-file %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ERRORS --implicit-check-not=error:

// Chunks without diagnostics are still processed and printed.
// CHECK-LABEL: func.func @valid
// CHECK-NEXT:    "graph.exp"
// CHECK-NOT:   func.func
func.func @valid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @plus_one(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+2]]:8: error: 'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible
  // expected-error @+1 {{'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @plus_two(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+3]]:8: error: 'graph.reduce_sum' attribute 'keep_dims' must be a bool
  // expected-error @+2 {{attribute 'keep_dims' must be a bool (true or false), got 1 : i64}}
  // A line in between.
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @above(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+1]]:8: error: op expects exactly 2 operands, but got 1
  %0 = "graph.add"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error @above {{op expects exactly 2 operands, but got 1}}
  return %0 : tensor<4x8xf32>
}

// -----

func.func @minus_two(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+1]]:8: error: 'graph.softmax' attribute 'axis' must be an integer
  %0 = "graph.softmax"(%a) {axis = "x"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
  // The compact spelling, without a space, works too.
  // expected-error@-3 {{'graph.softmax' attribute 'axis' must be an integer (e.g. 1 : i64), got "x"}}
}

// -----

func.func @same_line(%a: tensor<4x8xf64>) -> tensor<4x8xf64> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+1]]:8: error: 'graph.exp' operand #0 has unsupported element type f64
  %0 = "graph.exp"(%a) : (tensor<4x8xf64>) -> tensor<4x8xf64> // expected-error {{unsupported element type f64}}
  return %0 : tensor<4x8xf64>
}

// -----

func.func @below(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+2]]:8: error: unregistered operation 'graph.nope'
  // expected-error @below {{unregistered operation 'graph.nope' found in dialect ('graph')}}
  %0 = "graph.nope"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Two errors in one chunk, each with its own annotation.
func.func @two(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+2]]:8: error: 'graph.add' operands tensor<4xf32> and tensor<3xf32>
  // expected-error @+1 {{operands tensor<4xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+2]]:8: error: 'graph.exp' result #0 has type tensor<4xf16>
  // expected-error @+1 {{result #0 has type tensor<4xf16>, but its operands and attributes give tensor<4xf32>}}
  %1 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf32>
}

// -----

// A syntax error can be expected too.
func.func @syntax(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERRORS: {{.*}}verify-diagnostics.mlir:[[@LINE+2]]:39: error: expected '>' in tensor type
  // expected-error @+1 {{expected '>' in tensor type}}
  %0 = "graph.exp"(%a) : (tensor<4xf32) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
