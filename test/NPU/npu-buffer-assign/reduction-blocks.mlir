// Blocks of a reduced dim: when a reduction's whole extent fits no tile, the dim is cut into blocks, with one
// pass over them per reduction (then a final pass when blocked results follow the last reduction); each pass
// recomputes the blocked values from the inputs. Attention over many keys is in nest-tiling.mlir.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// A softmax over rows of 75000 f32 (one row in and out is over UB): a row at a time, blocks of 15000. Pass 1
// takes the row's max, pass 2 sums exp(x - max), pass 3 recomputes exp(x - max), divides by the sum and
// stores the block; x is read in all three.
// CHECK-LABEL: func.func private @wide_rows_softmax_0
// CHECK-SAME:    npu.block_tiles = array<i64: 1, 15000>
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %c4 step %c1 {
// CHECK:           linalg.fill {{.*}} outs(%[[MAX:.*]] : memref<1xf32, #npu.mem<"ub">>)
// CHECK:           scf.for %[[COL:.*]] = %{{.*}} to %c75000 step %c15000 {
// CHECK:             memref.subview %arg0[%[[ROW]], %[[COL]]] [1, 15000]
// CHECK:             linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[MAX]] :
// CHECK:           linalg.fill {{.*}} outs(%[[SUM:.*]] : memref<1xf32, #npu.mem<"ub">>)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c75000{{.*}} step %c15000{{.*}} {
// CHECK:             linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.*}}, %[[MAX]] :
// CHECK:             linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[SUM]] :
// CHECK:           scf.for %[[COL3:.*]] = %{{.*}} to %c75000{{.*}} step %c15000{{.*}} {
// CHECK:             linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] :
// CHECK:             linalg.generic {{.*}} ins(%[[OUT:.*]], %[[SUM]] :
// CHECK:             %[[DST:.*]] = memref.subview %arg1[%[[ROW]], %[[COL3]]] [1, 15000]
// CHECK-NEXT:        "npu.dma"(%[[OUT]], %[[DST]])
func.func @wide_rows(%x: tensor<4x75000xf32>) -> tensor<4x75000xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x75000xf32>) -> tensor<4x75000xf32>
  return %0 : tensor<4x75000xf32>
}

// -----

// A sum of everything (400 KB): blocks of 200 rows accumulate into the one value, stored once at the end.
// CHECK-LABEL: func.func private @total_reduce_sum_0
// CHECK-SAME:    npu.block_tiles = array<i64: 100, 200>
// CHECK:         linalg.fill {{.*}} outs(%[[ACC:.*]] : memref<f32, #npu.mem<"ub">>)
// CHECK:         scf.for %[[ROWS:.*]] = %{{.*}} to %c1000 step %c200 {
// CHECK:           memref.subview %arg0[%[[ROWS]], 0] [200, 100]
// CHECK:           linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} outs(%[[ACC]] :
// CHECK:         "npu.dma"(%[[ACC]], %arg1) : (memref<f32, #npu.mem<"ub">>, memref<f32>)
// CHECK-NEXT:    return
func.func @total(%x: tensor<1000x100xf32>) -> tensor<f32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0, 1>, keep_dims = false} : (tensor<1000x100xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
