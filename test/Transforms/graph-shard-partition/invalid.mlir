// graph-shard-partition refuses what it cannot partition, with located errors.
// RUN: not graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-shard-partition{rank=0})' %s 2>&1 | FileCheck %s
// RUN: not graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-shard-partition{rank=2})' %S/megatron.mlir 2>&1 | FileCheck %s --check-prefix=RANK

// RANK: error: graph-shard-partition: rank 2 is not in the grid @tp of 2 ranks

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: graph-shard-partition: grid shape [2, 2]: a 1-D grid is supported
shard.grid @tp(shape = 2x2)
func.func @two_d(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: graph-shard-partition: dimension 0 of tensor<3x8xf32> does not divide into 2 ranks
shard.grid @tp(shape = 2)
func.func @indivisible(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s : tensor<3x8xf32>
  %0 = "graph.exp"(%a) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: graph-shard-partition: halo_sizes are not supported (even, contiguous blocks only)
shard.grid @tp(shape = 2)
func.func @halo(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @tp split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %a = shard.shard %x to %s : tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// CHECK: invalid.mlir:{{[0-9]+}}:1: error: graph-shard-partition: the module has more than one shard.grid; one 1-D grid is supported
shard.grid @tp(shape = 2)
shard.grid @dp(shape = 2)
func.func @grids(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
