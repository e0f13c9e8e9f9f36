// graphfuse-run on a module whose only function is private.
// COMMAND: graphfuse-run %s
// EXPECT: graphfuse-run: error: the module has no public function to run
func.func private @hidden(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
