// free-loop-buffers: a buffer a loop body allocates (too large for the stack) is freed at the end of the body;
// one allocated outside any loop is not (hoist-allocations makes it workspace).
// RUN: graphfuse-opt %s --allow-unregistered-dialect --free-loop-buffers | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK:         scf.for
// CHECK:           %[[SMALL:.*]] = memref.alloc() : memref<8xf32>
// CHECK:           %[[LARGE:.*]] = memref.alloc() : memref<1048576xf32>
// CHECK:           memref.dealloc %[[SMALL]]
// CHECK-NEXT:      memref.dealloc %[[LARGE]]
// CHECK-NEXT:    }
// CHECK:         %[[OUTSIDE:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.dealloc
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
