// A kernel no plan fits, holding a loop, is split at the loop into kernels launched in turn (<kernel>_part<k>);
// each part gets its own copies of the constants and views it uses. Bufferized input; target: a 16 KiB UB.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(npu-buffer-assign{target=%S/Inputs/small-ub.json})' | FileCheck %s

// Two copies of one slice of an input around a loop on a local buffer: three parts; the copies are row-tiled,
// each reading x through a copy of the subview.
// CHECK-LABEL: func.func @two_copies(
// CHECK-NEXT:    call @copies_part0(%arg0, %arg1)
// CHECK-NEXT:    call @copies_part1()
// CHECK-NEXT:    call @copies_part2(%arg0, %arg2)
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @copies_part0(%arg0: memref<64x1024xf32>, %arg1: memref<64x512xf32>)
// CHECK-SAME:    graph.kernel
// CHECK:         memref.subview %arg0[0, 0] [64, 512] [1, 1]
// CHECK:         scf.for
// CHECK-LABEL: func.func private @copies_part1()
// CHECK:         scf.for
// CHECK-NEXT:      memref.store {{.*}} : memref<4xf32, #npu.mem<"ub">>
// CHECK-LABEL: func.func private @copies_part2(%arg0: memref<64x1024xf32>, %arg1: memref<64x512xf32>)
// CHECK:         memref.subview %arg0[0, 0] [64, 512] [1, 1]
// CHECK:         scf.for
// CHECK-NOT:     func.func private @copies(
func.func @two_copies(%x: memref<64x1024xf32>, %y: memref<64x512xf32>, %z: memref<64x512xf32>) {
  call @copies(%x, %y, %z) : (memref<64x1024xf32>, memref<64x512xf32>, memref<64x512xf32>) -> ()
  return
}
func.func private @copies(%x: memref<64x1024xf32>, %y: memref<64x512xf32>, %z: memref<64x512xf32>) attributes {graph.kernel, graph.fusion_kind = "test", graph.kernel_ops = []} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  %v = memref.subview %x[0, 0] [64, 512] [1, 1] : memref<64x1024xf32> to memref<64x512xf32, strided<[1024, 1]>>
  memref.copy %v, %y : memref<64x512xf32, strided<[1024, 1]>> to memref<64x512xf32>
  %acc = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %cst, %acc[%i] : memref<4xf32>
  }
  memref.copy %v, %z : memref<64x512xf32, strided<[1024, 1]>> to memref<64x512xf32>
  return
}

// -----

// Negative: a kernel with a loop that fits whole is not split.
// CHECK-LABEL: func.func @fits(
// CHECK-NEXT:    call @small(%arg0, %arg1)
// CHECK-LABEL: func.func private @small(
// CHECK-SAME:    npu.tiles = 1
func.func @fits(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  call @small(%x, %y) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  return
}
func.func private @small(%x: memref<4x8xf32>, %y: memref<4x8xf32>) attributes {graph.kernel, graph.fusion_kind = "test", graph.kernel_ops = []} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  memref.copy %x, %y : memref<4x8xf32> to memref<4x8xf32>
  %acc = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %cst, %acc[%i] : memref<4xf32>
  }
  return
}
