// hoist-allocations refuses what would leak: a buffer allocated in a loop and never freed, a buffer of dynamic
// size the entry returns (it cannot be freed after its last use).
// RUN: not graphfuse-opt %s --split-input-file --allow-unregistered-dialect --hoist-allocations 2>&1 | FileCheck %s

// CHECK: error: a buffer is allocated inside a loop (memref<8xf32>); this would leak
func.func @in_loop(%x: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    %a = memref.alloc() : memref<8xf32>
    "test.use"(%a) : (memref<8xf32>) -> ()
  }
  return
}

// -----

// CHECK: error: intermediate buffer memref<?xf32> of dynamic size is returned by the entry
func.func @returned(%n: index) -> memref<?xf32> attributes {graphfuse.cpu.entry} {
  %a = memref.alloc(%n) : memref<?xf32>
  "test.use"(%a) : (memref<?xf32>) -> ()
  return %a : memref<?xf32>
}
