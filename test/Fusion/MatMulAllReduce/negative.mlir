// What MatMulAllReduce must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --MatMulAllReduce %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --MatMulAllReduce %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// The all_reduce takes the max.
// CHECK-LABEL: func.func @max
// CHECK-NEXT:    "graph.matmul"
// CHECK-NEXT:    "graph.all_reduce"
// WHY: pattern MatMulAllReduce not fused at {{.*}}: the all_reduce takes the max, not the sum
func.func @max(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64, reduction = "max"} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}

// -----

// The partial product is also returned.
// CHECK-LABEL: func.func @partial_used
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"
// CHECK-NEXT:    "graph.all_reduce"(%[[M]])
// WHY: pattern MatMulAllReduce not fused at {{.*}}: the matmul result is also a function result
func.func @partial_used(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0, %1 : tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// Not a matmul; and a residual add (not a 1-D bias) after the fused op stays an add.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    "graph.exp"
// CHECK-NEXT:    "graph.all_reduce"
// CHECK-NEXT:    %[[F:.*]] = "graph.matmul_all_reduce"
// CHECK-NEXT:    "graph.add"(%arg2, %[[F]])
// WHY: pattern MatMulAllReduceAddBias not fused at {{.*}}: the add's other operand is not a 1-D bias of the result's last dim
func.func @residual(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %r: tensor<16x64xf32>) -> (tensor<16x32xf32>, tensor<16x64xf32>) {
  %e = "graph.exp"(%x) : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %s = "graph.all_reduce"(%e) {group_size = 2 : i64} : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %0 = "graph.matmul"(%x, %w) : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = "graph.all_reduce"(%0) {group_size = 2 : i64} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %2 = "graph.add"(%r, %1) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return %s, %2 : tensor<16x32xf32>, tensor<16x64xf32>
}
