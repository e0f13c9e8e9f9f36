// matmul -> all_reduce(sum) [-> bias] => graph.matmul_all_reduce (MindSpore's MatMulAllReduce).
// RUN: graphfuse-opt --split-input-file --MatMulAllReduce %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --MatMulAllReduce %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS
// Switched off as any fusion pass: by the flags and by a pipeline option.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion)' --graph-kernel-flags="--disable_pass=MatMulAllReduce" %s | FileCheck %s --check-prefix=OFF
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-fusion{disable-pass=MatMulAllReduce})' %s | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @row_parallel
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_all_reduce"(%arg0, %arg1) {group_size = 2 : i64, transpose_b = true} : (tensor<16x32xf32>, tensor<64x32xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:    return %[[R]]
// OFF-LABEL: func.func @row_parallel
// OFF-NEXT:    "graph.matmul"
// OFF-NEXT:    "graph.all_reduce"
// COUNTS: GraphFusionPass[MatMulAllReduce]: pattern=MatMulAllReduce, matched_times=1, effected_times=1
func.func @row_parallel(%x: tensor<16x32xf32>, %w: tensor<64x32xf32>) -> tensor<16x64xf32> {
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<16x32xf32>, tensor<64x32xf32>) -> tensor<16x64xf32>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}

// -----

// The bias after the sum is taken in, from a bias_add or an add of a 1-D value; the group is kept.
// CHECK-LABEL: func.func @with_bias
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_all_reduce"(%arg0, %arg1, %arg2) {group = "tp", group_size = 4 : i64} : (tensor<8x32xf16>, tensor<32x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
// CHECK-NEXT:    %[[S:.*]] = "graph.matmul_all_reduce"(%arg0, %arg1, %arg2) {group = "tp", group_size = 4 : i64}
// CHECK-NEXT:    return %[[R]], %[[S]]
// COUNTS: GraphFusionPass[MatMulAllReduce]: pattern=MatMulAllReduce, matched_times=2, effected_times=2
// COUNTS: GraphFusionPass[MatMulAllReduce]: pattern=MatMulAllReduceBiasAdd, matched_times=1, effected_times=1
// COUNTS: GraphFusionPass[MatMulAllReduce]: pattern=MatMulAllReduceAddBias, matched_times=1, effected_times=1
func.func @with_bias(%x: tensor<8x32xf16>, %w: tensor<32x64xf16>, %b: tensor<64xf16>) -> (tensor<8x64xf16>, tensor<8x64xf16>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<8x32xf16>, tensor<32x64xf16>) -> tensor<8x64xf16>
  %1 = "graph.all_reduce"(%0) {group = "tp", group_size = 4 : i64} : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %2 = "graph.bias_add"(%1, %b) : (tensor<8x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
  %3 = "graph.matmul"(%x, %w) : (tensor<8x32xf16>, tensor<32x64xf16>) -> tensor<8x64xf16>
  %4 = "graph.all_reduce"(%3) {group = "tp", group_size = 4 : i64} : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %5 = "graph.add"(%b, %4) : (tensor<64xf16>, tensor<8x64xf16>) -> tensor<8x64xf16>
  return %2, %5 : tensor<8x64xf16>, tensor<8x64xf16>
}
