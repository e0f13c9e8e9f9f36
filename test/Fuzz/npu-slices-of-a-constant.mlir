// Found by the differential fuzzer on the emulated NPU (once booleans ran there): a SwiGLU of a constant, whose
// kernel reads the two halves of a constant global as slices. npu-buffer-assign moved the slices to the top of
// the kernel for their staging, above the memref.get_global they view ("operand #0 does not dominate this
// use"); the global now moves first.
// RUN: graphfuse-run %s --target=npu --opt-level 0 --check | FileCheck %s
// RUN: graphfuse-run %s --target=npu --pass-pipeline='builtin.module(graph-fusion{opt-level=2})' --check | FileCheck %s
// CHECK: check result 0: {{.*}}: ok
func.func @swiglu_of_a_constant() -> tensor<4x4xf32> {
  %c = arith.constant dense<[[0.29, -0.89, 1.16, 0.34, -1.99, -1.33, -0.71, -1.12], [0.49, 0.44, 1.31, -0.78, -0.54, -1.99, 1.77, -0.57], [0.95, -1.58, -1.78, 0.70, 1.16, -1.48, -0.55, 1.43], [1.84, -1.68, 0.72, -1.64, -1.54, -1.80, -1.42, -1.20]]> : tensor<4x8xf32>
  %a = "graph.slice"(%c) {limit = array<i64: 4, 4>, start = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %b = "graph.slice"(%c) {limit = array<i64: 4, 8>, start = array<i64: 0, 4>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %s = "graph.silu"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = "graph.mul"(%b, %s) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
