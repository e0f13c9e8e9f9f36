// outline-chunks: each top-level op of the packed entry holding a loop nest (loop-nests=1) moves into a noinline
// internal function called in its place; the slots of the argument table it reads become arguments, so the same
// computation on other buffers is the same function, kept once. With loop-nests=2 both nests share one function.
// RUN: graphfuse-opt %s --split-input-file --outline-chunks | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(outline-chunks{loop-nests=2})' | FileCheck %s --check-prefix=TWO
// RUN: not graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(outline-chunks{loop-nests=0})' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'loop-nests' of pass 'outline-chunks' must be at least 1, got 0

// Two negations of the same shape, slots 0 -> 2 and 1 -> 3: one function, called with each pair of slots.
// CHECK-LABEL: func.func @f(
// CHECK:         %[[IN0:.*]] = arith.constant 0 : i64
// CHECK:         %[[OUT0:.*]] = arith.constant 2 : i64
// CHECK:         call @f_part_0(%arg0, %[[IN0]], %[[OUT0]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK:         %[[IN1:.*]] = arith.constant 1 : i64
// CHECK:         %[[OUT1:.*]] = arith.constant 3 : i64
// CHECK:         call @f_part_0(%arg0, %[[IN1]], %[[OUT1]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:    return
// CHECK:       func.func private @f_part_0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK:         arith.negf
// CHECK-NOT:   func.func private @f_part_1
// TWO-LABEL:   func.func @f(
// TWO:           call @f_part_0(
// TWO-NOT:       call @f_part_
// TWO:           return
// TWO:         func.func private @f_part_0(
// TWO-COUNT-2:   arith.negf
#map = affine_map<(d0) -> (d0)>
func.func @f(%arg0: !llvm.ptr) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>), graphfuse.cpu.workspace = []} {
  %0 = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
  %2 = llvm.load %1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %3 = builtin.unrealized_conversion_cast %2 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32>
  %4 = llvm.getelementptr %arg0[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %5 = llvm.load %4 : !llvm.ptr -> !llvm.ptr
  %6 = llvm.load %5 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %7 = builtin.unrealized_conversion_cast %6 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%3 : memref<64xf32>) outs(%7 : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  %8 = llvm.getelementptr %arg0[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %9 = llvm.load %8 : !llvm.ptr -> !llvm.ptr
  %10 = llvm.load %9 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %11 = builtin.unrealized_conversion_cast %10 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32>
  %12 = llvm.getelementptr %arg0[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %13 = llvm.load %12 : !llvm.ptr -> !llvm.ptr
  %14 = llvm.load %13 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %15 = builtin.unrealized_conversion_cast %14 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%11 : memref<64xf32>) outs(%15 : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Negative: an op without a loop nest (a copy) stays in the entry; nothing is outlined.
// CHECK-LABEL: func.func @g(
// CHECK:         memref.copy
// CHECK-NOT:     call @g_part
// CHECK-NOT:   func.func private @g_part
func.func @g(%arg0: !llvm.ptr) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64xf32>) -> tensor<64xf32>, graphfuse.cpu.workspace = []} {
  %0 = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
  %2 = llvm.load %1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %3 = builtin.unrealized_conversion_cast %2 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32>
  %4 = llvm.getelementptr %arg0[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %5 = llvm.load %4 : !llvm.ptr -> !llvm.ptr
  %6 = llvm.load %5 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %7 = builtin.unrealized_conversion_cast %6 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<64xf32>
  memref.copy %3, %7 : memref<64xf32> to memref<64xf32>
  return
}

// -----

// The blocks of a concatenation: two loop nests writing views of one result at columns 0 and 4. The views'
// offsets become arguments: one function, called with each block's offsets.
// CHECK-LABEL: func.func @cat(
// CHECK:         %[[ROW0:.*]] = arith.constant 0 : index
// CHECK:         %[[COL0:.*]] = arith.constant 0 : index
// CHECK:         call @cat_part_0(%arg0, %{{.*}}, %{{.*}}, %[[ROW0]], %[[COL0]]) : (!llvm.ptr, i64, i64, index, index) -> ()
// CHECK:         %[[ROW1:.*]] = arith.constant 0 : index
// CHECK:         %[[COL1:.*]] = arith.constant 4 : index
// CHECK:         call @cat_part_0(%arg0, %{{.*}}, %{{.*}}, %[[ROW1]], %[[COL1]]) : (!llvm.ptr, i64, i64, index, index) -> ()
// CHECK:       func.func private @cat_part_0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %[[R:.*]]: index, %[[C:.*]]: index)
// CHECK:         memref.subview %{{.*}}[%[[R]], %[[C]]] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: ?>>
// CHECK:         arith.negf
// CHECK-NOT:   func.func private @cat_part_1
#map2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @cat(%arg0: !llvm.ptr) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>, graphfuse.cpu.workspace = []} {
  %0 = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
  %2 = llvm.load %1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %3 = builtin.unrealized_conversion_cast %2 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x4xf32>
  %4 = llvm.getelementptr %arg0[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %5 = llvm.load %4 : !llvm.ptr -> !llvm.ptr
  %6 = llvm.load %5 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %7 = builtin.unrealized_conversion_cast %6 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
  %left = memref.subview %7[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%3 : memref<4x4xf32>) outs(%left : memref<4x4xf32, strided<[8, 1]>>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  %8 = llvm.getelementptr %arg0[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %9 = llvm.load %8 : !llvm.ptr -> !llvm.ptr
  %10 = llvm.load %9 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %11 = builtin.unrealized_conversion_cast %10 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x4xf32>
  %12 = llvm.getelementptr %arg0[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %13 = llvm.load %12 : !llvm.ptr -> !llvm.ptr
  %14 = llvm.load %13 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %15 = builtin.unrealized_conversion_cast %14 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
  %right = memref.subview %15[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%11 : memref<4x4xf32>) outs(%right : memref<4x4xf32, strided<[8, 1], offset: 4>>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Negative: a view another view is taken of keeps its static offsets (that view's type is inferred from
// them); the two nests stay two functions.
// CHECK-LABEL: func.func @nested(
// CHECK:         call @nested_part_0(
// CHECK:         call @nested_part_1(
// CHECK:       func.func private @nested_part_0(
// CHECK:         memref.subview %{{.*}}[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
// CHECK:       func.func private @nested_part_1(
// CHECK:         memref.subview %{{.*}}[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
func.func @nested(%arg0: !llvm.ptr) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4x4xf32>) -> tensor<4x8xf32>, graphfuse.cpu.workspace = []} {
  %0 = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
  %2 = llvm.load %1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %3 = builtin.unrealized_conversion_cast %2 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x4xf32>
  %4 = llvm.getelementptr %arg0[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %5 = llvm.load %4 : !llvm.ptr -> !llvm.ptr
  %6 = llvm.load %5 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %7 = builtin.unrealized_conversion_cast %6 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
  %left = memref.subview %7[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  %left_rows = memref.subview %left[0, 0] [4, 4] [1, 1] : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32, strided<[8, 1]>>
  linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%3 : memref<4x4xf32>) outs(%left_rows : memref<4x4xf32, strided<[8, 1]>>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  %8 = llvm.getelementptr %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %9 = llvm.load %8 : !llvm.ptr -> !llvm.ptr
  %10 = llvm.load %9 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %11 = builtin.unrealized_conversion_cast %10 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x4xf32>
  %12 = llvm.getelementptr %arg0[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %13 = llvm.load %12 : !llvm.ptr -> !llvm.ptr
  %14 = llvm.load %13 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
  %15 = builtin.unrealized_conversion_cast %14 : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
  %right = memref.subview %15[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %right_rows = memref.subview %right[0, 0] [4, 4] [1, 1] : memref<4x4xf32, strided<[8, 1], offset: 4>> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%11 : memref<4x4xf32>) outs(%right_rows : memref<4x4xf32, strided<[8, 1], offset: 4>>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}
