// apply-contraction-schedules runs the schedule of matmul.mlir that an op's graph.schedule names, with the
// attribute's sizes: tasks across the cores, blocks of C that stay in cache, register tiles with one step of K
// innermost; the loops a tile does not divide are peeled, so that every tile has a static size and becomes
// vector code: the tile read once, held in registers across K, one FMA per row of the tile at each step.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// 64 rows in tasks of 16, 96 columns in blocks of 64 (the last, of 32, peeled), K in blocks of 32, tiles of 4x16.
// CHECK-LABEL: func.func @register_tiles
// CHECK-NOT:     linalg.matmul
// CHECK:         scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<64x96xf32>)
// CHECK:           scf.for {{.*}} -> (tensor<16x64xf32>)
// CHECK:             vector.transfer_read {{.*}} : tensor<4x16xf32>, vector<4x16xf32>
// CHECK:             scf.for {{.*}} -> (vector<4x16xf32>)
// CHECK-COUNT-4:       vector.fma {{.*}} : vector<16xf32>
// CHECK:           scf.for {{.*}} -> (tensor<16x32xf32>)
// CHECK:             scf.for {{.*}} -> (vector<4x16xf32>)
// CHECK-COUNT-4:       vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT:     graph.
// CHECK:         return
func.func @register_tiles(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %r = linalg.matmul {graph.schedule = {sequence = "register_tiles", rows_per_task = 16 : i64, block_columns = 64 : i64,
                                        block_depth = 32 : i64, tile_rows = 4 : i64, tile_columns = 16 : i64}}
    ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// -----

// B packed into 4 panels of 16 columns: tasks of 16 rows, each filling its block of C; blocks of 2 panels by 64
// steps of K; tiles of 6 rows of one panel, the last 4 rows of a task (16 = 2 x 6 + 4) peeled.
// CHECK-LABEL: func.func @packed_tiles_filled
// CHECK:         scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<64x4x16xf32>)
// CHECK:           linalg.fill {{.*}} -> tensor<16x4x16xf32>
// CHECK:           scf.for {{.*}} -> (tensor<16x4x16xf32>)
// CHECK:             scf.for {{.*}} -> (vector<6x1x16xf32>)
// CHECK-COUNT-6:       vector.fma {{.*}} : vector<16xf32>
// CHECK:             scf.for {{.*}} -> (vector<4x1x16xf32>)
// CHECK-COUNT-4:       vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT:     linalg.generic
#a = affine_map<(j0, i, j1, k) -> (i, k)>
#b = affine_map<(j0, i, j1, k) -> (j0, k, j1)>
#c = affine_map<(j0, i, j1, k) -> (i, j0, j1)>
func.func @packed_tiles_filled(%a: tensor<64x128xf32>, %b: tensor<4x128x16xf32>) -> tensor<64x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<64x4x16xf32>) -> tensor<64x4x16xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                       graph.schedule = {sequence = "packed_tiles_filled", task_panels = 0 : i64, task_rows = 16 : i64,
                                         block_panels = 2 : i64, block_depth = 64 : i64, tile_rows = 6 : i64}}
    ins(%a, %b : tensor<64x128xf32>, tensor<4x128x16xf32>) outs(%fill : tensor<64x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x4x16xf32>
  return %r : tensor<64x4x16xf32>
}

// -----

// Tasks of 2 panels (the rows too few to share out), B in outer blocks of 2 panels, a serial product: each
// schedule's loops around the same register tiles.
// CHECK-LABEL: func.func @task_shapes
// CHECK:         scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<8x4x16xf32>)
// CHECK:           scf.for {{.*}} -> (vector<6x1x16xf32>)
// CHECK:           scf.for {{.*}} -> (vector<2x1x16xf32>)
// CHECK:         scf.for {{.*}} -> (tensor<8x4x16xf32>)
// CHECK:           scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<8x2x16xf32>)
// CHECK:             scf.for {{.*}} -> (vector<4x1x16xf32>)
// CHECK:         scf.for {{.*}} -> (tensor<8x4x16xf32>)
// CHECK-NOT:       scf.forall
// CHECK:           scf.for {{.*}} -> (vector<6x1x16xf32>)
// CHECK:         return
#a = affine_map<(j0, i, j1, k) -> (i, k)>
#b = affine_map<(j0, i, j1, k) -> (j0, k, j1)>
#c = affine_map<(j0, i, j1, k) -> (i, j0, j1)>
func.func @task_shapes(%a: tensor<8x32xf32>, %b: tensor<4x32x16xf32>, %c: tensor<8x4x16xf32>)
    -> (tensor<8x4x16xf32>, tensor<8x4x16xf32>, tensor<8x4x16xf32>) {
  %panels = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                            graph.schedule = {sequence = "packed_tiles", task_panels = 2 : i64, task_rows = 0 : i64,
                                              block_panels = 2 : i64, block_depth = 32 : i64, tile_rows = 6 : i64}}
    ins(%a, %b : tensor<8x32xf32>, tensor<4x32x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  %outer = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                           graph.schedule = {sequence = "packed_tiles_outer_blocks", outer_panels = 2 : i64,
                                             rows_per_task = 4 : i64, block_panels = 2 : i64, block_depth = 32 : i64,
                                             tile_rows = 6 : i64}}
    ins(%a, %b : tensor<8x32xf32>, tensor<4x32x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  %serial = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                            graph.schedule = {sequence = "packed_tiles_serial", rows_per_task = 8 : i64,
                                              block_panels = 2 : i64, block_depth = 32 : i64, tile_rows = 6 : i64}}
    ins(%a, %b : tensor<8x32xf32>, tensor<4x32x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  return %panels, %outer, %serial : tensor<8x4x16xf32>, tensor<8x4x16xf32>, tensor<8x4x16xf32>
}
