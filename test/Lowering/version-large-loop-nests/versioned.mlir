// version-large-loop-nests: a loop nest of the entry touching arguments of dynamic size gets a copy, run when the
// bytes it touches at run time reach min-bytes, in the then region of an scf.if marked
// graphfuse.cpu.footprint_version; stream-large-stores and prefetch-next-rows then stream and prefetch in that
// copy only. Nests of static size, or whose static part alone reaches min-bytes, are left alone.
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(version-large-loop-nests{min-bytes=1048576})' | FileCheck %s
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(version-large-loop-nests{min-bytes=1048576},stream-large-stores{min-bytes=1048576},prefetch-next-rows{min-bytes=1048576})' | FileCheck %s --check-prefix=STREAM
// RUN: graphfuse-opt %s --split-input-file --pass-pipeline='builtin.module(version-large-loop-nests{min-bytes=1048576})' --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: 1 num-versioned

// Rows counted at run time: the bytes of both arguments (rows x 256 x 4 each) against 1 MiB.
// CHECK-LABEL: func.func @doubled_rows(
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0
// CHECK:         %[[IN_ROWS:.*]] = memref.dim %arg0
// CHECK:         %[[IN:.*]] = arith.muli %{{.*}}, %[[IN_ROWS]] : index
// CHECK:         %[[OUT_ROWS:.*]] = memref.dim %arg1
// CHECK:         %[[OUT:.*]] = arith.muli %{{.*}}, %[[OUT_ROWS]] : index
// CHECK:         %[[BYTES:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:         %[[LARGE:.*]] = arith.cmpi sge, %[[BYTES]], %c1048576 : index
// CHECK:         scf.if %[[LARGE]] {
// CHECK:           scf.forall (%{{.*}}) in (%[[ROWS]])
// CHECK:         } else {
// CHECK:           scf.forall
// CHECK:         } {graphfuse.cpu.footprint_version}
// STREAM-LABEL: func.func @doubled_rows(
// STREAM-SAME:    graphfuse.cpu.streamed_stores = 1 : i64
// STREAM:         scf.if
// STREAM:           scf.forall (%[[ROW:.*]]) in (%[[N:.*]]) {
// STREAM:             %[[LEFT:.*]] = arith.subi %[[N]], %{{.*}} : index
// STREAM:             %[[LAST:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// STREAM:             %[[NEXT:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// STREAM:             memref.prefetch %arg0[%[[NEXT]], %{{.*}}]
// STREAM:             vector.store {{.*}} {alignment = 64 : i64, nontemporal = true}
// STREAM:         } else {
// STREAM-NOT:       memref.prefetch
// STREAM-NOT:       vector.store
// STREAM:           vector.transfer_write
// STREAM:         } {graphfuse.cpu.footprint_version}
func.func @doubled_rows(%x: memref<?x256xf32>, %out: memref<?x256xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<?x256xf32>) -> tensor<?x256xf32>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x256xf32>
  scf.forall (%i) in (%rows) {
    %row = memref.subview %x[%i, 0] [1, 256] [1, 1] : memref<?x256xf32> to memref<1x256xf32, strided<[256, 1], offset: ?>>
    %dst = memref.subview %out[%i, 0] [1, 256] [1, 1] : memref<?x256xf32> to memref<1x256xf32, strided<[256, 1], offset: ?>>
    scf.for %j = %c0 to %c256 step %c16 {
      %v = vector.transfer_read %row[%c0, %j], %pad {in_bounds = [true]} : memref<1x256xf32, strided<[256, 1], offset: ?>>, vector<16xf32>
      %w = arith.addf %v, %v : vector<16xf32>
      vector.transfer_write %w, %dst[%c0, %j] {in_bounds = [true]} : vector<16xf32>, memref<1x256xf32, strided<[256, 1], offset: ?>>
    }
  }
  return
}

// -----

// Negative: a nest of static size, and one whose static weights alone reach min-bytes (it is large whatever the
// rows: stream-large-stores takes it as it is).
// CHECK-LABEL: func.func @static_and_large(
// CHECK-NOT:     scf.if
// CHECK-NOT:     footprint_version
func.func @static_and_large(%x: memref<64x256xf32>, %out: memref<64x256xf32>, %w: memref<1024x1024xf32>, %y: memref<?x1024xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<64x256xf32>, tensor<1024x1024xf32>) -> (tensor<64x256xf32>, tensor<?x1024xf32>)} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x256xf32>
      memref.store %v, %out[%i, %j] : memref<64x256xf32>
    }
  }
  %rows = memref.dim %y, %c0 : memref<?x1024xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %c1024 step %c1 {
      %v = memref.load %w[%i, %j] : memref<1024x1024xf32>
      memref.store %v, %y[%i, %j] : memref<?x1024xf32>
    }
  }
  return
}
