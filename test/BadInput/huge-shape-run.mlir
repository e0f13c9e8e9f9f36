// 4 TB per tensor: a valid graph (graphfuse-opt transforms it), but graphfuse-run cannot allocate its
// random inputs and results; it says so before compiling anything.
// COMMAND: graphfuse-run %s
// EXPECT-RE: graphfuse-run: error: @f: its arguments and results need 7\.3 TiB of memory \(the largest, argument 0 tensor<1000000x1000000xf32>, 3\.6 TiB\); this machine has .*
func.func @f(%a: tensor<1000000x1000000xf32>) -> tensor<1000000x1000000xf32> {
  %0 = "graph.exp"(%a) : (tensor<1000000x1000000xf32>) -> tensor<1000000x1000000xf32>
  return %0 : tensor<1000000x1000000xf32>
}
