// Result types that contradict what the operands give.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:7:8: error: 'graph.exp' result #0 has type tensor<4xf16>, but its operands and attributes give tensor<4xf32>
// EXPECT: %s:14:8: error: 'graph.exp' result #0 has type tensor<5xf32>, but its operands and attributes give tensor<4xf32>
// EXPECT: %s:21:3: error: 'func.return' op has 0 operands, but enclosing function (@return_mismatch) returns 1
func.func @wrong_dtype(%a: tensor<4xf32>) -> tensor<4xf16> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @wrong_shape(%a: tensor<4xf32>) -> tensor<5xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @return_mismatch(%a: tensor<4xf32>) -> tensor<4xf32> {
  return
}
