// The schedules of direct_conv.mlir: a unit-stride convolution as one generic over (n, f, oh, ow, c, kh, kw),
// the output columns its vector lanes here.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// Tasks of 2 output rows, C's fill in each; rows of 24 columns as a tile of 16 lanes and the remainder as one
// of 8 (the column ladder); register tiles of 4 filters by one row, an accumulator held in registers across the
// reduction over (c, kh, kw).
// CHECK-LABEL: func.func @direct_conv
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 2) {{.*}} -> (tensor<1x8x4x24xf32>)
// CHECK:           vector.transfer_read {{.*}} vector<4x16xf32>
// CHECK:           scf.for {{.*}} -> (vector<4x16xf32>)
// CHECK:             math.fma {{.*}} : vector<4x16xf32>
// CHECK:           vector.transfer_read {{.*}} vector<4x8xf32>
// CHECK:           scf.for {{.*}} -> (vector<4x8xf32>)
// CHECK:             math.fma {{.*}} : vector<4x8xf32>
// CHECK-NOT:     linalg.generic
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @direct_conv(%x: tensor<1x3x6x26xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x4x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x24xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x24xf32>) -> tensor<1x8x4x24xf32>
  %r = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"],
                       graph.schedule = {sequence = "direct_conv", task_dim1 = 0 : i64, task_dim2 = 2 : i64,
                                         vector_columns = 16 : i64, tile_dim1 = 4 : i64, tile_dim2 = 1 : i64,
                                         remainder_width_0 = 8 : i64, remainder_width_1 = 4 : i64,
                                         remainder_width_2 = 2 : i64, remainder_width_3 = 1 : i64,
                                         remainder_width_4 = 1 : i64}}
    ins(%x, %w : tensor<1x3x6x26xf32>, tensor<8x3x3x3xf32>) outs(%fill : tensor<1x8x4x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x24xf32>
  return %r : tensor<1x8x4x24xf32>
}

// -----

// With its epilogue (a bias add) alone reading it: the epilogue in tasks of 2 output rows, the convolution and
// its fill fused into each, the epilogue then in vectors of 16 columns (the last 8 peeled).
// CHECK-LABEL: func.func @with_epilogue
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 2) {{.*}} -> (tensor<1x8x4x24xf32>)
// CHECK:           math.fma {{.*}} : vector<4x16xf32>
// CHECK:           math.fma {{.*}} : vector<4x8xf32>
// CHECK:           arith.addf {{.*}} : vector<16xf32>
// CHECK:           arith.addf {{.*}} : vector<8xf32>
#in2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#id = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
#bias = affine_map<(n, f, oh, ow) -> (f)>
func.func @with_epilogue(%x: tensor<1x3x6x26xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x4x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x24xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x24xf32>) -> tensor<1x8x4x24xf32>
  %c = linalg.generic {indexing_maps = [#in2, #w2, #out2],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"],
                       graph.schedule = {sequence = "direct_conv_with_epilogue", task_rows = 2 : i64,
                                         vector_columns = 16 : i64, tile_dim1 = 4 : i64, tile_dim2 = 1 : i64,
                                         remainder_width_0 = 8 : i64, remainder_width_1 = 4 : i64,
                                         remainder_width_2 = 2 : i64, remainder_width_3 = 1 : i64,
                                         remainder_width_4 = 1 : i64}}
    ins(%x, %w : tensor<1x3x6x26xf32>, tensor<8x3x3x3xf32>) outs(%fill : tensor<1x8x4x24xf32>) {
  ^bb0(%a: f32, %bw: f32, %acc: f32):
    %s = math.fma %a, %bw, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x24xf32>
  %out = tensor.empty() : tensor<1x8x4x24xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%c, %b : tensor<1x8x4x24xf32>, tensor<8xf32>) outs(%out : tensor<1x8x4x24xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x24xf32>
  return %r : tensor<1x8x4x24xf32>
}
