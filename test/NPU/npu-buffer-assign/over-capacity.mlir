// A kernel that does not fit even at its smallest tile is a located error stating the sizes.
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' 2>&1 | FileCheck %s

// A softmax over rows of 75000 f32 (300000 bytes): a row cannot be cut (the reduction reads all of it), and one
// row in and out, two slots each, is over UB.
// CHECK: over-capacity.mlir:[[@LINE+2]]:8: error: kernel 'wide_rows_softmax_0' needs {{[0-9]+}} bytes of UB for its smallest tile (1x75000xf32 in x2, 1x75000xf32 out x2{{.*}}) but the target '910b' has 196608
func.func @wide_rows(%x: tensor<4x75000xf32>) -> tensor<4x75000xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x75000xf32>) -> tensor<4x75000xf32>
  return %0 : tensor<4x75000xf32>
}

// -----

// A kernel that cannot be tiled (a reduction of everything to one value) must fit whole.
// CHECK: over-capacity.mlir:[[@LINE+2]]:8: error: kernel 'total_reduce_sum_0' needs 400032 bytes of UB for its only tile (it cannot be tiled) (1000x100xf32 in, f32 out) but the target '910b' has 196608
func.func @total(%x: tensor<1000x100xf32>) -> tensor<f32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0, 1>, keep_dims = false} : (tensor<1000x100xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
