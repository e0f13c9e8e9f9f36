// Attribute checks. IRDL declares only the REQUIRED attributes (presence and base kind), so errors
// about those come from the IRDL verifier with its own wording; optional attributes, unknown
// attributes and allowed values are graph-verify's.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @unknown_attribute(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.softmax' has unknown attribute 'dim' (known attributes: axis)}}
  %0 = "graph.softmax"(%a) {dim = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.exp' has unknown attribute 'foo' (known attributes: none)}}
  %1 = "graph.exp"(%a) {foo = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.max_pool2d' has unknown attribute 'count_include_pad' (known attributes: kernel, strides, pads)}}
  %2 = "graph.max_pool2d"(%a) {kernel = array<i64: 1, 1>, count_include_pad = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Optional attributes of the wrong kind.
func.func @optional_wrong_kind(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'graph.softmax' attribute 'axis' must be an integer (e.g. 1 : i64), got "x"}}
  %0 = "graph.softmax"(%a) {axis = "x"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.log_softmax' attribute 'axis' must be an integer (e.g. 1 : i64), got true}}
  %1 = "graph.log_softmax"(%a) {axis = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.matmul' attribute 'transpose_b' must be a bool (true or false), got 1 : i64}}
  %2 = "graph.matmul"(%a, %a) {transpose_b = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  // expected-error@+1 {{'graph.rms_norm' attribute 'epsilon' must be a float (e.g. 1.0e-05 : f32), got 1 : i64}}
  %3 = "graph.rms_norm"(%a, %g) {epsilon = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.gelu' attribute 'approximate' must be a string, got 3 : i64}}
  %4 = "graph.gelu"(%a) {approximate = 3 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.slice' attribute 'strides' must be an array<i64: ...>, got array<i32: 1, 1>}}
  %5 = "graph.slice"(%a) {start = array<i64: 0, 0>, limit = array<i64: 4, 8>, strides = array<i32: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.reduce_sum' attribute 'keep_dims' must be a bool (true or false), got "yes"}}
  %6 = "graph.reduce_sum"(%a) {axes = array<i64: 1>, keep_dims = "yes"} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @conv2d_optional_wrong_kind(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error@+1 {{'graph.conv2d' attribute 'strides' must be an array<i64: ...>, got 2 : i64}}
  %0 = "graph.conv2d"(%x, %w) {strides = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x3x3xf32>
  // expected-error@+1 {{'graph.conv2d' attribute 'groups' must be an integer (e.g. 1 : i64), got array<i64: 1>}}
  %1 = "graph.conv2d"(%x, %w) {groups = array<i64: 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @gelu_approximate_not_a_choice(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.gelu' attribute 'approximate' must be one of "none", "tanh", got "erf"}}
  %0 = "graph.gelu"(%a) {approximate = "erf"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{'graph.gelu' attribute 'approximate' must be one of "none", "tanh", got "TANH"}}
  %1 = "graph.gelu"(%a) {approximate = "TANH"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Required attributes: IRDL reports a missing one ...
func.func @missing_perm(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{attribute "perm" is expected but not provided}}
  %0 = "graph.transpose"(%a) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @missing_split_sizes(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{attribute "sizes" is expected but not provided}}
  %0:2 = "graph.split"(%a) {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @missing_pool_kernel(%a: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{attribute "kernel" is expected but not provided}}
  %0 = "graph.avg_pool2d"(%a) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// ... and one of the wrong base kind.
func.func @required_wrong_kind(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{expected base attribute 'builtin.integer' but got 'builtin.float'}}
  %0 = "graph.concat"(%a, %a) {axis = 1.0 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @required_wrong_kind_array(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{expected base attribute 'builtin.dense_array' but got 'builtin.string'}}
  %0 = "graph.slice"(%a) {start = "0", limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// IRDL accepts any dense array for a required array attribute; graph-verify wants i64 elements.
func.func @required_array_of_i32(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'graph.transpose' attribute 'perm' must be an array<i64: ...>, got array<i32: 1, 0>}}
  %0 = "graph.transpose"(%a) {perm = array<i32: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}
