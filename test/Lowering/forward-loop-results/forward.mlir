// forward-loop-results: the result of a bufferized row loop is read from the buffer the loop writes in place (its
// iter_args init), so no value stays live from the loop to its readers; a loop yielding another buffer keeps it.
// RUN: graphfuse-opt %s --split-input-file --allow-unregistered-dialect --forward-loop-results | FileCheck %s

// CHECK-LABEL: func.func @in_place(
// CHECK:         scf.for
// CHECK:         "test.use"(%arg1)
func.func @in_place(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%o = %out) -> (memref<4xf32>) {
    memref.copy %x, %o : memref<4xf32> to memref<4xf32>
    scf.yield %o : memref<4xf32>
  }
  "test.use"(%r) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: the loop yields the input, not its iter_args buffer.
// CHECK-LABEL: func.func @other(
// CHECK:         %[[R:.*]] = scf.for
// CHECK:         "test.use"(%[[R]])
func.func @other(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%o = %out) -> (memref<4xf32>) {
    scf.yield %x : memref<4xf32>
  }
  "test.use"(%r) : (memref<4xf32>) -> ()
  return
}
