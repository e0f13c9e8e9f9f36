// erase-self-copies: a copy of a buffer into itself (the same value, identical subviews, through a loop writing it
// in place) is erased; a copy between two buffers stays.
// RUN: graphfuse-opt %s --split-input-file --erase-self-copies | FileCheck %s

// CHECK-LABEL: func.func @self(
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @self(%x: memref<4x8xf32>) attributes {graphfuse.cpu.entry} {
  memref.copy %x, %x : memref<4x8xf32> to memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %b = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    memref.copy %a, %b : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<1x8xf32, strided<[8, 1], offset: ?>>
  }
  return
}

// -----

// Negative: two buffers, or two different rows of one.
// CHECK-LABEL: func.func @other(
// CHECK:         memref.copy %arg0, %arg1
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<1x8xf32, strided<[8, 1]>> to memref<1x8xf32, strided<[8, 1], offset: 8>>
func.func @other(%x: memref<4x8xf32>, %y: memref<4x8xf32>) attributes {graphfuse.cpu.entry} {
  memref.copy %x, %y : memref<4x8xf32> to memref<4x8xf32>
  %a = memref.subview %x[0, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1]>>
  %b = memref.subview %x[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 8>>
  memref.copy %a, %b : memref<1x8xf32, strided<[8, 1]>> to memref<1x8xf32, strided<[8, 1], offset: 8>>
  return
}
