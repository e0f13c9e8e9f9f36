// Found by fuzzing: a slice with a dynamic result dimension crashed the lowering (IndexError in
// lower_slice: an internal error). It should be refused like any op the strict lowering cannot lower.
// COMMAND: graphfuse-run %s
// EXPECT-RE: %s:6:8: error: graph-to-linalg: cannot lower 'graph\.slice' with operands \(tensor<\?x8xf32>\)
func.func @slice(%arg0: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %0 = "graph.slice"(%arg0) {limit = array<i64: 4, 8>, start = array<i64: 0, 0>, strides = array<i64: 1, 2>} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
