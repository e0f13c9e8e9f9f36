// fuse-kernel-loops fuses the linalg ops inside each kernel function (graph.kernel) into as few loop nests
// as possible; functions that are not kernels keep one loop nest per op (the unfused baseline) unless
// all-functions is set.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops{all-functions})' %s | FileCheck %s --check-prefix=ALL
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops)' --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: not graphfuse-opt --split-input-file --fuse-kernel-loops %s 2>&1 | FileCheck %s --check-prefix=GRAPH
// STATS: fuse-kernel-loops
// STATS-NEXT: (S) 12 num-kernels
// STATS-NEXT: (S) 44 num-loop-nests-after
// STATS-NEXT: (S) 60 num-loop-nests-before
// STATS-NEXT: (S) 15 num-merged
// GRAPH: error: fuse-kernel-loops: @chain_kernel still has graph ops; run graph-to-linalg first

// An elementwise chain in a kernel: one linalg.generic.
// CHECK-LABEL: func.func private @chain_kernel
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func private @chain_kernel(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> attributes {graph.kernel} {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// The same chain outside a kernel is not fused: three loop nests (all-functions fuses it).
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-3: linalg.generic
// ALL-LABEL: func.func @chain
// ALL-COUNT-1: linalg.generic
// ALL-NOT:     linalg.generic
// ALL:         return
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// softmax as a kernel: the elementwise producers of each reduction are fused into it. Three loop nests
// remain (max, sum of exp, normalize) plus the two fills: exp(x - max) has two users (the sum and the
// division), and upstream elementwise fusion only fuses single-use producers, so it is recomputed in neither.
// CHECK-LABEL: func.func private @softmax_kernel
// CHECK:         linalg.fill
// CHECK:         linalg.generic {{.*}} iterator_types = [{{.*}}"reduction"]
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           arith.subf
// CHECK:         linalg.fill
// CHECK:         linalg.generic {{.*}} iterator_types = [{{.*}}"reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic
func.func private @softmax_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// softmax over [1, 8, 4, 16] (attention scores with a batch of one): the keep_dims reductions' results
// [1, 8, 4, 1] are read through their [1, 8, 4] sources, unit batch dim included, so no reduction is
// reshaped to five dims (a 5-D reduction over an expanded input is not tiled into rows afterwards).
// CHECK-LABEL: func.func private @softmax_unit_batch_kernel
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:      outs({{.*}} : tensor<1x8x4xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:      outs({{.*}} : tensor<1x8x4xf32>)
// CHECK:           arith.addf
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return
func.func private @softmax_unit_batch_kernel(%x: tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32>
  return %0 : tensor<1x8x4x16xf32>
}

// -----

// A matmul with its bias and relu epilogue in a kernel: the epilogue is one loop nest after the matmul.
// CHECK-LABEL: func.func private @linear_kernel
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.cmpf olt
// CHECK-NEXT:      arith.select
// CHECK-NOT:     linalg.generic
func.func private @linear_kernel(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%x, %w) {transpose_a = false, transpose_b = false} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "graph.relu"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// A rank-3 x rank-2 matmul with its bias, static shapes: the product is one linalg.contract with no reshape
// around it, so nothing is pushed through it and it stays a contraction the runtime blocks as a 2-D matmul.
// CHECK-LABEL: func.func private @linear_rank3_kernel
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[P:.*]] = linalg.contract {{.*}} ins(%arg0, %arg1 : tensor<2x4x8xf32>, tensor<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[P]], %arg2 : tensor<2x4x16xf32>, tensor<16xf32>)
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
func.func private @linear_rank3_kernel(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> attributes {graph.kernel} {
  %0 = "graph.matmul_bias_add"(%x, %w, %b) : (tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// flash_attention in a kernel: the softmax's division stays its own loop nest before the second product
// (elementwise fusion does not fuse producers into a named contraction, so nothing is recomputed per column).
// CHECK-LABEL: func.func private @attention_kernel
// CHECK:         linalg.contract {{.*}} ins(%arg0, %arg1 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
// CHECK:           arith.subf
// CHECK:         linalg.generic {{.*}} iterator_types = [{{.*}}"reduction"]
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>) {
// CHECK-NEXT:    ^bb0({{.*}}):
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.contract {{.*}} ins(%[[P]], %arg2 : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>)
func.func private @attention_kernel(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> attributes {graph.kernel} {
  %0 = "graph.flash_attention"(%q, %k, %v) {scale = 0.25 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// Why the product becomes a generic here: with dynamic rows the matmul is 2-D between a collapse_shape and an
// expand_shape, and elementwise fusion pushes the expand_shape up through it (a generic contraction over
// [?, 4, 16]); the runtime does not block dynamically shaped contractions.
// CHECK-LABEL: func.func private @linear_dynamic_kernel
// CHECK-NOT:     linalg.matmul
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1 : tensor<?x4x8xf32>, tensor<8x16xf32>)
func.func private @linear_dynamic_kernel(%x: tensor<?x4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<?x4x16xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%x, %w) : (tensor<?x4x8xf32>, tensor<8x16xf32>) -> tensor<?x4x16xf32>
  %1 = "graph.add"(%0, %b) : (tensor<?x4x16xf32>, tensor<16xf32>) -> tensor<?x4x16xf32>
  return %1 : tensor<?x4x16xf32>
}

// -----

// A diamond: %0 is read by two ops, so upstream's fusion (single-use producers) left it a loop nest of its own,
// which the row fusion then cloned once per reader.  As a group it is one generic: the scalar of %0 is read
// twice in the body.
// CHECK-LABEL: func.func private @diamond_kernel
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:           %[[E:.*]] = math.absf
// CHECK-DAG:       arith.mulf %[[E]], %[[E]]
// CHECK-DAG:       math.sqrt %[[E]]
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func private @diamond_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel} {
  %0 = "graph.abs"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.mul"(%0, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.sqrt"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.add"(%1, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// A value returned and read by the group: a result of the group's generic, computed once.
// CHECK-LABEL: func.func private @two_results_kernel
// CHECK:         %[[G:.*]]:2 = linalg.generic
// CHECK:           linalg.yield
// CHECK-NEXT:    } -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[G]]#0, %[[G]]#1
func.func private @two_results_kernel(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {graph.kernel} {
  %0 = "graph.add"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%1, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// %2 reads %0 at the identity but also the row sum of %0: one generic for %0 and %2 would read its own result.
// They are of different stages: %0, the sum, then %2 and %3 merged.
// CHECK-LABEL: func.func private @stages_kernel
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[A]] : tensor<4x8xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           arith.mulf
// CHECK:           arith.subf
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func private @stages_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {graph.kernel} {
  %0 = "graph.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = "graph.sub"(%2, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Two chains that do not read each other: not merged, with sizes known at run time only (which may differ).
// CHECK-LABEL: func.func private @unconnected_kernel
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<?x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%arg1 : tensor<?x8xf32>)
// CHECK-NOT:     linalg.generic
func.func private @unconnected_kernel(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.neg"(%0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = "graph.abs"(%y) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = "graph.neg"(%2) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1, %3 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The sum reads %0 before the last member of %0's group: the generic replaces the group where its last member
// was, and the sum moves after it.  A value read once through a broadcast (%v) is left to upstream's fusion,
// which computes it inside its reader (no group result to store).
// CHECK-LABEL: func.func private @moved_reader_kernel
// CHECK:         %[[G:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:           math.absf
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[G]]#0
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[R]] :
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func private @moved_reader_kernel(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) attributes {graph.kernel} {
  %v = "graph.exp"(%b) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = "graph.add"(%x, %v) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = "graph.abs"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x1xf32>, tensor<4x8xf32>
}
