// select-contraction-schedules records each contraction's schedule as a graph.schedule attribute, sized for
// the host's vectors (GRAPHFUSE_VECTOR_BITS sets them here) and the threads: the decisions
// apply-contraction-schedules then carries out, printed in between.
// RUN: env GRAPHFUSE_VECTOR_BITS=512 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2})' %s | FileCheck %s --check-prefix=AVX512
// RUN: env GRAPHFUSE_VECTOR_BITS=256 graphfuse-opt --split-input-file --pass-pipeline='builtin.module(select-contraction-schedules{threads=2})' %s | FileCheck %s --check-prefix=AVX2
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(select-contraction-schedules{threads=0})' %s 2>&1 | FileCheck %s --check-prefix=THREADS

// THREADS: error: option 'threads' of pass 'select-contraction-schedules' must be at least 1, got 0

// B packed into panels of two vectors (a copy of its own, scheduled too), the product in tasks of rows with C's
// fill in each, register tiles of 8 rows; at 256 bits tiles of 6 rows, 60 rows in tasks of 30 and the last 4 a
// product of their own.
// AVX512-LABEL: func.func @product
// AVX512:         linalg.transpose {{.*}} graph.schedule = {panels_per_task = 2 : i64, sequence = "pack_panels"}
// AVX512:         linalg.generic {{.*}} outs({{.*}} : tensor<64x3x32xf32>) attrs = {graph.schedule = {block_depth = 256 : i64, block_panels = 8 : i64, sequence = "packed_tiles_filled", task_panels = 0 : i64, task_rows = 64 : i64, tile_rows = 8 : i64}}
// AVX2-LABEL:   func.func @product
// AVX2:           linalg.transpose {{.*}} graph.schedule = {panels_per_task = 3 : i64, sequence = "pack_panels"}
// AVX2:           outs({{.*}} : tensor<60x6x16xf32>) attrs = {graph.schedule = {block_depth = 256 : i64, block_panels = 16 : i64, sequence = "packed_tiles_filled", task_panels = 0 : i64, task_rows = 30 : i64, tile_rows = 6 : i64}}
// AVX2:           outs({{.*}} : tensor<4x6x16xf32>) attrs = {graph.schedule = {block_depth = 256 : i64, block_panels = 16 : i64, sequence = "packed_tiles_filled", task_panels = 0 : i64, task_rows = 4 : i64, tile_rows = 6 : i64}}
func.func @product(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x96xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x96xf32>) -> tensor<64x96xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%fill : tensor<64x96xf32>)
    -> tensor<64x96xf32>
  return %c : tensor<64x96xf32>
}

// -----

// One row times a weight read at run time (x @ W^T): the row-dot schedule, partial sums of one vector's lanes.
// AVX512-LABEL: func.func @short_product
// AVX512:         graph.schedule = {columns_per_task = 8 : i64, rows_per_tile = 1 : i64, sequence = "row_dot_16_lanes"}
// AVX2-LABEL:   func.func @short_product
// AVX2:           graph.schedule = {columns_per_task = 8 : i64, rows_per_tile = 1 : i64, sequence = "row_dot_8_lanes"}
func.func @short_product(%x: tensor<1x256xf32>, %w: tensor<64x256xf32>) -> tensor<1x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x64xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x64xf32>) -> tensor<1x64xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                      affine_map<(i, j, k) -> (i, j)>]
    ins(%x, %w : tensor<1x256xf32>, tensor<64x256xf32>) outs(%fill : tensor<1x64xf32>) -> tensor<1x64xf32>
  return %c : tensor<1x64xf32>
}

// -----

