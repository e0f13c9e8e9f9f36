// graph-verify's element-type, broadcasting and result-type rules for the elementwise ops.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

// Float-only unary ops reject integers (one per op; every float-only op shares the check).
func.func @float_only_on_i32(%a: tensor<4xi32>) {
  // expected-error@+1 {{'graph.exp' operand tensor<4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.exp"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error@+1 {{'graph.sqrt' operand tensor<4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %1 = "graph.sqrt"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error@+1 {{'graph.sigmoid' operand tensor<4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %2 = "graph.sigmoid"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error@+1 {{'graph.floor' operand tensor<4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %3 = "graph.floor"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error@+1 {{'graph.gelu' operand tensor<4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %4 = "graph.gelu"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error@+1 {{'graph.isfinite' operand tensor<4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %5 = "graph.isfinite"(%a) : (tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @float_only_on_i8_and_i64(%a: tensor<2xi8>, %b: tensor<2xi64>) {
  // expected-error@+1 {{'graph.tanh' operand tensor<2xi8> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.tanh"(%a) : (tensor<2xi8>) -> tensor<2xi8>
  // expected-error@+1 {{'graph.reciprocal' operand tensor<2xi64> must have a floating-point element type (f32, f16, bf16)}}
  %1 = "graph.reciprocal"(%b) : (tensor<2xi64>) -> tensor<2xi64>
  return
}

// -----

