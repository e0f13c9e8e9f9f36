// When no plan fits a kernel as it is, its buffers are simplified and the plans tried again: a local buffer
// used only through one reshape is allocated in the reshaped shape, and a local buffer copied whole to a
// result at the end is the result. Target: a 16 KiB UB.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign{target=%S/Inputs/small-ub.json})' | FileCheck %s

// A row sum kept as [256, 8, 1]: lowered into a [256, 8] local seen through an expand_shape, then copied to
// the result, which no tiling could follow. Simplified, the sum accumulates in the result's tile itself.
// CHECK-LABEL: func.func private @row_sums_reduce_sum_0
// CHECK-SAME:    npu.tile_rows = 8
// CHECK-NOT:     memref<256x8xf32
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %c256 step %c8 {
// CHECK:           %[[SUM:.*]] = memref.subview %{{.*}} [1, 8, 8, 1]
// CHECK:           linalg.fill {{.*}} outs(%[[SUM]] :
// CHECK:           linalg.generic {{.*}} outs(%[[SUM]] :
// CHECK:           %[[DST:.*]] = memref.subview %arg1[%[[ROW]], 0, 0] [8, 8, 1]
// CHECK-NEXT:      "npu.dma"(%[[SUM]], %[[DST]])
// CHECK-NOT:     memref.copy
func.func @row_sums(%x: tensor<256x8x16xf32>) -> tensor<256x8x1xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<256x8x16xf32>) -> tensor<256x8x1xf32>
  return %0 : tensor<256x8x1xf32>
}

// -----

// Negative: a row sum that fits whole keeps its buffers as lowered.
// CHECK-LABEL: func.func private @small_row_sums_reduce_sum_0
// CHECK:         memref.alloc() {{.*}} : memref<4x8xf32, #npu.mem<"ub">>
// CHECK:         memref.expand_shape
// CHECK:         memref.copy
func.func @small_row_sums(%x: tensor<4x8x16xf32>) -> tensor<4x8x1xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<4x8x16xf32>) -> tensor<4x8x1xf32>
  return %0 : tensor<4x8x1xf32>
}

// -----

// A fused QKV projection: the [64, 768] accumulator (192 KiB, over L0C) is only copied out in three column
// slices. Simplified, it is one matmul per slice, each reading its columns of W and writing its result; the
// three then tile along their columns together, x loaded once.
// CHECK-LABEL: func.func private @qkv_kernel
// CHECK-NOT:     memref<64x768xf32
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c256 step %c64 {
// CHECK-COUNT-3:   "npu.dma"({{.*}}) : (memref<256x64xf32, strided<[768, 1], offset: ?>>
// CHECK:           linalg.fill
// CHECK-NEXT:      linalg.matmul {{.*}} outs(%{{.*}} : memref<64x64xf32, {{.*}}#npu.mem<"l0c">>)
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.matmul
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.matmul
// CHECK-NOT:     memref.copy
func.func @qkv(%x: tensor<64x256xf32>, %w: tensor<256x768xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>) {
  %0:3 = call @qkv_kernel(%x, %w) : (tensor<64x256xf32>, tensor<256x768xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>)
  return %0#0, %0#1, %0#2 : tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>
}
func.func private @qkv_kernel(%x: tensor<64x256xf32>, %w: tensor<256x768xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>) attributes {graph.fusion_kind = "matmul_split", graph.kernel, graph.kernel_ops = ["graph.matmul", "graph.split"]} {
  %0 = "graph.matmul"(%x, %w) : (tensor<64x256xf32>, tensor<256x768xf32>) -> tensor<64x768xf32>
  %1:3 = "graph.split"(%0) {axis = -1 : i64, sizes = array<i64: 256, 256, 256>} : (tensor<64x768xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>)
  return %1#0, %1#1, %1#2 : tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>
}

// -----

// Two sums fused horizontally: lowering starts both from one zero-filled result (fill %a; copy %a -> %b).
// Simplified, each is filled; the two sums then share no buffer and are split into two kernels, each summing
// its input in blocks.
// CHECK-LABEL: func.func @sums(
// CHECK-NEXT:    call @sums_square_sum_all_0_part0(%arg1, %arg3)
// CHECK-NEXT:    call @sums_square_sum_all_0_part1(%arg0, %arg2)
// CHECK-LABEL: func.func private @sums_square_sum_all_0_part0(
// CHECK-SAME:    npu.block_tiles
// CHECK:         scf.for
// CHECK-LABEL: func.func private @sums_square_sum_all_0_part1(
// CHECK-SAME:    npu.block_tiles
// CHECK:         scf.for
func.func @sums(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "graph.square_sum_all"(%x, %y) : (tensor<256x64xf32>, tensor<256x64xf32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

// A count kept as [1]: lowered into a rank-0 local seen as [1] through an expand_shape. Simplified, the local
// is a [1] buffer whose generic indexes it at 0, and the count accumulates block by block.
// CHECK-LABEL: func.func private @count_equal_count_0
// CHECK-SAME:    npu.block_tiles
// CHECK-NOT:     memref.expand_shape
// CHECK:         linalg.fill {{.*}} outs(%[[COUNT:.*]] : memref<1xi32, #npu.mem<"ub">>)
// CHECK:         scf.for
// CHECK:           linalg.generic {indexing_maps = [#map, #map, #[[ZERO:map[0-9]*]]], {{.*}} outs(%[[COUNT]] :
// CHECK:         "npu.dma"(%[[COUNT]], %arg2)
func.func @count(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>) -> tensor<1xi32> {
  %0 = "graph.equal_count"(%x, %y) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1xi32>
  return %0 : tensor<1xi32>
}

// -----

// A transpose of heads into a [4, 16, 4, 16] local, collapsed and copied into the [64, 64] result: merged
// dims no tile follows. Simplified, the transpose writes the result through the inverse reshape, and the
// kernel's result argument takes that shape (the caller reshapes what it passes): row tiles of the
// transpose, written straight to GM.
// CHECK-LABEL: func.func @heads(
// CHECK:         %[[OUT:.*]] = memref.expand_shape %arg1 {{\[\[}}0, 1], [2, 3]] output_shape [4, 16, 4, 16] : memref<64x64xf32> into memref<4x16x4x16xf32>
// CHECK-NEXT:    call @heads_kernel(%arg0, %[[OUT]]) : (memref<4x4x16x16xf32>, memref<4x16x4x16xf32>) -> ()
// CHECK-LABEL: func.func private @heads_kernel(%arg0: memref<4x4x16x16xf32>, %arg1: memref<4x16x4x16xf32>)
// CHECK-SAME:    npu.tiles
// CHECK-NOT:     memref.collapse_shape
// CHECK:         scf.for
// CHECK:           linalg.transpose
// CHECK-NOT:     memref.copy
func.func @heads(%x: tensor<4x4x16x16xf32>) -> tensor<64x64xf32> {
  %0 = call @heads_kernel(%x) : (tensor<4x4x16x16xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
func.func private @heads_kernel(%x: tensor<4x4x16x16xf32>) -> tensor<64x64xf32> attributes {graph.fusion_kind = "ub_auto", graph.kernel, graph.kernel_ops = ["graph.transpose", "graph.reshape"]} {
  %t = "graph.transpose"(%x) {perm = array<i64: 0, 2, 1, 3>} : (tensor<4x4x16x16xf32>) -> tensor<4x16x4x16xf32>
  %r = "graph.reshape"(%t) : (tensor<4x16x4x16xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
