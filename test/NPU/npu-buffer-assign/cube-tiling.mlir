// A matmul kernel whose operands do not fit L1 is tiled over M, N and K: the accumulator tile stays in L0C over
// the K loop, the operand tiles move GM -> L1 inside it (two slots), the epilogue and the store run per tile.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// [128, 2048] x [2048, 512]: neither operand fits L1 whole (1 MiB, 4 MiB). A [128, 256] accumulator tile fills
// L0C; L0B (64 KiB) bounds the weight's tile to 64 rows of K. A is read twice (once per column of tiles), B once.
// CHECK-LABEL: func.func private @projection_matmul_0
// CHECK-SAME:    npu.cube_tile = array<i64: 128, 256, 64>
// CHECK-SAME:    npu.l0c_bytes = 131072 : i64, npu.l1_bytes = 196608 : i64
// CHECK:         %[[C:.*]] = memref.alloc() : memref<128x256xf32, #npu.mem<"l0c">>
// CHECK:         memref.alloc() : memref<2x128x64xf32, #npu.mem<"l1">>
// CHECK:         memref.alloc() : memref<2x64x256xf32, #npu.mem<"l1">>
// CHECK:         scf.for %[[M:.*]] = %{{.*}} to %c128 step %{{.*}}
// CHECK-NEXT:      scf.for %[[N:.*]] = %{{.*}} to %c512 step %{{.*}}
// CHECK-NEXT:        linalg.fill {{.*}} outs(%[[C]] : memref<128x256xf32, #npu.mem<"l0c">>)
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %c2048 step %{{.*}}
// CHECK:               npu.dma
// CHECK:               npu.dma
// CHECK:               linalg.matmul
// CHECK:             "npu.dma"(%[[C]], %{{.*}}) : (memref<128x256xf32, #npu.mem<"l0c">>, memref<128x256xf32, strided<[512, 1], offset: ?>>)
func.func @projection(%x: tensor<128x2048xf32>, %w: tensor<2048x512xf32>) -> tensor<128x512xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<128x2048xf32>, tensor<2048x512xf32>) -> tensor<128x512xf32>
  return %0 : tensor<128x512xf32>
}

// -----

// [16, 256] x [256, 1024]: the activation fits L1 whole, so the 1 MiB weight is tiled by its columns (the
// loop of the result's second dim), 128 at a time: every operand is read once, no cube tiling needed.
// CHECK-LABEL: func.func private @small_matmul_0
// CHECK-NOT:     npu.cube_tile
// CHECK-SAME:    npu.tile_rows = 128 : i64, npu.tiles = 8 : i64
// CHECK:         memref.alloc() : memref<16x256xf32, #npu.mem<"l1">>
// CHECK:         memref.alloc() : memref<2x256x128xf32, #npu.mem<"l1">>
func.func @small(%x: tensor<16x256xf32>, %w: tensor<256x1024xf32>) -> tensor<16x1024xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<16x256xf32>, tensor<256x1024xf32>) -> tensor<16x1024xf32>
  return %0 : tensor<16x1024xf32>
}

// -----

