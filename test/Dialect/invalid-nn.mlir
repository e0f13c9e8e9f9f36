// graph-verify's rules for matmul, bias_add, softmax, the normalizations, conv2d, pooling, resize and dynamic_quant.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @matmul_contraction_mismatch(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.matmul' contraction dimensions differ: operand a tensor<4x8xf32> has 8, operand b tensor<4x8xf32> has 4}}
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// transpose_b turns b's [n, k] into [k, n]: without the flag the contraction dims differ ...
func.func @matmul_missing_transpose_b(%a: tensor<2x8x4xf32>, %b: tensor<16x4xf32>) {
  // expected-error@+1 {{'graph.matmul' contraction dimensions differ: operand a tensor<2x8x4xf32> has 4, operand b tensor<16x4xf32> has 16}}
  %0 = "graph.matmul"(%a, %b) : (tensor<2x8x4xf32>, tensor<16x4xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

// ... and with transpose_a the contraction dim of a is its second-to-last.
func.func @matmul_transpose_a(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error@+1 {{'graph.matmul' contraction dimensions differ: operand a tensor<4x8xf32> has 4, operand b tensor<8x2xf32> has 8}}
  %0 = "graph.matmul"(%a, %b) {transpose_a = true} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return
}

// -----

func.func @matmul_transpose_of_vector(%a: tensor<8xf32>, %b: tensor<8x2xf32>, %v: tensor<2xf32>) {
  // expected-error@+1 {{'graph.matmul' attribute 'transpose_a' needs operand a of rank >= 2, got tensor<8xf32>}}
  %0 = "graph.matmul"(%a, %b) {transpose_a = true} : (tensor<8xf32>, tensor<8x2xf32>) -> tensor<2xf32>
  // expected-error@+1 {{'graph.matmul' attribute 'transpose_b' needs operand b of rank >= 2, got tensor<2xf32>}}
  %1 = "graph.matmul"(%b, %v) {transpose_b = true} : (tensor<8x2xf32>, tensor<2xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error@+1 {{'graph.matmul' batch dimensions of operands tensor<2x4x8xf32> and tensor<3x8x4xf32> are not broadcast-compatible}}
  %0 = "graph.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @matmul_dtypes(%a: tensor<4x8xi1>, %b: tensor<8x4xf32>, %c: tensor<8x4xf16>, %f: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.matmul' operand a tensor<4x8xi1> must have a numeric element type (not i1)}}
  %0 = "graph.matmul"(%a, %a) {transpose_b = true} : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x4xi1>
  // expected-error@+1 {{'graph.matmul' operands tensor<4x8xf32>, tensor<8x4xf16> must have the same element type}}
  %1 = "graph.matmul"(%f, %c) : (tensor<4x8xf32>, tensor<8x4xf16>) -> tensor<4x4xf32>
  return
}

// -----

func.func @matmul_wrong_result(%a: tensor<4x8xi8>, %b: tensor<8x2xi8>) {
  // expected-error@+1 {{'graph.matmul' result #0 has type tensor<4x2xi32>, but its operands and attributes give tensor<4x2xi8>}}
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  return
}

// -----

func.func @bias_add_length(%x: tensor<2x3x4x4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'graph.bias_add' operand bias tensor<4xf32> must be 1-D of length 3 (x.shape[1] of tensor<2x3x4x4xf32>)}}
  %0 = "graph.bias_add"(%x, %b) {axis = 1 : i64} : (tensor<2x3x4x4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @softmax_checks(%x: tensor<2x8xf32>, %i: tensor<2x8xi32>) {
  // expected-error@+1 {{'graph.softmax' axis 2 is out of range for rank 2}}
  %0 = "graph.softmax"(%x) {axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // expected-error@+1 {{'graph.log_softmax' operand x tensor<2x8xi32> must have a floating-point element type (f32, f16, bf16)}}
  %1 = "graph.log_softmax"(%i) : (tensor<2x8xi32>) -> tensor<2x8xi32>
  return
}

// -----

func.func @conv2d_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' input channels of x tensor<1x4x8x8xf32> (4) must equal the per-group channels of w tensor<6x3x3x3xf32> (3) times groups (1)}}
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<5x2x3x3xf32>, %w1: tensor<6x4x3x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' output channels of w tensor<5x2x3x3xf32> (5) must be divisible by groups (2)}}
  %0 = "graph.conv2d"(%x, %w) {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x6x6xf32>
  // expected-error@+1 {{'graph.conv2d' input channels of x tensor<1x4x8x8xf32> (4) must equal the per-group channels of w tensor<6x4x3x3xf32> (4) times groups (2)}}
  %1 = "graph.conv2d"(%x, %w1) {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  // expected-error@+1 {{'graph.conv2d' attribute 'groups' must be positive, got 0}}
  %2 = "graph.conv2d"(%x, %w1) {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// The bias: one value per output channel, of the convolution's element type.
func.func @conv2d_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b5: tensor<5xf32>, %b2: tensor<1x6xf32>,
                       %b16: tensor<6xf16>) {
  // expected-error@+1 {{'graph.conv2d' operand bias tensor<5xf32> must have one value per output channel of w tensor<6x4x3x3xf32> (6)}}
  %0 = "graph.conv2d"(%x, %w, %b5) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<5xf32>) -> tensor<1x6x6x6xf32>
  // expected-error@+1 {{'graph.conv2d' operand bias tensor<1x6xf32> must have rank 1 (one value per output channel)}}
  %1 = "graph.conv2d"(%x, %w, %b2) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x6xf32>) -> tensor<1x6x6x6xf32>
  // expected-error@+1 {{'graph.conv2d' operands tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf16> must have the same element type}}
  %2 = "graph.conv2d"(%x, %w, %b16) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf16>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_pads(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' attribute 'pads' must contain only non-negative values, got [-1, 0, 0, 0]}}
  %0 = "graph.conv2d"(%x, %w) {pads = array<i64: -1, 0, 0, 0>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x6xf32>
  // expected-error@+1 {{'graph.conv2d' attribute 'pads' must have 4 values [top, left, bottom, right], got [1, 1]}}
  %1 = "graph.conv2d"(%x, %w) {pads = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  return
}

// -----

func.func @conv2d_strides_dilations(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' attribute 'strides' must contain only positive values, got [0, 1]}}
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 0, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  // expected-error@+1 {{'graph.conv2d' attribute 'dilations' must have 2 values [dilation_h, dilation_w], got [1, 1, 1]}}
  %1 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_ranks(%x: tensor<4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %x4: tensor<1x4x8x8xf32>, %w3: tensor<6x4x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' operand x tensor<4x8x8xf32> must have rank 4 (NCHW)}}
  %0 = "graph.conv2d"(%x, %w) : (tensor<4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<6x6x6xf32>
  // expected-error@+1 {{'graph.conv2d' operand w tensor<6x4x3xf32> must have rank 4 (OIHW)}}
  %1 = "graph.conv2d"(%x4, %w3) : (tensor<1x4x8x8xf32>, tensor<6x4x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_dynamic_kernel(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x?x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' operand w tensor<6x4x?x3xf32>: dynamic dimensions are not supported in its spatial dims}}
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x4x8x8xf32>, tensor<6x4x?x3xf32>) -> tensor<1x6x?x6xf32>
  return
}

// -----

func.func @conv2d_kernel_too_large(%x: tensor<1x4x4x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' dilated kernel height 5 exceeds the padded input height 4 (input 4 + pads 0 + 0); the output would be empty}}
  %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 2, 1>} : (tensor<1x4x4x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x1x6xf32>
  return
}

// -----

func.func @conv2d_float_only(%x: tensor<1x4x8x8xi32>, %w: tensor<6x4x3x3xi32>) {
  // expected-error@+1 {{'graph.conv2d' operand x tensor<1x4x8x8xi32> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x4x8x8xi32>, tensor<6x4x3x3xi32>) -> tensor<1x6x6x6xi32>
  return
}

// -----

func.func @pool_pads_not_smaller_than_kernel(%x: tensor<1x2x6x6xf32>) {
  // expected-error@+1 {{'graph.max_pool2d' attribute 'pads' [2, 0, 0, 0] must be smaller than the kernel [2, 2] in each dim}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x5xf32>
  // expected-error@+1 {{'graph.avg_pool2d' attribute 'pads' [0, 0, 0, 3] must be smaller than the kernel [2, 3] in each dim}}
  %1 = "graph.avg_pool2d"(%x) {kernel = array<i64: 2, 3>, pads = array<i64: 0, 0, 0, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x7xf32>
  return
}

// -----

func.func @pool_kernel_and_strides(%x: tensor<1x2x6x6xf32>) {
  // expected-error@+1 {{'graph.max_pool2d' attribute 'kernel' must contain only positive values, got [0, 2]}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 0, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x5xf32>
  // expected-error@+1 {{'graph.max_pool2d' attribute 'kernel' must have 2 values [kh, kw], got [2]}}
  %1 = "graph.max_pool2d"(%x) {kernel = array<i64: 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  // expected-error@+1 {{'graph.avg_pool2d' attribute 'strides' must contain only positive values, got [1, -1]}}
  %2 = "graph.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 1, -1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @pool_dtypes_and_rank(%x: tensor<1x2x4x4xi32>, %b: tensor<1x2x4x4xi1>, %r: tensor<2x4x4xf32>) {
  // expected-error@+1 {{'graph.avg_pool2d' operand x tensor<1x2x4x4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.avg_pool2d"(%x) {kernel = array<i64: 2, 2>} : (tensor<1x2x4x4xi32>) -> tensor<1x2x3x3xi32>
  // expected-error@+1 {{'graph.max_pool2d' operand x tensor<1x2x4x4xi1> must have a numeric element type (not i1)}}
  %1 = "graph.max_pool2d"(%b) {kernel = array<i64: 2, 2>} : (tensor<1x2x4x4xi1>) -> tensor<1x2x3x3xi1>
  // expected-error@+1 {{'graph.max_pool2d' operand x tensor<2x4x4xf32> must have rank 4 (NCHW)}}
  %2 = "graph.max_pool2d"(%r) {kernel = array<i64: 2, 2>} : (tensor<2x4x4xf32>) -> tensor<2x3x3xf32>
  return
}

// -----

func.func @pool_kernel_too_large(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'graph.max_pool2d' kernel width 5 exceeds the padded input width 4 (input 4 + pads 0 + 0); the output would be empty}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 1, 5>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x1xf32>
  return
}

// -----

func.func @pool_wrong_result(%x: tensor<1x2x7x7xf32>) {
  // expected-error@+1 {{'graph.max_pool2d' result #0 has type tensor<1x2x3x3xf32>, but its operands and attributes give tensor<1x2x4x4xf32>}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @layer_norm_gamma_shape(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.layer_norm' operand gamma tensor<8xf32> must have the normalized shape of x tensor<2x4x8xf32> from axis 1 (tensor<4x8xf32>)}}
  %0 = "graph.layer_norm"(%x, %g, %b) {begin_norm_axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  // expected-error@+1 {{'graph.layer_norm' operand beta tensor<4x8xf32> must have the normalized shape of x tensor<2x4x8xf32> from axis 2 (tensor<8xf32>)}}
  %1 = "graph.layer_norm"(%x, %g, %b) : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @layer_norm_attributes(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'graph.layer_norm' begin_norm_axis 2 is out of range for rank 2}}
  %0 = "graph.layer_norm"(%x, %g, %g) {begin_norm_axis = 2 : i64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // expected-error@+1 {{'graph.layer_norm' attribute 'epsilon' must be a finite non-negative float, got -1.0}}
  %1 = "graph.layer_norm"(%x, %g, %g) {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_gamma(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %g2: tensor<1x8xf32>) {
  // expected-error@+1 {{'graph.rms_norm' operand gamma tensor<4xf32> must be 1-D of length 8 (the last dim of x tensor<2x8xf32>)}}
  %0 = "graph.rms_norm"(%x, %g) : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  // expected-error@+1 {{'graph.rms_norm' operand gamma tensor<1x8xf32> must be 1-D of length 8 (the last dim of x tensor<2x8xf32>)}}
  %1 = "graph.rms_norm"(%x, %g2) : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_gamma_dtype(%x: tensor<2x8xbf16>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'graph.rms_norm' operands tensor<2x8xbf16>, tensor<8xf32> must have the same element type}}
  %0 = "graph.rms_norm"(%x, %g) : (tensor<2x8xbf16>, tensor<8xf32>) -> tensor<2x8xbf16>
  return
}

// -----

func.func @batch_norm_params(%x: tensor<2x3x4x4xf32>, %p: tensor<3xf32>, %q: tensor<4xf32>) {
  // expected-error@+1 {{'graph.batch_norm' operand var tensor<4xf32> must be 1-D of length 3 (the channel dim 1 of x tensor<2x3x4x4xf32>)}}
  %0 = "graph.batch_norm"(%x, %p, %p, %p, %q) : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  // expected-error@+1 {{'graph.batch_norm' operand scale tensor<4xf32> must be 1-D of length 3 (the channel dim 1 of x tensor<2x3x4x4xf32>)}}
  %1 = "graph.batch_norm"(%x, %q, %p, %p, %p) : (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<3xf32>) {
  // expected-error@+1 {{'graph.batch_norm' operand x tensor<3xf32> must have rank >= 2}}
  %0 = "graph.batch_norm"(%x, %x, %x, %x, %x) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @batch_norm_operand_count(%x: tensor<2x3xf32>, %p: tensor<3xf32>) {
  // expected-error@+1 {{expects exactly 5 operands, but got 4}}
  %0 = "graph.batch_norm"(%x, %p, %p, %p) : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dynamic_quant_results(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'graph.dynamic_quant' result #0 has type tensor<4x16xf32>, but its operands and attributes give tensor<4x16xi8>}}
  %0:2 = "graph.dynamic_quant"(%x) : (tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>)
  // expected-error@+1 {{'graph.dynamic_quant' result #1 has type tensor<4x1xf32>, but its operands and attributes give tensor<4xf32>}}
  %1:2 = "graph.dynamic_quant"(%x) : (tensor<4x16xf32>) -> (tensor<4x16xi8>, tensor<4x1xf32>)
  return
}

// -----

// The scale is f32 whatever the input type.
func.func @dynamic_quant_scale_dtype(%x: tensor<4x16xf16>) {
  // expected-error@+1 {{'graph.dynamic_quant' result #1 has type tensor<4xf16>, but its operands and attributes give tensor<4xf32>}}
  %0:2 = "graph.dynamic_quant"(%x) : (tensor<4x16xf16>) -> (tensor<4x16xi8>, tensor<4xf16>)
  return
}

// -----

func.func @dynamic_quant_result_count(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{expects exactly 2 results, but got 1}}
  %0 = "graph.dynamic_quant"(%x) : (tensor<4x16xf32>) -> tensor<4x16xi8>
  return
}

// -----

func.func @dynamic_quant_smooth_scales(%x: tensor<4x16xf32>, %s: tensor<8xf32>, %h: tensor<16xf16>) {
  // expected-error@+1 {{'graph.dynamic_quant' operand smooth_scales tensor<8xf32> must be 1-D of length 16 (the last dim of x tensor<4x16xf32>)}}
  %0:2 = "graph.dynamic_quant"(%x, %s) : (tensor<4x16xf32>, tensor<8xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  // expected-error@+1 {{'graph.dynamic_quant' operands tensor<4x16xf32>, tensor<16xf16> must have the same element type}}
  %1:2 = "graph.dynamic_quant"(%x, %h) : (tensor<4x16xf32>, tensor<16xf16>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return
}

// -----

func.func @dynamic_quant_too_many_operands(%x: tensor<4x16xf32>, %s: tensor<16xf32>) {
  // expected-error@+1 {{expects at most 2 operands, but got 3}}
  %0:2 = "graph.dynamic_quant"(%x, %s, %s) : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return
}

// -----

func.func @dynamic_quant_integer_input(%x: tensor<4x16xi8>) {
  // expected-error@+1 {{'graph.dynamic_quant' operand x tensor<4x16xi8> must have a floating-point element type (f32, f16, bf16)}}
  %0:2 = "graph.dynamic_quant"(%x) : (tensor<4x16xi8>) -> (tensor<4x16xi8>, tensor<4xf32>)
  return
}

// -----

func.func @group_norm_groups_do_not_divide(%x: tensor<2x6x5xf32>, %g: tensor<6xf32>) {
  // expected-error@+1 {{'graph.group_norm' the channels of x tensor<2x6x5xf32> (6) must be divisible by num_groups (4)}}
  %0 = "graph.group_norm"(%x, %g, %g) {num_groups = 4 : i64} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  return
}

// -----

func.func @group_norm_bad_parameters(%x: tensor<2x6x5xf32>, %g: tensor<6xf32>, %b: tensor<5xf32>) {
  // expected-error@+1 {{'graph.group_norm' operand beta tensor<5xf32> must be 1-D of length 6 (the channel dim 1 of x tensor<2x6x5xf32>)}}
  %0 = "graph.group_norm"(%x, %g, %b) {num_groups = 3 : i64} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<5xf32>) -> tensor<2x6x5xf32>
  // expected-error@+1 {{'graph.group_norm' attribute 'num_groups' must be positive, got 0}}
  %1 = "graph.group_norm"(%x, %g, %g) {num_groups = 0 : i64} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  // expected-error@+1 {{'graph.group_norm' attribute 'epsilon' must be a finite non-negative float, got -1.0}}
  %2 = "graph.group_norm"(%x, %g, %g) {num_groups = 3 : i64, epsilon = -1.0 : f32} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  return
}

// -----

func.func @group_norm_of_a_vector(%x: tensor<6xf32>, %g: tensor<6xf32>) {
  // expected-error@+1 {{'graph.group_norm' operand x tensor<6xf32> must have rank >= 2}}
  %0 = "graph.group_norm"(%x, %g, %g) {num_groups = 3 : i64} : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return
}

// -----

func.func @resize_bad_sizes(%x: tensor<2x3x5x6xf32>, %v: tensor<6xf32>) {
  // expected-error@+1 {{'graph.resize' attribute 'size' [2, 3, 4] must have 1 or 2 entries (the sizes of the last dims)}}
  %0 = "graph.resize"(%x) {size = array<i64: 2, 3, 4>} : (tensor<2x3x5x6xf32>) -> tensor<2x2x3x4xf32>
  // expected-error@+1 {{'graph.resize' attribute 'size' must contain only positive values, got [0, 4]}}
  %1 = "graph.resize"(%x) {size = array<i64: 0, 4>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x0x4xf32>
  // expected-error@+1 {{'graph.resize' operand x tensor<6xf32> must have rank >= 2 to resize its last 2 dims}}
  %2 = "graph.resize"(%v) {size = array<i64: 3, 4>} : (tensor<6xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @resize_dynamic_resized_dim(%x: tensor<2x3x?x6xf32>) {
  // expected-error@+1 {{'graph.resize' the resized dims of operand x tensor<2x3x?x6xf32> must be static and non-empty}}
  %0 = "graph.resize"(%x) {size = array<i64: 4, 4>} : (tensor<2x3x?x6xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @resize_bilinear_of_integers(%x: tensor<2x5x6xi32>) {
  // expected-error@+1 {{'graph.resize' operand x tensor<2x5x6xi32> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.resize"(%x) {size = array<i64: 4, 4>, mode = "bilinear"} : (tensor<2x5x6xi32>) -> tensor<2x4x4xi32>
  return
}

// -----

func.func @resize_attributes_that_do_not_apply(%x: tensor<2x5x6xf32>) {
  // expected-error@+1 {{'graph.resize' attribute 'align_corners' is for mode "bilinear", not "nearest"}}
  %0 = "graph.resize"(%x) {size = array<i64: 4, 4>, align_corners = true} : (tensor<2x5x6xf32>) -> tensor<2x4x4xf32>
  // expected-error@+1 {{'graph.resize' attributes 'ratio_h' and 'ratio_w' must be 0 with align_corners (it fixes the ratio)}}
  %1 = "graph.resize"(%x) {size = array<i64: 4, 4>, mode = "bilinear", align_corners = true, ratio_w = 0.5 : f32} : (tensor<2x5x6xf32>) -> tensor<2x4x4xf32>
  // expected-error@+1 {{'graph.resize' attribute 'ratio_h' must be 0 when only the last dim is resized}}
  %2 = "graph.resize"(%x) {size = array<i64: 4>, ratio_h = 0.5 : f32} : (tensor<2x5x6xf32>) -> tensor<2x5x4xf32>
  // expected-error@+1 {{'graph.resize' attributes 'ratio_h' and 'ratio_w' must be finite and >= 0, got [-1.0, 0.0]}}
  %3 = "graph.resize"(%x) {size = array<i64: 4, 4>, ratio_h = -1.0 : f32} : (tensor<2x5x6xf32>) -> tensor<2x4x4xf32>
  // expected-error@+1 {{'graph.resize' attribute 'mode' must be one of "nearest", "nearest_exact", "bilinear", got "bicubic"}}
  %4 = "graph.resize"(%x) {size = array<i64: 4, 4>, mode = "bicubic"} : (tensor<2x5x6xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

// grouped_matmul: x [rows, k], weights [groups, k, n] ([groups, n, k] with transpose_weights), one i32/i64 end
// per group, float operands of one type, the result [rows, n].
func.func @grouped_matmul_shapes(%x: tensor<8x4xf32>, %w: tensor<3x4x5xf32>, %ends: tensor<3xi64>, %x3: tensor<2x8x4xf32>, %w2: tensor<4x5xf32>, %e2: tensor<2xi64>, %e23: tensor<1x3xi64>) {
  // expected-error@+1 {{'graph.grouped_matmul' operand x tensor<2x8x4xf32> must be 2-D [rows, k]}}
  %0 = "graph.grouped_matmul"(%x3, %w, %ends) : (tensor<2x8x4xf32>, tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<8x5xf32>
  // expected-error@+1 {{'graph.grouped_matmul' operand weights tensor<4x5xf32> must be 3-D [groups, k, n]}}
  %1 = "graph.grouped_matmul"(%x, %w2, %ends) : (tensor<8x4xf32>, tensor<4x5xf32>, tensor<3xi64>) -> tensor<8x5xf32>
  // expected-error@+1 {{'graph.grouped_matmul' contraction dimensions differ: operand x tensor<8x4xf32> has 4, operand weights tensor<3x4x5xf32> ([groups, n, k]) has 5}}
  %2 = "graph.grouped_matmul"(%x, %w, %ends) {transpose_weights = true} : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<8x4xf32>
  // expected-error@+1 {{'graph.grouped_matmul' operand group_ends tensor<2xi64> must be 1-D of length 3 (one end per group of weights tensor<3x4x5xf32>)}}
  %3 = "graph.grouped_matmul"(%x, %w, %e2) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<8x5xf32>
  // expected-error@+1 {{'graph.grouped_matmul' operand group_ends tensor<1x3xi64> must be 1-D of length 3 (one end per group of weights tensor<3x4x5xf32>)}}
  %4 = "graph.grouped_matmul"(%x, %w, %e23) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<1x3xi64>) -> tensor<8x5xf32>
  // expected-error@+1 {{'graph.grouped_matmul' result #0 has type tensor<8x4xf32>, but its operands and attributes give tensor<8x5xf32>}}
  %5 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<8x4xf32>
  return
}

// -----

func.func @grouped_matmul_types(%x: tensor<8x4xf32>, %w: tensor<3x4x5xf32>, %ends: tensor<3xi64>, %xi: tensor<8x4xi32>, %wi: tensor<3x4x5xi32>, %wh: tensor<3x4x5xbf16>, %ef: tensor<3xf32>, %e8: tensor<3xi8>) {
  // expected-error@+1 {{'graph.grouped_matmul' operand x tensor<8x4xi32> must have a floating-point element type (f32, f16, bf16)}}
  %0 = "graph.grouped_matmul"(%xi, %wi, %ends) : (tensor<8x4xi32>, tensor<3x4x5xi32>, tensor<3xi64>) -> tensor<8x5xi32>
  // expected-error@+1 {{'graph.grouped_matmul' operands tensor<8x4xf32>, tensor<3x4x5xbf16> must have the same element type}}
  %1 = "graph.grouped_matmul"(%x, %wh, %ends) : (tensor<8x4xf32>, tensor<3x4x5xbf16>, tensor<3xi64>) -> tensor<8x5xf32>
  // expected-error@+1 {{'graph.grouped_matmul' operand group_ends tensor<3xf32> must have element type i32 or i64}}
  %2 = "graph.grouped_matmul"(%x, %w, %ef) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xf32>) -> tensor<8x5xf32>
  // expected-error@+1 {{'graph.grouped_matmul' operand group_ends tensor<3xi8> must have element type i32 or i64}}
  %3 = "graph.grouped_matmul"(%x, %w, %e8) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xi8>) -> tensor<8x5xf32>
  return
}
