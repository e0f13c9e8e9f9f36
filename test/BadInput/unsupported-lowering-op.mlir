// An op that is valid MLIR but neither a graph op nor one the lowering keeps (arith.addf on tensors): a
// located error naming it before lowering, not bufferization's bare "op was not bufferized".
// COMMAND: graphfuse-run %s
// EXPECT: %s:7:8: error: 'arith.addf' is not supported by the lowering: compiled functions hold graph ops, arith.constant and func.call (the graph dialect has an op for most arith and math ops)

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
