// The schedules of int8 products of quads (graphfuse.lowering.contraction.pairs): the copies of B into panels of
// quads, 32-bit quads moved whole; the product's register tiles as AVX512_VNNI dot instructions (vpdpbusd, LLVM's
// intrinsic); C's start plus the columns' compensation fused into the tasks and left to LLVM's loops.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// From a transposed B [N, K] (one panel of 32 columns, K = 64 = 16 quads): 16 rows of 16 words transposed.
// CHECK-LABEL: func.func @pack_transposed_quads
// CHECK:         vector.transfer_read {{.*}} : tensor<16x64xi8>, vector<16x64xi8>
// CHECK:         vector.bitcast {{.*}} : vector<16x64xi8> to vector<16x16xi32>
// CHECK:         vector.shuffle
// CHECK:         vector.bitcast {{.*}} : vector<16x16xi32> to vector<16x64xi8>
// CHECK:         vector.transfer_write {{.*}} : vector<16x64xi8>, tensor<16x64xi8>
// CHECK-NOT:     linalg.transpose
func.func @pack_transposed_quads(%bt: tensor<1x32x16x4xi8>) -> tensor<1x16x32x4xi8> {
  %e = tensor.empty() : tensor<1x16x32x4xi8>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_pair_panels", panels_per_task = 1 : i64,
                                           steps = 16 : i64, lanes = 16 : i64}}
    ins(%bt : tensor<1x32x16x4xi8>) outs(%e : tensor<1x16x32x4xi8>) permutation = [0, 2, 1, 3]
  return %p : tensor<1x16x32x4xi8>
}

// -----

// From B [K, N] (K = 8: 2 quads of rows, one panel of 16 columns): rows 0 and 2, 1 and 3 interleaved, then the
// two results: each column's 4 bytes together.
// CHECK-LABEL: func.func @pack_quads
// CHECK:         vector.transfer_read {{.*}} : tensor<2x4x16xi8>, vector<2x4x16xi8>
// CHECK-COUNT-2: vector.interleave {{.*}} : vector<16xi8> -> vector<32xi8>
// CHECK:         vector.interleave {{.*}} : vector<32xi8> -> vector<64xi8>
// CHECK-COUNT-2: vector.interleave {{.*}} : vector<16xi8> -> vector<32xi8>
// CHECK:         vector.interleave {{.*}} : vector<32xi8> -> vector<64xi8>
// CHECK:         vector.transfer_write {{.*}} : vector<2x64xi8>, tensor<2x64xi8>
// CHECK-NOT:     linalg.transpose
func.func @pack_quads(%b: tensor<2x4x1x16xi8>) -> tensor<1x2x16x4xi8> {
  %e = tensor.empty() : tensor<1x2x16x4xi8>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_pair_panels", panels_per_task = 1 : i64,
                                           steps = 16 : i64, lanes = 16 : i64}}
    ins(%b : tensor<2x4x1x16xi8>) outs(%e : tensor<1x2x16x4xi8>) permutation = [2, 0, 3, 1]
  return %p : tensor<1x2x16x4xi8>
}

// -----

