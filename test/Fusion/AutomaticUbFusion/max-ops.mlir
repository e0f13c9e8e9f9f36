// AutomaticUbFusion{max-ops=N}: no kernel holds more than N ops, however small its tensors (it bounds the
// planning time on graphs of tiny tensors, where everything would fit the UB); the rest starts new kernels.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(AutomaticUbFusion{max-ops=3})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(AutomaticUbFusion)' %s | FileCheck %s --check-prefix=ALL
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(AutomaticUbFusion{max-ops=1})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'max-ops' of pass 'AutomaticUbFusion' must be at least 2, got 1

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[A:.*]] = call @chain_ub_auto_0(%arg0)
// CHECK-NEXT:    %[[B:.*]] = call @chain_ub_auto_1(%[[A]])
// CHECK-NEXT:    return %[[B]]
// CHECK-LABEL: func.func private @chain_ub_auto_0
// CHECK-SAME:    graph.kernel_ops = ["graph.abs", "graph.neg", "graph.exp"]
// CHECK-LABEL: func.func private @chain_ub_auto_1
// CHECK-SAME:    graph.kernel_ops = ["graph.abs", "graph.neg"]
// ALL-LABEL: func.func @chain
// ALL-NEXT:    call @chain_ub_auto_0(%arg0)
// ALL-NEXT:    return
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.abs"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.abs"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "graph.neg"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