// Numeric ops reject i1.
func.func @numeric_on_i1(%a: tensor<4xi1>) {
  // expected-error@+1 {{'graph.abs' operand tensor<4xi1> must have a numeric element type (not i1)}}
  %0 = "graph.abs"(%a) : (tensor<4xi1>) -> tensor<4xi1>
  // expected-error@+1 {{'graph.neg' operand tensor<4xi1> must have a numeric element type (not i1)}}
  %1 = "graph.neg"(%a) : (tensor<4xi1>) -> tensor<4xi1>
  // expected-error@+1 {{'graph.add' operands tensor<4xi1> must have a numeric element type (not i1)}}
  %2 = "graph.add"(%a, %a) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // expected-error@+1 {{'graph.less' operands tensor<4xi1> must have a numeric element type (not i1)}}
  %3 = "graph.less"(%a, %a) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

// Logical ops take i1 only.
func.func @logical_on_f32(%a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.logical_and' operands tensor<4xf32> must have element type i1}}
  %0 = "graph.logical_and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // expected-error@+1 {{'graph.logical_or' operands tensor<4xf32> must have element type i1}}
  %1 = "graph.logical_or"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // expected-error@+1 {{'graph.logical_not' operand tensor<4xf32> must have element type i1}}
  %2 = "graph.logical_not"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// No implicit promotion: binary operands share the element type.
func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xf16>, %i: tensor<4xi32>, %j: tensor<4xi64>) {
  // expected-error@+1 {{'graph.add' operands tensor<4xf32>, tensor<4xf16> must have the same element type}}
  %0 = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  // expected-error@+1 {{'graph.mul' operands tensor<4xi32>, tensor<4xi64> must have the same element type}}
  %1 = "graph.mul"(%i, %j) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi64>
  // expected-error@+1 {{'graph.equal' operands tensor<4xf32>, tensor<4xi32> must have the same element type}}
  %2 = "graph.equal"(%a, %i) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @not_broadcastable(%a: tensor<4x8xf32>, %b: tensor<3xf32>, %c: tensor<2x8xf32>) {
  // expected-error@+1 {{'graph.add' operands tensor<4x8xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.maximum' operands tensor<4x8xf32> and tensor<2x8xf32> are not broadcast-compatible}}
  %1 = "graph.maximum"(%a, %c) : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// A dynamic dim broadcasts with anything, but two different static sizes never do.
func.func @not_broadcastable_dynamic(%a: tensor<?x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error@+1 {{'graph.sub' operands tensor<?x8xf32> and tensor<4x7xf32> are not broadcast-compatible}}
  %0 = "graph.sub"(%a, %b) : (tensor<?x8xf32>, tensor<4x7xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'graph.add' result #0 has type tensor<4x8xf16>, but its operands and attributes give tensor<4x8xf32>}}
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf16>
  // expected-error@+1 {{'graph.div' result #0 has type tensor<8xf32>, but its operands and attributes give tensor<4x8xf32>}}
  %1 = "graph.div"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  // expected-error@+1 {{'graph.relu' result #0 has type tensor<4x4xf32>, but its operands and attributes give tensor<4x8xf32>}}
  %2 = "graph.relu"(%a) : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Comparisons give i1, never the operand type.
func.func @comparison_result_not_i1(%a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.greater' result #0 has type tensor<4xf32>, but its operands and attributes give tensor<4xi1>}}
  %0 = "graph.greater"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @isfinite_result_not_i1(%a: tensor<4x8xf16>) {
  // expected-error@+1 {{'graph.isfinite' result #0 has type tensor<4x8xf16>, but its operands and attributes give tensor<4x8xi1>}}
  %0 = "graph.isfinite"(%a) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return
}

// -----

func.func @select_condition_not_i1(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.select' condition tensor<4xf32> must have element type i1}}
  %0 = "graph.select"(%c, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_branch_dtypes(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error@+1 {{'graph.select' branches tensor<4xf32>, tensor<4xi32> must have the same element type}}
  %0 = "graph.select"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_not_broadcastable(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.select' operands tensor<3xi1> and tensor<4xf32> and tensor<4xf32> are not broadcast-compatible}}
  %0 = "graph.select"(%c, %a, %a) : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_changes_shape(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.cast' result type tensor<8x4xf16> must have the shape of operand tensor<4x8xf32>}}
  %0 = "graph.cast"(%a) : (tensor<4x8xf32>) -> tensor<8x4xf16>
  return
}

// -----

func.func @unsupported_element_type(%a: tensor<4xf64>) {
  // expected-error@+1 {{'graph.exp' operand #0 has unsupported element type f64 (expected one of bf16, f16, f32, i1, i32, i64, i8)}}
  %0 = "graph.exp"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  return
}

// -----

// Structure comes from IRDL: operand counts and tensor-ness.
func.func @too_many_operands(%a: tensor<4xf32>) {
  // expected-error@+1 {{expects exactly 1 operands, but got 2}}
  %0 = "graph.exp"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @not_a_tensor(%a: tensor<4xf32>) {
  // expected-error@+1 {{expected base type 'builtin.tensor' but got 'builtin.memref'}}
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> memref<4xf32>
  return
}

// -----

func.func @unranked(%a: tensor<*xf32>) {
  // expected-error@+1 {{expected base type 'builtin.tensor' but got 'builtin.unranked_tensor'}}
  %0 = "graph.neg"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @atan2_of_integers(%a: tensor<4xi32>) {
  // expected-error@+1 {{'graph.atan2' operands}}
  %0 = "graph.atan2"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @isnan_result_is_i1(%a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.isnan' result #0 has type tensor<4xf32>, but its operands and attributes give tensor<4xi1>}}
  %0 = "graph.isnan"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @sigmoid_grad_of_integers(%a: tensor<4xi32>) {
  // expected-error@+1 {{'graph.sigmoid_grad' y}}
  %0 = "graph.sigmoid_grad"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @silu_grad_mixed_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'graph.silu_grad' operands tensor<4xf32>, tensor<4xf16> must have the same element type}}
  %0 = "graph.silu_grad"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// coarse_exp is defined on f32 only: the attention that uses it widens its f16/bf16 scores first.
func.func @coarse_exp_on_bf16(%a: tensor<4xbf16>) {
  // expected-error@+1 {{'graph.coarse_exp' operand tensor<4xbf16> must have element type f32}}
  %0 = "graph.coarse_exp"(%a) : (tensor<4xbf16>) -> tensor<4xbf16>
  return
}
