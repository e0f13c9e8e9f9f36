// The schedules of batch_matmul.mlir.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// Blocks of 256 columns by 256 steps of K (the last of each peeled by the loops' bounds), the loops in
// (b, i, k, j) order.
// CHECK-LABEL: func.func @batch_matmul_blocks
// CHECK:         scf.for {{.*}} to %c300 step %c256
// CHECK:           scf.for {{.*}} to %c300{{.*}} step %c256
// CHECK:             linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @batch_matmul_blocks(%a: tensor<20x8x300xf32>, %b: tensor<20x300x300xf32>, %c: tensor<20x8x300xf32>)
    -> tensor<20x8x300xf32> {
  %r = linalg.batch_matmul {graph.schedule = {sequence = "batch_matmul_blocks", block = 256 : i64}}
    ins(%a, %b : tensor<20x8x300xf32>, tensor<20x300x300xf32>) outs(%c : tensor<20x8x300xf32>) -> tensor<20x8x300xf32>
  return %r : tensor<20x8x300xf32>
}

// -----

// One task per batch, C's fill and B's transpose (k^T) computed in it, and the task's product a named matmul
// again, which the matmul schedules then tile.
// CHECK-LABEL: func.func @batch_tasks
// CHECK-NOT:     linalg
// CHECK:         scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<4x16x24xf32>)
// CHECK:           linalg.transpose ins({{.*}} : tensor<24x32xf32>) outs({{.*}} : tensor<32x24xf32>) permutation = [1, 0]
// CHECK:           linalg.fill {{.*}} -> tensor<1x16x24xf32>
// CHECK:           linalg.matmul ins({{.*}} : tensor<16x32xf32>, tensor<32x24xf32>) outs({{.*}} : tensor<16x24xf32>)
// CHECK-NOT:     linalg.batch_matmul
func.func @batch_tasks(%q: tensor<4x16x32xf32>, %k: tensor<4x24x32xf32>) -> tensor<4x16x24xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x32x24xf32>
  %kt = linalg.transpose ins(%k : tensor<4x24x32xf32>) outs(%et : tensor<4x32x24xf32>) permutation = [0, 2, 1]
  %e = tensor.empty() : tensor<4x16x24xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x24xf32>) -> tensor<4x16x24xf32>
  %r = linalg.batch_matmul {graph.schedule = {sequence = "batch_tasks_filled_transposed"}}
    ins(%q, %kt : tensor<4x16x32xf32>, tensor<4x32x24xf32>) outs(%fill : tensor<4x16x24xf32>) -> tensor<4x16x24xf32>
  return %r : tensor<4x16x24xf32>
}
