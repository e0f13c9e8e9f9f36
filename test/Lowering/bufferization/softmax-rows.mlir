// After kernel code generation and bufferization, a softmax kernel is one loop over the rows: each row is
// read once from the input buffer, reduced twice in registers (max, sum of exp) and written once into the
// result buffer; no intermediate buffer is allocated. (The self-copy of the row that bufferization leaves
// in the loop is erased by the runtime.)
// RUN: graphfuse-opt %s --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows,inline,symbol-dce,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cse)' | FileCheck %s

// CHECK-LABEL: func.func @softmax(%arg0: memref<64x128xf32>) -> memref<64x128xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x128xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:      %[[IN:.*]] = memref.subview %arg0[%[[ROW]], 0] [1, 128] [1, 1]
// CHECK-NEXT:      vector.transfer_read %[[IN]]
// CHECK-NOT:       vector.transfer_read
// CHECK:           vector.reduction <maximumf>
// CHECK-NOT:       vector.reduction <maximumf>
// CHECK:           vector.reduction <add>
// CHECK-NOT:       vector.reduction
// CHECK:           %[[DST:.*]] = memref.subview %[[OUT]][%[[ROW]], 0] [1, 128] [1, 1]
// CHECK:           vector.transfer_write %{{.*}}, %[[DST]]
// CHECK:         return %[[OUT]]
func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = call @softmax_kernel(%x) : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
func.func private @softmax_kernel(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
