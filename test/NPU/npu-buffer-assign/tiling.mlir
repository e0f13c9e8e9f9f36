// Tiling to capacity: a kernel whose buffers exceed UB is tiled over its rows, the largest tile that fits
// (double-buffered transfers count twice), with GM -> UB copies of each tile in and UB -> GM copies out.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s --check-prefix=DOUBLE
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign{double-buffer=false})' | FileCheck %s --check-prefix=SINGLE

// 1024x256xf32 in and out (1 MiB each): with two slots per transfer, 2 x 2 x 32 rows x 1 KiB = 128 KiB fit
// the 192 KiB UB (64 rows would need 256 KiB); with one slot, 64 rows (128 KiB) fit.
// DOUBLE-LABEL: func.func private @exp_rows_exp_0
// DOUBLE-SAME:      npu.double_buffered, {{.*}}npu.tile_rows = 32 : i64, npu.tiles = 32 : i64, npu.ub_bytes = 131072 : i64
// DOUBLE:         %[[IN:.*]] = memref.alloc() : memref<2x32x256xf32, #npu.mem<"ub">>
// DOUBLE:         %[[OUT:.*]] = memref.alloc() : memref<2x32x256xf32, #npu.mem<"ub">>
// DOUBLE:         scf.for %[[ROW:.*]] = %c0 to %c1024 step %c32 {
// DOUBLE:           %[[SLOT:.*]] = arith.remui
// DOUBLE:           %[[IN_SLOT:.*]] = memref.subview %[[IN]][%[[SLOT]], 0, 0] [1, 32, 256] [1, 1, 1]
// DOUBLE:           %[[SRC:.*]] = memref.subview %arg0[%[[ROW]], 0] [32, 256] [1, 1] : memref<1024x256xf32> to memref<32x256xf32, strided<[256, 1], offset: ?>>
// DOUBLE-NEXT:      "npu.dma"(%[[SRC]], %[[IN_SLOT]])
// DOUBLE:           %[[OUT_SLOT:.*]] = memref.subview %[[OUT]][%[[SLOT]], 0, 0] [1, 32, 256] [1, 1, 1]
// DOUBLE:           linalg.generic {{.*}} ins(%[[IN_SLOT]] : {{.*}}) outs(%[[OUT_SLOT]] : {{.*}})
// DOUBLE:           %[[DST:.*]] = memref.subview %arg1[%[[ROW]], 0] [32, 256] [1, 1]
// DOUBLE-NEXT:      "npu.dma"(%[[OUT_SLOT]], %[[DST]])
// DOUBLE-NEXT:    }
// SINGLE-LABEL: func.func private @exp_rows_exp_0
// SINGLE-NOT:       npu.double_buffered
// SINGLE-SAME:      npu.tile_rows = 64 : i64, npu.tiles = 16 : i64, npu.ub_bytes = 131072 : i64
// SINGLE:         memref.alloc() : memref<64x256xf32, #npu.mem<"ub">>
// SINGLE:         scf.for %{{.*}} = %c0 to %c1024 step %c64 {
func.func @exp_rows(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %0 = "graph.exp"(%x) : (tensor<1024x256xf32>) -> tensor<1024x256xf32>
  return %0 : tensor<1024x256xf32>
}

// -----

// Row reductions stay whole (one row's 256 columns per reduction), rows are tiled; gamma does not depend on
// the rows: it is loaded once, before the loop.
// DOUBLE-LABEL: func.func private @norm_rows_rms_norm_0
// DOUBLE-SAME:      npu.tiles = 32 : i64
// DOUBLE:         %[[GAMMA:.*]] = memref.alloc() : memref<256xf32, #npu.mem<"ub">>
// DOUBLE-NEXT:    "npu.dma"(%{{.*}}, %[[GAMMA]]) : (memref<256xf32>, memref<256xf32, #npu.mem<"ub">>) -> ()
// DOUBLE:         scf.for
// DOUBLE-NOT:       "npu.dma"({{.*}}, %[[GAMMA]])
// DOUBLE:           linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @norm_rows(%x: tensor<1024x256xf32>, %gamma: tensor<256xf32>) -> tensor<1024x256xf32> {
  %0 = "graph.rms_norm"(%x, %gamma) {epsilon = 1.0e-6 : f32} : (tensor<1024x256xf32>, tensor<256xf32>) -> tensor<1024x256xf32>
  return %0 : tensor<1024x256xf32>
}

// -----

// Negative case: a reduction over the rows (axis 0) cannot be tiled by rows; it fits whole, so one tile.
// DOUBLE-LABEL: func.func private @column_sum_reduce_sum_0
// DOUBLE-SAME:      npu.tiles = 1 : i64
// DOUBLE-NOT:     scf.for
func.func @column_sum(%x: tensor<64x128xf32>) -> tensor<128xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0>, keep_dims = false} : (tensor<64x128xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

// A vector times a [4096, 11008] matrix (linalg.vecmat, 180 MB of weights): tiled along its outputs, the
// vector loaded once, 4 columns of the matrix (two slots of 64 KiB) a tile.
// DOUBLE-LABEL: func.func private @vector_matrix_matmul_0
// DOUBLE-SAME:      npu.tile_rows = 4 : i64, npu.tiles = 2752 : i64
// DOUBLE:         %[[VEC:.*]] = memref.alloc() : memref<4096xf32, #npu.mem<"ub">>
// DOUBLE-NEXT:    "npu.dma"(%arg0, %[[VEC]])
// DOUBLE:         scf.for %[[COL:.*]] = %{{.*}} to %c11008 step %c4 {
// DOUBLE:           memref.subview %arg1[0, %[[COL]]] [4096, 4]
// DOUBLE:           linalg.vecmat ins(%[[VEC]], %{{.*}} : memref<4096xf32, #npu.mem<"ub">>, memref<4096x4xf32,
func.func @vector_matrix(%x: tensor<4096xf32>, %w: tensor<4096x11008xf32>) -> tensor<11008xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4096xf32>, tensor<4096x11008xf32>) -> tensor<11008xf32>
  return %0 : tensor<11008xf32>
}
