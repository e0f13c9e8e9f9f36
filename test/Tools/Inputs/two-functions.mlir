// Two top-level functions, in two chunks: input of mlir-opt-parity.test.
func.func @a() { return }
// -----
func.func @b() { return }
