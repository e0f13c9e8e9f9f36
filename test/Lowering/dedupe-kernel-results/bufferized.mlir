// A kernel returning one value twice, through dedupe-kernel-results and the NPU lowering's bufferization:
// one out-parameter per distinct result (buffer-results-to-out-params{hoist-static-allocs} crashed on the
// duplicate without the pass).
// RUN: graphfuse-opt --pass-pipeline='builtin.module(dedupe-kernel-results,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' %s | FileCheck %s

// CHECK-LABEL: func.func @caller
// CHECK:         call @twice(%arg0, %[[A:.*]], %[[B:.*]]) : (memref<8xi64>, memref<8xi64>, memref<8xi64>) -> ()
// CHECK:         linalg.add ins(%[[A]], %[[A]] : memref<8xi64>, memref<8xi64>)
// CHECK-LABEL: func.func private @twice(%arg0: memref<8xi64>, %arg1: memref<8xi64>, %arg2: memref<8xi64>)
func.func @caller(%x: tensor<8xi64>) -> tensor<8xi64> {
  %0:3 = call @twice(%x) : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>)
  %e = tensor.empty() : tensor<8xi64>
  %1 = linalg.add ins(%0#0, %0#1 : tensor<8xi64>, tensor<8xi64>) outs(%e : tensor<8xi64>) -> tensor<8xi64>
  %f = tensor.empty() : tensor<8xi64>
  %2 = linalg.mul ins(%1, %0#2 : tensor<8xi64>, tensor<8xi64>) outs(%f : tensor<8xi64>) -> tensor<8xi64>
  return %2 : tensor<8xi64>
}
func.func private @twice(%x: tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8xi64>
  %0 = linalg.add ins(%x, %x : tensor<8xi64>, tensor<8xi64>) outs(%e : tensor<8xi64>) -> tensor<8xi64>
  %f = tensor.empty() : tensor<8xi64>
  %1 = linalg.mul ins(%x, %x : tensor<8xi64>, tensor<8xi64>) outs(%f : tensor<8xi64>) -> tensor<8xi64>
  return %0, %0, %1 : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}