// A direct convolution (marked by its lowering) whose bias add alone reads it: tiled with its epilogue, the
// output columns in the lanes; the column ladder's widths halve from half a tile down to one.
// AVX512-LABEL: func.func @direct_conv
// AVX512:         graph.schedule = {remainder_width_0 = 16 : i64, remainder_width_1 = 8 : i64, remainder_width_2 = 4 : i64, remainder_width_3 = 2 : i64, remainder_width_4 = 1 : i64, sequence = "direct_conv_with_epilogue", task_rows = 2 : i64, tile_dim1 = 8 : i64, tile_dim2 = 1 : i64, vector_columns = 32 : i64}
// AVX512-NOT:     graph.direct_conv
// AVX2-LABEL:   func.func @direct_conv
// AVX2:           graph.schedule = {remainder_width_0 = 8 : i64, remainder_width_1 = 4 : i64, remainder_width_2 = 2 : i64, remainder_width_3 = 1 : i64, remainder_width_4 = 1 : i64, sequence = "direct_conv_with_epilogue", task_rows = 2 : i64, tile_dim1 = 6 : i64, tile_dim2 = 1 : i64, vector_columns = 16 : i64}
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#id = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
#bias = affine_map<(n, f, oh, ow) -> (f)>
func.func @direct_conv(%x: tensor<1x3x6x42xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x4x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x40xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x40xf32>) -> tensor<1x8x4x40xf32>
  %c = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"],
                       graph.direct_conv}
    ins(%x, %w : tensor<1x3x6x42xf32>, tensor<8x3x3x3xf32>) outs(%fill : tensor<1x8x4x40xf32>) {
  ^bb0(%a: f32, %bw: f32, %acc: f32):
    %s = math.fma %a, %bw, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x40xf32>
  %out = tensor.empty() : tensor<1x8x4x40xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%c, %b : tensor<1x8x4x40xf32>, tensor<8xf32>) outs(%out : tensor<1x8x4x40xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x40xf32>
  return %r : tensor<1x8x4x40xf32>
}

// -----

// Rows counted at run time (tokens): up to 4 rows (a token's step) B is read as it is, by register tiles of one
// row by 96 columns, or of 4 rows (padded) by 32; more rows pack B once, the rows in whole register tiles (a
// count known at run time) tiled in tasks of 8 tiles by 4 panels (a few row blocks still make a task per core),
// and the rows left (fewer than a tile), when there are any, padded with zero rows into a static product of the
// fewest rows of 8, 4, 2 or 1 that hold them; all read the same panels.
// AVX512-LABEL: func.func @dynamic_rows
// AVX512:         %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c4
// AVX512:         scf.if %[[FEW]]
// AVX512:           ins(%{{.*}}, %arg1 : tensor<?x1x128xf32>, tensor<128x96xf32>) outs(%{{.*}} : tensor<?x1x96xf32>) attrs = {graph.schedule = {block_depth = 8 : i64, columns_per_task = 96 : i64, sequence = "row_tile_columns", tile_columns = 96 : i64}}
// AVX512:           ins(%{{.*}}, %arg1 : tensor<?x4x128xf32>, tensor<128x96xf32>) outs(%{{.*}} : tensor<?x4x96xf32>) attrs = {graph.schedule = {block_depth = 8 : i64, columns_per_task = 32 : i64, sequence = "row_tile_columns", tile_columns = 32 : i64}}
// AVX512:       } else {
// AVX512:         %[[ROWS:.*]] = tensor.dim %arg0
// AVX512:         %[[TILES:.*]] = arith.divui %[[ROWS]], %c8
// AVX512:         %[[MAIN:.*]] = arith.muli %[[TILES]]
// AVX512:         %[[REST:.*]] = arith.subi %[[ROWS]], %[[MAIN]]
// AVX512:         %[[PANELS:.*]] = linalg.transpose {{.*}} graph.schedule = {panels_per_task = 2 : i64, sequence = "pack_panels"}
// AVX512:         linalg.generic {{.*}} ins(%{{.*}}, %[[PANELS]] : tensor<?x128xf32>, tensor<3x128x32xf32>) outs(%{{.*}} : tensor<?x3x32xf32>) attrs = {graph.schedule = {block_depth = 256 : i64, block_panels = 8 : i64, sequence = "packed_tiles", task_panels = 4 : i64, task_rows = 64 : i64, tile_rows = 8 : i64}}
// AVX512:         %[[WHOLE:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%[[MAIN]], 96]
// AVX512:         %[[EIGHT:.*]] = arith.cmpi ugt, %[[REST]], %c4{{.*}} : index
// AVX512:         scf.if %[[EIGHT]]
// AVX512:           tensor.pad
// AVX512:           } : tensor<?x128xf32> to tensor<8x128xf32>
// AVX512:           linalg.generic {{.*}} ins(%{{.*}}, %[[PANELS]] : tensor<8x128xf32>, tensor<3x128x32xf32>) outs(%{{.*}} : tensor<8x3x32xf32>) attrs = {graph.schedule = {{.*}}sequence = "packed_tiles"
// AVX512:           tensor.insert_slice %{{.*}} into %[[WHOLE]][%[[MAIN]], 0] [%[[REST]], 96]
// AVX512:         } else {
// AVX512:           arith.cmpi ugt, %[[REST]], %c2{{.*}} : index
// AVX512:             ins(%{{.*}}, %[[PANELS]] : tensor<4x128xf32>, tensor<3x128x32xf32>) outs(%{{.*}} : tensor<4x3x32xf32>)
// AVX512:           } else {
// AVX512:             arith.cmpi ugt, %[[REST]], %c1{{.*}} : index
// AVX512:               ins(%{{.*}}, %[[PANELS]] : tensor<2x128xf32>, tensor<3x128x32xf32>) outs(%{{.*}} : tensor<2x3x32xf32>)
// AVX512:             } else {
// AVX512:               arith.cmpi ugt, %[[REST]], %c0{{.*}} : index
// AVX512:                 ins(%{{.*}}, %[[PANELS]] : tensor<1x128xf32>, tensor<3x128x32xf32>) outs(%{{.*}} : tensor<1x3x32xf32>)
// AVX512:               } else {
// AVX512:                 scf.yield %[[WHOLE]]
// AVX2-LABEL:   func.func @dynamic_rows
// AVX2:           arith.divui %{{.*}}, %c6
// AVX2:           tensor.pad
// AVX2:           } : tensor<?x128xf32> to tensor<6x128xf32>
// AVX2:           outs(%{{.*}} : tensor<?x6x16xf32>) attrs = {graph.schedule = {block_depth = 256 : i64, block_panels = 16 : i64, sequence = "packed_tiles", task_panels = 4 : i64, task_rows = 48 : i64, tile_rows = 6 : i64}}
func.func @dynamic_rows(%a: tensor<?x128xf32>, %b: tensor<128x96xf32>, %init: tensor<?x96xf32>) -> tensor<?x96xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<?x128xf32>, tensor<128x96xf32>) outs(%init : tensor<?x96xf32>)
    -> tensor<?x96xf32>
  return %c : tensor<?x96xf32>
}

