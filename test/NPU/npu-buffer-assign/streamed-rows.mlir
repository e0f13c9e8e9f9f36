// Sequential loops whose body reaches its rows at places only known as it runs, streamed through UB when
// they do not fit whole: graph.topk and graph.sort loop over rows, and each row's algorithm (scf.while /
// scf.for / scf.if nested in the loop) reads the operand at positions it computes and writes the results at an
// inner loop's index; graph.grouped_matmul loops over groups, carrying the group's start, its row blocks in
// nested loops and branches. An access at the loop's index in one dim and at a value known only in the
// iteration in another spans that dim whole: the window of a chunk of rows moves GM -> UB before the chunk
// (loaded even when only written: a scattered store does not write it whole) and back after it, and the
// access keeps its position inside the window. The pipeline is compile_npu's (npu_lowering_pipeline), on a
// 16 KiB UB.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,dedupe-kernel-results,store-booleans-as-bytes,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},func.func(buffer-loop-hoisting),canonicalize,cse,npu-buffer-assign{target=%S/Inputs/small-ub.json})' | FileCheck %s

// The 5 largest of rows of 512 f32: chunks of 2 rows, in two slots. The row's permutation (allocated per row
// by the lowering, once before the loop after buffer-loop-hoisting) is a local buffer in UB; x's window and
// the two results' windows are staged per chunk, every read and write of the row inside them.
// CHECK-LABEL: func.func private @topk_rows_topk_0
// CHECK-SAME:    npu.double_buffered
// CHECK-SAME:    npu.stream_tiles = array<i64: 1, 2>
// CHECK-SAME:    npu.tiles = 8
// CHECK:         %[[PERM:.*]] = memref.alloc() {{.*}} : memref<512xi64, #npu.mem<"ub">>
// CHECK:         %[[XS:.*]] = memref.alloc() : memref<2x2x512xf32, #npu.mem<"ub">>
// CHECK:         %[[VS:.*]] = memref.alloc() : memref<2x2x5xf32, #npu.mem<"ub">>
// CHECK:         %[[IS:.*]] = memref.alloc() : memref<2x2x5xi64, #npu.mem<"ub">>
// CHECK:         scf.for %[[CHUNK:.*]] = %{{.*}} to %c16{{.*}} step %c2{{.*}} {
// CHECK:           %[[X:.*]] = memref.subview %[[XS]][%[[SLOT:.*]], 0, 0] [1, 2, 512]
// CHECK:           %[[XW:.*]] = memref.subview %arg0[%[[CHUNK]], 0] [2, 512]
// CHECK-NEXT:      "npu.dma"(%[[XW]], %[[X]])
// CHECK:           %[[V:.*]] = memref.subview %[[VS]][%[[SLOT]], 0, 0] [1, 2, 5]
// CHECK:           %[[VW:.*]] = memref.subview %arg1[%[[CHUNK]], 0] [2, 5]
// CHECK-NEXT:      "npu.dma"(%[[VW]], %[[V]])
// CHECK:           %[[I:.*]] = memref.subview %[[IS]][%[[SLOT]], 0, 0] [1, 2, 5]
// CHECK:           %[[IW:.*]] = memref.subview %arg2[%[[CHUNK]], 0] [2, 5]
// CHECK-NEXT:      "npu.dma"(%[[IW]], %[[I]])
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %c2{{.*}} step %c1{{.*}} {
// CHECK:             linalg.generic {{.*}} outs(%[[PERM]] :
// CHECK:             scf.while
// CHECK:               memref.load %[[X]][%[[J]], %{{.*}}]
// CHECK:             scf.for %[[K:.*]] = %c0 to %c5 step %c1 {
// CHECK:               memref.load %[[X]][%[[J]], %{{.*}}]
// CHECK-NEXT:          memref.store %{{.*}}, %[[V]][%[[J]], %[[K]]]
// CHECK-NEXT:          memref.store %{{.*}}, %[[I]][%[[J]], %[[K]]]
// CHECK:           "npu.dma"(%[[I]], %[[IW]])
// CHECK-NEXT:      "npu.dma"(%[[V]], %[[VW]])
// CHECK-NOT:     npu.dma
// CHECK:         return
func.func @topk_rows(%x: tensor<16x512xf32>) -> (tensor<16x5xf32>, tensor<16x5xi64>) {
  %0:2 = "graph.topk"(%x) {k = 5 : i64} : (tensor<16x512xf32>) -> (tensor<16x5xf32>, tensor<16x5xi64>)
  return %0#0, %0#1 : tensor<16x5xf32>, tensor<16x5xi64>
}

// -----

// A sort along columns: the loop's index is x's column, the positions compared its rows, so the window is one
// column (a chunk of one) spanning the rows whole, moved GM -> UB with the row stride.
// CHECK-LABEL: func.func private @sort_columns_sort_0
// CHECK-SAME:    npu.stream_tiles = array<i64: 1, 1>
// CHECK-SAME:    npu.tiles = 16
// CHECK:         %[[XS:.*]] = memref.alloc() : memref<2x300x1xf32, #npu.mem<"ub">>
// CHECK:         scf.for %[[COL:.*]] = %{{.*}} to %c16{{.*}} step %c1{{.*}} {
// CHECK:           %[[X:.*]] = memref.subview %[[XS]][%{{.*}}, 0, 0] [1, 300, 1]
// CHECK:           %[[XW:.*]] = memref.subview %arg0[0, %[[COL]]] [300, 1] [1, 1] : memref<300x16xf32> to memref<300x1xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT:      "npu.dma"(%[[XW]], %[[X]])
// CHECK:           scf.for %[[J:.*]] =
// CHECK:             memref.load %[[X]][%{{.*}}, %[[J]]]
// CHECK-NOT:         memref.load %arg0
func.func @sort_columns(%x: tensor<300x16xf32>) -> (tensor<300x16xf32>, tensor<300x16xi64>) {
  %0:2 = "graph.sort"(%x) {axis = 0 : i64, descending = true} : (tensor<300x16xf32>) -> (tensor<300x16xf32>, tensor<300x16xi64>)
  return %0#0, %0#1 : tensor<300x16xf32>, tensor<300x16xi64>
}

// -----

// A grouped matmul: zeroing the result is a kernel of its own (part 0, split at the loop), then the loop over
// groups (part 1) carries the group's start from chunk to chunk; the group ends and weights are chunked at the
// loop's index, while x's and the result's row blocks, at places known only as the loop runs, move per use.
// The blocks of one buffer are never live together and share one staging buffer (x's, the result's), each in
// its corner of it; a result block, filled before anything reads it, is only written back.
// CHECK-LABEL: func.func @experts(
// CHECK:         call @experts_grouped_matmul_0_part0(%arg3)
// CHECK-NEXT:    call @experts_grouped_matmul_0_part1(%arg0, %arg1, %arg2, %arg3)
// CHECK-LABEL: func.func private @experts_grouped_matmul_0_part1(
// CHECK-SAME:    npu.stream_tiles = array<i64: 1, 2>
// CHECK:         %[[ENDS:.*]] = memref.alloc() : memref<2x2xi64, #npu.mem<"ub">>
// CHECK:         %[[WS:.*]] = memref.alloc() : memref<2x2x16x32xf32, #npu.mem<"ub">>
// CHECK:         %[[XB:.*]] = memref.alloc() : memref<32x16xf32, #npu.mem<"ub">>
// CHECK:         %[[X16:.*]] = memref.subview %[[XB]][0, 0] [16, 16]
// CHECK:         %[[OB:.*]] = memref.alloc() : memref<32x32xf32, #npu.mem<"ub">>
// CHECK:         %[[O16:.*]] = memref.subview %[[OB]][0, 0] [16, 32]
// CHECK:         scf.for %[[CHUNK:.*]] = %{{.*}} to %c4{{.*}} step %c2{{.*}} iter_args(%[[START:.*]] = %c0) -> (index) {
// CHECK:           %[[E:.*]] = memref.subview %[[ENDS]][%[[SLOT:.*]], 0] [1, 2]
// CHECK:           %[[EW:.*]] = memref.subview %arg2[%[[CHUNK]]] [2]
// CHECK-NEXT:      "npu.dma"(%[[EW]], %[[E]])
// CHECK:           %[[W:.*]] = memref.subview %[[WS]][%[[SLOT]], 0, 0, 0] [1, 2, 16, 32]
// CHECK:           %[[WW:.*]] = memref.subview %arg1[%[[CHUNK]], 0, 0] [2, 16, 32]
// CHECK-NEXT:      "npu.dma"(%[[WW]], %[[W]])
// CHECK:           %[[END:.*]] = scf.for %[[J:.*]] = %{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args(%[[ROW:.*]] = %[[START]]) -> (index) {
// CHECK:             memref.load %[[E]][%[[J]]]
// CHECK:             %[[WJ:.*]] = memref.subview %[[W]][%[[J]], 0, 0] [1, 16, 32] [1, 1, 1] : {{.*}} to memref<16x32xf32
// CHECK:             scf.for %[[R:.*]] = %[[ROW]] to %{{.*}} step %c32 {
// CHECK-NEXT:          %[[XW:.*]] = memref.subview %arg0[%[[R]], 0] [32, 16]
// CHECK-NEXT:          "npu.dma"(%[[XW]], %[[XB]])
// CHECK-NEXT:          %[[OW:.*]] = memref.subview %arg3[%[[R]], 0] [32, 32]
// CHECK-NEXT:          linalg.fill {{.*}} outs(%[[OB]] :
// CHECK-NEXT:          linalg.matmul ins(%[[XB]], %[[WJ]] : {{.*}}) outs(%[[OB]] :
// CHECK:               "npu.dma"(%[[OB]], %[[OW]])
// CHECK:             scf.if
// CHECK-NEXT:          %[[XW:.*]] = memref.subview %arg0[%{{.*}}, 0] [16, 16]
// CHECK-NEXT:          "npu.dma"(%[[XW]], %[[X16]])
// CHECK-NEXT:          %[[OW:.*]] = memref.subview %arg3[%{{.*}}, 0] [16, 32]
// CHECK-NEXT:          linalg.fill {{.*}} outs(%[[O16]] :
// CHECK-NEXT:          linalg.matmul ins(%[[X16]], %[[WJ]] : {{.*}}) outs(%[[O16]] :
// CHECK:               "npu.dma"(%[[O16]], %[[OW]])
// CHECK:             scf.yield %{{.*}} : index
// CHECK:           scf.yield %[[END]] : index
func.func @experts(%x: tensor<256x16xf32>, %w: tensor<4x16x32xf32>, %ends: tensor<4xi64>) -> tensor<256x32xf32> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<256x16xf32>, tensor<4x16x32xf32>, tensor<4xi64>) -> tensor<256x32xf32>
  return %0 : tensor<256x32xf32>
}

// -----

// Negative: a sort that fits whole is not streamed. x is staged whole before the loop, whose reads at the
// computed positions read the staged copy; the results are stored once after it.
// CHECK-LABEL: func.func private @small_sort_sort_0
// CHECK-NOT:     npu.stream_tiles
// CHECK-SAME:    npu.tiles = 1
// CHECK:         %[[X:.*]] = memref.alloc() : memref<4x8xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg0, %[[X]])
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c4 step %c1 {
// CHECK-NOT:       npu.dma
// CHECK:           memref.load %[[X]][%[[ROW]], %{{.*}}]
// CHECK-NOT:       npu.dma
// CHECK:         }
// CHECK:         "npu.dma"({{.*}}, %arg1)
// CHECK-NEXT:    "npu.dma"({{.*}}, %arg2)
// CHECK-NEXT:    return
func.func @small_sort(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>) {
  %0:2 = "graph.sort"(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xi64>
}
