// hoist-allocations: the entry's static intermediates become workspace arguments the runtime allocates once. With
// the arena (the default) they are views of one byte buffer, sharing bytes where their lifetimes do not overlap
// (here both start at 0); without it, one argument each. The types are recorded on the entry for the runtime.
// RUN: graphfuse-opt %s --allow-unregistered-dialect --hoist-allocations | FileCheck %s
// RUN: graphfuse-opt %s --allow-unregistered-dialect --hoist-allocations=arena=false | FileCheck %s --check-prefix=APART

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %arg0: memref<4xf32>, %arg1: memref<4xf32>, %[[ARENA:.*]]: memref<64xi8>)
// CHECK-SAME:    graphfuse.cpu.arena
// CHECK-SAME:    graphfuse.cpu.workspace = [memref<64xi8>]
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<64xi8> to memref<4xf32>
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<64xi8> to memref<16xi32>
// CHECK-NOT:     memref.alloc
// APART-LABEL: func.func @f(%arg0: memref<4xf32>, %arg1: memref<4xf32>, %arg2: memref<4xf32>, %arg3: memref<16xi32>)
// APART-NOT:     graphfuse.cpu.arena
// APART-SAME:    graphfuse.cpu.workspace = [memref<4xf32>, memref<16xi32>]
func.func @f(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<16xi32>
  linalg.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  "test.use"(%b) : (memref<16xi32>) -> ()
  return
}
