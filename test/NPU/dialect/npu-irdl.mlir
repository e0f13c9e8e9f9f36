// The npu dialect loads into upstream mlir-opt: memory spaces on memrefs and the explicit transfer op.
// RUN: mlir-opt --irdl-file=%npu_irdl %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @stage
// CHECK:         %[[UB:.*]] = memref.alloc() : memref<16x64xf32, #npu.mem<"ub">>
// CHECK-NEXT:    "npu.dma"(%arg0, %[[UB]]) : (memref<16x64xf32>, memref<16x64xf32, #npu.mem<"ub">>) -> ()
// CHECK:         memref.alloc() : memref<64x64xf32, #npu.mem<"l1">>
// CHECK:         memref.alloc() : memref<16x64xf32, #npu.mem<"l0c">>
func.func @stage(%x: memref<16x64xf32>) {
  %ub = memref.alloc() : memref<16x64xf32, #npu.mem<"ub">>
  "npu.dma"(%x, %ub) : (memref<16x64xf32>, memref<16x64xf32, #npu.mem<"ub">>) -> ()
  %l1 = memref.alloc() : memref<64x64xf32, #npu.mem<"l1">>
  %l0c = memref.alloc() : memref<16x64xf32, #npu.mem<"l0c">>
  return
}

// -----

// Negative case: only the six memory spaces exist.
// expected-error @+1 {{'"l2"' does not satisfy the constraint}}
func.func @bad_space(%x: memref<4xf32, #npu.mem<"l2">>) {
  return
}

// -----

func.func @dma_of_tensor(%x: tensor<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{expected base type 'builtin.memref' but got 'builtin.tensor'}}
  "npu.dma"(%x, %y) : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
