// Types the graph dialect does not take.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:9:8: error: 'graph.exp' operand #0 has unsupported element type f64 (expected one of bf16, f16, f32, i1, i32, i64, i8)
// EXPECT: %s:16:8: error: expected base type 'builtin.tensor' but got 'builtin.unranked_tensor'
// EXPECT: %s:23:8: error: expected base type 'builtin.tensor' but got 'builtin.f32'
// EXPECT: %s:30:8: error: 'graph.abs' operand #0 has unsupported element type index (expected one of bf16, f16, f32, i1, i32, i64, i8)
// EXPECT: %s:36:43: error: invalid dimension
func.func @f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "graph.exp"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  %0 = "graph.exp"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @scalar(%a: f32) -> f32 {
  %0 = "graph.exp"(%a) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @index(%a: tensor<4xindex>) -> tensor<4xindex> {
  %0 = "graph.abs"(%a) : (tensor<4xindex>) -> tensor<4xindex>
  return %0 : tensor<4xindex>
}

// -----

func.func @dimension_too_large(%a: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {
  return %a : tensor<99999999999999999999xf32>
}
