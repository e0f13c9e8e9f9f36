// graph-verify's rules for the bitwise ops: integers and booleans only, one element type.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics %s

func.func @bitwise_of_floats(%a: tensor<4xf32>) {
  // expected-error@+1 {{'graph.bitwise_not' operand tensor<4xf32> must have}}
  %0 = "graph.bitwise_not"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @mixed_integer_types(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error@+1 {{'graph.bitwise_and' operands tensor<4xi32>, tensor<4xi64> must have the same element type}}
  %0 = "graph.bitwise_and"(%a, %b) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @not_broadcastable(%a: tensor<3x4xi8>, %b: tensor<3xi8>) {
  // expected-error@+1 {{'graph.bitwise_or' operands tensor<3x4xi8> and tensor<3xi8> are not broadcast-compatible}}
  %0 = "graph.bitwise_or"(%a, %b) : (tensor<3x4xi8>, tensor<3xi8>) -> tensor<3x4xi8>
  return
}
