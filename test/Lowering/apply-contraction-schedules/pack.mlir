// The schedules of pack.mlir: the copies of B into panels [N / NR, K, NR] that packed products read.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-contraction-schedules)' %s | FileCheck %s

// B [K, N] split into 6 panels of 16 columns: tasks of 2 panels, one row of a panel (a vector) at a time.
// CHECK-LABEL: func.func @pack_panels
// CHECK:         scf.forall (%{{.*}}) in (3) {{.*}} -> (tensor<6x64x16xf32>)
// CHECK:           vector.transfer_read {{.*}} vector<1x1x16xf32>
// CHECK:           vector.transfer_write {{.*}} vector<1x1x16xf32>
// CHECK-NOT:     linalg.transpose
func.func @pack_panels(%b: tensor<64x6x16xf32>) -> tensor<6x64x16xf32> {
  %e = tensor.empty() : tensor<6x64x16xf32>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_panels", panels_per_task = 2 : i64}}
    ins(%b : tensor<64x6x16xf32>) outs(%e : tensor<6x64x16xf32>) permutation = [1, 0, 2]
  return %p : tensor<6x64x16xf32>
}

// -----

// From a transposed B [N, K]: tiles of 8 steps of K by 16 columns read as 16 rows of 8 floats and transposed in
// registers, a 16x16 block's transpose by whole-register shuffles (the last 4 of 36 steps peeled).
// CHECK-LABEL: func.func @pack_transposed_panels
// CHECK:         scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<4x36x16xf32>)
// CHECK:           scf.for {{.*}} to %c32 step %c8
// CHECK:             vector.transfer_read {{.*}} : tensor<1x16x8xf32>, vector<1x16x8xf32>
// CHECK:             vector.shuffle
// CHECK:             vector.transfer_write {{.*}} : vector<1x8x16xf32>, tensor<1x8x16xf32>
// CHECK:           vector.transfer_read {{.*}} : tensor<1x16x4xf32>, vector<1x16x4xf32>
// CHECK-NOT:     linalg.transpose
func.func @pack_transposed_panels(%bt: tensor<4x16x36xf32>) -> tensor<4x36x16xf32> {
  %e = tensor.empty() : tensor<4x36x16xf32>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_transposed_panels", panels_per_task = 2 : i64,
                                           steps = 8 : i64, lanes = 16 : i64}}
    ins(%bt : tensor<4x16x36xf32>) outs(%e : tensor<4x36x16xf32>) permutation = [0, 2, 1]
  return %p : tensor<4x36x16xf32>
}

// -----

// Inside a task of its own: the same copies, one panel after the other.
// CHECK-LABEL: func.func @serial
// CHECK-NOT:     scf.forall
// CHECK:         scf.for
// CHECK:           vector.transfer_write {{.*}} vector<1x1x16xf32>
// CHECK:         scf.for
// CHECK:           vector.shuffle
// CHECK-NOT:     linalg.transpose
func.func @serial(%b: tensor<64x6x16xf32>, %bt: tensor<4x16x32xf32>) -> (tensor<6x64x16xf32>, tensor<4x32x16xf32>) {
  %e = tensor.empty() : tensor<6x64x16xf32>
  %p = linalg.transpose {graph.schedule = {sequence = "pack_panels_serial"}}
    ins(%b : tensor<64x6x16xf32>) outs(%e : tensor<6x64x16xf32>) permutation = [1, 0, 2]
  %et = tensor.empty() : tensor<4x32x16xf32>
  %pt = linalg.transpose {graph.schedule = {sequence = "pack_transposed_panels_serial", steps = 8 : i64, lanes = 16 : i64}}
    ins(%bt : tensor<4x16x32xf32>) outs(%et : tensor<4x32x16xf32>) permutation = [0, 2, 1]
  return %p, %pt : tensor<6x64x16xf32>, tensor<4x32x16xf32>
}
