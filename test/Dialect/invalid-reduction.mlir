// graph-verify's rules for reduce_sum, reduce_mean, reduce_max and reduce_min.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @axis_out_of_range(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reduce_sum' axes 2 is out of range for rank 2}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  // expected-error@+1 {{'graph.reduce_max' axes -3 is out of range for rank 2}}
  %1 = "graph.reduce_max"(%a) {axes = array<i64: -3>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @duplicate_axes(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reduce_mean' axes [1, -1] contain a duplicate axis}}
  %0 = "graph.reduce_mean"(%a) {axes = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @mean_of_integers(%a: tensor<4x8xi32>) {
  // expected-error@+1 {{'graph.reduce_mean' operand tensor<4x8xi32> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.reduce_mean"(%a) {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @reduce_bool(%a: tensor<4x8xi1>) {
  // expected-error@+1 {{'graph.reduce_sum' operand tensor<4x8xi1> must have a numeric element type (not i1)}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>} : (tensor<4x8xi1>) -> tensor<4xi1>
  // expected-error@+1 {{'graph.reduce_min' operand tensor<4x8xi1> must have a numeric element type (not i1)}}
  %1 = "graph.reduce_min"(%a) {axes = array<i64: 0>} : (tensor<4x8xi1>) -> tensor<8xi1>
  return
}

// -----

// max/min have no identity element.
func.func @max_of_empty_axis(%a: tensor<4x0xf32>) {
  // expected-error@+1 {{'graph.reduce_max' cannot reduce an empty axis with reduce_max}}
  %0 = "graph.reduce_max"(%a) {axes = array<i64: 1>} : (tensor<4x0xf32>) -> tensor<4xf32>
  // expected-error@+1 {{'graph.reduce_min' cannot reduce an empty axis with reduce_min}}
  %1 = "graph.reduce_min"(%a) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x0xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @keep_dims_result(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reduce_sum' result #0 has type tensor<4xf32>, but its operands and attributes give tensor<4x1xf32>}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4xf32>
  // expected-error@+1 {{'graph.reduce_sum' result #0 has type tensor<4x1xf32>, but its operands and attributes give tensor<4xf32>}}
  %1 = "graph.reduce_sum"(%a) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  // expected-error@+1 {{'graph.reduce_max' result #0 has type tensor<8xf32>, but its operands and attributes give tensor<4xf32>}}
  %2 = "graph.reduce_max"(%a) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @result_dtype(%a: tensor<4x8xi32>) {
  // expected-error@+1 {{'graph.reduce_sum' result #0 has type tensor<4xi64>, but its operands and attributes give tensor<4xi32>}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi64>
  return
}

// -----

// `axes` is required: IRDL reports it missing.
func.func @missing_axes(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{attribute "axes" is expected but not provided}}
  %0 = "graph.reduce_sum"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @axes_not_an_array(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{expected base attribute 'builtin.dense_array' but got 'builtin.integer'}}
  %0 = "graph.reduce_sum"(%a) {axes = 1 : i64} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

// IRDL only checks for a dense array; graph-verify wants i64 elements.
func.func @axes_i32_array(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reduce_sum' attribute 'axes' must be an array<i64: ...>, got array<i32: 1>}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i32: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @keep_dims_not_bool(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reduce_min' attribute 'keep_dims' must be a bool (true or false), got 1 : i64}}
  %0 = "graph.reduce_min"(%a) {axes = array<i64: 1>, keep_dims = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @cumsum_of_booleans(%a: tensor<4xi1>) {
  // expected-error@+1 {{'graph.cumsum' operand tensor<4xi1> must have a numeric element type (not i1)}}
  %0 = "graph.cumsum"(%a) {axis = 0 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @cumsum_axis_out_of_range(%a: tensor<4x3xf32>) {
  // expected-error@+1 {{'graph.cumsum' axis 2 is out of range for rank 2}}
  %0 = "graph.cumsum"(%a) {axis = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @cumsum_of_a_scalar(%a: tensor<f32>) {
  // expected-error@+1 {{'graph.cumsum' operand tensor<f32> must have at least one dimension}}
  %0 = "graph.cumsum"(%a) {axis = 0 : i64} : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @cumsum_without_axis(%a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.cumsum' op attribute "axis" is expected but not provided}}
  %0 = "graph.cumsum"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @argmax_of_an_empty_axis(%a: tensor<4x0xf32>) {
  // expected-error@+1 {{'graph.argmax' cannot take argmax along an empty axis}}
  %0 = "graph.argmax"(%a) {axis = 1 : i64} : (tensor<4x0xf32>) -> tensor<4xi64>
  return
}

// -----

func.func @argmin_result_is_i64(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.argmin' result #0 has type tensor<4xi32>, but its operands and attributes give tensor<4xi64>}}
  %0 = "graph.argmin"(%a) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4xi32>
  return
}
