// A bias that cannot become the conv2d's own; the debug log says why.
// RUN: graphfuse-opt --split-input-file --ConvBiasAddFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --ConvBiasAddFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// A bias_add along another axis than the channels.
// CHECK-LABEL: func.func @other_axis
// CHECK:         "graph.bias_add"
// WHY: pattern ConvBiasAddFusion not fused at {{.*}}: the bias_add adds along axis 3, not the channel axis 1
func.func @other_axis(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x1x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = 3 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// The conv2d already has a bias.
// CHECK-LABEL: func.func @has_bias
// CHECK:         "graph.bias_add"
// WHY: pattern ConvBiasAddFusion not fused at {{.*}}: the conv2d already has a bias
func.func @has_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x1x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// The conv2d result is also returned: it must stay without the bias.
// CHECK-LABEL: func.func @shared
// CHECK:         "graph.bias_add"
// WHY: pattern ConvBiasAddFusion not fused at {{.*}}: the conv2d result has other users
func.func @shared(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x1x1xf32>, %b: tensor<4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = "graph.bias_add"(%0, %b) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %1, %0 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// An add of a value that varies along H and W, and of a constant that varies along W (neither is per channel).
// CHECK-LABEL: func.func @not_a_channel_bias
// CHECK-COUNT-2: "graph.add"
// WHY-DAG: pattern ConvAddFusion not fused at {{.*}}: the other operand of the add is not a constant
// WHY-DAG: pattern ConvAddFusion not fused at {{.*}}: the added constant of shape (4,) is not a per-channel bias
func.func @not_a_channel_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x1x1xf32>, %c: tensor<1x1x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = "graph.add"(%0, %c) : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = "graph.conv2d"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %3 = "graph.add"(%2, %k) : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %1, %3 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
