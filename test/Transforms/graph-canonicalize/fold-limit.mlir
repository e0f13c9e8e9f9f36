// fold-limit bounds the size of folded results (default 65536 elements).
// RUN: graphfuse-opt --split-input-file --graph-canonicalize %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-canonicalize{fold-limit=4})' %s | FileCheck %s --check-prefix=LIMIT
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-canonicalize{fold-limit=0})' %s | FileCheck %s --check-prefix=ZERO
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-canonicalize{fold-limit=abc})' %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(graph-canonicalize{fold-limit=-1})' %s 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// BAD: option 'fold-limit' of pass 'graph-canonicalize' expects an integer, got 'abc'
// NEGATIVE: option 'fold-limit' of pass 'graph-canonicalize' must be >= 0, got -1

// 16 result elements: folded by default, kept above a limit of 4.
// CHECK-LABEL: func.func @broadcast_16
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK-NEXT:    return %[[C]]
// LIMIT-LABEL: func.func @broadcast_16
// LIMIT-NEXT:    %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// LIMIT-NEXT:    %[[B:.*]] = "graph.broadcast_to"(%[[C]]) : (tensor<4xf32>) -> tensor<4x4xf32>
// LIMIT-NEXT:    return %[[B]]
func.func @broadcast_16() -> tensor<4x4xf32> {
  %a = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = "graph.broadcast_to"(%a) : (tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Exactly at the limit: folded.
// CHECK-LABEL: func.func @add_4
// CHECK-NEXT:    arith.constant dense<[2, 4, 6, 8]> : tensor<4xi32>
// LIMIT-LABEL: func.func @add_4
// LIMIT-NEXT:    %[[C:.*]] = arith.constant dense<[2, 4, 6, 8]> : tensor<4xi32>
// LIMIT-NEXT:    return %[[C]]
// ZERO-LABEL: func.func @add_4
// ZERO:          "graph.add"
func.func @add_4() -> tensor<4xi32> {
  %a = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = "graph.add"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// A large operand with a small result is folded: only results count.
// LIMIT-LABEL: func.func @reduce_to_scalar
// LIMIT-NEXT:    %[[C:.*]] = arith.constant dense<6.400000e+01> : tensor<f32>
// LIMIT-NEXT:    return %[[C]]
func.func @reduce_to_scalar() -> tensor<f32> {
  %a = arith.constant dense<1.0> : tensor<8x8xf32>
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 0, 1>} : (tensor<8x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// One result over the limit keeps the whole multi-result op.
// CHECK-LABEL: func.func @split_one_large_piece
// CHECK-NOT:     graph.split
// LIMIT-LABEL: func.func @split_one_large_piece
// LIMIT:         "graph.split"
func.func @split_one_large_piece() -> (tensor<2xf32>, tensor<6xf32>) {
  %a = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  %0:2 = "graph.split"(%a) {axis = 0 : i64, sizes = array<i64: 2, 6>} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<6xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<6xf32>
}

// -----

// Identities do not depend on the limit.
// ZERO-LABEL: func.func @identity_at_zero
// ZERO-NEXT:    return %arg0
func.func @identity_at_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
