// Kernels holding a sequential loop (graph.cumsum, graph.scatter_update lower to an scf.for inside the kernel):
// when they do not fit whole, their GM buffers stay in GM and the loop streams its slices through UB; a kernel
// that also runs ops over whole GM buffers around the loop is split at the loop into kernels launched in turn.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// A scan along rows of 75000 f32: the rows (a dim every access spans whole) are cut into tiles of 32, the scan's
// iterations into chunks of 375. Each chunk's window of x moves in before its iterations, the window of the
// result out after them, in alternating slots; the running sum stays in UB across the chunks of a tile.
// CHECK-LABEL: func.func private @scan_rows_cumsum_0
// CHECK-SAME:    npu.double_buffered
// CHECK-SAME:    npu.stream_tiles = array<i64: 32, 375>
// CHECK-SAME:    npu.tiles = 400
// CHECK:         %[[SUM:.*]] = memref.alloc() {{.*}} : memref<32x1xf32, #npu.mem<"ub">>
// CHECK:         %[[XS:.*]] = memref.alloc() : memref<2x32x375xf32, #npu.mem<"ub">>
// CHECK:         %[[YS:.*]] = memref.alloc() : memref<2x32x375xf32, #npu.mem<"ub">>
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %c64 step %c32 {
// CHECK-NEXT:      linalg.fill {{.*}} outs(%[[SUM]] :
// CHECK:           scf.for %[[CHUNK:.*]] = %{{.*}} to %c75000{{.*}} step %c375 {
// CHECK:             %[[X:.*]] = memref.subview %[[XS]][%[[SLOT:.*]], 0, 0] [1, 32, 375]
// CHECK:             %[[XW:.*]] = memref.subview %arg0[%[[ROW]], %[[CHUNK]]] [32, 375]
// CHECK-NEXT:        "npu.dma"(%[[XW]], %[[X]])
// CHECK:             %[[Y:.*]] = memref.subview %[[YS]][%[[SLOT]], 0, 0] [1, 32, 375]
// CHECK:             %[[YW:.*]] = memref.subview %arg1[%[[ROW]], %[[CHUNK]]] [32, 375]
// CHECK:             scf.for %[[J:.*]] = %{{.*}} to %c375{{.*}} step %c1{{.*}} {
// CHECK:               %[[XI:.*]] = memref.subview %[[X]][0, %[[J]]] [32, 1]
// CHECK:               linalg.generic {{.*}} ins(%[[XI]] : {{.*}}) outs(%[[SUM]] :
// CHECK:               %[[YI:.*]] = memref.subview %[[Y]][0, %[[J]]] [32, 1]
// CHECK:               memref.copy %[[SUM]], %[[YI]]
// CHECK:             "npu.dma"(%[[Y]], %[[YW]])
// CHECK-NOT:     npu.dma
// CHECK:         return
func.func @scan_rows(%x: tensor<64x75000xf32>) -> tensor<64x75000xf32> {
  %0 = "graph.cumsum"(%x) {axis = 1 : i64} : (tensor<64x75000xf32>) -> tensor<64x75000xf32>
  return %0 : tensor<64x75000xf32>
}

// -----

// The same along columns: the chunks are rows of x, the tiles its columns.
// CHECK-LABEL: func.func private @scan_columns_cumsum_0
// CHECK-SAME:    npu.stream_tiles = array<i64: 32, 375>
// CHECK:         scf.for %[[COL:.*]] = %{{.*}} to %c64 step %c32 {
// CHECK:           scf.for %[[CHUNK:.*]] = %{{.*}} to %c75000{{.*}} step %c375 {
// CHECK:             memref.subview %arg0[%[[CHUNK]], %[[COL]]] [375, 32]
// CHECK:             scf.for %[[J:.*]] =
// CHECK:               memref.subview %{{.*}}[%[[J]], 0] [1, 32]
func.func @scan_columns(%x: tensor<75000x64xf32>) -> tensor<75000x64xf32> {
  %0 = "graph.cumsum"(%x) {axis = 0 : i64} : (tensor<75000x64xf32>) -> tensor<75000x64xf32>
  return %0 : tensor<75000x64xf32>
}

// -----

// Negative: a scan that fits whole is not streamed. x is staged whole before the loop, which reads the staged
// copy (not GM), and the result is stored once after it.
// CHECK-LABEL: func.func private @small_cumsum_0
// CHECK-NOT:     npu.stream_tiles
// CHECK-SAME:    npu.tiles = 1
// CHECK:         %[[X:.*]] = memref.alloc() : memref<2x6xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg0, %[[X]])
// CHECK:         scf.for
// CHECK-NEXT:      memref.subview %[[X]]
// CHECK-NOT:       npu.dma
// CHECK:         }
// CHECK:         "npu.dma"({{.*}}, %arg1)
// CHECK-NEXT:    return
func.func @small(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = "graph.cumsum"(%x) {axis = 1 : i64} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// A 32 MiB cache updated at 16 positions: the kernel copies the cache, then its loop writes each update where
// its position says. Split at the loop: part 0 copies the cache in tiles, part 1 streams the positions in
// chunks and moves each update slice GM -> UB -> GM at its position (a place only known at run time).
// CHECK-LABEL: func.func @cache(
// CHECK:         call @cache_scatter_update_0_part0(%arg0, %arg3)
// CHECK-NEXT:    call @cache_scatter_update_0_part1(%arg1, %arg2, %arg3)
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @cache_scatter_update_0_part0(
// CHECK-SAME:    graph.kernel
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK-LABEL: func.func private @cache_scatter_update_0_part1(
// CHECK-SAME:    npu.stream_tiles = array<i64: 1024, 8>
// CHECK:         scf.for %[[CHUNK:.*]] = %{{.*}} to %c16{{.*}} step %c8 {
// CHECK:           %[[POS:.*]] = memref.subview %arg0[%[[CHUNK]]] [8]
// CHECK-NEXT:      "npu.dma"(%[[POS]],
// CHECK:           scf.for %[[J:.*]] =
// CHECK:             memref.load %{{.*}}[%[[J]]]
// CHECK:             scf.if
// CHECK:               %[[NEW:.*]] = memref.subview %arg1[0, %{{.*}}, 0] [2, 1, 1024]
// CHECK-NEXT:          "npu.dma"(%[[NEW]], %[[IN:.*]]) :
// CHECK:               %[[AT:.*]] = memref.subview %arg2[0, %{{.*}}, 0] [2, 1, 1024]
// CHECK-NEXT:          memref.copy %[[IN]], %[[OUT:.*]] :
// CHECK-NEXT:          "npu.dma"(%[[OUT]], %[[AT]])
func.func @cache(%cache: tensor<2x4096x1024xf32>, %positions: tensor<16xi64>, %new: tensor<2x16x1024xf32>) -> tensor<2x4096x1024xf32> {
  %0 = "graph.scatter_update"(%cache, %positions, %new) {axis = 1 : i64} : (tensor<2x4096x1024xf32>, tensor<16xi64>, tensor<2x16x1024xf32>) -> tensor<2x4096x1024xf32>
  return %0 : tensor<2x4096x1024xf32>
}

// -----

// A scan fused with elementwise ops before and after it (one kernel, as graph-kernel fusion makes it): split
// into the exp, the scan and the add, the scan's result passed through a GM workspace the caller allocates.
// CHECK-LABEL: func.func @fused(
// CHECK:         %[[WS:.*]] = memref.alloc() : memref<64x75000xf32>
// CHECK-NEXT:    call @scan_kernel_part0(%arg0, %arg1)
// CHECK-NEXT:    call @scan_kernel_part1(%arg1, %[[WS]])
// CHECK-NEXT:    call @scan_kernel_part2(%arg0, %arg1, %[[WS]])
// CHECK-LABEL: func.func private @scan_kernel_part0(
// CHECK-SAME:    npu.tile_rows = 150
// CHECK-LABEL: func.func private @scan_kernel_part1(
// CHECK-SAME:    npu.stream_tiles = array<i64: 32, 375>
// CHECK-LABEL: func.func private @scan_kernel_part2(
// CHECK-SAME:    npu.tile_rows = 125
func.func @fused(%x: tensor<64x75000xf32>) -> tensor<64x75000xf32> {
  %0 = call @scan_kernel(%x) : (tensor<64x75000xf32>) -> tensor<64x75000xf32>
  return %0 : tensor<64x75000xf32>
}
func.func private @scan_kernel(%x: tensor<64x75000xf32>) -> tensor<64x75000xf32> attributes {graph.fusion_kind = "ub_reduce_elemwise", graph.kernel, graph.kernel_ops = ["graph.exp", "graph.cumsum", "graph.add"]} {
  %e = "graph.exp"(%x) : (tensor<64x75000xf32>) -> tensor<64x75000xf32>
  %0 = "graph.cumsum"(%e) {axis = 1 : i64} : (tensor<64x75000xf32>) -> tensor<64x75000xf32>
  %1 = "graph.add"(%0, %x) : (tensor<64x75000xf32>, tensor<64x75000xf32>) -> tensor<64x75000xf32>
  return %1 : tensor<64x75000xf32>
}
