// to-destination-passing-style refuses what the runtime cannot call: the errors name the entry.
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(to-destination-passing-style{entry=f})' 2>&1 | FileCheck %s

// CHECK: error: @f returns nothing
func.func @f(%x: tensor<4xf32>) {
  return
}

// -----

// CHECK: error: @f argument 0: unsupported element type ui8
func.func @f(%x: tensor<4xui8>) -> tensor<4xui8> {
  return %x : tensor<4xui8>
}

// -----

// CHECK: error: no function @f in the module
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
