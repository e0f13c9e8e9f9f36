// prefetch-next-rows: a row loop of the entry touching at least min-bytes, whose body takes a row of an input
// (a subview at the row's induction variable) and runs chunk loops over it, prefetches in its longest chunk loop
// the same columns of that input's next row (the last row clamped), one cache line per 64 bytes of a chunk.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(prefetch-next-rows{min-bytes=1024})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(prefetch-next-rows{min-bytes=1048576})' | FileCheck %s --check-prefix=LARGE

// Two passes over each row of 512 floats (a max, then the shifted values): the second has more work, so it
// prefetches, one line per chunk of 16 floats, at row min(i + 1, 63).
// CHECK-LABEL: func.func @two_passes(
// CHECK:         scf.for %{{.*}} = %c0 to %c64 step %c1
// CHECK:           scf.for
// CHECK-NOT:         memref.prefetch
// CHECK:             vector.reduction <maximumf>
// CHECK:           %[[NEXT:.*]] = arith.minsi %{{.*}}, %c63
// CHECK:           scf.for %{{.*}} = %c0 to %c512 step %c16
// CHECK:             memref.prefetch %arg0[%[[NEXT]], %{{.*}}], read, locality<3>, data : memref<64x512xf32>
// CHECK-NOT:         memref.prefetch
// CHECK:             arith.subf
// LARGE-LABEL: func.func @two_passes(
// LARGE-NOT:     memref.prefetch
func.func @two_passes(%x: memref<64x512xf32>, %out: memref<64x512xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64x512xf32>) -> tensor<64x512xf32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %pad = arith.constant 0.0 : f32
  %low = arith.constant -3.0e38 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<64x512xf32> to memref<512xf32, strided<[1], offset: ?>>
    %max = scf.for %j = %c0 to %c512 step %c16 iter_args(%m = %low) -> (f32) {
      %v = vector.transfer_read %row[%j], %pad {in_bounds = [true]} : memref<512xf32, strided<[1], offset: ?>>, vector<16xf32>
      %r = vector.reduction <maximumf>, %v, %m : vector<16xf32> into f32
      scf.yield %r : f32
    }
    scf.for %j = %c0 to %c512 step %c16 {
      %v = vector.transfer_read %row[%j], %pad {in_bounds = [true]} : memref<512xf32, strided<[1], offset: ?>>, vector<16xf32>
      %b = vector.broadcast %max : f32 to vector<16xf32>
      %s = arith.subf %v, %b : vector<16xf32>
      %e = math.exp %s : vector<16xf32>
      vector.transfer_write %e, %out[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<64x512xf32>
    }
  }
  return
}

// -----

// Negative: a loop of one row has no next row, and a loop whose rows are not an input's.
// CHECK-LABEL: func.func @nothing_to_prefetch(
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @nothing_to_prefetch(%x: memref<1x512xf32>, %out: memref<1x512xf32>, %scratch: memref<64x512xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<1x512xf32>) -> (tensor<1x512xf32>, tensor<64x512xf32>)} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c1 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<1x512xf32> to memref<512xf32, strided<[1], offset: ?>>
    scf.for %j = %c0 to %c512 step %c16 {
      %v = vector.transfer_read %row[%j], %pad {in_bounds = [true]} : memref<512xf32, strided<[1], offset: ?>>, vector<16xf32>
      vector.transfer_write %v, %out[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<1x512xf32>
    }
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %row = memref.subview %scratch[%i, 0] [1, 512] [1, 1] : memref<64x512xf32> to memref<512xf32, strided<[1], offset: ?>>
    scf.for %j = %c0 to %c512 step %c16 {
      %v = vector.transfer_read %row[%j], %pad {in_bounds = [true]} : memref<512xf32, strided<[1], offset: ?>>, vector<16xf32>
      %w = arith.addf %v, %v : vector<16xf32>
      vector.transfer_write %w, %row[%j] {in_bounds = [true]} : vector<16xf32>, memref<512xf32, strided<[1], offset: ?>>
    }
  }
  return
}
