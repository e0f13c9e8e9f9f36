// pack-arguments: the entry takes one pointer to a table of descriptor addresses; each top-level op that uses an
// argument (or a view of one) loads its descriptor right before it, from the argument's slot.
// RUN: graphfuse-opt %s --split-input-file --pack-arguments | FileCheck %s

// CHECK-LABEL: func.func @f(%arg0: !llvm.ptr)
// CHECK:         llvm.getelementptr %arg0[0]
// CHECK:         %[[X:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4xf32>
// CHECK:         llvm.getelementptr %arg0[1]
// CHECK:         %[[O:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4xf32>
// CHECK:         linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[O]] : memref<4xf32>)
func.func @f(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  linalg.copy ins(%x : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// Negative: a function that is not the entry keeps its arguments.
// CHECK-LABEL: func.func private @helper(%arg0: memref<4xf32>)
// CHECK-LABEL: func.func @g(%arg0: !llvm.ptr)
func.func private @helper(%x: memref<4xf32>) {
  return
}
func.func @g(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  call @helper(%x) : (memref<4xf32>) -> ()
  return
}
