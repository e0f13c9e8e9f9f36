// Round trip of the neural-network ops: graphfuse-opt (with graph-verify) and upstream mlir-opt
// (IRDL only) parse and print them unchanged.
// RUN: graphfuse-opt %s | graphfuse-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %arg0: tensor<2x8x4xf32>, %arg1: tensor<16x4xf32>, %arg2: tensor<4x8xf32>) -> (tensor<2x8x16xf32>, tensor<8x8xf32>) {
// CHECK-NEXT:    %0 = "graph.matmul"(%arg0, %arg1) {transpose_b = true} : (tensor<2x8x4xf32>, tensor<16x4xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    %1 = "graph.matmul"(%arg2, %arg2) {transpose_a = true, transpose_b = false} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    return %0, %1 : tensor<2x8x16xf32>, tensor<8x8xf32>
func.func @matmul(%a: tensor<2x8x4xf32>, %b: tensor<16x4xf32>, %c: tensor<4x8xf32>) -> (tensor<2x8x16xf32>, tensor<8x8xf32>) {
  %0 = "graph.matmul"(%a, %b) {transpose_b = true} : (tensor<2x8x4xf32>, tensor<16x4xf32>) -> tensor<2x8x16xf32>
  %1 = "graph.matmul"(%c, %c) {transpose_a = true, transpose_b = false} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0, %1 : tensor<2x8x16xf32>, tensor<8x8xf32>
}

// CHECK-LABEL: func.func @matmul_types(
// CHECK-SAME:    %arg0: tensor<?x4x8xbf16>, %arg1: tensor<8x2xbf16>, %arg2: tensor<4x8xi8>, %arg3: tensor<8xi8>, %arg4: tensor<3x8xi64>) -> (tensor<?x4x2xbf16>, tensor<4xi8>, tensor<4x3xi64>) {
// CHECK-NEXT:    %0 = "graph.matmul"(%arg0, %arg1) : (tensor<?x4x8xbf16>, tensor<8x2xbf16>) -> tensor<?x4x2xbf16>
// CHECK-NEXT:    %1 = "graph.matmul"(%arg2, %arg3) : (tensor<4x8xi8>, tensor<8xi8>) -> tensor<4xi8>
// CHECK-NEXT:    %2 = "graph.cast"(%arg2) : (tensor<4x8xi8>) -> tensor<4x8xi64>
// CHECK-NEXT:    %3 = "graph.matmul"(%2, %arg4) {transpose_b = true} : (tensor<4x8xi64>, tensor<3x8xi64>) -> tensor<4x3xi64>
// CHECK-NEXT:    return %0, %1, %3 : tensor<?x4x2xbf16>, tensor<4xi8>, tensor<4x3xi64>
func.func @matmul_types(%a: tensor<?x4x8xbf16>, %b: tensor<8x2xbf16>, %i: tensor<4x8xi8>, %j: tensor<8xi8>, %k: tensor<3x8xi64>) -> (tensor<?x4x2xbf16>, tensor<4xi8>, tensor<4x3xi64>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<?x4x8xbf16>, tensor<8x2xbf16>) -> tensor<?x4x2xbf16>
  // A 1-D b is a column vector whose dim is dropped.
  %1 = "graph.matmul"(%i, %j) : (tensor<4x8xi8>, tensor<8xi8>) -> tensor<4xi8>
  %2 = "graph.cast"(%i) : (tensor<4x8xi8>) -> tensor<4x8xi64>
  %3 = "graph.matmul"(%2, %k) {transpose_b = true} : (tensor<4x8xi64>, tensor<3x8xi64>) -> tensor<4x3xi64>
  return %0, %1, %3 : tensor<?x4x2xbf16>, tensor<4xi8>, tensor<4x3xi64>
}

