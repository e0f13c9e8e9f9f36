// graph-to-linalg lowers conv2d and the 2-D poolings to tensor.pad and linalg ops into
// linalg.fill-initialised destinations: an f32 conv2d with unit strides and dilations and output rows of
// a register tile or wider (at most 32 columns on any host) as one generic reading the padded input
// directly, marked graph.direct_conv for the runtime's schedule; another plain conv2d with static shapes as
// im2col (a gathering linalg.generic) + linalg.contract, which the runtime turns into a blocked matmul (a
// grouped one with the group as a batch dim); other convolutions as
// named ops (conv_2d_nchw_fchw, depthwise_conv_2d_nchw_chw, conv_2d_ngchw_gfchw), a unit-stride f32 depthwise
// one as the direct generic; pooling_nchw_max/sum;
// avg_pool2d then divides by the reference's window count.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// The result is plain upstream IR: mlir-opt parses and verifies it.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | mlir-opt --split-input-file | FileCheck %s --check-prefix=UPSTREAM

// pads = [top, left, bottom, right] become low [0, 0, top, left] and high [0, 0, bottom, right]. The windows
// are gathered into cols[c, kh, kw, n, oh, ow] = padded[n, c, oh * 2 + kh, ow + kw] (strides [2, 1]), then
// weights [F, C*KH*KW] x cols [C*KH*KW, N, OH, OW] -> [N, F, OH, OW].
// CHECK-DAG: #[[GATHER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 * 2 + d1, d2 + d5)>
// CHECK-DAG: #[[ID6:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4)>
// CHECK-DAG: #[[COLS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d1, d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 0, 1] {
// CHECK-NEXT:    ^bb0({{.*}}):
// CHECK-NEXT:      tensor.yield %[[ZERO]] : f32
// CHECK-NEXT:    } : tensor<1x3x8x8xf32> to tensor<1x3x9x10xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<3x3x3x1x4x8xf32>
// CHECK-NEXT:    %[[G:.*]] = linalg.generic {indexing_maps = [#[[GATHER]], #[[ID6]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<1x3x9x10xf32>) outs(%[[E]] : tensor<3x3x3x1x4x8xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1, 2], [3], [4], [5]] : tensor<3x3x3x1x4x8xf32> into tensor<27x1x4x8xf32>
// CHECK-NEXT:    %[[WM:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.contract indexing_maps = [#[[W]], #[[COLS]], #[[OUT]]] ins(%[[WM]], %[[C]] : tensor<4x27xf32>, tensor<27x1x4x8xf32>) outs(%[[INIT]] : tensor<1x4x4x8xf32>)
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     graph.
// UPSTREAM-LABEL: func.func @conv
// UPSTREAM:         linalg.contract
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32> {
  %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 0, 1>, strides = array<i64: 2, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// 1x1, stride 1, no padding: the input itself is the [C, N, H*W] operand, nothing is gathered.
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @conv_1x1
// CHECK-NOT:     linalg.generic
// CHECK:         %[[WM:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<4x3x1x1xf32> into tensor<4x3xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    linalg.contract indexing_maps = [#[[W]], #[[X]], #[[OUT]]] ins(%[[WM]], %arg0 : tensor<4x3xf32>, tensor<2x3x8x8xf32>) outs(%[[INIT]] : tensor<2x4x8x8xf32>)
// UPSTREAM-LABEL: func.func @conv_1x1
func.func @conv_1x1(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x1x1xf32>) -> tensor<2x4x8x8xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<2x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Why no im2col: a dynamic batch (the gathered buffer would have a dynamic size): the named convolution.
// CHECK-LABEL: func.func @conv_dynamic
// CHECK-NOT:     linalg.contract
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<?x4x6x6xf32>)
// UPSTREAM-LABEL: func.func @conv_dynamic
// UPSTREAM:         linalg.conv_2d_nchw_fchw
func.func @conv_dynamic(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  return %0 : tensor<?x4x6x6xf32>
}

// -----

// groups = 2, static shapes: im2col with the group as a batch dim, cols[g, c, kh, kw, n, oh, ow] =
// padded[n, g * 2 + c, oh * 2 + kh, ow + kw * 2], and one contraction of the weights as [G, F, C*KH*KW]
// with it into [N, G, F, OH, OW], whose group dim is collapsed back.
// CHECK-DAG: #[[GGATHER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 * 2 + d1, d5 * 2 + d2, d6 + d3 * 2)>
// CHECK-DAG: #[[GW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5)>
// CHECK-DAG: #[[GCOLS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d5, d2, d3, d4)>
// CHECK-DAG: #[[GOUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d0, d1, d3, d4)>
// CHECK-LABEL: func.func @conv_grouped
// CHECK:         %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[GGATHER]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<1x4x10x10xf32>) outs(%{{.*}} : tensor<2x2x3x3x1x4x6xf32>)
// CHECK:         %[[COLS:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2, 3], [4], [5], [6]] : tensor<2x2x3x3x1x4x6xf32> into tensor<2x18x1x4x6xf32>
// CHECK-NEXT:    %[[WE:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK-NEXT:    %[[W:.*]] = tensor.collapse_shape %[[WE]] {{\[}}[0], [1], [2, 3, 4]] : tensor<2x3x2x3x3xf32> into tensor<2x3x18xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x3x4x6xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.contract indexing_maps = [#[[GW]], #[[GCOLS]], #[[GOUT]]] ins(%[[W]], %[[COLS]] : tensor<2x3x18xf32>, tensor<2x18x1x4x6xf32>) outs(%[[INIT]] : tensor<1x2x3x4x6xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x4x6xf32> into tensor<1x6x4x6xf32>
// CHECK-NEXT:    return %[[C]]
// UPSTREAM-LABEL: func.func @conv_grouped
// UPSTREAM:         linalg.contract
func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x4x6xf32> {
  %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 2>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x6xf32>
  return %0 : tensor<1x6x4x6xf32>
}

