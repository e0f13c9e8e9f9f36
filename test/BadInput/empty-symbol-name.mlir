// A function named by an empty symbol: MLIR prints it as @<<INVALID EMPTY SYMBOL>>, which does not parse again.
// COMMAND: graphfuse-opt %s
// EXPECT: %s:4:1: error: 'func.func' has an empty symbol name
func.func @""(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
