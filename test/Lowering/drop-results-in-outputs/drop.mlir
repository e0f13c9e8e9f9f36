// drop-results-in-outputs: a returned buffer that is one of the entry's output arguments (through a loop writing it
// in place) is no longer returned; a returned input or intermediate stays (check-bufferized-entry refuses it).
// RUN: graphfuse-opt %s --split-input-file --drop-results-in-outputs | FileCheck %s

// CHECK-LABEL: func.func @through_loop(
// CHECK-SAME:    %arg0: memref<4xf32>, %arg1: memref<4xf32>) attributes
// CHECK:         scf.for
// CHECK:         return{{$}}
func.func @through_loop(%x: memref<4xf32>, %out: memref<4xf32>) -> memref<4xf32> attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%o = %out) -> (memref<4xf32>) {
    memref.copy %x, %o : memref<4xf32> to memref<4xf32>
    scf.yield %o : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// Negative: the input is returned, not an output.
// CHECK-LABEL: func.func @input(
// CHECK-SAME:    -> memref<4xf32>
// CHECK:         return %arg0 : memref<4xf32>
func.func @input(%x: memref<4xf32>, %out: memref<4xf32>) -> memref<4xf32> attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  return %x : memref<4xf32>
}