// -----

// A grouped convolution with a dynamic batch has no static im2col buffer: channels and filters get a group
// dim for the named op, the result's is collapsed back.
// CHECK-LABEL: func.func @conv_grouped_dynamic
// CHECK-NOT:     linalg.contract
// CHECK:         %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 2, 10, 10] : tensor<?x4x10x10xf32> into tensor<?x2x2x10x10xf32>
// CHECK-NEXT:    %[[W:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK:         %[[R:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<?x2x2x10x10xf32>, tensor<2x3x2x3x3xf32>)
// CHECK:         tensor.collapse_shape %[[R]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x3x4x6xf32> into tensor<?x6x4x6xf32>
// UPSTREAM-LABEL: func.func @conv_grouped_dynamic
// UPSTREAM:         linalg.conv_2d_ngchw_gfchw
func.func @conv_grouped_dynamic(%x: tensor<?x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<?x6x4x6xf32> {
  %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 2>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<?x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<?x6x4x6xf32>
  return %0 : tensor<?x6x4x6xf32>
}

// -----

// Depthwise (groups = C = O), f16: no padding, f32 accumulator rounded once.
// CHECK-LABEL: func.func @conv_depthwise_f16
// CHECK-NOT:     tensor.pad
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK-NEXT:    %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<4x1x3x3xf16> into tensor<4x3x3xf16>
// CHECK-NEXT:    %[[R:.*]] = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %[[W]] : tensor<1x4x6x6xf16>, tensor<4x3x3xf16>) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[R]] : tensor<1x4x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// UPSTREAM-LABEL: func.func @conv_depthwise_f16
// UPSTREAM:         linalg.depthwise_conv_2d_nchw_chw
func.func @conv_depthwise_f16(%x: tensor<1x4x6x6xf16>, %w: tensor<4x1x3x3xf16>) -> tensor<1x4x4x4xf16> {
  %0 = "graph.conv2d"(%x, %w) {groups = 4 : i64} : (tensor<1x4x6x6xf16>, tensor<4x1x3x3xf16>) -> tensor<1x4x4x4xf16>
  return %0 : tensor<1x4x4x4xf16>
}

// -----

// Max pooling: -inf padding and a -inf-filled destination.
// CHECK-LABEL: func.func @max_pool
// CHECK-NEXT:    %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK:           tensor.yield %[[NEG_INF]] : f32
// CHECK:         %[[FILL:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[FILL]] : f32) outs(%{{.*}} : tensor<1x2x4x4xf32>)
// CHECK-NEXT:    %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x2x9x9xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x4x4xf32>)
// CHECK-NEXT:    return %[[R]]
// UPSTREAM-LABEL: func.func @max_pool
// UPSTREAM:         linalg.pooling_nchw_max
func.func @max_pool(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Integers start from the type's minimum.
// CHECK-LABEL: func.func @max_pool_i8
// CHECK:         %[[MIN:.*]] = arith.constant -128 : i8
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[MIN]] : i8) outs(%{{.*}} : tensor<1x2x3x3xi8>)
// CHECK:         linalg.pooling_nchw_max {{.*}} ins(%arg0, %{{.*}} : tensor<1x2x6x6xi8>, tensor<2x2xi8>) outs(%[[INIT]] : tensor<1x2x3x3xi8>)
// UPSTREAM-LABEL: func.func @max_pool_i8
func.func @max_pool_i8(%x: tensor<1x2x6x6xi8>) -> tensor<1x2x3x3xi8> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xi8>) -> tensor<1x2x3x3xi8>
  return %0 : tensor<1x2x3x3xi8>
}

// -----

