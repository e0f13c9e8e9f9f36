// stack-loop-buffers: a small static buffer allocated in a loop body goes on the stack; a large one, and one
// outside any loop, stay allocations. How many went on the stack is recorded on the entry for hoist-stack-buffers.
// RUN: graphfuse-opt %s --allow-unregistered-dialect --stack-loop-buffers | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    graphfuse.cpu.stack_buffers = 1 : i64
// CHECK:         scf.for
// CHECK-NEXT:      memref.alloca() : memref<8xf32>
// CHECK-NEXT:      memref.alloc() : memref<1048576xf32>
// CHECK:         memref.alloc() : memref<8xf32>
func.func @f(%x: memref<4x8xf32>) attributes {graphfuse.cpu.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %small = memref.alloc() : memref<8xf32>
    %large = memref.alloc() : memref<1048576xf32>
    "test.use"(%small, %large) : (memref<8xf32>, memref<1048576xf32>) -> ()
  }
  %outside = memref.alloc() : memref<8xf32>
  "test.use"(%outside) : (memref<8xf32>) -> ()
  return
}
