// matmuls of one input by constant weights => one matmul by the weights concatenated along N, then a split.
// RUN: graphfuse-opt --split-input-file --matmul_weight_concat_fusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=info --matmul_weight_concat_fusion %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS

// Query, key and value projections of linear layers (weights [N, K], read transposed).
// CHECK-LABEL: func.func @qkv
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<20x16xf32>
// CHECK-NEXT:    %[[P:.*]] = "graph.matmul"(%arg0, %[[W]]) {transpose_b = true} : (tensor<4x16xf32>, tensor<20x16xf32>) -> tensor<4x20xf32>
// CHECK-NEXT:    %[[S:.*]]:3 = "graph.split"(%[[P]]) {axis = 1 : i64, sizes = array<i64: 8, 8, 4>}
// CHECK-NEXT:    return %[[S]]#0, %[[S]]#1, %[[S]]#2
// COUNTS: GraphFusionPass[matmul_weight_concat_fusion]: pattern=MatMulWeightConcat, matched_times=1, effected_times=1
func.func @qkv(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>) {
  %wq = arith.constant dense<0.5> : tensor<8x16xf32>
  %wk = arith.constant dense<0.25> : tensor<8x16xf32>
  %wv = arith.constant dense<2.0> : tensor<4x16xf32>
  %q = "graph.matmul"(%x, %wq) {transpose_b = true} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %k = "graph.matmul"(%x, %wk) {transpose_b = true} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %v = "graph.matmul"(%x, %wv) {transpose_b = true} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x4xf32>
  return %q, %k, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// Gate and up projections with weights [K, N] and a batched A, an op between them: the merged product
// takes the first one's place, the split's pieces feed the ops that read the products.
// CHECK-LABEL: func.func @gate_up
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 3.000000e+00, 3.000000e+00]{{.*}}> : tensor<2x5xf32>
// CHECK-NEXT:    %[[P:.*]] = "graph.matmul"(%arg0, %[[W]]) : (tensor<3x4x2xf32>, tensor<2x5xf32>) -> tensor<3x4x5xf32>
// CHECK-NEXT:    %[[S:.*]]:2 = "graph.split"(%[[P]]) {axis = 2 : i64, sizes = array<i64: 3, 2>}
// CHECK-NEXT:    %[[G:.*]] = "graph.silu"(%[[S]]#0)
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%[[S]]#1)
// CHECK-NEXT:    return %[[G]], %[[E]]
func.func @gate_up(%x: tensor<3x4x2xf32>) -> (tensor<3x4x3xf32>, tensor<3x4x2xf32>) {
  %wg = arith.constant dense<1.0> : tensor<2x3xf32>
  %wu = arith.constant dense<3.0> : tensor<2x2xf32>
  %g = "graph.matmul"(%x, %wg) : (tensor<3x4x2xf32>, tensor<2x3xf32>) -> tensor<3x4x3xf32>
  %a = "graph.silu"(%g) : (tensor<3x4x3xf32>) -> tensor<3x4x3xf32>
  %u = "graph.matmul"(%x, %wu) : (tensor<3x4x2xf32>, tensor<2x2xf32>) -> tensor<3x4x2xf32>
  %e = "graph.exp"(%u) : (tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  return %a, %e : tensor<3x4x3xf32>, tensor<3x4x2xf32>
}
