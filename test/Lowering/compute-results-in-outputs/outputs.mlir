// compute-results-in-outputs: a result computed in an allocation of the output's type, then copied whole into the
// output argument, is computed in the output (the copy and the allocation go); the entry's inputs are counted
// from its recorded signature.
// RUN: graphfuse-opt %s --split-input-file --compute-results-in-outputs | FileCheck %s

// CHECK-LABEL: func.func @copied(
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.copy ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32>)
// CHECK-NOT:     memref.copy
func.func @copied(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Negative: the copy's target is an input (the signature says one input, one output), so nothing changes.
// CHECK-LABEL: func.func @into_input(
// CHECK:         memref.alloc
// CHECK:         memref.copy %{{.*}}, %arg0
func.func @into_input(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%out : memref<4xf32>) outs(%a : memref<4xf32>)
  memref.copy %a, %x : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A result computed in another shape with the same elements in the same order (a matmul's [M, N] result
// returned as [B, S, N]) is computed in the output, viewed in the allocation's shape.
// CHECK-LABEL: func.func @reshaped(
// CHECK-NOT:     memref.alloc
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1, 2]] : memref<2x3x4xf32> into memref<24xf32>
// CHECK:         %[[VIEW:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [6, 4] : memref<24xf32> into memref<6x4xf32>
// CHECK:         linalg.copy ins(%arg0 : memref<6x4xf32>) outs(%[[VIEW]] : memref<6x4xf32>)
// CHECK-NOT:     memref.copy
func.func @reshaped(%x: memref<6x4xf32>, %out: memref<2x3x4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<6x4xf32>) -> tensor<2x3x4xf32>} {
  %a = memref.alloc() : memref<6x4xf32>
  linalg.copy ins(%x : memref<6x4xf32>) outs(%a : memref<6x4xf32>)
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
  memref.copy %e, %out : memref<2x3x4xf32> to memref<2x3x4xf32>
  return
}

// -----

// Negative: the allocation holds more elements than the output (the copy takes a part of it).
// CHECK-LABEL: func.func @larger(
// CHECK:         memref.alloc() : memref<8x4xf32>
// CHECK:         memref.copy
func.func @larger(%x: memref<8x4xf32>, %out: memref<6x4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<8x4xf32>) -> tensor<6x4xf32>} {
  %a = memref.alloc() : memref<8x4xf32>
  linalg.copy ins(%x : memref<8x4xf32>) outs(%a : memref<8x4xf32>)
  %s = memref.subview %a[0, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1]>>
  memref.copy %s, %out : memref<6x4xf32, strided<[4, 1]>> to memref<6x4xf32>
  return
}