// CHECK-LABEL: func.func @bias_add(
// CHECK-SAME:    %arg0: tensor<?x3x4x4xf16>, %arg1: tensor<3xf16>, %arg2: tensor<2x8xf16>, %arg3: tensor<8xf16>) -> (tensor<?x3x4x4xf16>, tensor<2x8xf16>) {
// CHECK-NEXT:    %0 = "graph.bias_add"(%arg0, %arg1) {axis = 1 : i64} : (tensor<?x3x4x4xf16>, tensor<3xf16>) -> tensor<?x3x4x4xf16>
// CHECK-NEXT:    %1 = "graph.bias_add"(%arg2, %arg3) : (tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:    return %0, %1 : tensor<?x3x4x4xf16>, tensor<2x8xf16>
func.func @bias_add(%x: tensor<?x3x4x4xf16>, %b: tensor<3xf16>, %y: tensor<2x8xf16>, %c: tensor<8xf16>) -> (tensor<?x3x4x4xf16>, tensor<2x8xf16>) {
  %0 = "graph.bias_add"(%x, %b) {axis = 1 : i64} : (tensor<?x3x4x4xf16>, tensor<3xf16>) -> tensor<?x3x4x4xf16>
  %1 = "graph.bias_add"(%y, %c) : (tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  return %0, %1 : tensor<?x3x4x4xf16>, tensor<2x8xf16>
}

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %arg0: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
// CHECK-NEXT:    %0 = "graph.softmax"(%arg0) {axis = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %1 = "graph.softmax"(%arg0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %2 = "graph.log_softmax"(%arg0) {axis = -2 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
func.func @softmax(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = "graph.softmax"(%x) {axis = 0 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.softmax"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = "graph.log_softmax"(%x) {axis = -2 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @norms(
// CHECK-SAME:    %arg0: tensor<?x4x8xbf16>, %arg1: tensor<4x8xbf16>, %arg2: tensor<2x8xf16>, %arg3: tensor<8xf16>) -> (tensor<?x4x8xbf16>, tensor<2x8xf16>) {
// CHECK-NEXT:    %0 = "graph.layer_norm"(%arg0, %arg1, %arg1) {begin_norm_axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<?x4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4x8xbf16>
// CHECK-NEXT:    %1 = "graph.rms_norm"(%arg2, %arg3) {epsilon = 0.000000e+00 : f32} : (tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:    return %0, %1 : tensor<?x4x8xbf16>, tensor<2x8xf16>
func.func @norms(%x: tensor<?x4x8xbf16>, %g: tensor<4x8xbf16>, %x2: tensor<2x8xf16>, %g2: tensor<8xf16>) -> (tensor<?x4x8xbf16>, tensor<2x8xf16>) {
  %0 = "graph.layer_norm"(%x, %g, %g) {begin_norm_axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<?x4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4x8xbf16>
  %1 = "graph.rms_norm"(%x2, %g2) {epsilon = 0.000000e+00 : f32} : (tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  return %0, %1 : tensor<?x4x8xbf16>, tensor<2x8xf16>
}

// CHECK-LABEL: func.func @batch_norm(
// CHECK-SAME:    %arg0: tensor<2x3x?x4xf32>, %arg1: tensor<3xf32>) -> tensor<2x3x?x4xf32> {
// CHECK-NEXT:    %0 = "graph.batch_norm"(%arg0, %arg1, %arg1, %arg1, %arg1) {epsilon = 1.000000e-01 : f32} : (tensor<2x3x?x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x?x4xf32>
// CHECK-NEXT:    return %0 : tensor<2x3x?x4xf32>
func.func @batch_norm(%x: tensor<2x3x?x4xf32>, %p: tensor<3xf32>) -> tensor<2x3x?x4xf32> {
  %0 = "graph.batch_norm"(%x, %p, %p, %p, %p) {epsilon = 1.000000e-01 : f32} : (tensor<2x3x?x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x?x4xf32>
  return %0 : tensor<2x3x?x4xf32>
}

// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:    %arg0: tensor<1x4x8x8xf32>, %arg1: tensor<6x2x3x3xf32>, %arg2: tensor<?x3x?x8xf16>, %arg3: tensor<5x3x2x2xf16>) -> (tensor<1x6x4x6xf32>, tensor<?x5x?x7xf16>) {
// CHECK-NEXT:    %0 = "graph.conv2d"(%arg0, %arg1) {dilations = array<i64: 1, 2>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x6xf32>
// CHECK-NEXT:    %1 = "graph.conv2d"(%arg2, %arg3) : (tensor<?x3x?x8xf16>, tensor<5x3x2x2xf16>) -> tensor<?x5x?x7xf16>
// CHECK-NEXT:    return %0, %1 : tensor<1x6x4x6xf32>, tensor<?x5x?x7xf16>
func.func @conv2d(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %xd: tensor<?x3x?x8xf16>, %wd: tensor<5x3x2x2xf16>) -> (tensor<1x6x4x6xf32>, tensor<?x5x?x7xf16>) {
  %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 2>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x6xf32>
  // Dynamic N and H are allowed; the kernel must be static.
  %1 = "graph.conv2d"(%xd, %wd) : (tensor<?x3x?x8xf16>, tensor<5x3x2x2xf16>) -> tensor<?x5x?x7xf16>
  return %0, %1 : tensor<1x6x4x6xf32>, tensor<?x5x?x7xf16>
}

// CHECK-LABEL: func.func @pooling(
// CHECK-SAME:    %arg0: tensor<1x2x7x7xi32>, %arg1: tensor<?x2x6x6xbf16>) -> (tensor<1x2x4x4xi32>, tensor<?x2x3x6xbf16>, tensor<?x2x5x5xbf16>) {
// CHECK-NEXT:    %0 = "graph.max_pool2d"(%arg0) {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xi32>) -> tensor<1x2x4x4xi32>
// CHECK-NEXT:    %1 = "graph.avg_pool2d"(%arg1) {count_include_pad = true, kernel = array<i64: 2, 3>, pads = array<i64: 0, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<?x2x6x6xbf16>) -> tensor<?x2x3x6xbf16>
// CHECK-NEXT:    %2 = "graph.avg_pool2d"(%arg1) {kernel = array<i64: 2, 2>} : (tensor<?x2x6x6xbf16>) -> tensor<?x2x5x5xbf16>
// CHECK-NEXT:    return %0, %1, %2 : tensor<1x2x4x4xi32>, tensor<?x2x3x6xbf16>, tensor<?x2x5x5xbf16>
func.func @pooling(%x: tensor<1x2x7x7xi32>, %y: tensor<?x2x6x6xbf16>) -> (tensor<1x2x4x4xi32>, tensor<?x2x3x6xbf16>, tensor<?x2x5x5xbf16>) {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xi32>) -> tensor<1x2x4x4xi32>
  %1 = "graph.avg_pool2d"(%y) {count_include_pad = true, kernel = array<i64: 2, 3>, pads = array<i64: 0, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<?x2x6x6xbf16>) -> tensor<?x2x3x6xbf16>
  %2 = "graph.avg_pool2d"(%y) {kernel = array<i64: 2, 2>} : (tensor<?x2x6x6xbf16>) -> tensor<?x2x5x5xbf16>
  return %0, %1, %2 : tensor<1x2x4x4xi32>, tensor<?x2x3x6xbf16>, tensor<?x2x5x5xbf16>
}

// dynamic_quant has two results (i8 values, f32 per-row scales) and an optional operand.
// CHECK-LABEL: func.func @dynamic_quant(
// CHECK-SAME:    %arg0: tensor<?x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<2x3x8xf16>) -> (tensor<?x16xi8>, tensor<?xf32>, tensor<2x3x8xi8>, tensor<2x3xf32>) {
// CHECK-NEXT:    %0:2 = "graph.dynamic_quant"(%arg0, %arg1) : (tensor<?x16xf32>, tensor<16xf32>) -> (tensor<?x16xi8>, tensor<?xf32>)
// CHECK-NEXT:    %1:2 = "graph.dynamic_quant"(%arg2) : (tensor<2x3x8xf16>) -> (tensor<2x3x8xi8>, tensor<2x3xf32>)
// CHECK-NEXT:    return %0#0, %0#1, %1#0, %1#1 : tensor<?x16xi8>, tensor<?xf32>, tensor<2x3x8xi8>, tensor<2x3xf32>
func.func @dynamic_quant(%x: tensor<?x16xf32>, %s: tensor<16xf32>, %h: tensor<2x3x8xf16>) -> (tensor<?x16xi8>, tensor<?xf32>, tensor<2x3x8xi8>, tensor<2x3xf32>) {
  %0:2 = "graph.dynamic_quant"(%x, %s) : (tensor<?x16xf32>, tensor<16xf32>) -> (tensor<?x16xi8>, tensor<?xf32>)
  %1:2 = "graph.dynamic_quant"(%h) : (tensor<2x3x8xf16>) -> (tensor<2x3x8xi8>, tensor<2x3xf32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<?x16xi8>, tensor<?xf32>, tensor<2x3x8xi8>, tensor<2x3xf32>
}

// group_norm: any rank >= 2, groups dividing the channels (one per channel: Wav2Vec2's), the batch may be dynamic.
// CHECK-LABEL: func.func @group_norm(
// CHECK-NEXT:    %0 = "graph.group_norm"(%arg0, %arg1, %arg1) {epsilon = 9.99999974E-6 : f32, num_groups = 2 : i64} : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
// CHECK-NEXT:    %1 = "graph.group_norm"(%arg2, %arg3, %arg3) {num_groups = 8 : i64} : (tensor<?x8x33xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<?x8x33xbf16>
func.func @group_norm(%x: tensor<2x6x4x4xf32>, %g: tensor<6xf32>, %w: tensor<?x8x33xbf16>, %h: tensor<8xbf16>) -> (tensor<2x6x4x4xf32>, tensor<?x8x33xbf16>) {
  %0 = "graph.group_norm"(%x, %g, %g) {num_groups = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  %1 = "graph.group_norm"(%w, %h, %h) {num_groups = 8 : i64} : (tensor<?x8x33xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<?x8x33xbf16>
  return %0, %1 : tensor<2x6x4x4xf32>, tensor<?x8x33xbf16>
}

// resize: the last two dims (or the last one) get new sizes; nearest reads any element type.
// CHECK-LABEL: func.func @resize(
// CHECK-NEXT:    %0 = "graph.resize"(%arg0) {mode = "bilinear", size = array<i64: 10, 12>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x10x12xf32>
// CHECK-NEXT:    %1 = "graph.resize"(%arg0) {align_corners = true, mode = "bilinear", size = array<i64: 3, 4>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x3x4xf32>
// CHECK-NEXT:    %2 = "graph.resize"(%arg0) {mode = "nearest", ratio_h = 0.666666686 : f32, ratio_w = 5.000000e-01 : f32, size = array<i64: 7, 12>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x7x12xf32>
// CHECK-NEXT:    %3 = "graph.resize"(%arg1) {mode = "nearest_exact", size = array<i64: 17>} : (tensor<4x9xi64>) -> tensor<4x17xi64>
func.func @resize(%x: tensor<2x3x5x6xf32>, %ids: tensor<4x9xi64>) -> (tensor<2x3x10x12xf32>, tensor<2x3x3x4xf32>, tensor<2x3x7x12xf32>, tensor<4x17xi64>) {
  %0 = "graph.resize"(%x) {size = array<i64: 10, 12>, mode = "bilinear"} : (tensor<2x3x5x6xf32>) -> tensor<2x3x10x12xf32>
  %1 = "graph.resize"(%x) {size = array<i64: 3, 4>, mode = "bilinear", align_corners = true} : (tensor<2x3x5x6xf32>) -> tensor<2x3x3x4xf32>
  // A scale factor of 1.5 gives 7 rows and steps by 1 / 1.5, not by 5 / 7.
  %2 = "graph.resize"(%x) {size = array<i64: 7, 12>, mode = "nearest", ratio_h = 0.666666686 : f32, ratio_w = 0.5 : f32} : (tensor<2x3x5x6xf32>) -> tensor<2x3x7x12xf32>
  %3 = "graph.resize"(%ids) {size = array<i64: 17>, mode = "nearest_exact"} : (tensor<4x9xi64>) -> tensor<4x17xi64>
  return %0, %1, %2, %3 : tensor<2x3x10x12xf32>, tensor<2x3x3x4xf32>, tensor<2x3x7x12xf32>, tensor<4x17xi64>
}

// grouped_matmul: rows sorted by group times each group's matrix; the weights as [groups, k, n] or, with
// transpose_weights, [groups, n, k]; i32 or i64 ends; a dynamic number of rows.
// CHECK-LABEL: func.func @grouped_matmul(
// CHECK-NEXT:    %0 = "graph.grouped_matmul"(%arg0, %arg1, %arg3) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<8x5xf32>
// CHECK-NEXT:    %1 = "graph.grouped_matmul"(%arg0, %arg2, %arg4) {transpose_weights = true} : (tensor<8x4xf32>, tensor<3x5x4xf32>, tensor<3xi32>) -> tensor<8x5xf32>
// CHECK-NEXT:    %2 = "graph.grouped_matmul"(%arg5, %arg6, %arg4) {transpose_weights = false} : (tensor<?x16xbf16>, tensor<3x16x2xbf16>, tensor<3xi32>) -> tensor<?x2xbf16>
func.func @grouped_matmul(%x: tensor<8x4xf32>, %w: tensor<3x4x5xf32>, %wt: tensor<3x5x4xf32>, %ends: tensor<3xi64>, %ends32: tensor<3xi32>, %y: tensor<?x16xbf16>, %v: tensor<3x16x2xbf16>) -> (tensor<8x5xf32>, tensor<8x5xf32>, tensor<?x2xbf16>) {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<8x4xf32>, tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<8x5xf32>
  %1 = "graph.grouped_matmul"(%x, %wt, %ends32) {transpose_weights = true} : (tensor<8x4xf32>, tensor<3x5x4xf32>, tensor<3xi32>) -> tensor<8x5xf32>
  %2 = "graph.grouped_matmul"(%y, %v, %ends32) {transpose_weights = false} : (tensor<?x16xbf16>, tensor<3x16x2xbf16>, tensor<3xi32>) -> tensor<?x2xbf16>
  return %0, %1, %2 : tensor<8x5xf32>, tensor<8x5xf32>, tensor<?x2xbf16>
}
