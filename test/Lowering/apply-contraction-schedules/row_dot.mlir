// The schedules of row_dot.mlir: a few rows of A times a transposed B read as it is (x[2, K] @ W[N, K]^T), one
// task per tile of columns, the reduction in partial sums of one vector's lanes kept in registers.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// 24 columns in tasks of 8, rows one at a time, K = 68 in steps of 8 lanes (the last 4 peeled), the lanes
// summed once per tile.
// CHECK-LABEL: func.func @row_dot
// CHECK:         scf.forall (%{{.*}}) in (3) {{.*}} -> (tensor<2x24xf32>)
// CHECK:           scf.for {{.*}} -> (tensor<2x8xf32>)
// CHECK:             scf.for {{.*}} to %c64 step %c8 {{.*}} -> (vector<1x8x8xf32>)
// CHECK:               arith.addf {{.*}} : vector<1x8x8xf32>
// CHECK:             arith.addf {{.*}} : vector<1x8x4xf32>
// CHECK-COUNT-8:     vector.reduction <add>, {{.*}} : vector<8xf32> into f32
// CHECK-NOT:     linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (j, k)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @row_dot(%x: tensor<2x68xf32>, %w: tensor<24x68xf32>, %c: tensor<2x24xf32>) -> tensor<2x24xf32> {
  %r = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "reduction"],
                       graph.schedule = {sequence = "row_dot_8_lanes", columns_per_task = 8 : i64, rows_per_tile = 1 : i64}}
    ins(%x, %w : tensor<2x68xf32>, tensor<24x68xf32>) outs(%c : tensor<2x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b fastmath<contract> : f32
    %s = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %s : f32
  } -> tensor<2x24xf32>
  return %r : tensor<2x24xf32>
}
