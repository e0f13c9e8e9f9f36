// graph-verify's rules for reshape, broadcast_to, transpose, concat, split, slice, pad, gather, gather_elements, scatter_update and iota.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @reshape_count_mismatch(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reshape' operand tensor<4x8xf32> has 32 elements but result type tensor<5x6xf32> has 30}}
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<5x6xf32>
  return
}

// -----

func.func @reshape_changes_dtype(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reshape' result type tensor<32xf16> must have the element type of operand tensor<4x8xf32>}}
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<32xf16>
  return
}

// -----

// The sizes operand has another rank than the result.
func.func @reshape_sizes_of_another_rank(%a: tensor<?x8xf32>, %s: tensor<?x?xi1>) {
  // expected-error@+1 {{'graph.reshape' operand sizes tensor<?x?xi1> must have the rank of result type tensor<?x?x8xf32>}}
  %0 = "graph.reshape"(%a, %s) : (tensor<?x8xf32>, tensor<?x?xi1>) -> tensor<?x?x8xf32>
  return
}

// -----

// The sizes operand gives a size to a static result dim.
func.func @reshape_sizes_for_a_static_dim(%a: tensor<?x8xf32>, %s: tensor<?x?x?xi1>) {
  // expected-error@+1 {{'graph.reshape' dim 2 of operand sizes tensor<?x?x?xi1> is dynamic, but the result's (tensor<?x?x8xf32>) is not}}
  %0 = "graph.reshape"(%a, %s) : (tensor<?x8xf32>, tensor<?x?x?xi1>) -> tensor<?x?x8xf32>
  return
}

// -----

// Two dynamic result dims that the sizes operand does not give: neither follows from the count alone.
func.func @reshape_sizes_leave_two_dims(%a: tensor<?x8xf32>, %s: tensor<1x1x?xi1>) {
  // expected-error@+1 {{'graph.reshape' result type tensor<?x?x?xf32> may have at most one dynamic dimension where operand sizes tensor<1x1x?xi1> is static (dims [0, 1])}}
  %0 = "graph.reshape"(%a, %s) : (tensor<?x8xf32>, tensor<1x1x?xi1>) -> tensor<?x?x?xf32>
  return
}

// -----

// Two dynamic result dims, the second with no dynamic operand dim to take its size from.
func.func @reshape_two_dynamic_dims(%a: tensor<?x8xf32>) {
  // expected-error@+1 {{'graph.reshape' result type tensor<?x?x2xf32> may have at most one dynamic dimension, or several that are dynamic dims of operand tensor<?x8xf32> in order}}
  %0 = "graph.reshape"(%a) : (tensor<?x8xf32>) -> tensor<?x?x2xf32>
  return
}

// -----

