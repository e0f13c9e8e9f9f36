// align-constants: a constant buffer without an alignment starts on a cache line, as the workspace's buffers do;
// an alignment already given is kept.
// RUN: graphfuse-opt %s --split-input-file --align-constants | FileCheck %s

// CHECK-LABEL: module
// CHECK:         memref.global "private" constant @unaligned : memref<4xf32> = dense<1.000000e+00> {alignment = 64 : i64}
// CHECK:         memref.global "private" constant @aligned : memref<4xf32> = dense<2.000000e+00> {alignment = 16 : i64}
// CHECK-LABEL: func.func @f(
memref.global "private" constant @unaligned : memref<4xf32> = dense<1.0>
memref.global "private" constant @aligned : memref<4xf32> = dense<2.0> {alignment = 16 : i64}
func.func @f(%out: memref<4xf32>) {
  %c = memref.get_global @unaligned : memref<4xf32>
  memref.copy %c, %out : memref<4xf32> to memref<4xf32>
  return
}
