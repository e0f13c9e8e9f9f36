// parallelize-kernels splits the outermost parallel loop of each large kernel into scf.forall chunks (the
// cores share them at run time); small kernels, and kernels holding contractions, stay serial with the reason
// logged; pooling (in a kernel or outside any) is tiled over its images and channels. Row kernels get their parallel loop from tile-kernel-rows: the row loop is itself an scf.forall.
// tile-kernel-rows also takes elementwise kernels with rows of one chunk or more (and long 1-D ones) by
// default (elementwise-rows.mlir); here it leaves them to parallelize-kernels (elementwise=false).
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{elementwise=false},parallelize-kernels)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{elementwise=false},parallelize-kernels)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{elementwise=false},parallelize-kernels{min-elements=0 max-tasks=4})' %s | FileCheck %s --check-prefix=SMALL
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(parallelize-kernels{max-tasks=0})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: options 'min-elements' (>= 0) and 'max-tasks' (>= 1) of pass 'parallelize-kernels' are out of range: 16384, 0

// An elementwise kernel of 1024 x 256: 64 chunks of 16 rows, each chunk's loops whole inside the forall.
// LOG: parallelize-kernels: @gelu_kernel: outermost loop split over the cores
// CHECK-LABEL: func.func private @gelu_kernel
// CHECK:         scf.forall (%[[I:.*]]) = (0) to (1024) step (16) shared_outs
// CHECK:           tensor.extract_slice %{{.*}}[%[[I]], 0] [16, 256] [1, 1]
// CHECK:           linalg.generic
// CHECK:           tensor.parallel_insert_slice
// CHECK:         return
func.func private @gelu_kernel(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> attributes {graph.kernel} {
  %0 = "graph.gelu"(%x) {approximate = "tanh"} : (tensor<1024x256xf32>) -> tensor<1024x256xf32>
  return %0 : tensor<1024x256xf32>
}

// -----

// A softmax over 512 rows of 256: tile-kernel-rows makes the row loop an scf.forall, one row per iteration.
// CHECK-LABEL: func.func private @softmax_kernel
// CHECK:         scf.forall (%[[R:.*]]) in (512) shared_outs
// CHECK:           vector.reduction <maximumf>
// CHECK:           vector.reduction <add>
// CHECK:           tensor.parallel_insert_slice
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func private @softmax_kernel(%x: tensor<512x256xf32>) -> tensor<512x256xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<512x256xf32>) -> tensor<512x256xf32>
  return %0 : tensor<512x256xf32>
}

// -----

// Small kernels stay serial (fewer than min-elements result elements); with min-elements=0 they are split too.
// LOG: parallelize-kernels: @small_kernel stays serial: its results hold fewer than 16384 elements
// CHECK-LABEL: func.func private @small_kernel
// CHECK-NOT:     scf.forall
// CHECK:         return
// SMALL-LABEL: func.func private @small_kernel
// SMALL:         scf.forall (%{{.*}}) = (0) to (8) step (2) shared_outs
func.func private @small_kernel(%x: tensor<8x32xf32>) -> tensor<8x32xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A matmul kernel keeps its own schedule (blocked later by the runtime); a 1-row kernel has nothing to split.
// LOG: parallelize-kernels: @matmul_kernel stays serial: it holds linalg.matmul
// LOG: parallelize-kernels: @one_row_kernel stays serial: its outermost loop is not a parallel loop of 2 or more iterations
// CHECK-LABEL: func.func private @matmul_kernel
// CHECK-NOT:     scf.forall
// CHECK-LABEL: func.func private @one_row_kernel
// CHECK-NOT:     scf.forall
func.func private @matmul_kernel(%a: tensor<512x256xf32>, %b: tensor<256x256xf32>) -> tensor<512x256xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%a, %b) : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
  %1 = "graph.relu"(%0) : (tensor<512x256xf32>) -> tensor<512x256xf32>
  return %1 : tensor<512x256xf32>
}
func.func private @one_row_kernel(%x: tensor<1x131072xf32>) -> tensor<1x131072xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<1x131072xf32>) -> tensor<1x131072xf32>
  return %0 : tensor<1x131072xf32>
}

