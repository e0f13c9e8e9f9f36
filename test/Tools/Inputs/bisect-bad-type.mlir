// A graph the verifier rejects: graphfuse-bisect reports it at its line and column.
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return %x : tensor<4x8xf32>
}
