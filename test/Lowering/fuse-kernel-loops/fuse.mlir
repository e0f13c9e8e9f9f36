// fuse-kernel-loops fuses the linalg ops inside each kernel function (graph.kernel) into as few loop nests
// as possible; functions that are not kernels keep one loop nest per op (the unfused baseline) unless
// all-functions is set.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops{all-functions})' %s | FileCheck %s --check-prefix=ALL
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops)' --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: not graphfuse-opt --split-input-file --fuse-kernel-loops %s 2>&1 | FileCheck %s --check-prefix=GRAPH
// STATS: fuse-kernel-loops
// STATS-NEXT: (S) 3 num-kernels
// STATS-NEXT: (S) 14 num-loop-nests-before
// STATS-NEXT: (S) 10 num-loop-nests-after
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

// A matmul with its bias and relu epilogue in a kernel: the epilogue is one loop nest after the matmul.
// CHECK-LABEL: func.func private @linear_kernel
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.generic
func.func private @linear_kernel(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%x, %w) {transpose_a = false, transpose_b = false} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "graph.relu"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