// A split whose four pieces (64 KiB each, in and out) do not fit UB whole: each piece, a slice of the input
// read as it is, is a GM input of its own, and the rows are tiled as in any kernel: 2 of 16 at a time, each
// slice tile and each output tile in two slots (8 x 2 x 8 KiB).
// CHECK-LABEL: func.func private @pieces_split_0
// CHECK-SAME:    npu.tile_rows = 2 : i64, npu.tiles = 8 : i64, npu.ub_bytes = 131072 : i64
// CHECK-COUNT-8: memref.alloc() : memref<2x1x2x1024xf32, #npu.mem<"ub">>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c16 step %c2 {
// CHECK:           "npu.dma"(%{{.*}}, %{{.*}}) : (memref<1x2x1024xf32, strided<[65536, 4096, 1], offset: ?>>, memref<1x2x1024xf32, strided<[2048, 1024, 1], offset: ?>, #npu.mem<"ub">>)
func.func @pieces(%x: tensor<1x16x4096xf32>) -> (tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>) {
  %0:4 = "graph.split"(%x) {axis = 2 : i64, sizes = array<i64: 1024, 1024, 1024, 1024>} : (tensor<1x16x4096xf32>) -> (tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>
}

// -----

// A reshape kernel that merges the rows into one dim (no loop of the result follows a whole dim of the input)
// over UB: the copy is staged in chunks of its flat element range, two slots of 16384 elements.
// CHECK-LABEL: func.func private @flatten_reshape_0
// CHECK-SAME:    npu.tiles = 4 : i64, npu.ub_bytes = 131072 : i64
// CHECK:         memref.alloc() : memref<2x16384xf32, #npu.mem<"ub">>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c65536 step %c16384 {
// CHECK:           "npu.dma"(%{{.*}}, %{{.*}}) : (memref<16384xf32, strided<[1], offset: ?>>, memref<16384xf32, strided<[1], offset: ?>, #npu.mem<"ub">>)
func.func @flatten(%x: tensor<64x1024xf32>) -> tensor<65536xf32> {
  %0 = "graph.reshape"(%x) : (tensor<64x1024xf32>) -> tensor<65536xf32>
  return %0 : tensor<65536xf32>
}

// -----

// A reshape that keeps the rows a dim of their own ([64, 1024] -> [1, 64, 1024]) is row-tiled through the view:
// the tile of the input is reshaped as the input was.
// CHECK-LABEL: func.func private @lift_reshape_0
// CHECK-SAME:    npu.tile_rows = 8 : i64, npu.tiles = 8 : i64, npu.ub_bytes = 131072 : i64
// CHECK:         memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 8, 1024] : memref<8x1024xf32, strided<[1024, 1], offset: ?>, #npu.mem<"ub">> into memref<1x8x1024xf32, strided<[8192, 1024, 1], offset: ?>, #npu.mem<"ub">>
func.func @lift(%x: tensor<64x1024xf32>) -> tensor<1x64x1024xf32> {
  %0 = "graph.reshape"(%x) : (tensor<64x1024xf32>) -> tensor<1x64x1024xf32>
  return %0 : tensor<1x64x1024xf32>
}

// -----

// A concat of two [1, 8, 1024, 32] halves (a rotary embedding's, at 1024 tokens): one head of a half, two slots
// of 128 KiB, is over UB, so each copy takes one head at a time and chunks of its rows (256 of 1024).
// CHECK-LABEL: func.func private @halves_concat_0
// CHECK-SAME:    npu.tiles = 64 : i64, npu.ub_bytes = 131072 : i64
// CHECK:         %[[STAGE:.*]] = memref.alloc() : memref<2x1x1x256x32xf32, #npu.mem<"ub">>
// CHECK:         scf.for %[[HEAD:.*]] = %{{.*}} to %c8 step %c1 {
// CHECK:           scf.for %[[ROW:.*]] = %{{.*}} to %c1024 step %c256 {
// CHECK:             %[[SRC:.*]] = memref.subview %arg0[0, %[[HEAD]], %[[ROW]], 0] [1, 1, 256, 32]
// CHECK-NEXT:        "npu.dma"(%[[SRC]], %[[SLOT:.*]]) :
// CHECK:             memref.subview %{{.*}}[0, %[[HEAD]], %[[ROW]], 0] [1, 1, 256, 32]
// CHECK-NEXT:        "npu.dma"(%[[SLOT]], %{{.*}}) :
func.func @halves(%a: tensor<1x8x1024x32xf32>, %b: tensor<1x8x1024x32xf32>) -> tensor<1x8x1024x64xf32> {
  %0 = "graph.concat"(%a, %b) {axis = 3 : i64} : (tensor<1x8x1024x32xf32>, tensor<1x8x1024x32xf32>) -> tensor<1x8x1024x64xf32>
  return %0 : tensor<1x8x1024x64xf32>
}
