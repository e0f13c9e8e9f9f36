// What AutomaticUbFusion must not fuse; the debug log says why.
// RUN: graphfuse-opt --split-input-file --AutomaticUbFusion %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --AutomaticUbFusion %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Dynamic shapes: the UB footprint cannot be bounded, nothing is fused (no match).
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:     call
// WHY: UBFusionPass[AutomaticUbFusion]: pattern=AutomaticUbFusion, matched_times=0, effected_times=0
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.neg"(%0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// The exp feeds the matmul (whose operands do not come from UB) and the second matmul would be the
// kernel's second: the first matmul and the relu form the only kernel.
// CHECK-LABEL: func.func @matmuls
// CHECK-NEXT:    %[[E:.*]] = "graph.exp"(%arg0)
// CHECK-NEXT:    %[[K:.*]] = call @matmuls_ub_auto_0(%[[E]], %arg1)
// CHECK-NEXT:    %[[M:.*]] = "graph.matmul"(%[[K]], %arg1)
// CHECK-NEXT:    return %[[M]]
// CHECK:       graph.kernel_ops = ["graph.matmul", "graph.relu"]
// WHY-DAG: AutomaticUbFusion: graph.exp at {{.*}} stays out of the kernel of graph.matmul at {{.*}}: it feeds the kernel's matmul, whose operands do not come from UB
// WHY-DAG: AutomaticUbFusion: graph.matmul at {{.*}} stays out of the kernel of graph.matmul at {{.*}}: the kernel already has a matmul
func.func @matmuls(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = "graph.matmul"(%0, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = "graph.relu"(%1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.matmul"(%2, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}

// -----

// Fused and composite ops (softmax here) are kernels of their own: the exp beside it has no fusable
// neighbour (no match).
// CHECK-LABEL: func.func @opaque
// CHECK-NOT:     call
// WHY: UBFusionPass[AutomaticUbFusion]: pattern=AutomaticUbFusion, matched_times=0, effected_times=0
func.func @opaque(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Two live values already exceed the budget: nothing fuses (each op is rejected as a seed).
// RUN: graphfuse-opt --pass-pipeline='builtin.module(AutomaticUbFusion{ub-size=4096})' --split-input-file --log-level=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=TINY
// TINY: pattern AutomaticUbFusion not fused at {{.*}}: graph.neg at {{.*}} cannot join it: the kernel would keep 8192 bytes live in UB, more than its 4096 bytes
// TINY: pattern AutomaticUbFusion not fused at {{.*}}: graph.exp at {{.*}} cannot join it: the kernel would keep 8192 bytes live in UB, more than its 4096 bytes
// With the target's budget both ops fit.
// CHECK-LABEL: func.func @too_big
// CHECK-NEXT:    call @too_big_ub_auto_0
func.func @too_big(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "graph.exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "graph.neg"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %1 : tensor<1024xf32>
}

// -----

// A bad target is an error naming the bundled ones.
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(AutomaticUbFusion{target=nosuch})' --split-input-file %s 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: unknown NPU target 'nosuch' (bundled targets: 910b
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(AutomaticUbFusion{ub-size=-1})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: graphfuse-opt: error: invalid pass pipeline {{.*}}: option 'ub-size' of pass 'AutomaticUbFusion' must not be negative, got -1
// CHECK-LABEL: func.func @target
func.func @target(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