func.func @reshape_indivisible(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.reshape' operand tensor<4x8xf32> with 32 elements cannot be reshaped to tensor<?x5xf32>}}
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @broadcast_to_incompatible(%a: tensor<3x8xf32>) {
  // expected-error@+1 {{'graph.broadcast_to' operand tensor<3x8xf32> cannot be broadcast to tensor<4x8xf32>}}
  %0 = "graph.broadcast_to"(%a) : (tensor<3x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_to_dynamic_broadcast_dim(%a: tensor<1x8xf32>) {
  // expected-error@+1 {{'graph.broadcast_to' dynamic dimensions are not supported: dimension 0 of tensor<?x8xf32> is broadcast, so its size is unknown}}
  %0 = "graph.broadcast_to"(%a) : (tensor<1x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @bad_perm(%a: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'graph.transpose' perm [0, 0, 1] is not a permutation of [0, 1, 2]}}
  %0 = "graph.transpose"(%a) {perm = array<i64: 0, 0, 1>} : (tensor<2x4x8xf32>) -> tensor<2x2x4xf32>
  // expected-error@+1 {{'graph.transpose' perm [1, 0] is not a permutation of [0, 1, 2]}}
  %1 = "graph.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<2x4x8xf32>) -> tensor<4x2xf32>
  // expected-error@+1 {{'graph.transpose' perm [-1, 0, 1] is not a permutation of [0, 1, 2]}}
  %2 = "graph.transpose"(%a) {perm = array<i64: -1, 0, 1>} : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
  return
}

// -----

func.func @transpose_wrong_result(%a: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'graph.transpose' result #0 has type tensor<2x4x8xf32>, but its operands and attributes give tensor<2x8x4xf32>}}
  %0 = "graph.transpose"(%a) {perm = array<i64: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @concat_axis_out_of_range(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.concat' axis 2 is out of range for rank 2}}
  %0 = "graph.concat"(%a, %a) {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // expected-error@+1 {{'graph.concat' axis -3 is out of range for rank 2}}
  %1 = "graph.concat"(%a, %a) {axis = -3 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_shape_mismatch(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error@+1 {{'graph.concat' operands tensor<4x8xf32> and tensor<3x8xf32> differ in dimension 0; only the concat axis 1 may differ}}
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_rank_mismatch(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'graph.concat' operands tensor<4x8xf32> and tensor<8xf32> must have the same rank}}
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<12x8xf32>
  return
}

// -----

func.func @concat_dtype_mismatch(%a: tensor<4x8xf32>, %b: tensor<4x8xf16>) {
  // expected-error@+1 {{'graph.concat' operands tensor<4x8xf32>, tensor<4x8xf16> must have the same element type}}
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<8x8xf32>
  return
}

// -----

func.func @concat_wrong_result(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>) {
  // expected-error@+1 {{'graph.concat' result #0 has type tensor<4x8xf32>, but its operands and attributes give tensor<4x10xf32>}}
  %0 = "graph.concat"(%a, %b) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Operands after the second form one IRDL variadic group: they must share one type.
func.func @concat_rest_of_different_types(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<4x3xf32>) {
  // expected-error@+1 {{expected 'tensor<4x2xf32>' but got 'tensor<4x3xf32>'}}
  %0 = "graph.concat"(%a, %a, %b, %c) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x21xf32>
  return
}

// -----

func.func @concat_one_operand(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{expects at least 2 operands, but got 1}}
  %0 = "graph.concat"(%a) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @split_sizes_sum(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' sizes [2, 5] sum to 7, not to the size 8 of dimension 1 of tensor<4x8xf32>}}
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 5>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x5xf32>)
  return
}

// -----

func.func @split_negative_size(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' sizes [-2, 10] must be non-negative}}
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: -2, 10>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x10xf32>)
  return
}

// -----

func.func @split_one_size(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' sizes [8] must describe at least 2 pieces (one piece is the operand itself)}}
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 8>} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @split_rest_sizes_differ(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' sizes [1, 1, 2, 4]: pieces after the second must all have one size (an IRDL variadic group); nest splits to cut more sizes}}
  %0:4 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 1, 1, 2, 4>} : (tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @split_result_count(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' has 3 results but sizes [4, 4] describe 2 pieces}}
  %0:3 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @split_axis_out_of_range(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' axis 2 is out of range for rank 2}}
  %0:2 = "graph.split"(%a) {axis = 2 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @split_wrong_result(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.split' result #1 has type tensor<4x4xf32>, but its operands and attributes give tensor<4x6xf32>}}
  %0:2 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @split_too_few_results(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{expects at least 2 results, but got 1}}
  %0 = "graph.split"(%a) {axis = 1 : i64, sizes = array<i64: 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_limit_past_end(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.slice' start 3 and limit 9 are out of bounds for dimension 1 of size 8 (need 0 <= start <= limit <= size)}}
  %0 = "graph.slice"(%a) {start = array<i64: 0, 3>, limit = array<i64: 4, 9>} : (tensor<4x8xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @slice_start_after_limit(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.slice' start 3 and limit 2 are out of bounds for dimension 0 of size 4 (need 0 <= start <= limit <= size)}}
  %0 = "graph.slice"(%a) {start = array<i64: 3, 0>, limit = array<i64: 2, 8>} : (tensor<4x8xf32>) -> tensor<0x8xf32>
  return
}

// -----

func.func @slice_negative_start(%a: tensor<?x8xf32>) {
  // expected-error@+1 {{'graph.slice' start -1 and limit 2 are out of bounds for dimension 0 of size ? (need 0 <= start <= limit <= size)}}
  %0 = "graph.slice"(%a) {start = array<i64: -1, 0>, limit = array<i64: 2, 8>} : (tensor<?x8xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @slice_zero_stride(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.slice' strides [1, 0] must be positive}}
  %0 = "graph.slice"(%a) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_entries_per_dim(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.slice' start [0] must have one entry per dimension of tensor<4x8xf32>}}
  %0 = "graph.slice"(%a) {start = array<i64: 0>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.slice' strides [1, 1, 1] must have one entry per dimension of tensor<4x8xf32>}}
  %1 = "graph.slice"(%a) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>, strides = array<i64: 1, 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_wrong_result(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.slice' result #0 has type tensor<2x8xf32>, but its operands and attributes give tensor<2x3xf32>}}
  %0 = "graph.slice"(%a) {start = array<i64: 1, 0>, limit = array<i64: 3, 8>, strides = array<i64: 1, 3>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @gather_float_indices(%w: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error@+1 {{'graph.gather' operand indices tensor<3xf32> must have element type i32 or i64}}
  %0 = "graph.gather"(%w, %i) : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_axis_out_of_range(%w: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error@+1 {{'graph.gather' axis 2 is out of range for rank 2}}
  %0 = "graph.gather"(%w, %i) {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_wrong_result_shape(%w: tensor<10x4xf32>, %i: tensor<2x3xi32>) {
  // expected-error@+1 {{'graph.gather' result #0 has type tensor<6x4xf32>, but its operands and attributes give tensor<2x3x4xf32>}}
  %0 = "graph.gather"(%w, %i) : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @gather_from_empty_axis(%w: tensor<0x4xf32>, %i: tensor<3xi64>) {
  // expected-error@+1 {{'graph.gather' dimension 0 of operand data tensor<0x4xf32> is empty: there is nothing to gather}}
  %0 = "graph.gather"(%w, %i) : (tensor<0x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_from_a_scalar(%w: tensor<f32>, %i: tensor<3xi64>) {
  // expected-error@+1 {{'graph.gather' operand data tensor<f32> must have at least one dimension}}
  %0 = "graph.gather"(%w, %i) : (tensor<f32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @scatter_update_float_indices(%c: tensor<8x4xf32>, %i: tensor<3xf32>, %u: tensor<3x4xf32>) {
  // expected-error@+1 {{'graph.scatter_update' operand indices tensor<3xf32> must have element type i32 or i64}}
  %0 = "graph.scatter_update"(%c, %i, %u) : (tensor<8x4xf32>, tensor<3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @scatter_update_updates_shape(%c: tensor<8x4xf32>, %i: tensor<3xi64>, %u: tensor<4x3xf32>) {
  // expected-error@+1 {{'graph.scatter_update' operand updates tensor<4x3xf32> must have the shape data.shape[:axis] + indices.shape + data.shape[axis + 1:] (3x4)}}
  %0 = "graph.scatter_update"(%c, %i, %u) : (tensor<8x4xf32>, tensor<3xi64>, tensor<4x3xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @scatter_update_updates_dtype(%c: tensor<8x4xf32>, %i: tensor<3xi64>, %u: tensor<3x4xf16>) {
  // expected-error@+1 {{'graph.scatter_update' operand updates tensor<3x4xf16> must have the element type of operand data tensor<8x4xf32>}}
  %0 = "graph.scatter_update"(%c, %i, %u) : (tensor<8x4xf32>, tensor<3xi64>, tensor<3x4xf16>) -> tensor<8x4xf32>
  return
}

// -----

func.func @scatter_update_result_type(%c: tensor<8x4xf32>, %i: tensor<3xi64>, %u: tensor<3x4xf32>) {
  // expected-error@+1 {{'graph.scatter_update' result #0 has type tensor<3x4xf32>, but its operands and attributes give tensor<8x4xf32>}}
  %0 = "graph.scatter_update"(%c, %i, %u) : (tensor<8x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_elements_rank(%x: tensor<4x5xf32>, %i: tensor<4xi64>) {
  // expected-error@+1 {{'graph.gather_elements' operand indices tensor<4xi64> must have the rank of operand data tensor<4x5xf32>}}
  %0 = "graph.gather_elements"(%x, %i) : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_elements_wider_than_data(%x: tensor<4x5xf32>, %i: tensor<4x7xi64>) {
  // expected-error@+1 {{'graph.gather_elements' dimension 1 of operand indices tensor<4x7xi64> is larger than that of data tensor<4x5xf32>}}
  %0 = "graph.gather_elements"(%x, %i) : (tensor<4x5xf32>, tensor<4x7xi64>) -> tensor<4x7xf32>
  return
}

// -----

func.func @iota_of_a_scalar(%x: tensor<f32>) {
  // expected-error@+1 {{'graph.iota' operand tensor<f32> must have at least one dimension}}
  %0 = "graph.iota"(%x) {axis = 0 : i64} : (tensor<f32>) -> tensor<1xi64>
  return
}

// -----

func.func @iota_wrong_length(%x: tensor<4x3xf32>) {
  // expected-error@+1 {{'graph.iota' result #0 has type tensor<4xi64>, but its operands and attributes give tensor<3xi64>}}
  %0 = "graph.iota"(%x) {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4xi64>
  return
}

// -----

func.func @one_hot_needs_scalar_values(%i: tensor<3xi64>, %on: tensor<1xf32>, %off: tensor<f32>) {
  // expected-error@+1 {{'graph.one_hot' on_value tensor<1xf32> must be a scalar (rank 0)}}
  %0 = "graph.one_hot"(%i, %on, %off) {depth = 4 : i64} : (tensor<3xi64>, tensor<1xf32>, tensor<f32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @one_hot_float_indices(%i: tensor<3xf32>, %on: tensor<f32>, %off: tensor<f32>) {
  // expected-error@+1 {{'graph.one_hot' indices}}
  %0 = "graph.one_hot"(%i, %on, %off) {depth = 4 : i64} : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @assign_other_type(%v: tensor<4x8xf32>, %x: tensor<4x8xf16>) {
  // expected-error@+1 {{'graph.assign' value tensor<4x8xf16> must have the element type of variable tensor<4x8xf32> and broadcast to its shape}}
  %0 = "graph.assign"(%v, %x) : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @random_uniform_negative_seed(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.random_uniform' seed must be >= 0, got -1}}
  %0 = "graph.random_uniform"(%x) {seed = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_keep_prob(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.dropout' keep_prob must be in (0, 1], got 0.0}}
  %0:2 = "graph.dropout"(%x) {keep_prob = 0.0 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @pad_wrong_entry_count(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.pad' high [1] must have one entry per dimension of tensor<4x8xf32>}}
  %0 = "graph.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<5x9xf32>
  return
}

// -----

func.func @pad_crops_below_zero(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.pad' dimension 1 of tensor<4x8xf32> padded by -6 and -3 would have size -1}}
  %0 = "graph.pad"(%x) {low = array<i64: 0, -6>, high = array<i64: 0, -3>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  return
}

// -----

func.func @pad_reflect_as_wide_as_the_dim(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.pad' dimension 0 of tensor<4x8xf32> padded by 1 and 4: reflect pads must be smaller than the dimension (4)}}
  %0 = "graph.pad"(%x) {low = array<i64: 1, 0>, high = array<i64: 4, 0>, mode = "reflect"} : (tensor<4x8xf32>) -> tensor<9x8xf32>
  return
}

// -----

func.func @pad_replicate_of_nothing(%x: tensor<0x8xf32>) {
  // expected-error@+1 {{'graph.pad' dimension 0 of tensor<0x8xf32> padded by 1 and 0: replicate has no element to repeat}}
  %0 = "graph.pad"(%x) {low = array<i64: 1, 0>, high = array<i64: 0, 0>, mode = "replicate"} : (tensor<0x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @pad_circular_wraps_twice(%x: tensor<4x8xf32>) {
  // 8 - 5 = 3 elements are left to wrap around: a pad of 4 would wrap twice (PyTorch reads outside the tensor).
  // expected-error@+1 {{'graph.pad' dimension 1 of tensor<4x8xf32> padded by 4 and -5: circular pads must be at most the 3 elements left after the negative pads (they would wrap around more than once)}}
  %0 = "graph.pad"(%x) {low = array<i64: 0, 4>, high = array<i64: 0, -5>, mode = "circular"} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return
}

// -----

func.func @pad_value_of_another_type(%x: tensor<4x8xi64>, %v: tensor<f32>) {
  // expected-error@+1 {{'graph.pad' operand padding_value tensor<f32> must be a rank-0 tensor of the element type of tensor<4x8xi64>}}
  %0 = "graph.pad"(%x, %v) {low = array<i64: 0, 1>, high = array<i64: 0, 0>} : (tensor<4x8xi64>, tensor<f32>) -> tensor<4x9xi64>
  return
}

// -----

func.func @pad_value_in_reflect_mode(%x: tensor<4x8xf32>, %v: tensor<f32>) {
  // expected-error@+1 {{'graph.pad' operand padding_value is only read by mode "constant", not "reflect"}}
  %0 = "graph.pad"(%x, %v) {low = array<i64: 0, 1>, high = array<i64: 0, 0>, mode = "reflect"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @pad_unknown_mode(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.pad' attribute 'mode' must be one of "constant", "reflect", "replicate", "circular", got "symmetric"}}
  %0 = "graph.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 1>, mode = "symmetric"} : (tensor<4x8xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @pad_wrong_result_type(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.pad' result #0 has type tensor<4x9xf32>, but its operands and attributes give tensor<4x10xf32>}}
  %0 = "graph.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}
