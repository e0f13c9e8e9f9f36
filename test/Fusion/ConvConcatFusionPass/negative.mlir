// Concatenated convolutions that are not one convolution; the debug log says why.
// RUN: graphfuse-opt --split-input-file --ConvConcatFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --ConvConcatFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Two inputs.
// CHECK-LABEL: func.func @two_inputs
// CHECK-COUNT-2: "graph.conv2d"
// WHY: pattern ConvConcatFusion not fused at {{.*}}: the convs read different inputs
func.func @two_inputs(%x: tensor<1x2x3x3xf32>, %y: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %1 = "graph.conv2d"(%y, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %2 : tensor<1x2x3x3xf32>
}

// -----

// Different pads.
// CHECK-LABEL: func.func @different_pads
// CHECK-COUNT-2: "graph.conv2d"
// WHY: pattern ConvConcatFusion not fused at {{.*}}: the convs differ in pads
func.func @different_pads(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<1.0> : tensor<1x2x3x3xf32>
  %0 = "graph.conv2d"(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  %1 = "graph.conv2d"(%x, %w) {pads = array<i64: 1, 0, 1, 2>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %2 : tensor<1x2x3x3xf32>
}

// -----

// A weight that is an argument.
// CHECK-LABEL: func.func @runtime_weight
// CHECK-COUNT-2: "graph.conv2d"
// WHY: pattern ConvConcatFusion not fused at {{.*}}: the conv2d weights are not all constants
func.func @runtime_weight(%x: tensor<1x2x3x3xf32>, %w1: tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %w0 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %0 = "graph.conv2d"(%x, %w0) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %1 = "graph.conv2d"(%x, %w1) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %2 : tensor<1x2x3x3xf32>
}

// -----

// A conv result used twice.
// CHECK-LABEL: func.func @shared_result
// CHECK-COUNT-2: "graph.conv2d"
// WHY: pattern ConvConcatFusion not fused at {{.*}}: a conv2d result has other users
func.func @shared_result(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) {
  %w = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %1 = "graph.conv2d"(%x, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %2, %0 : tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>
}
