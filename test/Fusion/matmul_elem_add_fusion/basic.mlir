// matmul -> add of a tensor that broadcasts to the matmul result => graph.matmul_add.
// RUN: graphfuse-opt --split-input-file --matmul_elem_add_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --matmul_elem_add_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// A residual connection: the addend first.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_add"(%arg0, %arg1, %arg2) : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    return %[[R]]
// COUNTS: GraphFusionPass[matmul_elem_add_fusion]: pattern=MatMulAdd, matched_times=1, effected_times=1
func.func @residual(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %1 = "graph.add"(%r, %0) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// Broadcast addends (a row, a column, a 1-D bias, a scalar constant), flags kept, integers too.
// CHECK-LABEL: func.func @broadcasts
// CHECK:         %[[C:.*]] = arith.constant dense<3> : tensor<i32>
// CHECK:         %[[A:.*]] = "graph.matmul_add"(%arg0, %arg1, %arg2) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<32x16xf16>, tensor<1x32xf16>) -> tensor<2x4x32xf16>
// CHECK-NEXT:    %[[B:.*]] = "graph.matmul_add"(%arg0, %arg1, %arg3) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<32x16xf16>, tensor<2x4x1xf16>) -> tensor<2x4x32xf16>
// CHECK-NEXT:    %[[D:.*]] = "graph.matmul_add"(%arg0, %arg1, %arg4) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<32x16xf16>, tensor<32xf16>) -> tensor<2x4x32xf16>
// CHECK-NEXT:    %[[E:.*]] = "graph.matmul_add"(%arg5, %arg6, %[[C]]) : (tensor<4x8xi32>, tensor<8x4xi32>, tensor<i32>) -> tensor<4x4xi32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[D]], %[[E]]
// COUNTS: GraphFusionPass[matmul_elem_add_fusion]: pattern=MatMulAdd, matched_times=4, effected_times=4
func.func @broadcasts(%x: tensor<2x4x16xf16>, %w: tensor<32x16xf16>, %row: tensor<1x32xf16>, %col: tensor<2x4x1xf16>, %b: tensor<32xf16>,
                      %i: tensor<4x8xi32>, %j: tensor<8x4xi32>) -> (tensor<2x4x32xf16>, tensor<2x4x32xf16>, tensor<2x4x32xf16>, tensor<4x4xi32>) {
  %c = arith.constant dense<3> : tensor<i32>
  %0 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<32x16xf16>) -> tensor<2x4x32xf16>
  %1 = "graph.add"(%0, %row) : (tensor<2x4x32xf16>, tensor<1x32xf16>) -> tensor<2x4x32xf16>
  %2 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<32x16xf16>) -> tensor<2x4x32xf16>
  %3 = "graph.add"(%col, %2) : (tensor<2x4x1xf16>, tensor<2x4x32xf16>) -> tensor<2x4x32xf16>
  %4 = "graph.matmul"(%x, %w) {transpose_b = true} : (tensor<2x4x16xf16>, tensor<32x16xf16>) -> tensor<2x4x32xf16>
  %5 = "graph.add"(%4, %b) : (tensor<2x4x32xf16>, tensor<32xf16>) -> tensor<2x4x32xf16>
  %6 = "graph.matmul"(%i, %j) : (tensor<4x8xi32>, tensor<8x4xi32>) -> tensor<4x4xi32>
  %7 = "graph.add"(%6, %c) : (tensor<4x4xi32>, tensor<i32>) -> tensor<4x4xi32>
  return %1, %3, %5, %7 : tensor<2x4x32xf16>, tensor<2x4x32xf16>, tensor<2x4x32xf16>, tensor<4x4xi32>
}

// -----

// Two matmuls added: the first one absorbs the add, the second stays its addend.
// CHECK-LABEL: func.func @two_matmuls
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%arg2, %arg3)
// CHECK-NEXT:    %[[R:.*]] = "graph.matmul_add"(%arg0, %arg1, %[[M]])
// CHECK-NEXT:    return %[[R]]
func.func @two_matmuls(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x2xf32>, %d: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = "graph.matmul"(%c, %d) : (tensor<4x2xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
