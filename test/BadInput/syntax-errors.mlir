// Syntax errors, one per chunk: an unclosed type, an undefined value, a custom-form graph op, a stray brace.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:9:29: error: expected '>' in tensor type
// EXPECT: %s:15:20: error: use of undeclared SSA value name
// EXPECT: %s:22:8: error: 'graph.exp' must be written in MLIR's generic form, e.g. %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
// EXPECT: %s:30:2: error: expected operation name in quotes
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.abs"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.exp %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
}