// The product of quads: register tiles of 6 rows by a panel of 64 columns and one quad of K, each row's quad of A
// broadcast to 16 lanes and four vpdpbusd (16 columns each); the accumulators stay in registers across K; C starts
// from the compensation, by loops (not vectorized whole).
// CHECK-LABEL: func.func @quad_product
// CHECK:         scf.forall
// CHECK:           linalg.generic {{.*}} outs(%{{.*}} : tensor<6x1x64xi32>)
// CHECK-NOT:         graph.vectorize
// CHECK:           vector.transfer_read {{.*}} : tensor<6x1x64xi32>, vector<6x1x64xi32>
// CHECK:           scf.for {{.*}} -> (vector<6x1x64xi32>)
// CHECK:             vector.transfer_read {{.*}} : tensor<256xi8>, vector<256xi8>
// CHECK:             vector.bitcast {{.*}} : vector<4xi8> to vector<1xi32>
// CHECK:             vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-24:    llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"({{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:             scf.yield {{.*}} : vector<6x1x64xi32>
// CHECK:           vector.transfer_write {{.*}} : vector<6x1x64xi32>, tensor<6x1x64xi32>
#a = affine_map<(j0, i, j1, k0, k1) -> (i, k0, k1)>
#b = affine_map<(j0, i, j1, k0, k1) -> (j0, k0, j1, k1)>
#c = affine_map<(j0, i, j1, k0, k1) -> (i, j0, j1)>
func.func @quad_product(%a: tensor<12x8x4xi8>, %bp: tensor<1x8x64x4xi8>, %comp: tensor<1x64xi32>) -> tensor<12x1x64xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<12x1x64xi32>
  %init = linalg.generic {indexing_maps = [affine_map<(i, p, c) -> (p, c)>, affine_map<(i, p, c) -> (i, p, c)>],
                          iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%comp : tensor<1x64xi32>) outs(%e : tensor<12x1x64xi32>) attrs = {graph.compensated_init} {
  ^bb0(%v: i32, %out: i32):
    %s = arith.addi %zero, %v : i32
    linalg.yield %s : i32
  } -> tensor<12x1x64xi32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %bp : tensor<12x8x4xi8>, tensor<1x8x64x4xi8>) outs(%init : tensor<12x1x64xi32>)
      attrs = {graph.schedule = {sequence = "packed_tiles_filled", task_panels = 0 : i64, task_rows = 6 : i64,
                                 block_panels = 4 : i64, block_depth = 128 : i64, tile_rows = 6 : i64}} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %m = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %m : i32
    linalg.yield %s : i32
  } -> tensor<12x1x64xi32>
  return %p : tensor<12x1x64xi32>
}

// -----

// A product's last 8 columns (a panel of its own): one 256-bit vpdpbusd per row of the tile.
// CHECK-LABEL: func.func @narrow_panel
// CHECK-COUNT-6: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"({{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// CHECK-NOT:     vpdpbusd
#a = affine_map<(j0, i, j1, k0, k1) -> (i, k0, k1)>
#b = affine_map<(j0, i, j1, k0, k1) -> (j0, k0, j1, k1)>
#c = affine_map<(j0, i, j1, k0, k1) -> (i, j0, j1)>
func.func @narrow_panel(%a: tensor<6x4x4xi8>, %bp: tensor<1x4x8x4xi8>) -> tensor<6x1x8xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<6x1x8xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%e : tensor<6x1x8xi32>) -> tensor<6x1x8xi32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %bp : tensor<6x4x4xi8>, tensor<1x4x8x4xi8>) outs(%fill : tensor<6x1x8xi32>)
      attrs = {graph.schedule = {sequence = "packed_tiles", task_panels = 0 : i64, task_rows = 6 : i64,
                                 block_panels = 8 : i64, block_depth = 128 : i64, tile_rows = 6 : i64}} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %m = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %m : i32
    linalg.yield %s : i32
  } -> tensor<6x1x8xi32>
  return %p : tensor<6x1x8xi32>
}

// -----

// The sums of a transposed B's columns (4 panels of 16, K = 32): tasks of 2 panels, each reducing its rows of B.
// CHECK-LABEL: func.func @column_sums
// CHECK:         scf.forall (%{{.*}}) in (2)
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<2x16x32xi8>) outs(%{{.*}} : tensor<2x16xi32>)
// CHECK-NOT:     graph.schedule
func.func @column_sums(%bt: tensor<4x16x32xi8>) -> tensor<4x16xi32> {
  %zero = arith.constant 0 : i32
  %m = arith.constant -128 : i32
  %e = tensor.empty() : tensor<4x16xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%e : tensor<4x16xi32>) -> tensor<4x16xi32>
  %s = linalg.generic {indexing_maps = [affine_map<(p, c, k) -> (p, c, k)>, affine_map<(p, c, k) -> (p, c)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%bt : tensor<4x16x32xi8>) outs(%fill : tensor<4x16xi32>)
      attrs = {graph.schedule = {sequence = "column_sums", task_outer = 2 : i64, task_inner = 0 : i64}} {
  ^bb0(%v: i8, %acc: i32):
    %w = arith.extsi %v : i8 to i32
    %x = arith.muli %w, %m : i32
    %y = arith.addi %acc, %x : i32
    linalg.yield %y : i32
  } -> tensor<4x16xi32>
  return %s : tensor<4x16xi32>
}
