// Graph ops that parse but are invalid (shapes, attributes, types): one located error per op, exit 1.
// RUN: rm -f %t && not graphfuse-opt --split-input-file %s -o %t 2>&1 | FileCheck %s --implicit-check-not=error: --implicit-check-not=Traceback
// Every chunk fails, so no output file is written (as with mlir-opt).
// RUN: not test -e %t
// Upstream mlir-opt only knows the IRDL structure: it accepts what graph-verify rejects.
// RUN: not mlir-opt --irdl-file=%graph_irdl --split-input-file %s 2>%t.upstream-err | FileCheck %s --check-prefix=UPSTREAM
// RUN: FileCheck %s --check-prefix=UPSTREAM-ERR --implicit-check-not=error: < %t.upstream-err


// UPSTREAM-LABEL: func.func @not_broadcastable
func.func @not_broadcastable(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+3]]:8: error: 'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible
  // CHECK-NEXT: {{^}}  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>{{$}}
  // CHECK-NEXT: {{^}}       ^{{$}}
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// UPSTREAM-LABEL: func.func @bool_attr_given_int
func.func @bool_attr_given_int(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.reduce_sum' attribute 'keep_dims' must be a bool (true or false), got 1 : i64
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// An optional attribute of the wrong kind is caught by graph-verify...
// UPSTREAM-LABEL: func.func @int_attr_given_string
func.func @int_attr_given_string(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.softmax' attribute 'axis' must be an integer (e.g. 1 : i64), got "x"
  %0 = "graph.softmax"(%a) {axis = "x"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// ...a required one by the IRDL definition (upstream mlir-opt rejects it too).
func.func @required_attr_given_string(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+2]]:8: error: expected base attribute 'builtin.integer' but got 'builtin.string'
  // UPSTREAM-ERR: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: expected base attribute 'builtin.integer' but got 'builtin.string'
  %0 = "graph.concat"(%a, %a) {axis = "x"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @missing_required_attr(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+2]]:8: error: 'graph.reduce_sum' op attribute "axes" is expected but not provided
  // UPSTREAM-ERR: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.reduce_sum' op attribute "axes" is expected but not provided
  %0 = "graph.reduce_sum"(%a) : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// UPSTREAM-LABEL: func.func @unknown_attr
func.func @unknown_attr(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.relu' has unknown attribute 'alpha' (known attributes: none)
  %0 = "graph.relu"(%a) {alpha = 1.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// UPSTREAM-LABEL: func.func @unknown_attr_of_op_with_attrs
func.func @unknown_attr_of_op_with_attrs(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.softmax' has unknown attribute 'dim' (known attributes: axis)
  %0 = "graph.softmax"(%a) {dim = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// UPSTREAM-LABEL: func.func @wrong_result_shape
func.func @wrong_result_shape(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x4xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.add' result #0 has type tensor<4x4xf32>, but its operands and attributes give tensor<4x8xf32>
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// UPSTREAM-LABEL: func.func @wrong_result_element_type
func.func @wrong_result_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.less' result #0 has type tensor<4x8xf32>, but its operands and attributes give tensor<4x8xi1>
  %0 = "graph.less"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// UPSTREAM-LABEL: func.func @f64_operand
func.func @f64_operand(%a: tensor<4x8xf64>) -> tensor<4x8xf64> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.exp' operand #0 has unsupported element type f64 (expected one of bf16, f16, f32, i1, i32, i64, i8)
  %0 = "graph.exp"(%a) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  return %0 : tensor<4x8xf64>
}

// -----

// UPSTREAM-LABEL: func.func @f64_result
func.func @f64_result(%a: tensor<4xf32>) -> tensor<4xf64> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.cast' result #0 has unsupported element type f64 (expected one of bf16, f16, f32, i1, i32, i64, i8)
  %0 = "graph.cast"(%a) : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// Every invalid op of a function is reported, not just the first.
// UPSTREAM-LABEL: func.func @two_errors
func.func @two_errors(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.add' operands tensor<4xf32> and tensor<3xf32> are not broadcast-compatible
  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  // CHECK: {{.*}}bad-input-ops.mlir:[[@LINE+1]]:8: error: 'graph.exp' result #0 has type tensor<4xf16>, but its operands and attributes give tensor<4xf32>
  %1 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf32>
}

// CHECK-NOT: Traceback
