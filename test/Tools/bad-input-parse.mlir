// Input that does not parse or breaks the IRDL op structure: one located error per chunk, exit 1, other chunks still print.
// RUN: not graphfuse-opt --split-input-file %s -o %t 2>&1 | FileCheck %s --implicit-check-not=error: --implicit-check-not=Traceback
// RUN: FileCheck %s --check-prefix=OUT < %t
// The same errors come out when a pass pipeline is given: input is checked before anything runs.
// RUN: not graphfuse-opt --split-input-file --graph-cse --graph-dce %s 2>&1 >/dev/null | FileCheck %s --implicit-check-not=error: --implicit-check-not=Traceback

// Syntax error: the caret points at the column after the unterminated type.
func.func @syntax(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.abs"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+3]]:29: error: expected '>' in tensor type
  // CHECK-NEXT: {{^}}  return %0 : tensor<4x8xf32{{$}}
  // CHECK-NEXT: {{^}}                            ^{{$}}
  return %0 : tensor<4x8xf32
}

// -----

func.func @unknown_op(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:8: error: unregistered operation 'graph.nope' found in dialect ('graph') that does not allow unknown operations
  %0 = "graph.nope"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @too_few_operands(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+2]]:8: error: op expects exactly 2 operands, but got 1
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:8: note: see current operation: %0 = "graph.add"(%arg0)
  %0 = "graph.add"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @too_many_operands(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:8: error: op expects exactly 1 operands, but got 2
  %0 = "graph.exp"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @too_many_results(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:10: error: op expects exactly 1 results, but got 2
  %0:2 = "graph.exp"(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @not_a_tensor(%a: f32) -> f32 {
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:8: error: expected base type 'builtin.tensor' but got 'builtin.f32'
  %0 = "graph.exp"(%a) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @undeclared_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:20: error: use of undeclared SSA value name
  %0 = "graph.exp"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: {{.*}}bad-input-parse.mlir:[[@LINE+1]]:10: error: operation being parsed with an unregistered dialect. If this is intended, please use -allow-unregistered-dialect with the MLIR tool used
"foo.bar"() : () -> ()

// -----

// The one valid chunk is printed; the failed ones leave no output behind.
// OUT-NOT: func.func @syntax
// OUT-LABEL: func.func @valid
// OUT-NEXT:    "graph.exp"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// OUT-NOT: func.func
func.func @valid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-NOT: Traceback
