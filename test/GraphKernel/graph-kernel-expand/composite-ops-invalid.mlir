// graph-verify's rules for the composite ops add_n, tile and squared_difference.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @add_n_mixed_shapes(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'graph.add_n' operand #1 tensor<3xf32> must have the type of operand #0 tensor<2x3xf32> (add_n does not broadcast)}}
  %0 = "graph.add_n"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @add_n_bool(%a: tensor<3xi1>) {
  // expected-error@+1 {{'graph.add_n' operand first tensor<3xi1> must have a numeric element type (not i1)}}
  %0 = "graph.add_n"(%a, %a) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return
}

// -----

func.func @tile_wrong_length(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'graph.tile' attribute 'multiples' [2] must have one value per dimension of tensor<2x3xf32> (2)}}
  %0 = "graph.tile"(%a) {multiples = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @tile_negative(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'graph.tile' attribute 'multiples' must contain only non-negative values, got [2, -1]}}
  %0 = "graph.tile"(%a) {multiples = array<i64: 2, -1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @tile_missing_multiples(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'graph.tile' op attribute "multiples" is expected but not provided}}
  %0 = "graph.tile"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @tile_wrong_result(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'graph.tile' result #0 has type tensor<4x3xf32>, but its operands and attributes give tensor<4x6xf32>}}
  %0 = "graph.tile"(%a) {multiples = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @squared_difference_dtypes(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error@+1 {{'graph.squared_difference' operands tensor<3xf32>, tensor<3xf16> must have the same element type}}
  %0 = "graph.squared_difference"(%a, %b) : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}
