// strided-copies-as-loops: a copy from or into a view that is not contiguous becomes loops of memcpy over its
// contiguous runs when they hold at least memcpy-min-bytes (default 1 KB), else linalg.copy (loops LLVM
// vectorizes); never the runtime library's element-by-element memrefCopy. A contiguous copy stays a memcpy.
// RUN: graphfuse-opt %s --split-input-file --strided-copies-as-loops | FileCheck %s
// memcpy-min-bytes sets the threshold: the 4 x 4 half of the first case, rows of 16 bytes, is one memcpy per row.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(strided-copies-as-loops{memcpy-min-bytes=16})' | FileCheck %s --check-prefix=SMALL
// SMALL-LABEL: func.func @half(
// SMALL:         scf.for
// SMALL:           memref.copy {{.*}} : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32, strided<[1], offset: ?>>
// SMALL-NOT:     linalg.copy
// SMALL-LABEL: func.func @whole(

// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(strided-copies-as-loops{memcpy-min-bytes=0})' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: option 'memcpy-min-bytes' of pass 'strided-copies-as-loops' must be at least 1, got 0

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

// -----

// Runs of 64 KB (a Mamba scan's block copied into half of its concat): a loop over the leading dim, one memcpy
// of a contiguous run per iteration, the unit dims dropped from the views.
// CHECK-LABEL: func.func @long_runs(
// CHECK:         %[[HALF:.*]] = memref.subview %arg1[0, 1, 0, 0, 0]
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:      %[[FROM:.*]] = memref.subview %arg0[%[[I]], 0, 0, 0, 0] [1, 1, 4, 512, 8] [1, 1, 1, 1, 1] : memref<8x1x4x512x8xf32> to memref<4x512x8xf32, strided<[4096, 8, 1], offset: ?>>
// CHECK-NEXT:      %[[TO:.*]] = memref.subview %[[HALF]][%[[I]], 0, 0, 0, 0] [1, 1, 4, 512, 8] [1, 1, 1, 1, 1] : {{.*}} to memref<4x512x8xf32, strided<[4096, 8, 1], offset: ?>>
// CHECK-NEXT:      memref.copy %[[FROM]], %[[TO]]
// CHECK-NEXT:    }
// CHECK-NOT:     linalg.copy
func.func @long_runs(%x: memref<8x1x4x512x8xf32>, %y: memref<8x2x4x512x8xf32>) {
  %b = memref.subview %y[0, 1, 0, 0, 0] [8, 1, 4, 512, 8] [1, 1, 1, 1, 1] : memref<8x2x4x512x8xf32> to memref<8x1x4x512x8xf32, strided<[32768, 16384, 4096, 8, 1], offset: 16384>>
  memref.copy %x, %b : memref<8x1x4x512x8xf32> to memref<8x1x4x512x8xf32, strided<[32768, 16384, 4096, 8, 1], offset: 16384>>
  return
}

// -----

// Two leading dims, the run the last dim alone (256 f32: 1 KB, the default threshold): two loops.
// CHECK-LABEL: func.func @two_leading_dims(
// CHECK:         scf.for %[[I:.*]] =
// CHECK-NEXT:      scf.for %[[J:.*]] =
// CHECK-NEXT:        memref.subview %arg0[%[[I]], %[[J]], 0] [1, 1, 256] [1, 1, 1] : {{.*}} to memref<256xf32, strided<[1], offset: ?>>
// CHECK-NEXT:        memref.subview %arg1[%[[I]], %[[J]], 0] [1, 1, 256] [1, 1, 1] : {{.*}} to memref<256xf32, strided<[1], offset: ?>>
// CHECK-NEXT:        memref.copy
func.func @two_leading_dims(%x: memref<2x3x256xf32, strided<[1024, 512, 1]>>, %y: memref<2x3x256xf32, strided<[768, 256, 1], offset: 7>>) {
  memref.copy %x, %y : memref<2x3x256xf32, strided<[1024, 512, 1]>> to memref<2x3x256xf32, strided<[768, 256, 1], offset: 7>>
  return
}

// -----

// Negative: runs one element short of 1 KB, a run contiguous in one view only, dynamic strides: linalg.copy.
// CHECK-LABEL: func.func @short_or_unknown_runs(
// CHECK-NOT:     scf.for
// CHECK-COUNT-3: linalg.copy
// CHECK-NOT:     memref.copy
func.func @short_or_unknown_runs(%x: memref<4x255xf32, strided<[512, 1]>>, %y: memref<4x255xf32>,
                                 %t: memref<4x512xf32, strided<[1, 4]>>, %u: memref<4x512xf32, strided<[1024, 1]>>,
                                 %d: memref<4x512xf32, strided<[?, 1]>>, %e: memref<4x512xf32, strided<[1024, 1]>>) {
  memref.copy %x, %y : memref<4x255xf32, strided<[512, 1]>> to memref<4x255xf32>
  memref.copy %t, %u : memref<4x512xf32, strided<[1, 4]>> to memref<4x512xf32, strided<[1024, 1]>>
  memref.copy %d, %e : memref<4x512xf32, strided<[?, 1]>> to memref<4x512xf32, strided<[1024, 1]>>
  return
}

