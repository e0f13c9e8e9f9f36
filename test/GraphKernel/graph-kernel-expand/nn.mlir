// Normalizations and softmax (enabled explicitly: off by default on every backend), and bias_add.
// All follow the references step by step, reductions with keep_dims: bit-exact in f32.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-kernel-expand{enable-ops=Softmax,LogSoftmax,LayerNorm,RmsNorm,BatchNorm})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --graph-kernel-expand %s | FileCheck %s --check-prefix=OFF

// max-subtracted, along the axis.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %[[M:.*]] = "graph.reduce_max"(%arg0) {axes = array<i64: 1>, keep_dims = true} : (tensor<2x5x7xf32>) -> tensor<2x1x7xf32>
// CHECK-NEXT:    %[[S:.*]] = "graph.sub"(%arg0, %[[M]]) : (tensor<2x5x7xf32>, tensor<2x1x7xf32>) -> tensor<2x5x7xf32>
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[S]])
// CHECK-NEXT:    %[[SUM:.*]] = "graph.reduce_sum"(%[[E]]) {axes = array<i64: 1>, keep_dims = true} : (tensor<2x5x7xf32>) -> tensor<2x1x7xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.div"(%[[E]], %[[SUM]]) : (tensor<2x5x7xf32>, tensor<2x1x7xf32>) -> tensor<2x5x7xf32>
// CHECK-NEXT:    return %[[R]]
// OFF-LABEL: func.func @softmax
// OFF-NEXT:    "graph.softmax"
func.func @softmax(%x: tensor<2x5x7xf32>) -> tensor<2x5x7xf32> {
  %0 = "graph.softmax"(%x) {axis = -2 : i64} : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  return %0 : tensor<2x5x7xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK-NEXT:    %[[M:.*]] = "graph.reduce_max"(%arg0) {axes = array<i64: 1>, keep_dims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[S:.*]] = "graph.sub"(%arg0, %[[M]])
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[S]])
// CHECK-NEXT:    %[[SUM:.*]] = "graph.reduce_sum"(%[[E]]) {axes = array<i64: 1>, keep_dims = true}
// CHECK-NEXT:    %[[L:.*]] = "graph.log"(%[[SUM]])
// CHECK-NEXT:    %[[R:.*]] = "graph.sub"(%[[S]], %[[L]]) : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[R]]
// OFF-LABEL: func.func @log_softmax
// OFF-NEXT:    "graph.log_softmax"
func.func @log_softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = "graph.log_softmax"(%x) {axis = 1 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// mean and (two-pass) variance over axes [1, 2]: n = 32.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT:    %[[N:.*]] = arith.constant dense<3.200000e+01> : tensor<f32>
// CHECK-NEXT:    %[[SUM:.*]] = "graph.reduce_sum"(%arg0) {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = "graph.div"(%[[SUM]], %[[N]])
// CHECK-NEXT:    %[[DEV:.*]] = "graph.sub"(%arg0, %[[MEAN]])
// CHECK-NEXT:    %[[SQ:.*]] = "graph.mul"(%[[DEV]], %[[DEV]])
// CHECK-NEXT:    %[[SQSUM:.*]] = "graph.reduce_sum"(%[[SQ]]) {axes = array<i64: 1, 2>, keep_dims = true}
// CHECK-NEXT:    %[[VAR:.*]] = "graph.div"(%[[SQSUM]], %[[N]])
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = "graph.add"(%[[VAR]], %[[EPS]])
// CHECK-NEXT:    %[[STD:.*]] = "graph.sqrt"(%[[VE]])
// CHECK-NEXT:    %[[NORM:.*]] = "graph.div"(%[[DEV]], %[[STD]])
// CHECK-NEXT:    %[[SCALED:.*]] = "graph.mul"(%[[NORM]], %arg1) : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.add"(%[[SCALED]], %arg2) : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[R]]
func.func @layer_norm(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = "graph.layer_norm"(%x, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm
// CHECK-NEXT:    %[[SQ:.*]] = "graph.mul"(%arg0, %arg0)
// CHECK-NEXT:    %[[SUM:.*]] = "graph.reduce_sum"(%[[SQ]]) {axes = array<i64: 1>, keep_dims = true} : (tensor<3x16xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %[[N:.*]] = arith.constant dense<1.600000e+01> : tensor<f32>
// CHECK-NEXT:    %[[MS:.*]] = "graph.div"(%[[SUM]], %[[N]])
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant dense<9.99999997E-7> : tensor<f32>
// CHECK-NEXT:    %[[MSE:.*]] = "graph.add"(%[[MS]], %[[EPS]])
// CHECK-NEXT:    %[[RMS:.*]] = "graph.sqrt"(%[[MSE]])
// CHECK-NEXT:    %[[NORM:.*]] = "graph.div"(%arg0, %[[RMS]])
// CHECK-NEXT:    %[[R:.*]] = "graph.mul"(%[[NORM]], %arg1) : (tensor<3x16xf32>, tensor<16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT:    return %[[R]]
func.func @rms_norm(%x: tensor<3x16xf32>, %g: tensor<16xf32>) -> tensor<3x16xf32> {
  %0 = "graph.rms_norm"(%x, %g) : (tensor<3x16xf32>, tensor<16xf32>) -> tensor<3x16xf32>
  return %0 : tensor<3x16xf32>
}

// -----

// The per-channel parameters are reshaped to Cx1x1 to broadcast along axis 1; sqrt(var + eps) runs on C values.
// CHECK-LABEL: func.func @batch_norm
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = "graph.add"(%arg4, %[[EPS]]) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[STD:.*]] = "graph.sqrt"(%[[VE]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[STD3:.*]] = "graph.reshape"(%[[STD]]) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[MEAN3:.*]] = "graph.reshape"(%arg3) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[DEV:.*]] = "graph.sub"(%arg0, %[[MEAN3]]) : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    %[[NORM:.*]] = "graph.div"(%[[DEV]], %[[STD3]])
// CHECK-NEXT:    %[[SCALE3:.*]] = "graph.reshape"(%arg1) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = "graph.mul"(%[[NORM]], %[[SCALE3]])
// CHECK-NEXT:    %[[OFFSET3:.*]] = "graph.reshape"(%arg2) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.add"(%[[SCALED]], %[[OFFSET3]]) : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %scale: tensor<3xf32>, %offset: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = "graph.batch_norm"(%x, %scale, %offset, %mean, %var) {epsilon = 1.0e-3 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// bias_add: the bias is reshaped to C x 1 x 1 for axis 1 of NCHW; along the last axis it broadcasts as is.
// CHECK-LABEL: func.func @bias_add
// CHECK-NEXT:    %[[B:.*]] = "graph.reshape"(%arg1) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = "graph.add"(%arg0, %[[B]]) : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    %[[R2:.*]] = "graph.add"(%arg2, %arg3) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[R]], %[[R2]]
// OFF-LABEL: func.func @bias_add
// OFF-NOT:       "graph.bias_add"
func.func @bias_add(%x: tensor<2x3x4x4xf32>, %b: tensor<3xf32>, %y: tensor<4x8xf16>, %c: tensor<8xf16>) -> (tensor<2x3x4x4xf32>, tensor<4x8xf16>) {
  %0 = "graph.bias_add"(%x, %b) {axis = 1 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %1 = "graph.bias_add"(%y, %c) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %0, %1 : tensor<2x3x4x4xf32>, tensor<4x8xf16>
}
