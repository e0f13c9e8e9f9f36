// select-contraction-schedules on bf16 products: with bf16 dot products (AVX512_BF16's vdpbf16ps) a matmul of bf16
// operands into f32 becomes a product of pairs of K steps, B copied into panels of pairs [N / NR, K / 2, NR, 2] (or
// packed when compiling, from a constant), its elementwise epilogue rounding to bf16 fused into its blocks; without
// them it keeps the plain register tiles.
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2 dot-products=bf16})' %s | FileCheck %s
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2 dot-products=none})' %s | FileCheck %s --check-prefix=NONE
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(select-contraction-schedules{dot-products=amx})' %s 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: option 'dot-products' of pass 'select-contraction-schedules' must be host, none or instruction sets joined by '+' (bf16, int8), got 'amx'

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A linear layer: x [48, 128] by a weight [128, 128] read transposed, the bias added and rounded to bf16.  Register
// tiles of 6 rows by 64 columns (panels of 64: 2 of them), blocks of 128 pairs of K.
// CHECK-LABEL: func.func @linear
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<2x64x64x2xbf16>) outs(%{{.*}} : tensor<2x64x64x2xbf16>) permutation = [0, 2, 1, 3]  {graph.pack_transposed_pairs, graph.schedule = {lanes = 16 : i64, panels_per_task = 1 : i64, sequence = "pack_pair_panels", steps = 16 : i64}}
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<48x64x2xbf16>, tensor<2x64x64x2xbf16>) outs(%{{.*}} : tensor<48x2x64xf32>)
// CHECK-SAME:      graph.schedule = {block_depth = 128 : i64, block_panels = 4 : i64, sequence = "packed_tiles_with_epilogue_filled", task_panels = 0 : i64, task_rows = 48 : i64, tile_rows = 6 : i64}
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<48x2x64xbf16>)
// NONE-LABEL:  func.func @linear
// NONE-NOT:      xbf16> permutation
// NONE:          graph.schedule = {block_columns = 256 : i64, block_depth = 256 : i64, rows_per_task = 48 : i64, sequence = "register_tiles", tile_columns = 32 : i64, tile_rows = 8 : i64}
func.func @linear(%x: tensor<48x128xbf16>, %w: tensor<128x128xbf16>, %b: tensor<128xf32>) -> tensor<48x128xbf16> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<48x128xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<48x128xf32>) -> tensor<48x128xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<48x128xbf16>, tensor<128x128xbf16>)
      outs(%fill : tensor<48x128xf32>) -> tensor<48x128xf32>
  %e1 = tensor.empty() : tensor<48x128xbf16>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<48x128xf32>, tensor<128xf32>) outs(%e1 : tensor<48x128xbf16>) {
  ^bb0(%s: f32, %v: f32, %out: bf16):
    %t = arith.addf %s, %v : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<48x128xbf16>
  return %y : tensor<48x128xbf16>
}

// -----

// A constant B [4, 32] packed into pairs when compiling (one panel of 32 columns, narrower than a tile's 64): rows
// 2k and 2k + 1 interleaved column by column, the bf16 values 1, 2, 3, 4, ... (0x3F80, 0x4000, 0x4040, 0x4080 as
// little-endian bytes).
// CHECK-LABEL: func.func @constant_b
// CHECK:         arith.constant dense<"0x803F004040408040{{.*}}> : tensor<1x2x32x2xbf16>
// CHECK-NOT:     linalg.transpose
func.func @constant_b(%x: tensor<16x4xbf16>) -> tensor<16x32xf32> {
  %w = arith.constant dense<[[1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0, 17.0, 19.0, 21.0, 23.0, 25.0, 27.0, 29.0, 31.0,
                              33.0, 35.0, 37.0, 39.0, 41.0, 43.0, 45.0, 47.0, 49.0, 51.0, 53.0, 55.0, 57.0, 59.0, 61.0, 63.0],
                             [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0, 32.0,
                              34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0, 52.0, 54.0, 56.0, 58.0, 60.0, 62.0, 64.0],
                             [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                              0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
                             [0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                              0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]]> : tensor<4x32xbf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.matmul ins(%x, %w : tensor<16x4xbf16>, tensor<4x32xbf16>) outs(%fill : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %p : tensor<16x32xf32>
}

// -----

// Negative: K odd (no whole pairs), and an f16 product; both keep the plain register tiles.
// CHECK-LABEL: func.func @not_pairs
// CHECK-NOT:     "reduction", "reduction"
// CHECK-COUNT-2: sequence = "register_tiles"
func.func @not_pairs(%x: tensor<16x5xbf16>, %w: tensor<5x32xbf16>, %h: tensor<16x4xf16>, %v: tensor<4x32xf16>)
    -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.matmul ins(%x, %w : tensor<16x5xbf16>, tensor<5x32xbf16>) outs(%fill : tensor<16x32xf32>) -> tensor<16x32xf32>
  %q = linalg.matmul ins(%h, %v : tensor<16x4xf16>, tensor<4x32xf16>) outs(%fill : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %p, %q : tensor<16x32xf32>, tensor<16x32xf32>
}