// -----

// A linear layer over rows counted at run time (x @ W^T, W read at run time): up to 32 rows (a token's step) W
// is read as it is, by row-dot products over A and C seen as [tiles, rows, ...] (padded to whole tiles in static
// buffers of 32 rows): tiles of one row for one row (tasks of 8 columns), else of 4 rows (tasks of 4 columns),
// each task walking the tiles; more rows take the packed product, W packed into panels as it is stored, by the
// copy that reads it transposed.
// AVX512-LABEL: func.func @dynamic_rows_linear
// AVX512:         %[[ROWS:.*]] = tensor.dim %arg0
// AVX512:         %[[FEW:.*]] = arith.cmpi ule, %[[ROWS]], %c32
// AVX512:         scf.if %[[FEW]]
// AVX512:           %[[ONE:.*]] = arith.cmpi eq, %[[ROWS]], %c1
// AVX512:           scf.if %[[ONE]]
// AVX512:             tensor.empty() : tensor<32x128xf32>
// AVX512:             linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<?x1x128xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<?x1x96xf32>) attrs = {graph.schedule = {columns_per_task = 8 : i64, sequence = "row_tile_dot_16_lanes"}}
// AVX512:           } else {
// AVX512:             tensor.empty() : tensor<32x128xf32>
// AVX512:             tensor.expand_shape {{.*}} : tensor<?x128xf32> into tensor<?x4x128xf32>
// AVX512:             linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<?x4x128xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<?x4x96xf32>) attrs = {graph.schedule = {columns_per_task = 4 : i64, sequence = "row_tile_dot_16_lanes"}}
// AVX512:       } else {
// AVX512-NOT:     tensor<128x96xf32>
// AVX512:         linalg.transpose ins(%{{.*}} : tensor<3x32x128xf32>) {{.*}} graph.schedule = {{{.*}}sequence = "pack_transposed_panels"
// AVX512:         outs(%{{.*}} : tensor<?x3x32xf32>) attrs = {graph.schedule = {{{.*}}sequence = "packed_tiles", task_panels = 4 : i64, task_rows = 64 : i64, tile_rows = 8 : i64}}
// AVX512-NOT:     linalg.matmul
func.func @dynamic_rows_linear(%x: tensor<?x128xf32>, %w: tensor<96x128xf32>, %init: tensor<?x96xf32>) -> tensor<?x96xf32> {
  %c = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                      affine_map<(i, j, k) -> (i, j)>]
    ins(%x, %w : tensor<?x128xf32>, tensor<96x128xf32>) outs(%init : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %c : tensor<?x96xf32>
}

