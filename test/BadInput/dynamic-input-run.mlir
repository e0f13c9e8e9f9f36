// The CPU runtime refuses a dynamic-size intermediate after the lowering, in linalg text it prints and parses
// again: the error had no location, and located in that text it would have named a line of it ("-:25:10").
// COMMAND: graphfuse-run %s
// EXPECT: %s:7:8: error: intermediate buffer memref<?x8xf32> has a dynamic size; the CPU runtime needs static shapes
func.func @f(%a: tensor<?x8xf32>, %b: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // exp's result is an intermediate whose first dimension is known only at run time
  %0 = "graph.exp"(%a) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.matmul"(%0, %b) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
