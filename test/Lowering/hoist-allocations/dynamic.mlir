// hoist-allocations: a buffer of dynamic size stays an allocation of the entry, freed right after the last
// top-level op using it or a view of it (a loop writing into it counts as a use); static buffers still go to
// the workspace arena.
// RUN: graphfuse-opt %s --allow-unregistered-dialect --hoist-allocations | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?xf32>, %[[ARENA:[^:]*]]: memref<64xi8>)
// CHECK:         %[[A:.*]] = memref.alloc(%[[N:.*]]) : memref<?xf32>
// CHECK:         %[[B:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK:         memref.view %[[ARENA]]
// CHECK:         "test.fill"(%[[A]])
// CHECK-NEXT:    %[[VIEW:.*]] = memref.subview %[[B]]
// CHECK-NEXT:    scf.for
// CHECK:           "test.copy"(%[[A]], %[[VIEW]])
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<?xf32>
// CHECK-NEXT:    "test.use"(%[[VIEW]])
// CHECK-NEXT:    memref.dealloc %[[B]] : memref<?xf32>
// CHECK-NEXT:    "test.use"(%{{.*}}) : (memref<4xf32>) -> ()
// CHECK-NEXT:    return
func.func @f(%x: memref<?xf32>) attributes {graphfuse.cpu.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  %s = memref.alloc() : memref<4xf32>
  "test.fill"(%a) : (memref<?xf32>) -> ()
  %view = memref.subview %b[0] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  scf.for %i = %c0 to %c1 step %c1 {
    "test.copy"(%a, %view) : (memref<?xf32>, memref<?xf32, strided<[1]>>) -> ()
  }
  "test.use"(%view) : (memref<?xf32, strided<[1]>>) -> ()
  "test.use"(%s) : (memref<4xf32>) -> ()
  return
}
