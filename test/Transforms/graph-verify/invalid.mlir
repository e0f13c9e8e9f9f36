// graph-verify's checks (element types, ranks, broadcasting, attribute values, inferred result types) reject invalid graph ops with one located error each; they also run right after parsing, so the same errors come with or without the pass.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics --graph-verify %s
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s
// RUN: not graphfuse-opt --split-input-file --graph-verify %s 2>&1 | FileCheck %s --implicit-check-not=error: --implicit-check-not=Traceback
// RUN: not graphfuse-opt --graph-verify --mlir-pass-statistics %s 2>&1 | FileCheck %s --check-prefix=NO-STATS
// The pass never runs on invalid input, so there is no statistics report (as with mlir-opt).
// NO-STATS:      error: 'graph.softmax' axis 2 is out of range for rank 2
// NO-STATS-NOT:  Pass statistics report

func.func @axis_out_of_range(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.softmax' axis 2 is out of range for rank 2
  // expected-error @+1 {{'graph.softmax' axis 2 is out of range for rank 2}}
  %0 = "graph.softmax"(%a) {axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @duplicate_axes(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.reduce_sum' axes [1, -1] contain a duplicate axis
  // expected-error @+1 {{'graph.reduce_sum' axes [1, -1] contain a duplicate axis}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @not_a_permutation(%a: tensor<2x4x8xf32>) -> tensor<2x8x4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.transpose' perm [0, 2, 2] is not a permutation of [0, 1, 2]
  // expected-error @+1 {{'graph.transpose' perm [0, 2, 2] is not a permutation of [0, 1, 2]}}
  %0 = "graph.transpose"(%a) {perm = array<i64: 0, 2, 2>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @split_sizes(%a: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x5xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:10: error: 'graph.split' sizes [2, 5] sum to 7, not to the size 8 of dimension 1 of tensor<4x8xf32>
  // expected-error @+1 {{'graph.split' sizes [2, 5] sum to 7, not to the size 8 of dimension 1 of tensor<4x8xf32>}}
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 5>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x5xf32>)
  return %0#0, %0#1 : tensor<4x2xf32>, tensor<4x5xf32>
}

// -----

func.func @contraction(%a: tensor<8x4xf32>, %b: tensor<5x16xf32>) -> tensor<8x16xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.matmul' contraction dimensions differ: operand a tensor<8x4xf32> has 4, operand b tensor<5x16xf32> has 5
  // expected-error @+1 {{'graph.matmul' contraction dimensions differ: operand a tensor<8x4xf32> has 4, operand b tensor<5x16xf32> has 5}}
  %0 = "graph.matmul"(%a, %b) : (tensor<8x4xf32>, tensor<5x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @string_choice(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.gelu' attribute 'approximate' must be one of "none", "tanh", got "erf"
  // expected-error @+1 {{'graph.gelu' attribute 'approximate' must be one of "none", "tanh", got "erf"}}
  %0 = "graph.gelu"(%a) {approximate = "erf"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_epsilon(%a: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.rms_norm' attribute 'epsilon' must be a finite non-negative float, got -1.0
  // expected-error @+1 {{'graph.rms_norm' attribute 'epsilon' must be a finite non-negative float, got -1.0}}
  %0 = "graph.rms_norm"(%a, %g) {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @reshape_elements(%a: tensor<4x8xf32>) -> tensor<3x8xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.reshape' operand tensor<4x8xf32> has 32 elements but result type tensor<3x8xf32> has 24
  // expected-error @+1 {{'graph.reshape' operand tensor<4x8xf32> has 32 elements but result type tensor<3x8xf32> has 24}}
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @boolean_operands(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.logical_and' operands tensor<4xf32> must have element type i1
  // expected-error @+1 {{'graph.logical_and' operands tensor<4xf32> must have element type i1}}
  %0 = "graph.logical_and"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.add' operands tensor<4xf32>, tensor<4xf16> must have the same element type
  // expected-error @+1 {{'graph.add' operands tensor<4xf32>, tensor<4xf16> must have the same element type}}
  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @comparison_result(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.less' result #0 has type tensor<4xf32>, but its operands and attributes give tensor<4xi1>
  // expected-error @+1 {{'graph.less' result #0 has type tensor<4xf32>, but its operands and attributes give tensor<4xi1>}}
  %0 = "graph.less"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.relu' operand #0 has unsupported element type f64 (expected one of bf16, f16, f32, i1, i32, i64, i8)
  // expected-error @+1 {{'graph.relu' operand #0 has unsupported element type f64}}
  %0 = "graph.relu"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// An invalid op in a nested region is found, with its own location.
func.func @nested(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:10: error: 'graph.exp' result #0 has type tensor<8xf32>, but its operands and attributes give tensor<4xf32>
    // expected-error @+1 {{'graph.exp' result #0 has type tensor<8xf32>}}
    %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<8xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Every invalid op is reported, in order.
func.func @two_errors(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.add' operands tensor<4xf32> and tensor<3xf32> are not broadcast-compatible
  // expected-error @+1 {{'graph.add' operands tensor<4xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  // CHECK: {{.*}}invalid.mlir:[[@LINE+2]]:8: error: 'graph.exp' result #0 has type tensor<4xf16>, but its operands and attributes give tensor<4xf32>
  // expected-error @+1 {{'graph.exp' result #0 has type tensor<4xf16>, but its operands and attributes give tensor<4xf32>}}
  %1 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf32>
}

// CHECK-NOT: Traceback
