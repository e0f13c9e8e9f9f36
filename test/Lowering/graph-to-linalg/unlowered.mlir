// Ops graph-to-linalg does not lower yet stay graph ops; strict mode turns them into an error.
// RUN: graphfuse-opt --split-input-file --graph-to-linalg %s | FileCheck %s
// RUN: not graphfuse-opt --split-input-file --graph-to-linalg=strict %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg{strict=true})' %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: graphfuse-opt --split-input-file --graph-to-linalg --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS: graph-to-linalg
// STATS-NEXT: (S) 1 num-lowered
// STATS-NEXT: (S) 2 num-unlowered

// Integer pow is not lowered; its neighbours are, and read / feed it as tensors.
// CHECK-LABEL: func.func @int_pow
// CHECK:         %[[P:.*]] = "graph.pow"(%arg0, %arg0) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[P]], %arg0 : tensor<4xi32>, tensor<4xi32>)
// CHECK:           arith.addi
// STRICT: unlowered.mlir:[[# @LINE + 2]]:8: error: graph-to-linalg: cannot lower 'graph.pow' with operands (tensor<4xi32>, tensor<4xi32>)
func.func @int_pow(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "graph.pow"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "graph.add"(%0, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// Non-elementwise ops are not lowered in this step.
// CHECK-LABEL: func.func @transpose
// CHECK:         "graph.transpose"
// STRICT: unlowered.mlir:[[# @LINE + 2]]:8: error: graph-to-linalg: cannot lower 'graph.transpose'
func.func @transpose(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
