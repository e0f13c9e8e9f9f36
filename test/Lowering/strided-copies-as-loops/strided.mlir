// strided-copies-as-loops: a copy from or into a view that is not contiguous becomes linalg.copy (loops LLVM
// vectorizes, not the runtime library's element-by-element memrefCopy); a contiguous copy stays a memcpy.
// RUN: graphfuse-opt %s --split-input-file --strided-copies-as-loops | FileCheck %s

// CHECK-LABEL: func.func @half(
// CHECK:         %[[HALF:.*]] = memref.subview
// CHECK-NEXT:    linalg.copy {{.*}}ins(%[[HALF]] : memref<4x4xf32, strided<[8, 1]>>) outs(%arg1 : memref<4x4xf32>)
// CHECK-NOT:     memref.copy
func.func @half(%x: memref<4x8xf32>, %y: memref<4x4xf32>) {
  %a = memref.subview %x[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %a, %y : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// -----

// Negative: whole buffers, and rows of one (contiguous views).
// CHECK-LABEL: func.func @whole(
// CHECK:         memref.copy %arg0, %arg1
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<2x8xf32, strided<[8, 1]>> to memref<2x8xf32, strided<[8, 1], offset: 16>>
// CHECK-NOT:     linalg.copy
func.func @whole(%x: memref<4x8xf32>, %z: memref<4x8xf32>) {
  memref.copy %x, %z : memref<4x8xf32> to memref<4x8xf32>
  %a = memref.subview %x[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %b = memref.subview %x[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  memref.copy %a, %b : memref<2x8xf32, strided<[8, 1]>> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  return
}
