// Wrong operand and result counts (checked by the IRDL definition).
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:7:8: error: op expects exactly 2 operands, but got 1
// EXPECT: %s:14:10: error: op expects exactly 1 results, but got 2
// EXPECT: %s:21:8: error: 'graph.exp' op unexpected number of regions: expected 0 but got 1
func.func @too_few_operands(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @too_many_results(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = "graph.exp"(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @region_on_graph_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) ({ }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
