// hoist-stack-buffers: once the loops are lowered, a stack buffer moves out of the loops around it to the start of
// the function (or of its alloca scope); nothing moves when stack-loop-buffers recorded no stack buffer.
// RUN: graphfuse-opt %s --split-input-file --allow-unregistered-dialect --hoist-stack-buffers | FileCheck %s

// CHECK-LABEL: func.func @stacked(
// CHECK-NEXT:    memref.alloca() : memref<8xf32>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloca
func.func @stacked(%x: memref<4x8xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.stack_buffers = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %small = memref.alloca() : memref<8xf32>
    "test.use"(%small) : (memref<8xf32>) -> ()
  }
  return
}

// -----

// Negative: no stack buffer recorded on the entry, the alloca stays in its loop.
// CHECK-LABEL: func.func @none(
// CHECK:         scf.for
// CHECK-NEXT:      memref.alloca() : memref<8xf32>
func.func @none(%x: memref<4x8xf32>) attributes {graphfuse.cpu.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %small = memref.alloca() : memref<8xf32>
    "test.use"(%small) : (memref<8xf32>) -> ()
  }
  return
}
