// Recursion (a cycle in the call graph) is rejected by graph-verify, located at the call that closes the
// cycle and naming the functions: the reference interpreter would recurse until Python's limit and the
// compiler, which inlines calls, failed with a multi-line bufferization error.
// COMMAND: graphfuse-opt --split-input-file %s
// EXPECT: %s:9:8: error: recursive call: @f calls itself; graphfuse does not support recursion (a cycle in the call graph)
// EXPECT: %s:21:8: error: recursive calls: @f -> @g -> @f; graphfuse does not support recursion (a cycle in the call graph)

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
