// graph-verify's rules for the collectives: group size, gather and scatter shapes, reductions, matmul_all_reduce.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @all_reduce_without_group_size(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.all_reduce' op attribute "group_size" is expected but not provided}}
  %0 = "graph.all_reduce"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @all_reduce_of_zero_ranks(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.all_reduce' attribute 'group_size' must be at least 1, got 0}}
  %0 = "graph.all_reduce"(%x) {group_size = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @all_reduce_product(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.all_reduce' attribute 'reduction' must be one of "sum", "max", "min", got "prod"}}
  %0 = "graph.all_reduce"(%x) {group_size = 2 : i64, reduction = "prod"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @all_reduce_of_booleans(%x: tensor<4x8xi1>) {
  // expected-error@+1 {{'graph.all_reduce' operand tensor<4x8xi1> must have a numeric element type (not i1)}}
  %0 = "graph.all_reduce"(%x) {group_size = 2 : i64} : (tensor<4x8xi1>) -> tensor<4x8xi1>
  return
}

// -----

func.func @all_gather_wrong_result(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.all_gather' result #0 has type tensor<4x8xf32>, but its operands and attributes give tensor<4x16xf32>}}
  %0 = "graph.all_gather"(%x) {axis = 1 : i64, group_size = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_scatter_indivisible(%x: tensor<6x8xf32>) {
  // expected-error@+1 {{'graph.reduce_scatter' axis 0 of operand tensor<6x8xf32> (6) does not divide into 4 ranks}}
  %0 = "graph.reduce_scatter"(%x) {group_size = 4 : i64} : (tensor<6x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @all_gather_of_a_scalar(%x: tensor<f32>) {
  // expected-error@+1 {{'graph.all_gather' operand tensor<f32> has no axis to gather along}}
  %0 = "graph.all_gather"(%x) {group_size = 2 : i64} : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @matmul_all_reduce_bias_length(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %bias: tensor<8xf32>) {
  // expected-error@+1 {{'graph.matmul_all_reduce' operand bias tensor<8xf32> must be 1-D of the length of the result's last dim (tensor<8x16xf32>)}}
  %0 = "graph.matmul_all_reduce"(%a, %b, %bias) {group_size = 2 : i64} : (tensor<8x4xf32>, tensor<4x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @matmul_all_reduce_negative_chunks(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) {
  // expected-error@+1 {{'graph.matmul_all_reduce' attribute 'chunks' must be >= 0 (0: chosen when compiled), got -1}}
  %0 = "graph.matmul_all_reduce"(%a, %b) {group_size = 2 : i64, chunks = -1 : i64} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @qbmm_float_operand(%a: tensor<4x16xf32>, %b: tensor<16x8xi8>, %s: tensor<8xf32>) {
  // expected-error@+1 {{'graph.quant_batch_matmul' operand x1 tensor<4x16xf32> must have element type i8}}
  %0 = "graph.quant_batch_matmul"(%a, %b, %s) : (tensor<4x16xf32>, tensor<16x8xi8>, tensor<8xf32>) -> tensor<4x8xf16>
  return
}

// -----

func.func @qbmm_scale_length(%a: tensor<4x16xi8>, %b: tensor<16x8xi8>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'graph.quant_batch_matmul' operand scale tensor<4xf32> must be 1-D of length 1 (per tensor) or 8 (per output channel)}}
  %0 = "graph.quant_batch_matmul"(%a, %b, %s) : (tensor<4x16xi8>, tensor<16x8xi8>, tensor<4xf32>) -> tensor<4x8xf16>
  return
}

// -----

func.func @qbmm_all_reduce_x3_enlarges(%a: tensor<4x16xi8>, %b: tensor<16x8xi8>, %s: tensor<8xf32>, %r: tensor<2x4x8xf16>) {
  // expected-error@+1 {{'graph.quant_batch_matmul_all_reduce' operand x3 tensor<2x4x8xf16> broadcasts the result tensor<4x8xf16> to a larger tensor<2x4x8xf16>}}
  %0 = "graph.quant_batch_matmul_all_reduce"(%a, %b, %s, %r) {group_size = 2 : i64} : (tensor<4x16xi8>, tensor<16x8xi8>, tensor<8xf32>, tensor<2x4x8xf16>) -> tensor<4x8xf16>
  return
}
