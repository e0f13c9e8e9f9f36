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
