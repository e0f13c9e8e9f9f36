// Tile nests: a vector kernel no single loop's tile fits is tiled along two loops at once (heads x query rows
// of attention), the nest of least GM traffic; a buffer moves in the body of the innermost loop it follows.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// 8 heads x 256 tokens: along the heads alone the [256, 256] mask (256 KiB) is over UB; along the query rows
// alone the keys and values (512 KiB each, every head) are over L1. Heads outer (2 at a time: the keys and
// values of 2 heads load once per head pair), query rows inner (64 at a time, fractal-aligned: they are the
// M of the scores' matmul): the mask is read once per head pair (4 x 256 KiB) where rows-outer would read
// the keys and values once per row tile (4 x 1 MiB).
// CHECK-LABEL: func.func private @attention_flash_attention_0
// CHECK-SAME:    npu.loop_tiles = array<i64: 2, 64>, npu.tile_rows = 2 : i64, npu.tiles = 16 : i64
// CHECK-DAG:     %[[Q:.*]] = memref.alloc() : memref<1x2x64x64xf32, #npu.mem<"l1">>
// CHECK-DAG:     %[[K:.*]] = memref.alloc() : memref<1x2x256x64xf32, #npu.mem<"l1">>
// CHECK-DAG:     %[[MASK:.*]] = memref.alloc() : memref<1x1x64x256xf32, #npu.mem<"ub">>
// CHECK-DAG:     %[[OUT:.*]] = memref.alloc() : memref<1x2x64x64xf32, #npu.mem<"l0c">>
// CHECK:         scf.for %[[HEAD:.*]] = %{{.*}} to %c8 step %c2 {
// CHECK:           %[[KSRC:.*]] = memref.subview %arg1[0, %[[HEAD]], 0, 0] [1, 2, 256, 64]
// CHECK-NEXT:      "npu.dma"(%[[KSRC]], %[[K]])
// CHECK:           scf.for %[[ROW:.*]] = %{{.*}} to %c256 step %c64 {
// CHECK:             %[[QSRC:.*]] = memref.subview %arg0[0, %[[HEAD]], %[[ROW]], 0] [1, 2, 64, 64]
// CHECK-NEXT:        "npu.dma"(%[[QSRC]], %[[Q]])
// CHECK:             %[[MSRC:.*]] = memref.subview %arg3[0, 0, %[[ROW]], 0] [1, 1, 64, 256]
// CHECK-NEXT:        "npu.dma"(%[[MSRC]], %[[MASK]])
// CHECK:             linalg.contract
// CHECK:             linalg.contract
// CHECK:             %[[DST:.*]] = memref.subview %arg4[0, %[[HEAD]], %[[ROW]], 0] [1, 2, 64, 64]
// CHECK-NEXT:        "npu.dma"(%[[OUT]], %[[DST]])
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @attention(%q: tensor<1x8x256x64xf32>, %k: tensor<1x8x256x64xf32>, %v: tensor<1x8x256x64xf32>, %mask: tensor<1x1x256x256xf32>) -> tensor<1x8x256x64xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {scale = 1.250000e-01 : f32} : (tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>, tensor<1x1x256x256xf32>) -> tensor<1x8x256x64xf32>
  return %0 : tensor<1x8x256x64xf32>
}

// -----

// Negative case: at 64 tokens a tile of the heads alone fits (2 heads at a time, two slots): one loop, no nest.
// CHECK-LABEL: func.func private @short_flash_attention_0
// CHECK-NOT:     npu.loop_tiles
// CHECK-SAME:    npu.tile_rows = 2 : i64, npu.tiles = 4 : i64
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c8 step %c2 {
// CHECK-NOT:       scf.for
// CHECK:         return
func.func @short(%q: tensor<1x8x64x64xf32>, %k: tensor<1x8x64x64xf32>, %v: tensor<1x8x64x64xf32>, %mask: tensor<1x1x64x64xf32>) -> tensor<1x8x64x64xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {scale = 1.250000e-01 : f32} : (tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32>, tensor<1x1x64x64xf32>) -> tensor<1x8x64x64xf32>
  return %0 : tensor<1x8x64x64xf32>
}

// -----

// 1024 tokens: one head's keys and values (256 KiB each) are over L1 at any tile of the query rows. The keys
// are cut into blocks, one pass over them per reduction over the keys (the row max, the row sum, the product
// with V), each recomputing the scores' block and the ops on it; the rows' max and sum are finished before
// the pass that reads them. The max's buffer, reused for the sum, gets one of its own.
// CHECK-LABEL: func.func private @long_flash_attention_0
// CHECK-SAME:    npu.block_tiles = array<i64: 1, 2, 256, 64>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x2x256x64xf32, #npu.mem<"l0c">>
// CHECK:         scf.for %[[HEAD:.*]] = %{{.*}} to %c8 step %c2 {
// CHECK:           scf.for %[[ROW:.*]] = %{{.*}} to %c1024 step %c256 {
// CHECK:             linalg.fill {{.*}} outs(%[[MAX:.*]] : memref<1x2x256xf32, #npu.mem<"ub">>)
// CHECK:             scf.for %[[KEY:.*]] = %{{.*}} to %c1024{{.*}} step %c64{{.*}} {
// CHECK-DAG:           memref.subview %arg1[0, %[[HEAD]], %[[KEY]], 0] [1, 2, 64, 64]
// CHECK-DAG:           memref.subview %arg3[0, 0, %[[ROW]], %[[KEY]]] [1, 1, 256, 64]
// CHECK:               linalg.contract
// CHECK:               linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%[[MAX]] :
// CHECK:             linalg.fill {{.*}} outs(%[[SUM:.*]] : memref<1x2x256xf32, #npu.mem<"ub">>)
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c64{{.*}} {
// CHECK:               linalg.contract
// CHECK:               linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] :
// CHECK:               linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%[[SUM]] :
// CHECK:             linalg.fill {{.*}} outs(%[[OUT]] :
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c64{{.*}} {
// CHECK:               memref.subview %arg2[
// CHECK:               linalg.contract
// CHECK:               linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]] :
// CHECK:               linalg.contract {{.*}} outs(%[[OUT]] :
// CHECK:             "npu.dma"(%[[OUT]], %{{.*}})
func.func @long(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>, %mask: tensor<1x1x1024x1024xf32>) -> tensor<1x8x1024x64xf32> {
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {scale = 1.250000e-01 : f32} : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x1x1024x1024xf32>) -> tensor<1x8x1024x64xf32>
  return %0 : tensor<1x8x1024x64xf32>
}
