// graph-shard-partition: a column-parallel then row-parallel MLP, one rank's graph each; constants are sliced.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-shard-partition{rank=0})' %s | FileCheck %s --check-prefixes=CHECK,RANK0
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-shard-partition{rank=1})' %s | FileCheck %s --check-prefixes=CHECK,RANK1
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-shard-partition{rank=1 group="tp"},MatMulAllReduce)' %s | FileCheck %s --check-prefix=FUSED
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-shard-partition{rank=0})' --mlir-pass-statistics %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// The arguments are passed as each rank's shards; the first matmul's result is split along its columns, the
// gelu runs on the block, the second matmul's partial products are summed by one all_reduce.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %arg0: tensor<4x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[H:.*]] = "graph.matmul"(%arg0, %arg1) {transpose_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[G:.*]] = "graph.gelu"(%[[H]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = "graph.matmul"(%[[G]], %arg2) {transpose_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = "graph.all_reduce"(%[[P]]) {group = "world", group_size = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[S]]
// CHECK-NOT:   shard.
// FUSED-LABEL: func.func @mlp(
// FUSED:         "graph.matmul_all_reduce"({{.*}}) {group = "tp", group_size = 2 : i64, transpose_b = true}
// Over the four functions of this file:
// STATS: graph-shard-partition
// STATS-NEXT: (S)  1 num-all-gather
// STATS-NEXT: (S)  2 num-all-reduce
// STATS-NEXT: (S) 15 num-local-ops
// STATS-NEXT: (S)  5 num-sharded-arguments
// STATS-NEXT: (S)  1 num-sharded-constants
shard.grid @tp(shape = 2)
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %col = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %row = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %w1 to %col : tensor<16x8xf32>
  %b = shard.shard %w2 to %row : tensor<8x16xf32>
  %0 = "graph.matmul"(%x, %a) {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %1 = "graph.gelu"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = "graph.matmul"(%1, %b) {transpose_b = true} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A constant weight is sliced to the rank's block, as is a replicated bias added along the split columns;
// a softmax over the split columns needs them whole: an all_gather first.
// CHECK-LABEL: func.func @constants(
// RANK0:         %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>
// RANK1:         %[[W:.*]] = arith.constant dense<{{\[\[}}3.000000e+00, 4.000000e+00]]> : tensor<1x2xf32>
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg0, %[[W]]) {transpose_b = true} : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x1xf32>
// RANK0-NEXT:    %[[B:.*]] = arith.constant dense<1.000000e+01> : tensor<1xf32>
// RANK1-NEXT:    %[[B:.*]] = arith.constant dense<2.000000e+01> : tensor<1xf32>
// CHECK-NEXT:    %[[A:.*]] = "graph.add"(%[[M]], %[[B]]) : (tensor<3x1xf32>, tensor<1xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %[[G:.*]] = "graph.all_gather"(%[[A]]) {axis = 1 : i64, group = "world", group_size = 2 : i64} : (tensor<3x1xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[S:.*]] = "graph.softmax"(%[[G]]) {axis = -1 : i64} : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    return %[[S]]
shard.grid @tp(shape = 2)
func.func @constants(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %bias = arith.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %col = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %col : tensor<2x2xf32>
  %0 = "graph.matmul"(%x, %ws) {transpose_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %1 = "graph.add"(%0, %bias) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %2 = "graph.softmax"(%1) {axis = -1 : i64} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// Attention heads: the q and k projections split along their outputs become the heads' dimension through
// reshape and transpose; scores, softmax over keys and the context stay per head; the output projection
// (row-parallel) is summed.
// CHECK-LABEL: func.func @heads(
// CHECK:         "graph.reshape"({{.*}}) : (tensor<6x8xf32>) -> tensor<6x2x4xf32>
// CHECK:         "graph.transpose"({{.*}}) {perm = array<i64: 1, 0, 2>} : (tensor<6x2x4xf32>) -> tensor<2x6x4xf32>
// CHECK:         "graph.matmul"({{.*}}) {transpose_b = true} : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x6x6xf32>
// CHECK:         "graph.softmax"({{.*}}) {axis = -1 : i64} : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
// CHECK:         "graph.reshape"({{.*}}) : (tensor<6x2x4xf32>) -> tensor<6x8xf32>
// CHECK:         %[[P:.*]] = "graph.matmul"({{.*}}) {transpose_b = true} : (tensor<6x8xf32>, tensor<16x8xf32>) -> tensor<6x16xf32>
// CHECK-NEXT:    "graph.all_reduce"(%[[P]])
// CHECK-NOT:     "graph.all_gather"
shard.grid @tp(shape = 2)
func.func @heads(%x: tensor<6x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wo: tensor<16x16xf32>) -> tensor<6x16xf32> {
  %col = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %row = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %q_w = shard.shard %wq to %col : tensor<16x16xf32>
  %k_w = shard.shard %wk to %col : tensor<16x16xf32>
  %o_w = shard.shard %wo to %row : tensor<16x16xf32>
  %q = "graph.matmul"(%x, %q_w) {transpose_b = true} : (tensor<6x16xf32>, tensor<16x16xf32>) -> tensor<6x16xf32>
  %k = "graph.matmul"(%x, %k_w) {transpose_b = true} : (tensor<6x16xf32>, tensor<16x16xf32>) -> tensor<6x16xf32>
  %q3 = "graph.reshape"(%q) : (tensor<6x16xf32>) -> tensor<6x4x4xf32>
  %k3 = "graph.reshape"(%k) : (tensor<6x16xf32>) -> tensor<6x4x4xf32>
  %qh = "graph.transpose"(%q3) {perm = array<i64: 1, 0, 2>} : (tensor<6x4x4xf32>) -> tensor<4x6x4xf32>
  %kh = "graph.transpose"(%k3) {perm = array<i64: 1, 0, 2>} : (tensor<6x4x4xf32>) -> tensor<4x6x4xf32>
  %s = "graph.matmul"(%qh, %kh) {transpose_b = true} : (tensor<4x6x4xf32>, tensor<4x6x4xf32>) -> tensor<4x6x6xf32>
  %p = "graph.softmax"(%s) {axis = -1 : i64} : (tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %c = "graph.matmul"(%p, %kh) : (tensor<4x6x6xf32>, tensor<4x6x4xf32>) -> tensor<4x6x4xf32>
  %ct = "graph.transpose"(%c) {perm = array<i64: 1, 0, 2>} : (tensor<4x6x4xf32>) -> tensor<6x4x4xf32>
  %c2 = "graph.reshape"(%ct) : (tensor<6x4x4xf32>) -> tensor<6x16xf32>
  %o = "graph.matmul"(%c2, %o_w) {transpose_b = true} : (tensor<6x16xf32>, tensor<16x16xf32>) -> tensor<6x16xf32>
  return %o : tensor<6x16xf32>
}

// -----

// Without a grid the pass changes nothing.
// CHECK-LABEL: func.func @unannotated(
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    return
func.func @unannotated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
