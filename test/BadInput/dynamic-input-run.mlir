// graphfuse-run makes random inputs of the argument types: one of dynamic size is an error at the argument,
// saying what to do (the graph itself compiles: its exp result, of dynamic size, is allocated at run time).
// COMMAND: graphfuse-run %s
// EXPECT: %s:5:14: error: argument 0 of @f (tensor<?x8xf32>) has a dynamic shape: random inputs need static ones; pass --inputs
func.func @f(%a: tensor<?x8xf32>, %b: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // exp's result is an intermediate whose first dimension is known only at run time
  %0 = "graph.exp"(%a) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.matmul"(%0, %b) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
