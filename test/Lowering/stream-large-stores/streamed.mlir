// stream-large-stores: in a loop nest of the entry touching at least min-bytes, a whole-vector store into an
// output argument at an offset proven 16-byte aligned becomes a non-temporal vector.store with that alignment;
// the entry records how many. Stores into a buffer the nest also reads, at an offset not proven aligned, or in
// a nest below min-bytes are left as they are.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(stream-large-stores{min-bytes=1024})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(stream-large-stores{min-bytes=1048576})' | FileCheck %s --check-prefix=LARGE

// Rows of 256 floats written 16 at a time from column 0: 64-byte aligned stores (the inputs and outputs
// together are 128 KB).
// CHECK-LABEL: func.func @doubled(
// CHECK-SAME:    graphfuse.cpu.streamed_stores = 1 : i64
// CHECK:         %[[V:.*]] = arith.addf
// CHECK-NEXT:    vector.store %[[V]], %arg1[%{{.*}}, %{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<64x256xf32>, vector<16xf32>
// CHECK-NOT:     vector.transfer_write
// LARGE-LABEL: func.func @doubled(
// LARGE-SAME:    graphfuse.cpu.streamed_stores = 0 : i64
// LARGE:         vector.transfer_write
// LARGE-NOT:     vector.store
func.func @doubled(%x: memref<64x256xf32>, %out: memref<64x256xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64x256xf32>) -> tensor<64x256xf32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c256 step %c16 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<64x256xf32>, vector<16xf32>
      %w = arith.addf %v, %v : vector<16xf32>
      vector.transfer_write %w, %out[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<64x256xf32>
    }
  }
  return
}

// -----

// Negative: rows of 257 floats written from column 1 (offsets only 4-byte aligned) and an output the nest reads
// back (softmax keeps its exp in the output row).
// CHECK-LABEL: func.func @unaligned_and_read_back(
// CHECK-SAME:    graphfuse.cpu.streamed_stores = 0 : i64
// CHECK-COUNT-2: vector.transfer_write
// CHECK-NOT:     vector.store
func.func @unaligned_and_read_back(%x: memref<64x257xf32>, %out: memref<64x257xf32>, %acc: memref<64x256xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64x257xf32>) -> (tensor<64x257xf32>, tensor<64x256xf32>)} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c257 = arith.constant 257 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c1 to %c257 step %c16 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<64x257xf32>, vector<16xf32>
      vector.transfer_write %v, %out[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<64x257xf32>
    }
    scf.for %j = %c0 to %c256 step %c16 {
      %a = vector.transfer_read %acc[%i, %j], %pad {in_bounds = [true]} : memref<64x256xf32>, vector<16xf32>
      %b = arith.addf %a, %a : vector<16xf32>
      vector.transfer_write %b, %acc[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<64x256xf32>
    }
  }
  return
}
