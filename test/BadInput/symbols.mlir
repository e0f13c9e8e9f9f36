// Symbol problems: a function defined twice, a call to a function that does not exist.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:9:1: error: redefinition of symbol named 'f'
// EXPECT: %s:16:8: error: 'func.call' op 'g' does not reference a valid function
// EXPECT: %s:23:8: error: block with no terminator, has %0 = "graph.exp"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
func.func @f() {
  return
}
func.func @f() {
  return
}

// -----

func.func @calls_missing(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @no_terminator(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
}
