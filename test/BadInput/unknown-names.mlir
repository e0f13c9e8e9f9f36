// Names nobody defined: a graph op, a dialect, an attribute alias.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:7:8: error: unregistered operation 'graph.nope' found in dialect ('graph') that does not allow unknown operations
// EXPECT: %s:14:17: error: operation being parsed with an unregistered dialect. If this is intended, please use -allow-unregistered-dialect with the MLIR tool used
// EXPECT: %s:21:39: error: undefined symbol alias id 'undefined'
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.nope"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "foo.bar"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) {x = #undefined} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
