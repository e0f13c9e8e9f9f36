// The schedules of matmul_epilogue.mlir: a packed product whose elementwise epilogue alone reads it is fused
// into the epilogue's loops, C computed block by block into a scratch block and the epilogue's result written
// once; an epilogue left on its own is tiled into tasks of rows and vectors of columns.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// Tasks of 16 rows of the epilogue, the product and C's fill fused into each task and into each block of
// 2 panels; in a block, the product's tiles of 6 rows (the last 4 peeled), then the epilogue one panel row at a
// time.
// CHECK-LABEL: func.func @with_epilogue
// CHECK-NOT:     linalg
// CHECK:         scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<64x4x16xf32>)
// CHECK:           linalg.fill {{.*}} -> tensor<16x2x16xf32>
// CHECK:           scf.for {{.*}} -> (tensor<16x4x16xf32>)
// CHECK:             scf.for {{.*}} -> (vector<6x1x16xf32>)
// CHECK-COUNT-6:       vector.fma {{.*}} : vector<16xf32>
// CHECK:             scf.for {{.*}} -> (vector<4x1x16xf32>)
// CHECK:             arith.addf {{.*}} : vector<1x1x16xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
#a = affine_map<(j0, i, j1, k) -> (i, k)>
#b = affine_map<(j0, i, j1, k) -> (j0, k, j1)>
#c = affine_map<(j0, i, j1, k) -> (i, j0, j1)>
#id = affine_map<(i, j0, j1) -> (i, j0, j1)>
func.func @with_epilogue(%a: tensor<64x128xf32>, %b: tensor<4x128x16xf32>, %res: tensor<64x4x16xf32>)
    -> tensor<64x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<64x4x16xf32>) -> tensor<64x4x16xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                       graph.schedule = {sequence = "packed_tiles_with_epilogue_filled", task_rows = 16 : i64,
                                         task_panels = 0 : i64, block_panels = 2 : i64, block_depth = 128 : i64,
                                         tile_rows = 6 : i64}}
    ins(%a, %b : tensor<64x128xf32>, tensor<4x128x16xf32>) outs(%fill : tensor<64x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x4x16xf32>
  %out = tensor.empty() : tensor<64x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
    ins(%p, %res : tensor<64x4x16xf32>, tensor<64x4x16xf32>) outs(%out : tensor<64x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x4x16xf32>
  return %r : tensor<64x4x16xf32>
}

// -----

// 40 rows in tasks of 16 (the last of 8), each row in vectors of 16 columns, the last 4 of 100 peeled.
// CHECK-LABEL: func.func @epilogue_rows
// CHECK:         scf.forall ({{.*}}) in (3) {{.*}} -> (tensor<40x100xf32>)
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} step %c16
// CHECK:               math.tanh {{.*}} : vector<1x16xf32>
// CHECK:             math.tanh {{.*}} : vector<1x4xf32>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @epilogue_rows(%c: tensor<40x100xf32>, %out: tensor<40x100xf32>) -> tensor<40x100xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"],
                       graph.schedule = {sequence = "epilogue_rows", rows_per_task = 16 : i64, vector_columns = 16 : i64}}
    ins(%c : tensor<40x100xf32>) outs(%out : tensor<40x100xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  } -> tensor<40x100xf32>
  return %r : tensor<40x100xf32>
}
