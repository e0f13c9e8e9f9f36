// A convolution kernel over capacity is tiled over batch, filters and output rows (the accumulator tile in
// L0C) and, inside, over input channels: each tile's input window (its output rows' input rows, zero-padded on
// chip: only the rows of x inside the image move) and weight tile move GM -> L1 in two slots.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// 64 -> 64 channels, 3x3, 56x56, padding 1, a bias: x (784 KiB) and the output are over L1 and L0C. 8 output
// rows a tile (64 x 8 x 56 f32 = 112 KiB of L0C), 32 channels a step: a window is 10 rows of 58 padded columns.
// The bias starts each accumulator tile; the padded input buffer is gone.
// CHECK-LABEL: func.func private @resnet_conv_conv2d_0
// CHECK-SAME:    npu.conv_tile = array<i64: 1, 64, 8, 32>
// CHECK-NOT:     memref<1x64x58x58xf32
// CHECK-DAG:     %[[WINDOW:.*]] = memref.alloc() : memref<2x1x32x10x58xf32, #npu.mem<"l1">>
// CHECK-DAG:     %[[WEIGHTS:.*]] = memref.alloc() : memref<2x64x32x3x3xf32, #npu.mem<"l1">>
// CHECK-DAG:     %[[ACC:.*]] = memref.alloc() : memref<1x64x8x56xf32, #npu.mem<"l0c">>
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %c56 step %c8 {
// CHECK:           "npu.dma"(%{{.*}}, %[[BIAS:.*]]) : (memref<64xf32, {{.*}}>, memref<64xf32, #npu.mem<"ub">>)
// CHECK:           linalg.generic {{.*}} ins(%[[BIAS]] : {{.*}}) outs(%[[ACC]] : {{.*}})
// CHECK:           scf.for %[[CHANNEL:.*]] = %{{.*}} to %c64{{.*}} step %c32 {
// CHECK:             %[[SLOT:.*]] = memref.subview %[[WINDOW]]
// CHECK:             linalg.fill ins(%{{.*}} : f32) outs(%[[SLOT]] :
// CHECK:             %[[LOW:.*]] = arith.maxsi
// CHECK:             %[[HIGH:.*]] = arith.minsi
// CHECK:             %[[ROWS:.*]] = arith.subi %[[HIGH]], %[[LOW]]
// CHECK:             %[[SRC:.*]] = memref.subview %arg0[%{{.*}}, %[[CHANNEL]], %[[LOW]], 0] [1, 32, %[[ROWS]], 56]
// CHECK:             %[[DST:.*]] = memref.subview %[[SLOT]][0, 0, %{{.*}}, 1] [1, 32, %[[ROWS]], 56]
// CHECK-NEXT:        "npu.dma"(%[[SRC]], %[[DST]]) : (memref<1x32x?x56xf32, {{.*}}>, memref<1x32x?x56xf32, {{.*}}#npu.mem<"l1">>)
// CHECK:             "npu.dma"(%{{.*}}, %[[WSLOT:.*]]) : (memref<64x32x3x3xf32, {{.*}}>, memref<64x32x3x3xf32, {{.*}}#npu.mem<"l1">>)
// CHECK-NEXT:        linalg.conv_2d_nchw_fchw {{.*}} ins(%[[SLOT]], %[[WSLOT]] : {{.*}}) outs(%[[ACC]] :
// CHECK-NEXT:      }
// CHECK:           "npu.dma"(%[[ACC]], %{{.*}}) : (memref<1x64x8x56xf32, #npu.mem<"l0c">>, memref<1x64x8x56xf32, {{.*}}>)
func.func @resnet_conv(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x56x56xf32> {
  %0 = "graph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// -----

// No padding, stride 2, a 1x1 kernel: a window of 7 output rows is 13 input rows, read as they are (no fill,
// static sizes); the loops of one tile (batch, filters) are no loops.
// CHECK-LABEL: func.func private @strided_conv2d_0
// CHECK-SAME:    npu.conv_tile = array<i64: 1, 128, 7, 64>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c28 step %c7 {
// CHECK-NEXT:      linalg.fill {{.*}} outs(%{{.*}} : memref<1x128x7x28xf32, #npu.mem<"l0c">>)
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %c256 step %c64 {
// CHECK-NOT:         linalg.fill
// CHECK:             "npu.dma"(%{{.*}}, %{{.*}}) : (memref<1x64x13x56xf32, {{.*}}>, memref<1x64x13x56xf32, {{.*}}#npu.mem<"l1">>)
// CHECK:             linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
func.func @strided(%x: tensor<1x256x56x56xf32>, %w: tensor<128x256x1x1xf32>) -> tensor<1x128x28x28xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x256x56x56xf32>, tensor<128x256x1x1xf32>) -> tensor<1x128x28x28xf32>
  return %0 : tensor<1x128x28x28xf32>
}

// -----

// Negative case: a convolution that fits on chip whole is not tiled (one tile, its padded input in L1).
// CHECK-LABEL: func.func private @small_conv2d_0
// CHECK-NOT:     npu.conv_tile
// CHECK-SAME:    npu.tiles = 1 : i64
// CHECK:         memref.alloc() {{.*}} : memref<1x8x18x18xf32, #npu.mem<"l1">>
// CHECK-NOT:     scf.for
func.func @small(%x: tensor<1x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

// A depthwise convolution (256 channels at 56x56, 3.2 MB in and out) runs on the vector unit: window, weights
// and accumulator in UB. A filter tile reads its own channels only (4 at a time, all 56 rows: no halo read
// twice); the [C, 1, KH, KW] weights are read [C, KH, KW] through the kernel's view.
// CHECK-LABEL: func.func private @depthwise_conv2d_0
// CHECK-SAME:    npu.conv_tile = array<i64: 1, 4, 56, 256>
// CHECK:         %[[WEIGHTS:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : memref<256x1x3x3xf32> into memref<256x3x3xf32>
// CHECK-DAG:     %[[WINDOW:.*]] = memref.alloc() : memref<2x1x4x58x58xf32, #npu.mem<"ub">>
// CHECK-DAG:     %[[ACC:.*]] = memref.alloc() : memref<1x4x56x56xf32, #npu.mem<"ub">>
// CHECK:         scf.for %[[CHANNEL:.*]] = %{{.*}} to %c256 step %c4 {
// CHECK:           %[[SRC:.*]] = memref.subview %arg0[%{{.*}}, %[[CHANNEL]], %{{.*}}, 0] [1, 4, %{{.*}}, 56]
// CHECK:           "npu.dma"(%[[SRC]], %{{.*}}) : (memref<1x4x?x56xf32, {{.*}}>, memref<1x4x?x56xf32, {{.*}}#npu.mem<"ub">>)
// CHECK:           memref.subview %[[WEIGHTS]][%[[CHANNEL]], 0, 0] [4, 3, 3]
// CHECK:           linalg.depthwise_conv_2d_nchw_chw {{.*}} outs(%[[ACC]] :
// CHECK:           "npu.dma"(%[[ACC]], %{{.*}}) : (memref<1x4x56x56xf32, #npu.mem<"ub">>
func.func @depthwise(%x: tensor<1x256x56x56xf32>, %w: tensor<256x1x3x3xf32>) -> tensor<1x256x56x56xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 256 : i64} : (tensor<1x256x56x56xf32>, tensor<256x1x3x3xf32>) -> tensor<1x256x56x56xf32>
  return %0 : tensor<1x256x56x56xf32>
}

// -----

// A max pool (ResNet's stem: 64 channels at 112x112, 3x3 windows at stride 2): channel-wise windows like a
// depthwise convolution's, with no weights (its second operand only gives the window's shape, kept on chip)
// and a padding of -inf.
// CHECK-LABEL: func.func private @stem_pool_max_pool2d_0
// CHECK-SAME:    npu.conv_tile = array<i64: 1, 1, 56, 64>
// CHECK:         %[[SHAPE:.*]] = memref.alloc() {{.*}}: memref<3x3xf32, #npu.mem<"ub">>
// CHECK:         scf.for %[[CHANNEL:.*]] = %{{.*}} to %c64 step %c1{{.*}} {
// CHECK:           %[[WINDOW:.*]] = memref.subview %{{.*}} [1, 1, 1, 113, 114]
// CHECK:           %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:      linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[WINDOW]] :
// CHECK:           "npu.dma"(%{{.*}}, %{{.*}}) : (memref<1x1x?x112xf32, {{.*}}>, memref<1x1x?x112xf32, {{.*}}#npu.mem<"ub">>)
// CHECK-NOT:       "npu.dma"
// CHECK:           linalg.pooling_nchw_max {{.*}} ins(%[[WINDOW]], %[[SHAPE]] :
func.func @stem_pool(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// -----

// A grouped convolution (32 groups of 8 channels, a bias; graph-to-linalg's conv_2d_ngchw_gfchw on reshaped
// views): a filter tile (8, one group) is a plain conv_2d_nchw_fchw of its group's 8 channels, read from x at
// channel (filter / 8) * 8, with the weights as they are in GM ([256, 8, 3, 3]).
// CHECK-LABEL: func.func private @grouped_conv2d_0
// CHECK-SAME:    npu.conv_tile = array<i64: 1, 8, 28, 8>
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
// CHECK-NOT:     memref.expand_shape
// CHECK-DAG:     %[[ACC:.*]] = memref.alloc() : memref<1x8x28x28xf32, #npu.mem<"l0c">>
// CHECK:         scf.for %[[FILTER:.*]] = %{{.*}} to %c256 step %c8 {
// CHECK:           "npu.dma"(%{{.*}}, %[[BIAS:.*]]) : (memref<8xf32, {{.*}}>, memref<8xf32, #npu.mem<"ub">>)
// CHECK:           linalg.generic {{.*}} ins(%[[BIAS]] : {{.*}}) outs(%[[ACC]] :
// CHECK:           %[[GROUP:.*]] = arith.divui %[[FILTER]], %c8{{.*}} : index
// CHECK:           memref.subview %arg0[%{{.*}}, %{{.*}}, %{{.*}}, 0] [1, 8, %{{.*}}, 28]
// CHECK:           memref.subview %arg1[%[[FILTER]], %{{.*}}, 0, 0] [8, 8, 3, 3]
// CHECK:           linalg.conv_2d_nchw_fchw {{.*}} outs(%[[ACC]] :
// CHECK:           memref.subview %arg3[%{{.*}}, %[[FILTER]], %{{.*}}, 0] [1, 8, 28, 28]
func.func @grouped(%x: tensor<1x256x28x28xf32>, %w: tensor<256x8x3x3xf32>, %b: tensor<256xf32>) -> tensor<1x256x28x28xf32> {
  %0 = "graph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 32 : i64} : (tensor<1x256x28x28xf32>, tensor<256x8x3x3xf32>, tensor<256xf32>) -> tensor<1x256x28x28xf32>
  return %0 : tensor<1x256x28x28xf32>
}
