// parallelize-loose-ops: a large copy, transpose or all-parallel generic of the entry's body (after
// block-contractions) is tiled into an scf.forall over its leading parallel loops; small ones, reductions and
// one thread leave the body as it is.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(parallelize-loose-ops{threads=2})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(parallelize-loose-ops{threads=1})' | FileCheck %s --check-prefix=SERIAL
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(parallelize-loose-ops{threads=2 max-tasks=0})' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: options 'threads' (>= 1), 'min-elements' (>= 0) and 'max-tasks' (>= 1) of pass 'parallelize-loose-ops' are out of range: 2, 16384, 0

// A convolution's product back into NCHW ([F, N, OH, OW] into [N, F, OH, OW]): the loops are the result's, 4
// images x 16 tasks of two filters; the loop holds the one transpose of its task.
// CHECK-LABEL: func.func @nchw_transpose(
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (4, 16) shared_outs
// CHECK:           linalg.transpose ins(%{{.*}} : tensor<2x1x32x32xf32>) outs(%{{.*}} : tensor<1x2x32x32xf32>)
// CHECK-NOT:     scf.forall (
// CHECK:         return
// SERIAL-LABEL: func.func @nchw_transpose(
// SERIAL-NOT:    scf.forall
func.func @nchw_transpose(%x: tensor<32x4x32x32xf32>, %out: tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32> attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<32x4x32x32xf32>) -> tensor<4x32x32x32xf32>} {
  %t = linalg.transpose ins(%x : tensor<32x4x32x32xf32>) outs(%out : tensor<4x32x32x32xf32>) permutation = [1, 0, 2, 3]
  return %t : tensor<4x32x32x32xf32>
}

// -----

// An elementwise generic of 4 x 8 x 64 x 16 (a rotary half's negation) is split over its leading loops, up to
// max-tasks (64): 4 x 8 x 2 tasks of 32 rows.
// CHECK-LABEL: func.func @negated_half(
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (4, 8, 2) shared_outs
// CHECK:           arith.negf
// CHECK:         return
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @negated_half(%x: tensor<4x8x64x16xf32>, %out: tensor<4x8x64x16xf32>) -> tensor<4x8x64x16xf32> attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4x8x64x16xf32>) -> tensor<4x8x64x16xf32>} {
  %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<4x8x64x16xf32>) outs(%out : tensor<4x8x64x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8x64x16xf32>
  return %n : tensor<4x8x64x16xf32>
}

// -----

// Negative: below min-elements (8,192 elements), and a reduction, stay as they are.
// CHECK-LABEL: func.func @small_and_reduction(
// CHECK-NOT:     scf.forall (
// CHECK:         return
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @small_and_reduction(%x: tensor<64x128xf32>, %y: tensor<512x128xf32>, %out: tensor<64x128xf32>, %sum: tensor<512xf32>) -> (tensor<64x128xf32>, tensor<512xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64x128xf32>, tensor<512x128xf32>) -> (tensor<64x128xf32>, tensor<512xf32>)} {
  %c = linalg.copy ins(%x : tensor<64x128xf32>) outs(%out : tensor<64x128xf32>) -> tensor<64x128xf32>
  %s = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<512x128xf32>) outs(%sum : tensor<512xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<512xf32>
  return %c, %s : tensor<64x128xf32>, tensor<512xf32>
}
