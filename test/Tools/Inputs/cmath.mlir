// Ops of the IRDL dialect cmath.irdl.mlir next to graph ops: input of mlir-opt-parity-instrumentation.test.
func.func @n(%c: !cmath.complex<f32>, %x: tensor<4xf32>) -> (f32, tensor<4xf32>) {
  %0 = "cmath.norm"(%c) : (!cmath.complex<f32>) -> f32
  %1 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : f32, tensor<4xf32>
}
