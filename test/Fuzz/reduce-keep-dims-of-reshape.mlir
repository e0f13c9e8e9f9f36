// Found by the differential fuzzer (graphfuse.tools.fuzz, seed 0, graph 8575, shrunk with --reduce): a
// reduction with keep_dims over a unit dim that a reshape inserted, fused with the reshape into one kernel,
// made fuse-kernel-loops build a linalg.generic with a non-invertible indexing map: folding the reshape's unit
// dim into the reduction dropped the reduction's loop dim from every map, so the graph did not compile at opt
// level >= 1. fuse-kernel-loops now keeps an expansion whose unit dim no other map reads.
// RUN: graphfuse-run %s --opt-level 0 --check | FileCheck %s
// RUN: graphfuse-run %s --opt-level 1 --check | FileCheck %s
// RUN: graphfuse-run %s --opt-level 2 --check | FileCheck %s

// CHECK: check result 0: {{.*}}: ok
func.func @reduce_keep_dims_of_reshape(%x: tensor<4x3xf32>) -> tensor<1x3x1xf32> {
  %0 = "graph.reshape"(%x) : (tensor<4x3xf32>) -> tensor<4x3x1xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 0, 2>, keep_dims = true} : (tensor<4x3x1xf32>) -> tensor<1x3x1xf32>
  return %1 : tensor<1x3x1xf32>
}
