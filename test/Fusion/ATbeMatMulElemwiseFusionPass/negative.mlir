// What ATbeMatMulElemwiseFusionPass must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --ATbeMatMulElemwiseFusionPass %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --ATbeMatMulElemwiseFusionPass %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The matmul's producers never join (its operands reach the cube unit through L1, not UB), and a
// non-elementwise consumer is no epilogue: no match.
// CHECK-LABEL: func.func @no_epilogue
// CHECK-NOT:     call
// CHECK:         "graph.exp"
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.reduce_sum"
// WHY-NOT: not fused
// WHY: UBFusionPass[ATbeMatMulElemwiseFusionPass]: pattern=TbeMatMulElemwiseFusion, matched_times=0, effected_times=0
func.func @no_epilogue(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = "graph.matmul"(%0, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.reduce_sum"(%1) {axes = array<i64: 1>, keep_dims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// The add reads the matmul result and, through a softmax, the matmul result again: fusing matmul and
// add would put the softmax between two ops of one kernel.
// CHECK-LABEL: func.func @cycle
// CHECK-NOT:     call
// CHECK:         "graph.matmul"
// CHECK-NEXT:    "graph.softmax"
// CHECK-NEXT:    "graph.add"
// WHY: ATbeMatMulElemwiseFusionPass: pattern TbeMatMulElemwiseFusion not fused at {{.*}}negative.mlir:[[#@LINE+3]]:{{[0-9]+}}: graph.add at {{.*}} cannot join it: graph.softmax at {{.*}} lies on a path between ops of the kernel (outside it, the kernel would depend on itself)
// WHY: UBFusionPass[ATbeMatMulElemwiseFusionPass]: pattern=TbeMatMulElemwiseFusion, matched_times=1, effected_times=0
func.func @cycle(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// No matmul: nothing to match.
// CHECK-LABEL: func.func @no_matmul
// CHECK-NOT:     call
// WHY: UBFusionPass[ATbeMatMulElemwiseFusionPass]: pattern=TbeMatMulElemwiseFusion, matched_times=0, effected_times=0
func.func @no_matmul(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