// -----

// The same layer written as the graph's own transpose of W [N, K] and a plain product (Falcon's linear layers):
// the few rows read W as stored through the product's maps, not a transposed copy made at every call.
// AVX512-LABEL: func.func @dynamic_rows_transposed_weight
// AVX512:         scf.if
// AVX512:           scf.if
// AVX512:             linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<?x1x128xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<?x1x96xf32>) attrs = {graph.schedule = {columns_per_task = 8 : i64, sequence = "row_tile_dot_16_lanes"}}
// AVX512:           } else {
// AVX512:             linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<?x4x128xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<?x4x96xf32>) attrs = {graph.schedule = {columns_per_task = 4 : i64, sequence = "row_tile_dot_16_lanes"}}
// AVX512:       } else {
// AVX512:         linalg.transpose ins(%{{.*}} : tensor<3x32x128xf32>) {{.*}} graph.schedule = {{{.*}}sequence = "pack_transposed_panels"
// AVX512-NOT:     linalg.matmul
func.func @dynamic_rows_transposed_weight(%x: tensor<?x128xf32>, %w: tensor<96x128xf32>, %init: tensor<?x96xf32>) -> tensor<?x96xf32> {
  %e = tensor.empty() : tensor<128x96xf32>
  %t = linalg.transpose ins(%w : tensor<96x128xf32>) outs(%e : tensor<128x96xf32>) permutation = [1, 0]
  %c = linalg.matmul ins(%x, %t : tensor<?x128xf32>, tensor<128x96xf32>) outs(%init : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %c : tensor<?x96xf32>
}

// -----

// One row (a token's step, its shapes specialized) by a W [K, N] read at run time: not packed, a tile of one row
// over register tiles of 128 columns (96: one narrower tile) reading W's rows as stored.
// AVX512-LABEL: func.func @one_row_plain
// AVX512:         tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [1, 1, 128] : tensor<1x128xf32> into tensor<1x1x128xf32>
// AVX512:         linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<1x1x128xf32>, tensor<128x96xf32>) outs(%{{.*}} : tensor<1x1x96xf32>) attrs = {graph.schedule = {block_depth = 8 : i64, columns_per_task = 96 : i64, sequence = "row_tile_columns", tile_columns = 96 : i64}}
// AVX512-NOT:     linalg.transpose
func.func @one_row_plain(%x: tensor<1x128xf32>, %w: tensor<128x96xf32>, %init: tensor<1x96xf32>) -> tensor<1x96xf32> {
  %c = linalg.matmul ins(%x, %w : tensor<1x128xf32>, tensor<128x96xf32>) outs(%init : tensor<1x96xf32>) -> tensor<1x96xf32>
  return %c : tensor<1x96xf32>
}

// -----

// A product over a batch and tokens both counted at run time, as reshape propagation leaves it (a generic over
// (b, s, n, k)): its rows are collapsed into one and it is a matmul over dynamic rows, expanded back.
// AVX512-LABEL: func.func @rows_of_a_batch_and_tokens
// AVX512:         %[[ROWS:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<?x?x128xf32> into tensor<?x128xf32>
// AVX512:         %[[C:.*]] = tensor.collapse_shape %arg2 {{\[}}[0, 1], [2]] : tensor<?x?x96xf32> into tensor<?x96xf32>
// AVX512:         outs(%{{.*}} : tensor<?x3x32xf32>) attrs = {graph.schedule = {{{.*}}sequence = "packed_tiles"
// AVX512:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%{{.*}}, %{{.*}}, 96] : tensor<?x96xf32> into tensor<?x?x96xf32>
// AVX512-NOT:     linalg.generic {{.*}}tensor<?x?x128xf32>
func.func @rows_of_a_batch_and_tokens(%x: tensor<?x?x128xf32>, %w: tensor<128x96xf32>, %init: tensor<?x?x96xf32>) -> tensor<?x?x96xf32> {
  %c = linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (k, n)>,
                                        affine_map<(b, s, n, k) -> (b, s, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
    ins(%x, %w : tensor<?x?x128xf32>, tensor<128x96xf32>) outs(%init : tensor<?x?x96xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x96xf32>
  return %c : tensor<?x?x96xf32>
}

// -----

// Negative: a reduction or columns of dynamic length: no schedule, the product as it is.
// AVX512-LABEL: func.func @dynamic_depth
// AVX512-NOT:     graph.schedule
// AVX512:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x?xf32>, tensor<?x96xf32>)
// AVX512-LABEL: func.func @dynamic_columns
// AVX512-NOT:     graph.schedule
// AVX512:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x128xf32>, tensor<128x?xf32>)
func.func @dynamic_depth(%a: tensor<16x?xf32>, %b: tensor<?x96xf32>, %init: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<16x?xf32>, tensor<?x96xf32>) outs(%init : tensor<16x96xf32>)
    -> tensor<16x96xf32>
  return %c : tensor<16x96xf32>
}
func.func @dynamic_columns(%a: tensor<?x128xf32>, %b: tensor<128x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<?x128xf32>, tensor<128x?xf32>) outs(%init : tensor<?x?xf32>)
    -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

// -----

// A task's products over tiles of its rows, all reading one B defined before the loop (tiled attention's keys,
// the matmul written with its maps, as the Python builders write it): B is packed once, before the loop, and
// the product keeps its serial schedule.
// AVX512-LABEL: func.func @serial_products_in_a_loop
// AVX512:         linalg.transpose {{.*}} permutation = [0, 2, 1] {{.*}}sequence = "pack_transposed_panels_serial"
// AVX512:         scf.for
// AVX512-NOT:       linalg.transpose
// AVX512:           linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<8x64x32xf32>) {{.*}}sequence = "packed_tiles_serial"
// AVX512:           scf.yield
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @serial_products_in_a_loop(%q: tensor<64x64xf32>, %k: tensor<256x64xf32>, %tiles: index) -> tensor<64x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<64x256xf32>
  %e = tensor.empty() : tensor<64x256xf32>
  %kt = linalg.transpose ins(%k : tensor<256x64xf32>) outs(%e : tensor<64x256xf32>) permutation = [1, 0]
  %r = scf.for %t = %c0 to %tiles step %c1 iter_args(%acc = %init) -> (tensor<64x256xf32>) {
    %row = arith.muli %t, %c8 : index
    %qt = tensor.extract_slice %q[%row, 0] [8, 64] [1, 1] : tensor<64x64xf32> to tensor<8x64xf32>
    %se = tensor.empty() : tensor<8x256xf32>
    %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<8x256xf32>) -> tensor<8x256xf32>
    %s = linalg.matmul indexing_maps = [#a, #b, #c] ins(%qt, %kt : tensor<8x64xf32>, tensor<64x256xf32>)
           outs(%sf : tensor<8x256xf32>) {graph.serial} -> tensor<8x256xf32>
    %next = tensor.insert_slice %s into %acc[%row, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<64x256xf32>
    scf.yield %next : tensor<64x256xf32>
  }
  return %r : tensor<64x256xf32>
}

// -----

// B made inside the loop (a block of its own per step) is packed there.
// AVX512-LABEL: func.func @serial_product_of_a_loop_b
// AVX512:         scf.for
// AVX512:           linalg.transpose {{.*}}sequence = "pack_panels_serial"
// AVX512:           linalg.generic {{.*}}sequence = "packed_tiles_serial"
func.func @serial_product_of_a_loop_b(%q: tensor<8x64xf32>, %k: tensor<1024x64xf32>, %steps: index) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<8x256xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<8x256xf32>) -> tensor<8x256xf32>
  %ae = tensor.empty() : tensor<8x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ae : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = scf.for %s = %c0 to %steps step %c1 iter_args(%acc = %init) -> (tensor<8x64xf32>) {
    %first = arith.muli %s, %c256 : index
    %v = tensor.extract_slice %k[%first, 0] [256, 64] [1, 1] : tensor<1024x64xf32> to tensor<256x64xf32>
    %next = linalg.matmul ins(%sf, %v : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<8x64xf32>)
              {graph.serial} -> tensor<8x64xf32>
    scf.yield %next : tensor<8x64xf32>
  }
  return %r : tensor<8x64xf32>
}
