// A kernel whose smallest tile fits nowhere is a located error stating the sizes of that tile, and of the
// smallest tiles of the other tilings tried. On the 910b every kernel here runs (reduction-blocks.mlir); on a
// target with a 64-byte UB, where two 32-byte-aligned buffers fill it, none does.
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign{target=%S/Inputs/tiny-ub.json})' 2>&1 | FileCheck %s

// A softmax over rows of 75000 f32: one row cannot be a tile (its reduction reads all of it), and blocks of
// the row (a block of one element, with the row's max and sum) are over the 64 bytes too.
// CHECK: over-capacity.mlir:[[@LINE+2]]:8: error: kernel 'wide_rows_softmax_0' needs 1200032 bytes of UB for its smallest tile (1x75000xf32 in x2, 1x75000xf32 out x2, 1xf32 local) but the target 'tiny-ub' has 64; in blocks of a reduced dim, no tiling of the blocks fits: the smallest tiles need UB 160 bytes
func.func @wide_rows(%x: tensor<4x75000xf32>) -> tensor<4x75000xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x75000xf32>) -> tensor<4x75000xf32>
  return %0 : tensor<4x75000xf32>
}

// -----

// A reduction of everything has no loop to tile; its blocks of rows (one row of 100 and the sum) do not fit.
// CHECK: over-capacity.mlir:[[@LINE+2]]:8: error: kernel 'total_reduce_sum_0' needs 400032 bytes of UB for its only tile (it cannot be tiled) (1000x100xf32 in, f32 out) but the target 'tiny-ub' has 64; in blocks of a reduced dim, no tiling of the blocks fits: the smallest tiles need UB 864 bytes
func.func @total(%x: tensor<1000x100xf32>) -> tensor<f32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0, 1>, keep_dims = false} : (tensor<1000x100xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
