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
