// The schedules of bf16 products of pairs (graphfuse.lowering.contraction.pairs): the copies of B into panels of
// pairs, 32-bit pairs moved whole; the product's register tiles as AVX512_BF16 dot instructions.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// From a transposed B [N, K] (2 panels of 32 columns, K = 80 = 40 pairs): tasks of one panel, tiles of 16 pairs by
// 16 columns, each 16 rows of 16 words transposed by shuffles of whole registers; the last 8 pairs peeled.
// CHECK-LABEL: func.func @pack_transposed_pairs
// CHECK:         scf.forall (%{{.*}}) in (2)
// CHECK:           scf.for {{.*}} to %c32 step %c16
// CHECK:             vector.transfer_read {{.*}} : tensor<16x32xbf16>, vector<16x32xbf16>
// CHECK:             vector.bitcast {{.*}} : vector<16x32xbf16> to vector<16x16xi32>
// CHECK:             vector.shuffle
// CHECK:             vector.bitcast {{.*}} : vector<16x16xi32> to vector<16x32xbf16>
// CHECK:             vector.transfer_write {{.*}} : vector<16x32xbf16>, tensor<16x32xbf16>
// CHECK:           vector.transfer_read {{.*}} : tensor<16x16xbf16>, vector<16x16xbf16>
// CHECK:           vector.transfer_write {{.*}} : vector<8x32xbf16>, tensor<8x32xbf16>
// CHECK-NOT:     linalg.transpose
func.func @pack_transposed_pairs(%bt: tensor<2x32x40x2xbf16>) -> tensor<2x40x32x2xbf16> {
  %e = tensor.empty() : tensor<2x40x32x2xbf16>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_pair_panels", panels_per_task = 1 : i64,
                                           steps = 16 : i64, lanes = 16 : i64}}
    ins(%bt : tensor<2x32x40x2xbf16>) outs(%e : tensor<2x40x32x2xbf16>) permutation = [0, 2, 1, 3]
  return %p : tensor<2x40x32x2xbf16>
}

// -----

// From B [K, N] (K = 8: 4 pairs of rows, one panel of 32 columns): each pair of rows interleaved, in tiles of
// 16 columns.
// CHECK-LABEL: func.func @pack_pairs
// CHECK:         vector.transfer_read {{.*}} : tensor<4x2x16xbf16>, vector<4x2x16xbf16>
// CHECK-COUNT-4: vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// CHECK:         vector.transfer_write {{.*}} : vector<4x32xbf16>, tensor<4x32xbf16>
// CHECK-NOT:     linalg.transpose
func.func @pack_pairs(%b: tensor<4x2x1x32xbf16>) -> tensor<1x4x32x2xbf16> {
  %e = tensor.empty() : tensor<1x4x32x2xbf16>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_pair_panels", panels_per_task = 1 : i64,
                                           steps = 16 : i64, lanes = 16 : i64}}
    ins(%b : tensor<4x2x1x32xbf16>) outs(%e : tensor<1x4x32x2xbf16>) permutation = [2, 0, 3, 1]
  return %p : tensor<1x4x32x2xbf16>
}

// -----

// The product of pairs: register tiles of 8 rows by a panel of 32 columns and one pair of K steps, each row's pair
// of A (32 bits) broadcast to 16 lanes and two dot instructions (16 columns each); the accumulators stay in
// registers across K.
// CHECK-LABEL: func.func @pair_product
// CHECK:         scf.forall
// CHECK:           vector.transfer_read {{.*}} : tensor<8x1x32xf32>, vector<8x1x32xf32>
// CHECK:           scf.for {{.*}} -> (vector<8x1x32xf32>)
// CHECK:             vector.transfer_read {{.*}} : tensor<64xbf16>, vector<64xbf16>
// CHECK:             vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:             vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-16:    x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK:             scf.yield {{.*}} : vector<8x1x32xf32>
// CHECK:           vector.transfer_write {{.*}} : vector<8x1x32xf32>, tensor<8x1x32xf32>
#a = affine_map<(j0, i, j1, k0, k1) -> (i, k0, k1)>
#b = affine_map<(j0, i, j1, k0, k1) -> (j0, k0, j1, k1)>
#c = affine_map<(j0, i, j1, k0, k1) -> (i, j0, j1)>
func.func @pair_product(%a: tensor<16x8x2xbf16>, %bp: tensor<2x8x32x2xbf16>) -> tensor<16x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<16x2x32xf32>) -> tensor<16x2x32xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %bp : tensor<16x8x2xbf16>, tensor<2x8x32x2xbf16>) outs(%fill : tensor<16x2x32xf32>)
      attrs = {graph.schedule = {sequence = "packed_tiles", task_panels = 0 : i64, task_rows = 8 : i64,
                                 block_panels = 8 : i64, block_depth = 128 : i64, tile_rows = 8 : i64}} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x2x32xf32>
  return %p : tensor<16x2x32xf32>
}

// -----

// A product's last 8 columns (a panel of its own): one 256-bit dot instruction per row of the tile.
// CHECK-LABEL: func.func @narrow_panel
// CHECK-COUNT-8: x86vector.avx512.dot {{.*}} : vector<16xbf16> -> vector<8xf32>
// CHECK-NOT:     x86vector.avx512.dot
#a = affine_map<(j0, i, j1, k0, k1) -> (i, k0, k1)>
#b = affine_map<(j0, i, j1, k0, k1) -> (j0, k0, j1, k1)>
#c = affine_map<(j0, i, j1, k0, k1) -> (i, j0, j1)>
func.func @narrow_panel(%a: tensor<8x4x2xbf16>, %bp: tensor<1x4x8x2xbf16>) -> tensor<8x1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1x8xf32>) -> tensor<8x1x8xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %bp : tensor<8x4x2xbf16>, tensor<1x4x8x2xbf16>) outs(%fill : tensor<8x1x8xf32>)
      attrs = {graph.schedule = {sequence = "packed_tiles", task_panels = 0 : i64, task_rows = 8 : i64,
                                 block_panels = 8 : i64, block_depth = 128 : i64, tile_rows = 8 : i64}} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x1x8xf32>
  return %p : tensor<8x1x8xf32>
}
