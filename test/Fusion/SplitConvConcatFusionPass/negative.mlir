// split -> conv2d -> concat graphs that are not one grouped conv; the debug log says why.
// RUN: graphfuse-opt --split-input-file --SplitConvConcatFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --SplitConvConcatFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Pieces of 2 and 4 channels: a grouped conv has equal groups.
// CHECK-LABEL: func.func @unequal_pieces
// CHECK:         "graph.split"
// WHY: pattern SplitConvConcatFusion not fused at {{.*}}: the split pieces have different channel counts [2, 4]: a grouped conv needs equal groups
func.func @unequal_pieces(%x: tensor<1x6x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w0 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %w1 = arith.constant dense<1.0> : tensor<1x4x1x1xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 4>} : (tensor<1x6x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x4x3x3xf32>)
  %1 = "graph.conv2d"(%0#0, %w0) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.conv2d"(%0#1, %w1) : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x1x3x3xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %3 : tensor<1x2x3x3xf32>
}

// -----

// Convs with 1 and 3 output channels.
// CHECK-LABEL: func.func @unequal_outputs
// CHECK:         "graph.split"
// WHY: pattern SplitConvConcatFusion not fused at {{.*}}: the convs have different output channel counts [1, 3]: a grouped conv needs equal groups
func.func @unequal_outputs(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %w0 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %w1 = arith.constant dense<1.0> : tensor<3x2x1x1xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
  %1 = "graph.conv2d"(%0#0, %w0) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.conv2d"(%0#1, %w1) : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %3 : tensor<1x4x3x3xf32>
}

// -----

// The concat takes the convs in the other order: channel blocks would be swapped.
// CHECK-LABEL: func.func @swapped
// CHECK:         "graph.split"
// WHY: pattern SplitConvConcatFusion not fused at {{.*}}: the concat takes the convs of split pieces in order [1, 0], not in split order
func.func @swapped(%x: tensor<1x4x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w0 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %w1 = arith.constant dense<2.0> : tensor<1x2x1x1xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
  %1 = "graph.conv2d"(%0#0, %w0) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.conv2d"(%0#1, %w1) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %3 = "graph.concat"(%2, %1) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %3 : tensor<1x2x3x3xf32>
}

// -----

// The convs differ in strides, and (with equal strides) in kernel sizes.
// CHECK-LABEL: func.func @different_convs
// CHECK-COUNT-2: "graph.split"
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: the convs differ in strides
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: the convs have different kernel sizes [(1, 1), (2, 2)]
func.func @different_convs(%x: tensor<1x4x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w1 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %w2 = arith.constant dense<1.0> : tensor<1x2x2x2xf32>
  %w3 = arith.constant dense<1.0> : tensor<1x2x3x3xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  %1 = "graph.conv2d"(%0#0, %w1) {strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  %2 = "graph.conv2d"(%0#1, %w3) : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x2x2xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %4:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  %5 = "graph.conv2d"(%4#0, %w1) {strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  %6 = "graph.conv2d"(%4#1, %w2) {strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  %7 = "graph.concat"(%5, %6) {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %3, %7 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// A split piece and a conv result with other users; a weight that is not a constant.
// CHECK-LABEL: func.func @other_users_and_dynamic_weight
// CHECK-COUNT-3: "graph.split"
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: split piece 1 has other users
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: a conv2d result has other users
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: the conv2d weights are not all constants
func.func @other_users_and_dynamic_weight(%x: tensor<1x4x3x3xf32>, %wv: tensor<1x2x1x1xf32>)
    -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) {
  %w = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %0:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
  %1 = "graph.conv2d"(%0#0, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = "graph.conv2d"(%0#1, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  %4:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
  %5 = "graph.conv2d"(%4#0, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %6 = "graph.conv2d"(%4#1, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %7 = "graph.concat"(%5, %6) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  %8:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
  %9 = "graph.conv2d"(%8#0, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %10 = "graph.conv2d"(%8#1, %wv) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %11 = "graph.concat"(%9, %10) {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %3, %0#1, %7, %11, %6 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>
}

// -----

// Axes other than the channel axis, an already grouped conv, and a split with more pieces than convs.
// CHECK-LABEL: func.func @wrong_structure
// CHECK-COUNT-4: "graph.split"
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: the split does not cut the channel axis 1
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: the concat does not join the channel axis 1
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: a conv2d is already grouped (groups != 1)
// WHY-DAG: pattern SplitConvConcatFusion not fused at {{.*}}: the concat joins 2 convs but the split has 3 pieces
func.func @wrong_structure(%x: tensor<1x4x4x4xf32>, %y: tensor<1x6x4x4xf32>)
    -> (tensor<1x2x2x4xf32>, tensor<2x1x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<1x4x1x1xf32>
  %w2 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %g = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %0:2 = "graph.split"(%x) {axis = 2 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>)
  %1 = "graph.conv2d"(%0#0, %w) : (tensor<1x4x2x4xf32>, tensor<1x4x1x1xf32>) -> tensor<1x1x2x4xf32>
  %2 = "graph.conv2d"(%0#1, %w) : (tensor<1x4x2x4xf32>, tensor<1x4x1x1xf32>) -> tensor<1x1x2x4xf32>
  %3 = "graph.concat"(%1, %2) {axis = 1 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x2x2x4xf32>
  %4:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  %5 = "graph.conv2d"(%4#0, %w2) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %6 = "graph.conv2d"(%4#1, %w2) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %7 = "graph.concat"(%5, %6) {axis = 0 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %8:2 = "graph.split"(%x) {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  %9 = "graph.conv2d"(%8#0, %g) {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %10 = "graph.conv2d"(%8#1, %w2) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %11 = "graph.concat"(%9, %10) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x4x4xf32>
  %s = "graph.slice"(%11) {start = array<i64: 0, 0, 0, 0>, limit = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x4xf32>) -> tensor<1x2x4x4xf32>
  %12:3 = "graph.split"(%y) {axis = 1 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<1x6x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  %13 = "graph.conv2d"(%12#0, %w2) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %14 = "graph.conv2d"(%12#1, %w2) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %15 = "graph.concat"(%13, %14) {axis = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %3, %7, %s, %15, %12#2 : tensor<1x2x2x4xf32>, tensor<2x1x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
