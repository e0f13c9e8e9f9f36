// An op moved onto a tile still computes over the whole loop: each linalg.index it reads along a tiled loop
// gets the tile's offset added (dropout's counter-based mask, an argmax's position, an iota).
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-outline-ops,graph-to-linalg{strict cube-convolutions},fuse-kernel-loops,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse,npu-buffer-assign)' | FileCheck %s

// Row tiles of 16: the mask's row index is the tile's row plus the tile's first row; its column index is
// whole (the columns are not cut).
// CHECK-LABEL: func.func private @mask_dropout_0
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %c1024 step %c16 {
// CHECK:           linalg.generic
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:        %[[I0:.*]] = arith.addi %[[I]], %[[ROW]] : index
// CHECK-NEXT:        %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:        arith.muli %[[I0]], %{{.*}} : index
// CHECK-NEXT:        arith.addi %{{.*}}, %[[J]] : index
func.func @mask(%x: tensor<1024x512xf32>) -> (tensor<1024x512xf32>, tensor<1024x512xf32>) {
  %0:2 = "graph.dropout"(%x) : (tensor<1024x512xf32>) -> (tensor<1024x512xf32>, tensor<1024x512xf32>)
  return %0#0, %0#1 : tensor<1024x512xf32>, tensor<1024x512xf32>
}

// -----

// Negative: untiled, the indices are used as they are.
// CHECK-LABEL: func.func private @small_mask_dropout_0
// CHECK:         %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:    linalg.index 1 : index
// CHECK-NEXT:    arith.muli %[[I]], %{{.*}} : index
func.func @small_mask(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = "graph.dropout"(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An argmax over rows of 100000 in blocks of 20000: the position kept is the block's first column plus the
// index inside the block.
// CHECK-LABEL: func.func private @position_argmax_0
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c16 step %c1 {
// CHECK:           scf.for %[[BLOCK:.*]] = %{{.*}} to %c100000 step %c20000 {
// CHECK:             linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:               %[[K:.*]] = linalg.index 1 : index
// CHECK-NEXT:          arith.addi %[[K]], %[[BLOCK]] : index
func.func @position(%x: tensor<16x100000xf32>) -> tensor<16xi64> {
  %0 = "graph.argmax"(%x) {axis = 1 : i64} : (tensor<16x100000xf32>) -> tensor<16xi64>
  return %0 : tensor<16xi64>
}
