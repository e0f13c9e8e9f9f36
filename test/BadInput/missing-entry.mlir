// graphfuse-run with an entry function the module does not have.
// COMMAND: graphfuse-run %s --entry=nope
// EXPECT: graphfuse-run: error: no function named 'nope' in the module (functions: forward)
func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
