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
