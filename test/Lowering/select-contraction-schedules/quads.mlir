// select-contraction-schedules on int8 products: with int8 dot products (AVX512_VNNI's vpdpbusd) a matmul of int8
// operands into i32 becomes a product of quads of K steps reading A's bytes shifted to unsigned (A xor 0x80 =
// A + 128), B copied into panels of quads [N / NR, K / 4, NR, 4] (or packed when compiling, from a constant), C
// starting from minus 128 times the sums of B's columns; without them it keeps the plain register tiles.
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2 dot-products=int8})' %s | FileCheck %s
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2 dot-products=bf16})' %s | FileCheck %s --check-prefix=NOINT8

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// quant_batch_matmul's form: x [48, 256] by a weight [128, 256] read transposed, dequantized to f16.  Panels of 64
// columns (2), blocks of 128 quads; the columns' sums reduce each row of the weight (K innermost); C's start
// fused into the tasks with the epilogue.  The columns' sums are shared out by panels, A's bytes made unsigned
// by rows.
// CHECK-LABEL: func.func @linear
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<48x256xi8>) attrs =  {graph.schedule = {rows_per_task = 16 : i64, sequence = "epilogue_rows", vector_columns = 64 : i64}}
// CHECK:           arith.xori %{{.*}}, %{{.*}} : i8
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x64x64x4xi8>) outs(%{{.*}} : tensor<2x64x64x4xi8>) permutation = [0, 2, 1, 3]  {graph.pack_transposed_pairs, graph.schedule = {lanes = 16 : i64, panels_per_task = 1 : i64, sequence = "pack_pair_panels", steps = 16 : i64}}
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x64x256xi8>) outs(%{{.*}} : tensor<2x64xi32>) attrs =  {graph.schedule = {sequence = "column_sums", task_inner = 0 : i64, task_outer = 1 : i64}}
// CHECK:           arith.muli %{{.*}}, %c-128_i32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<2x64xi32>) outs(%{{.*}} : tensor<48x2x64xi32>) attrs =  {graph.compensated_init}
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<48x64x4xi8>, tensor<2x64x64x4xi8>) outs(%{{.*}} : tensor<48x2x64xi32>)
// CHECK-SAME:      graph.schedule = {block_depth = 128 : i64, block_panels = 4 : i64, sequence = "packed_tiles_with_epilogue_filled", task_panels = 0 : i64, task_rows = 48 : i64, tile_rows = 6 : i64}
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<48x2x64xf16>)
// NOINT8-LABEL:  func.func @linear
// NOINT8-NOT:      arith.xori
// NOINT8:          graph.schedule = {block_columns = 256 : i64, block_depth = 256 : i64, rows_per_task = 48 : i64, sequence = "register_tiles", tile_columns = 32 : i64, tile_rows = 8 : i64}
func.func @linear(%x: tensor<48x256xi8>, %w: tensor<128x256xi8>, %s: tensor<128xf32>) -> tensor<48x128xf16> {
  %zero = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<48x128xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%e0 : tensor<48x128xi32>) -> tensor<48x128xi32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<48x256xi8>, tensor<128x256xi8>)
      outs(%fill : tensor<48x128xi32>) -> tensor<48x128xi32>
  %e1 = tensor.empty() : tensor<48x128xf16>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %s : tensor<48x128xi32>, tensor<128xf32>) outs(%e1 : tensor<48x128xf16>) {
  ^bb0(%v: i32, %scale: f32, %out: f16):
    %f = arith.sitofp %v : i32 to f32
    %t = arith.mulf %f, %scale : f32
    %r = arith.truncf %t : f32 to f16
    linalg.yield %r : f16
  } -> tensor<48x128xf16>
  return %y : tensor<48x128xf16>
}

// -----

// A constant B [4, 16] packed into quads when compiling (one panel of 16 columns): rows 4k .. 4k + 3 interleaved
// column by column (1, 2, 3, 4 for column 0; -128, 127, 0, -1 for column 1), and the columns' compensation
// folded: -128 x (1 + 2 + 3 + 4) = -1280, -128 x (-128 + 127 + 0 - 1) = 256.
// CHECK-LABEL: func.func @constant_b
// CHECK:         arith.constant dense<{{\[\[\[\[}}1, 2, 3, 4], [-128, 127, 0, -1], [0, 0, 0, 0], {{.*}}> : tensor<1x1x16x4xi8>
// CHECK:         arith.constant dense<{{\[\[}}-1280, 256, {{.*}}]]> : tensor<1x16xi32>
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     "column_sums"
func.func @constant_b(%x: tensor<16x4xi8>) -> tensor<16x16xi32> {
  %w = arith.constant dense<[[1, -128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                             [2, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                             [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                             [4, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<4x16xi8>
  %zero = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<16x16xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%e0 : tensor<16x16xi32>) -> tensor<16x16xi32>
  %p = linalg.matmul ins(%x, %w : tensor<16x4xi8>, tensor<4x16xi8>) outs(%fill : tensor<16x16xi32>) -> tensor<16x16xi32>
  return %p : tensor<16x16xi32>
}

// -----

// B [K, N] an argument: its columns' sums reduce over K outermost, shared out by panels (the inner loops).
// CHECK-LABEL: func.func @b_rows
// CHECK:         linalg.transpose {{.*}} {graph.pack_pairs,
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<8x2x64xi8>) outs(%{{.*}} : tensor<2x64xi32>) attrs =  {graph.schedule = {sequence = "column_sums", task_inner = 1 : i64, task_outer = 0 : i64}}
func.func @b_rows(%x: tensor<16x8xi8>, %w: tensor<8x128xi8>) -> tensor<16x128xi32> {
  %zero = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<16x128xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%e0 : tensor<16x128xi32>) -> tensor<16x128xi32>
  %p = linalg.matmul ins(%x, %w : tensor<16x8xi8>, tensor<8x128xi8>) outs(%fill : tensor<16x128xi32>) -> tensor<16x128xi32>
  return %p : tensor<16x128xi32>
}

// -----

// Negative: K = 6 (no whole quads); the plain register tiles, A read as it is.
// CHECK-LABEL: func.func @not_quads
// CHECK-NOT:     arith.xori
// CHECK:         sequence = "register_tiles"
func.func @not_quads(%x: tensor<16x6xi8>, %w: tensor<6x32xi8>) -> tensor<16x32xi32> {
  %zero = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<16x32xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%e0 : tensor<16x32xi32>) -> tensor<16x32xi32>
  %p = linalg.matmul ins(%x, %w : tensor<16x6xi8>, tensor<6x32xi8>) outs(%fill : tensor<16x32xi32>) -> tensor<16x32xi32>
  return %p : tensor<16x32xi32>
}