// -----

// A pooling lowered outside any kernel (a lone op) is shared out over its leading parallel loops: 2 images x
// 32 channels are 64 tasks (with max-tasks=4: 2 x 2 of 16 channels), its -inf padding computed before them,
// its fill fused into each task.
// CHECK-LABEL: func.func @lone_max_pool
// CHECK:         tensor.pad
// CHECK:         scf.forall (%[[N:.*]], %[[C:.*]]) in (2, 32) shared_outs
// CHECK:           linalg.fill
// CHECK:           linalg.pooling_nchw_max
// CHECK:           tensor.parallel_insert_slice
// CHECK:         return
// SMALL-LABEL: func.func @lone_max_pool
// SMALL:         scf.forall (%{{.*}}, %{{.*}}) in (2, 2) shared_outs
func.func @lone_max_pool(%x: tensor<2x32x128x128xf32>) -> tensor<2x32x64x64xf32> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x32x128x128xf32>) -> tensor<2x32x64x64xf32>
  return %0 : tensor<2x32x64x64xf32>
}

// -----

// A window op's result elements are weighed by the inputs each reads: 32,768 results of a 3x3 window are 294,912
// reads, past min-elements (65,536) although the results alone are not (resnet's stem pooling).
// CHECK-LABEL: func.func @max_pool_weighed_by_its_window
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (4, 16) shared_outs
// CHECK:           linalg.pooling_nchw_max
func.func @max_pool_weighed_by_its_window(%x: tensor<4x32x32x32xf32>) -> tensor<4x32x16x16xf32> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<4x32x32x32xf32>) -> tensor<4x32x16x16xf32>
  return %0 : tensor<4x32x16x16xf32>
}

// -----

// Below min-elements, its reads counted (256 results of a 2x2 window), a lone pooling stays serial.
// CHECK-LABEL: func.func @small_max_pool
// CHECK-NOT:     scf.forall
// CHECK:         linalg.pooling_nchw_max
// CHECK:         return
func.func @small_max_pool(%x: tensor<1x4x16x16xf32>) -> tensor<1x4x8x8xf32> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x16x16xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// A result reshaped on its way out (attention's heads merged back into [tokens, width]): the transpose
// computing it is split, the collapse of the split result follows the loop.
// LOG: parallelize-kernels: @merged_heads_kernel: outermost loop split over the cores
// CHECK-LABEL: func.func private @merged_heads_kernel
// CHECK:         scf.forall
// CHECK:           linalg.transpose
// CHECK:           tensor.parallel_insert_slice
// CHECK:         tensor.collapse_shape
// CHECK:         return
func.func private @merged_heads_kernel(%x: tensor<4x8x64x64xf32>) -> tensor<256x512xf32> attributes {graph.kernel} {
  %0 = "graph.transpose"(%x) {perm = array<i64: 0, 2, 1, 3>} : (tensor<4x8x64x64xf32>) -> tensor<4x64x8x64xf32>
  %1 = "graph.reshape"(%0) : (tensor<4x64x8x64xf32>) -> tensor<256x512xf32>
  return %1 : tensor<256x512xf32>
}

// -----

// A small result beside a large one (a rotary table of a few rows next to the rotated queries): the large
// one's loop is split, the small one is computed on its own.
// LOG: parallelize-kernels: @table_and_rows_kernel: outermost loop split over the cores
// CHECK-LABEL: func.func private @table_and_rows_kernel
// CHECK:         scf.forall
// CHECK:         return
func.func private @table_and_rows_kernel(%t: tensor<64x64xf32>, %x: tensor<32x64x64xf32>) -> (tensor<64x64xf32>, tensor<32x64x64xf32>) attributes {graph.kernel} {
  %0 = "graph.cos"(%t) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = "graph.mul"(%x, %0) : (tensor<32x64x64xf32>, tensor<64x64xf32>) -> tensor<32x64x64xf32>
  return %0, %1 : tensor<64x64xf32>, tensor<32x64x64xf32>
}
