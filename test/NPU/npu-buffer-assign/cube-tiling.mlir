// A matmul kernel whose weight does not fit L1 is tiled over M, N and K: the accumulator tile stays in L0C over
// the K loop, the operand tiles move GM -> L1 inside it (two slots), the epilogue and the store run per tile.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// [16, 256] x [256, 1024]: the 1 MiB weight is twice L1; the [16, 1024] accumulator fits L0C whole.
// CHECK-LABEL: func.func private @projection_matmul_0
// L0B (64 KiB) bounds the weight's tile to 16 rows of K; the traffic does not depend on K's tile.
// CHECK-SAME:    npu.cube_tile = array<i64: 16, 1024, 16>
// CHECK-SAME:    npu.l0c_bytes = 65536 : i64, npu.l1_bytes = 133120 : i64
// CHECK:         %[[C:.*]] = memref.alloc() : memref<16x1024xf32, #npu.mem<"l0c">>
// CHECK:         memref.alloc() : memref<2x16x16xf32, #npu.mem<"l1">>
// CHECK:         memref.alloc() : memref<2x16x1024xf32, #npu.mem<"l1">>
// CHECK:         scf.for %[[M:.*]] = %{{.*}} to %c16 step %{{.*}}
// CHECK-NEXT:      scf.for %[[N:.*]] = %{{.*}} to %c1024 step %{{.*}}
// CHECK-NEXT:        linalg.fill {{.*}} outs(%[[C]] : memref<16x1024xf32, #npu.mem<"l0c">>)
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %c256 step %{{.*}}
// CHECK:               npu.dma
// CHECK:               npu.dma
// CHECK:               linalg.matmul
// CHECK:             "npu.dma"(%[[C]], %{{.*}}) : (memref<16x1024xf32, #npu.mem<"l0c">>, memref<16x1024xf32, strided<[1024, 1], offset: ?>>)
func.func @projection(%x: tensor<16x256xf32>, %w: tensor<256x1024xf32>) -> tensor<16x1024xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<16x256xf32>, tensor<256x1024xf32>) -> tensor<16x1024xf32>
  return %0 : tensor<16x1024xf32>
}

// -----

// [64, 512] x [512, 1024]: the [64, 1024] accumulator (256 KiB) is twice L0C, so N is tiled too.
// CHECK-LABEL: func.func private @wide_matmul_0
// CHECK-SAME:    npu.cube_tile = array<i64: 64, 512, 32>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c64 step %{{.*}}
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %c1024 step %c512
func.func @wide(%x: tensor<64x512xf32>, %w: tensor<512x1024xf32>) -> tensor<64x1024xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<64x512xf32>, tensor<512x1024xf32>) -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// -----

// A split whose four pieces (64 KiB each, in and out) do not fit UB whole: each copy is staged in chunks of 4 of
// its 16 rows, two slots each (16 KiB a slot).
// CHECK-LABEL: func.func private @pieces_split_0
// CHECK-SAME:    npu.tiles = 16 : i64, npu.ub_bytes = 131072 : i64
// CHECK-COUNT-4: scf.for %{{.*}} = %{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} {
// CHECK-NOT:     scf.for
func.func @pieces(%x: tensor<1x16x4096xf32>) -> (tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>) {
  %0:4 = "graph.split"(%x) {axis = 2 : i64, sizes = array<i64: 1024, 1024, 1024, 1024>} : (tensor<1x16x4096xf32>) -> (tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>, tensor<1x16x1024xf32>
}
