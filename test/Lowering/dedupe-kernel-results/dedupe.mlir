// dedupe-kernel-results: a kernel returning one value twice (CSE inside the kernel merged two results)
// returns it once; its callers use that result for both. Without it, bufferization and
// buffer-results-to-out-params{hoist-static-allocs} crashed on the second use of the hoisted allocation
// (the NPU lowering; found by the fuzzer). Kernels whose results are distinct, and functions that are not
// kernels, are left alone.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(dedupe-kernel-results)' %s | FileCheck %s
// bufferized.mlir runs the bufferization after it.

// CHECK-LABEL: func.func @caller
// CHECK:         %[[R:.*]]:2 = call @twice(%arg0) : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
// CHECK:         %[[S:.*]] = arith.addi %[[R]]#0, %[[R]]#0 : tensor<8xi64>
// CHECK:         arith.muli %[[S]], %[[R]]#1 : tensor<8xi64>
// CHECK-LABEL: func.func private @twice
// CHECK-SAME:    -> (tensor<8xi64>, tensor<8xi64>)
// CHECK:         return %[[A:.*]], %[[B:.*]] : tensor<8xi64>, tensor<8xi64>
func.func @caller(%x: tensor<8xi64>) -> tensor<8xi64> {
  %0:3 = call @twice(%x) : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>)
  %1 = arith.addi %0#0, %0#1 : tensor<8xi64>
  %2 = arith.muli %1, %0#2 : tensor<8xi64>
  return %2 : tensor<8xi64>
}
func.func private @twice(%x: tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) attributes {graph.kernel} {
  %0 = arith.addi %x, %x : tensor<8xi64>
  %1 = arith.muli %x, %x : tensor<8xi64>
  return %0, %0, %1 : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}

// -----

// Negative cases: distinct results, and a function that is not a kernel.
// CHECK-LABEL: func.func @caller2
// CHECK:         call @distinct(%arg0) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:         call @plain(%arg0) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-LABEL: func.func private @plain
// CHECK:         return %[[P:.*]], %[[P]] : tensor<4xf32>, tensor<4xf32>
func.func @caller2(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0:2 = call @distinct(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %1:2 = call @plain(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
func.func private @distinct(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {graph.kernel} {
  %0 = arith.addf %x, %x : tensor<4xf32>
  %1 = arith.mulf %x, %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @plain(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0, %0 : tensor<4xf32>, tensor<4xf32>
}
