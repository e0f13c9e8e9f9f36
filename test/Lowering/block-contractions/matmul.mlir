// block-contractions: a statically shaped matmul is blocked for the host's vectors (GRAPHFUSE_VECTOR_BITS sets
// them here): B copied into panels of two vectors' width, the rows shared out as tasks with C's fill computed in
// each, and register tiles of MR rows by one panel as vector FMAs over K (8 x 32 with 512-bit vectors, 6 x 16
// with 256-bit ones).  Dynamic rows are blocked too; a matmul with another dynamic dim keeps its plain form.
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(block-contractions{threads=1})' %s | FileCheck %s --check-prefix=AVX512
// RUN: env GRAPHFUSE_VECTOR_BITS=256 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(block-contractions{threads=1})' %s | FileCheck %s --check-prefix=AVX2

// AVX512-LABEL: func.func @product
// AVX512:         scf.forall {{.*}} -> (tensor<3x128x32xf32>)
// AVX512:         scf.forall {{.*}} -> (tensor<64x3x32xf32>)
// AVX512:           linalg.fill {{.*}} -> tensor<64x3x32xf32>
// AVX512:           vector.transfer_read {{.*}} : tensor<8x1x32xf32>, vector<8x1x32xf32>
// AVX512:           scf.for {{.*}} to %c128
// AVX512-COUNT-8:     vector.fma {{.*}} : vector<32xf32>
// AVX512-NOT:     linalg.matmul
// AVX2-LABEL:   func.func @product
// AVX2:           scf.forall {{.*}} -> (tensor<6x128x16xf32>)
// AVX2:           linalg.fill {{.*}} -> tensor<48x6x16xf32>
// AVX2-COUNT-6:       vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT:       linalg.matmul
func.func @product(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x96xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x96xf32>) -> tensor<64x96xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%fill : tensor<64x96xf32>)
    -> tensor<64x96xf32>
  return %c : tensor<64x96xf32>
}

// -----

// Rows counted at run time: up to 4 (a token's step) B read as it is, register tiles of one row by 96 columns or
// 4 rows by 32 (FMAs of B's row with A's broadcast), each task walking the tiles of rows; more, the whole register
// tiles of rows in tasks (panels by rows) over a count known at run time, each tile 8 FMAs per step of K as a
// static product's; the rows left, when there are any, padded to one tile, a static product of their own.
// AVX512-LABEL: func.func @dynamic_rows
// AVX512:         scf.if
// AVX512:           scf.if
// AVX512:             scf.forall {{.*}} -> (tensor<?x1x96xf32>)
// AVX512:               scf.for {{.*}} -> (vector<1x1x96xf32>)
// AVX512:                 vector.fma {{.*}} : vector<96xf32>
// AVX512:           } else {
// AVX512:             scf.forall {{.*}} -> (tensor<?x4x96xf32>)
// AVX512:               scf.for {{.*}} -> (vector<1x4x32xf32>)
// AVX512-COUNT-4:         vector.fma {{.*}} : vector<32xf32>
// AVX512:       } else {
// AVX512:         scf.forall ({{.*}}, {{.*}}) in ({{.*}}, %{{.*}}) shared_outs({{.*}}) -> (tensor<?x3x32xf32>)
// AVX512:           vector.transfer_read {{.*}} : tensor<8x1x32xf32>, vector<8x1x32xf32>
// AVX512-COUNT-8:     vector.fma {{.*}} : vector<32xf32>
// AVX512:         scf.if
// AVX512:           scf.forall {{.*}} -> (tensor<8x3x32xf32>)
// AVX512-COUNT-8:     vector.fma {{.*}} : vector<32xf32>
// AVX512-NOT:     linalg.matmul
// AVX2-LABEL:   func.func @dynamic_rows
// AVX2:           } else {
// AVX2:             scf.forall {{.*}} -> (tensor<?x4x96xf32>)
// AVX2:         } else {
// AVX2:           scf.forall ({{.*}}, {{.*}}) in ({{.*}}, %{{.*}}) shared_outs({{.*}}) -> (tensor<?x6x16xf32>)
// AVX2-COUNT-6:       vector.fma {{.*}} : vector<16xf32>
// AVX2:           scf.if
// AVX2:             scf.forall {{.*}} -> (tensor<6x6x16xf32>)
func.func @dynamic_rows(%a: tensor<?x128xf32>, %b: tensor<128x96xf32>, %init: tensor<?x96xf32>)
    -> tensor<?x96xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<?x128xf32>, tensor<128x96xf32>) outs(%init : tensor<?x96xf32>)
    -> tensor<?x96xf32>
  return %c : tensor<?x96xf32>
}

// -----

// Negative: a reduction of dynamic length: the product stays as it is.
// AVX512-LABEL: func.func @dynamic_depth
// AVX512-NOT:     scf.forall
// AVX512:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x?xf32>, tensor<?x96xf32>)
// AVX2-LABEL:   func.func @dynamic_depth
// AVX2:           linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x?xf32>, tensor<?x96xf32>)
func.func @dynamic_depth(%a: tensor<16x?xf32>, %b: tensor<?x96xf32>, %init: tensor<16x96xf32>)
    -> tensor<16x96xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<16x?xf32>, tensor<?x96xf32>) outs(%init : tensor<16x96xf32>)
    -> tensor<16x96xf32>
  return %c : tensor<16x96xf32>
}

// -----

// A linear layer over rows counted at run time with W read at run time, up to 32 rows: one row is tiles of one
// row, tasks of 8 columns (rows of W) with vector<1x1x8x16> partial sums; more are tiles of 4 rows, tasks of 4
// columns, each task walking the tiles (a loop counted at run time) with vector<1x4x4x16> partial sums kept
// across K; more than 32 the packed product.
// AVX512-LABEL: func.func @dynamic_rows_linear
// AVX512:         scf.if
// AVX512:           scf.if
// AVX512:             scf.forall (%{{.*}}) in (12) {{.*}} -> (tensor<?x1x96xf32>)
// AVX512:                 scf.for {{.*}} -> (vector<1x1x8x16xf32>)
// AVX512:           } else {
// AVX512:             scf.forall (%{{.*}}) in (24) {{.*}} -> (tensor<?x4x96xf32>)
// AVX512:               scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<?x4x4xf32>)
// AVX512:                 scf.for {{.*}} -> (vector<1x4x4x16xf32>)
// AVX512-COUNT-16:          vector.reduction <add>
// AVX512:         } else {
// AVX512:           scf.forall ({{.*}}, {{.*}}) in ({{.*}}, %{{.*}}) shared_outs({{.*}}) -> (tensor<?x3x32xf32>)
// AVX512-COUNT-8:     vector.fma {{.*}} : vector<32xf32>
func.func @dynamic_rows_linear(%x: tensor<?x128xf32>, %w: tensor<96x128xf32>, %init: tensor<?x96xf32>) -> tensor<?x96xf32> {
  %c = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                      affine_map<(i, j, k) -> (i, j)>]
    ins(%x, %w : tensor<?x128xf32>, tensor<96x128xf32>) outs(%init : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %c : tensor<?x96xf32>
}
