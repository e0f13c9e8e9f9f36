// BatchNormSplitFusionPass and ConvBatchnormFusionPass on each other's graphs.
// RUN: graphfuse-opt --split-input-file --BatchNormSplitFusionPass %s | FileCheck %s --check-prefix=SPLIT
// RUN: graphfuse-opt --split-input-file --ConvBatchnormFusionPass %s | FileCheck %s --check-prefix=CONVBN
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(BatchNormSplitFusionPass, ConvBatchnormFusionPass)' %s | FileCheck %s --check-prefix=BOTH

// conv -> batch_norm -> bias_add: the split fusion reuses the consumer's bias
// (one bias_add left); ConvBatchnormFusionPass adds its own (two left). Run
// first, as graph-fusion does, the split fusion leaves nothing to the other.
// SPLIT-LABEL: func.func @with_bias_consumer
// SPLIT:         "graph.conv2d"
// SPLIT-NEXT:    "graph.bias_add"
// SPLIT-NEXT:    return
// CONVBN-LABEL: func.func @with_bias_consumer
// CONVBN:         "graph.conv2d"
// CONVBN-NEXT:    "graph.bias_add"
// CONVBN-NEXT:    "graph.bias_add"
// CONVBN-NEXT:    return
// BOTH-LABEL: func.func @with_bias_consumer
// BOTH:         "graph.conv2d"
// BOTH-NEXT:    "graph.bias_add"
// BOTH-NEXT:    return
func.func @with_bias_consumer(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %bias = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.bias_add"(%1, %bias) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// conv -> batch_norm -> relu: only ConvBatchnormFusionPass applies.
// SPLIT-LABEL: func.func @without_bias_consumer
// SPLIT:         "graph.batch_norm"
// CONVBN-LABEL: func.func @without_bias_consumer
// CONVBN:         "graph.conv2d"
// CONVBN-NEXT:    "graph.bias_add"
// CONVBN-NEXT:    "graph.relu"
// BOTH-LABEL: func.func @without_bias_consumer
// BOTH-NOT:     graph.batch_norm
func.func @without_bias_consumer(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[0.5]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %p = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = "graph.batch_norm"(%0, %p, %p, %p, %p) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = "graph.relu"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}
