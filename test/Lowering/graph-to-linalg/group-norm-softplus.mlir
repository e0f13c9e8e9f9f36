// graph-decompose on graph.group_norm (its graph-kernel-expand expander: layer_norm's two passes over each
// sample's groups, then gamma and beta per channel) and on graph.softplus with PyTorch's beta and threshold
// (its derived expansion: the stable form, an accurate log1p, the switch to x above the threshold).
// RUN: graphfuse-opt --split-input-file --graph-decompose %s | FileCheck %s

// Groups of 2 channels x 5 positions: one row of 10 per (sample, group).
// CHECK-LABEL: func.func @group_norm
// CHECK:         %[[G:.*]] = "graph.reshape"(%arg0) : (tensor<2x6x5xf32>) -> tensor<2x3x10xf32>
// CHECK:         %[[COUNT:.*]] = arith.constant dense<1.000000e+01> : tensor<f32>
// CHECK:         %[[SUM:.*]] = "graph.reduce_sum"(%[[G]]) {axes = array<i64: 2>, keep_dims = true} : (tensor<2x3x10xf32>) -> tensor<2x3x1xf32>
// CHECK:         %[[MEAN:.*]] = "graph.div"(%[[SUM]], %[[COUNT]])
// CHECK:         %[[DEV:.*]] = "graph.sub"(%[[G]], %[[MEAN]])
// CHECK:         %[[SQ:.*]] = "graph.mul"(%[[DEV]], %[[DEV]])
// CHECK:         %[[SQSUM:.*]] = "graph.reduce_sum"(%[[SQ]]) {axes = array<i64: 2>, keep_dims = true}
// CHECK:         %[[VAR:.*]] = "graph.div"(%[[SQSUM]], %[[COUNT]])
// CHECK:         %[[EPS:.*]] = "graph.add"(%[[VAR]], %{{.*}})
// CHECK:         %[[STD:.*]] = "graph.sqrt"(%[[EPS]])
// CHECK:         %[[NORM:.*]] = "graph.div"(%[[DEV]], %[[STD]])
// CHECK:         %[[BACK:.*]] = "graph.reshape"(%[[NORM]]) : (tensor<2x3x10xf32>) -> tensor<2x6x5xf32>
// CHECK:         %[[GAMMA:.*]] = "graph.reshape"(%arg1) : (tensor<6xf32>) -> tensor<6x1xf32>
// CHECK:         %[[SCALED:.*]] = "graph.mul"(%[[BACK]], %[[GAMMA]])
// CHECK:         %[[BETA:.*]] = "graph.reshape"(%arg2) : (tensor<6xf32>) -> tensor<6x1xf32>
// CHECK:         %[[OUT:.*]] = "graph.add"(%[[SCALED]], %[[BETA]])
// CHECK:         return %[[OUT]]
// CHECK-NOT:     graph.group_norm
func.func @group_norm(%x: tensor<2x6x5xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x5xf32> {
  %0 = "graph.group_norm"(%x, %g, %b) {num_groups = 3 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  return %0 : tensor<2x6x5xf32>
}

// -----

// f16 is normalized in f32 between two casts; under a dynamic batch, a group per channel needs no reshape.
// CHECK-LABEL: func.func @group_norm_f16
// CHECK:         %[[X:.*]] = "graph.cast"(%arg0) : (tensor<?x4x3xf16>) -> tensor<?x4x3xf32>
// CHECK-NOT:     "graph.reshape"(%[[X]])
// CHECK:         "graph.reduce_sum"(%[[X]]) {axes = array<i64: 2>, keep_dims = true} : (tensor<?x4x3xf32>) -> tensor<?x4x1xf32>
// CHECK:         %[[OUT:.*]] = "graph.cast"(%{{.*}}) : (tensor<?x4x3xf32>) -> tensor<?x4x3xf16>
// CHECK:         return %[[OUT]]
func.func @group_norm_f16(%x: tensor<?x4x3xf16>, %g: tensor<4xf16>) -> tensor<?x4x3xf16> {
  %0 = "graph.group_norm"(%x, %g, %g) {num_groups = 4 : i64} : (tensor<?x4x3xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<?x4x3xf16>
  return %0 : tensor<?x4x3xf16>
}

// -----

// A dynamic normalized dim: the group's size is unknown, so the op stays whole.
// CHECK-LABEL: func.func @group_norm_dynamic_positions
// CHECK:         "graph.group_norm"
func.func @group_norm_dynamic_positions(%x: tensor<2x4x?xf32>, %g: tensor<4xf32>) -> tensor<2x4x?xf32> {
  %0 = "graph.group_norm"(%x, %g, %g) {num_groups = 2 : i64} : (tensor<2x4x?xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

// softplus(x, beta = 2, threshold = 20) = select(2x > 20, x, (max(2x, 0) + log1p(exp(-|2x|))) / 2).
// CHECK-LABEL: func.func @softplus
// CHECK:         %[[BETA:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK:         %[[Z:.*]] = "graph.mul"(%arg0, %[[BETA]])
// CHECK:         %[[POS:.*]] = "graph.maximum"(%[[Z]], %{{.*}})
// CHECK:         %[[E:.*]] = "graph.exp"
// CHECK:         %[[U:.*]] = "graph.add"(%{{.*}}, %[[E]])
// CHECK:         %[[ONE:.*]] = "graph.equal"(%[[U]], %{{.*}})
// CHECK:         %[[LOG:.*]] = "graph.log"(%[[U]])
// CHECK:         %[[L1P:.*]] = "graph.select"(%[[ONE]], %[[E]], %{{.*}})
// CHECK:         %[[SOFT:.*]] = "graph.add"(%[[POS]], %[[L1P]])
// CHECK:         %[[SCALED:.*]] = "graph.div"(%[[SOFT]], %[[BETA]])
// CHECK:         %[[THRESHOLD:.*]] = arith.constant dense<2.000000e+01> : tensor<f32>
// CHECK:         %[[ABOVE:.*]] = "graph.greater"(%[[Z]], %[[THRESHOLD]])
// CHECK:         %[[OUT:.*]] = "graph.select"(%[[ABOVE]], %arg0, %[[SCALED]])
// CHECK:         return %[[OUT]]
func.func @softplus(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.softplus"(%x) {beta = 2.0 : f32, threshold = 20.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The defaults (MindSpore's Softplus): no scale and no threshold.
// CHECK-LABEL: func.func @softplus_defaults
// CHECK-NOT:     "graph.mul"(%arg0
// CHECK-NOT:     "graph.greater"
// CHECK:         return
func.func @softplus_defaults(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.softplus"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
