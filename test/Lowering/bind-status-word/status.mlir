// bind-status-word: the run-time checks' status word (the @graphfuse_status global each failure store writes)
// becomes the entry's last argument, recorded as its last workspace buffer, and the check sites the failure
// stores carry become graphfuse.cpu.checks; an entry that checks nothing is left as it is.
// RUN: graphfuse-opt %s --split-input-file --bind-status-word | FileCheck %s

// A gather's index check: the failure store writes the new argument, the global is gone.
// CHECK-NOT:   memref.global "private" @graphfuse_status
// CHECK-LABEL: func.func @checked(
// CHECK-SAME:    %[[WORD:[a-z0-9]+]]: memref<1xi32>)
// CHECK-SAME:    graphfuse.cpu.checks = [{col = 8 : i64, detail = "an index is not in [-8, 8) (axis 0)", file = "-", line = 2 : i64, op = "graph.gather", site = 0 : i64, status = "INDEX_OUT_OF_RANGE"}]
// CHECK-SAME:    graphfuse.cpu.workspace = [memref<64xi8>, memref<1xi32>]
// CHECK-NOT:     memref.get_global
// CHECK:         memref.load %[[WORD]][%{{.*}}] : memref<1xi32>
// CHECK:         memref.store %{{.*}}, %[[WORD]][%{{.*}}] {graphfuse.check = {{.*}}} : memref<1xi32>
module {
  memref.global "private" @graphfuse_status : memref<1xi32> = dense<0> {alignment = 64 : i64}
  func.func @checked(%arg0: memref<8x4xf32>, %arg1: memref<3xi64>, %arg2: memref<3x4xf32>, %arg3: memref<64xi8>) attributes {graphfuse.cpu.arena, graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<8x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>, graphfuse.cpu.workspace = [memref<64xi8>]} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c0_i8 = arith.constant 0 : i8
    %view = memref.view %arg3[%c0][] : memref<64xi8> to memref<i8>
    %0 = memref.load %view[] : memref<i8>
    %1 = arith.cmpi ne, %0, %c0_i8 : i8
    scf.if %1 {
      %3 = memref.get_global @graphfuse_status : memref<1xi32>
      %4 = memref.load %3[%c0] : memref<1xi32>
      %5 = arith.cmpi eq, %4, %c0_i32 : i32
      %6 = arith.select %5, %c4_i32, %4 : i32
      memref.store %6, %3[%c0] {graphfuse.check = {col = 8 : i64, detail = "an index is not in [-8, 8) (axis 0)", file = "-", line = 2 : i64, op = "graph.gather", site = 0 : i64, status = "INDEX_OUT_OF_RANGE"}} : memref<1xi32>
    }
    return
  }
}

// -----

// Negative: no check, no status word: the signature and the workspace stay.
// CHECK-LABEL: func.func @unchecked(
// CHECK-SAME:    %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK-NOT:     graphfuse.cpu.checks
// CHECK-NOT:     graphfuse.cpu.workspace
func.func @unchecked(%x: memref<4xf32>, %out: memref<4xf32>) attributes {graphfuse.cpu.entry, graphfuse.cpu.signature = (tensor<4xf32>) -> tensor<4xf32>} {
  memref.copy %x, %out : memref<4xf32> to memref<4xf32>
  return
}
