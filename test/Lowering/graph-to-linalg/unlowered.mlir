// An op no lowering handles stays a graph op; strict mode turns it into a located error.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: not graphfuse-opt --split-input-file --graph-to-linalg=strict %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg{strict=true})' %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: graphfuse-opt --split-input-file --graph-to-linalg --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS: graph-to-linalg
// STATS-NEXT: (S) 0 num-checks
// STATS-NEXT: (S) 0 num-decomposed
// STATS-NEXT: (S) 1 num-lowered
// STATS-NEXT: (S) 1 num-unlowered

// rms_norm decomposes into reductions and elementwise ops only when the size of the normalized axis is
// static (the mean divides by it); over a dynamic axis it stays, and its neighbours read / feed it as tensors.
// CHECK-LABEL: func.func @dynamic_rms_norm
// CHECK:         %[[N:.*]] = "graph.rms_norm"(%arg0, %arg1) {epsilon = 9.99999997E-7 : f32} : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x?xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[N]] : tensor<4x?xf32>)
// CHECK:           arith.shli
// STRICT: unlowered.mlir:[[# @LINE + 2]]:8: error: graph-to-linalg: cannot lower 'graph.rms_norm' with operands (tensor<4x?xf32>, tensor<?xf32>)
func.func @dynamic_rms_norm(%x: tensor<4x?xf32>, %g: tensor<?xf32>) -> tensor<4x?xf32> {
  %0 = "graph.rms_norm"(%x, %g) {epsilon = 9.99999997E-7 : f32} : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  %1 = "graph.exp"(%0) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %1 : tensor<4x?xf32>
}