// count_include_pad: every window is divided by kh * kw.
// CHECK-LABEL: func.func @avg_pool_include_pad
// CHECK:         %[[P:.*]] = tensor.pad %arg0 low[0, 0, 0, 1] high[0, 0, 1, 1]
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x3x6xf32>)
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[P]], %{{.*}} : tensor<1x2x7x8xf32>, tensor<2x3xf32>) outs(%[[INIT]] : tensor<1x2x3x6xf32>)
// CHECK-NEXT:    %[[SIX:.*]] = arith.constant 6.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x2x3x6xf32>)
// CHECK:           arith.divf %{{.*}}, %[[SIX]] : f32
// UPSTREAM-LABEL: func.func @avg_pool_include_pad
// UPSTREAM:         linalg.pooling_nchw_sum
func.func @avg_pool_include_pad(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x6xf32> {
  %0 = "graph.avg_pool2d"(%x) {count_include_pad = true, kernel = array<i64: 2, 3>, pads = array<i64: 0, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x6xf32>
  return %0 : tensor<1x2x3x6xf32>
}

// -----

// Without the pads in the count, static H and W: the per-position counts are a constant (OH, OW) tensor;
// f16 is summed in f32 and rounded once after the division.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[HW:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @avg_pool_exclude_pad
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x6x6xf16>, tensor<3x3xf16>) outs(%[[INIT]] : tensor<1x2x2x2xf32>)
// CHECK:         %[[COUNT:.*]] = arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[ID]], #[[HW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SUM]], %[[COUNT]] : tensor<1x2x2x2xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x2x2x2xf16>)
// CHECK-NEXT:    ^bb0(%[[S:.*]]: f32, %[[N:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[T]] : f16
// UPSTREAM-LABEL: func.func @avg_pool_exclude_pad
func.func @avg_pool_exclude_pad(%x: tensor<1x2x4x4xf16>) -> tensor<1x2x2x2xf16> {
  %0 = "graph.avg_pool2d"(%x) {count_include_pad = false, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf16>) -> tensor<1x2x2x2xf16>
  return %0 : tensor<1x2x2x2xf16>
}

// -----

// Dynamic H and W: the count of unpadded cells is computed from linalg.index in the division's body.
// CHECK-LABEL: func.func @avg_pool_dynamic
// CHECK:         %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {{.*}} ins(%[[P]], %{{.*}} : tensor<?x2x?x?xf32>, tensor<2x2xf32>)
// CHECK:         %[[H:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x2x?x?xf32>
// CHECK:         %[[W:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x2x?x?xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x2x?x?xf32>)
// CHECK:           linalg.index 2 : index
// CHECK:           arith.minsi %{{.*}}, %[[H]] : index
// CHECK:           arith.maxsi
// CHECK:           linalg.index 3 : index
// CHECK:           arith.minsi %{{.*}}, %[[W]] : index
// CHECK:           arith.sitofp %{{.*}} : i64 to f32
// CHECK:           arith.divf
// UPSTREAM-LABEL: func.func @avg_pool_dynamic
func.func @avg_pool_dynamic(%x: tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32> {
  %0 = "graph.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  return %0 : tensor<?x2x?x?xf32>
}

// -----

// Unit strides, f32, 40 output columns: out[n, f, oh, ow] = fma(padded[n, c, oh + kh, ow + kw], w[f, c, kh, kw],
// out), loops (n, f, oh, ow) parallel and (c, kh, kw) reductions, no gathered copy of the windows.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[WD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @direct_conv
// CHECK:         %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x5x6x40xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[WD]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[P]], %arg1 : tensor<2x3x8x42xf32>, tensor<5x3x3x3xf32>) outs(%[[INIT]] : tensor<2x5x6x40xf32>) attrs = {graph.direct_conv}
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[F:.*]] = math.fma %[[A]], %[[B]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[F]] : f32
// CHECK-NOT:     linalg.contract
// CHECK:         return %[[R]]
func.func @direct_conv(%x: tensor<2x3x6x40xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<2x5x6x40xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x6x40xf32>, tensor<5x3x3x3xf32>) -> tensor<2x5x6x40xf32>
  return %0 : tensor<2x5x6x40xf32>
}

// -----

// Depthwise, f32, unit strides, rows narrower than a register tile: the direct convolution's generic with the
// channel loop of extent 1 added to the filter (padded[n, f + c, oh + kh, ow + kw], w[f, c, kh, kw] on the
// weights as given), no named depthwise op.
// CHECK-DAG: #[[XD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[WDD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @depthwise_direct
// CHECK:         %[[P:.*]] = tensor.pad %arg0 low[0, 0, 3, 3] high[0, 0, 3, 3]
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x6x5x5xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[XD]], #[[WDD]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[P]], %arg1 : tensor<2x6x11x11xf32>, tensor<6x1x7x7xf32>) outs(%[[INIT]] : tensor<2x6x5x5xf32>) attrs = {graph.direct_conv}
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise_direct(%x: tensor<2x6x5x5xf32>, %w: tensor<6x1x7x7xf32>) -> tensor<2x6x5x5xf32> {
  %0 = "graph.conv2d"(%x, %w) {pads = array<i64: 3, 3, 3, 3>, groups = 6 : i64} : (tensor<2x6x5x5xf32>, tensor<6x1x7x7xf32>) -> tensor<2x6x5x5xf32>
  return %0 : tensor<2x6x5x5xf32>
}

// -----

// Depthwise with strides 2 stays the named op (the direct form reads unit-stride rows).
// CHECK-LABEL: func.func @depthwise_strided
// CHECK:         linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-NOT:     graph.direct_conv
func.func @depthwise_strided(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
