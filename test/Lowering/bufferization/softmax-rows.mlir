// After kernel code generation and bufferization, a softmax kernel is one loop over the rows. Each row is
// read from memory by its first pass (the max) and from L1 by the next two (the sum of exp, the normalized
// write), in register-sized chunks (here 256-bit vectors: chunks of 4 x 8 floats, then a 4-float rest) with
// vector accumulators. The exp the sum computes is stored into a row-sized scratch buffer and read back by
// the write loop (cheaper than computing it again); not into the result row, whose stores then could not
// bypass the cache. The scratch is the only buffer allocated in the loop: the runtime makes it a stack
// buffer (test_streaming.py).
// (The self-copy of the row that bufferization leaves in the loop is erased by the runtime.)
// RUN: graphfuse-opt %s --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=256},inline,symbol-dce,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cse)' | FileCheck %s

// CHECK-LABEL: func.func @softmax(%arg0: memref<64x100xf32>) -> memref<64x100xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x100xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:      %[[IN:.*]] = memref.subview %arg0[%[[ROW]], 0] [1, 100] [1, 1]
// CHECK-NEXT:      vector.transfer_read %[[IN]][%c0, %c0]{{.*}} vector<32xf32>
// CHECK:           scf.for %{{.*}} = %c32 to %c96 step %c32 iter_args(%{{.*}}) -> (vector<32xf32>)
// CHECK:             arith.maximumf {{.*}} : vector<32xf32>
// CHECK:           vector.reduction <maximumf>, {{.*}} : vector<32xf32> into f32
// CHECK:           vector.transfer_read %[[IN]][%c0, %c96]{{.*}} vector<4xf32>
// CHECK:           vector.reduction <maximumf>, {{.*}} : vector<4xf32> into f32
// CHECK:           %[[DST:.*]] = memref.subview %[[OUT]][%[[ROW]], 0] [1, 100] [1, 1]
// CHECK:           %[[SCRATCH:.*]] = memref.alloc() {{.*}} : memref<1x100xf32>
// CHECK:           vector.transfer_write %{{.*}}, %[[SCRATCH]][%c0, %c0] {{.*}} : vector<32xf32>
// CHECK:           scf.for %[[I:.*]] = %c32 to %c96 step %c32 iter_args(%{{.*}}) -> (vector<32xf32>)
// CHECK:             arith.shli
// CHECK:             arith.addf {{.*}} : vector<32xf32>
// CHECK:             vector.transfer_write %{{.*}}, %[[SCRATCH]][%c0, %[[I]]] {{.*}} : vector<32xf32>
// CHECK:           vector.reduction <add>, {{.*}} : vector<32xf32> into f32
// CHECK:           vector.reduction <add>, {{.*}} : vector<4xf32> into f32
// CHECK-NOT:       vector.reduction
// CHECK:           scf.for %[[J:.*]] = %c0 to %c96 step %c32 {
// CHECK-NEXT:        %[[E:.*]] = vector.transfer_read %[[SCRATCH]][%c0, %[[J]]]
// CHECK-NOT:         arith.shli
// CHECK:             %[[P:.*]] = arith.mulf %[[E]], %{{.*}} : vector<32xf32>
// CHECK:             vector.transfer_write %[[P]], %[[DST]][%c0, %[[J]]] {{.*}} : vector<32xf32>
// CHECK:           vector.transfer_write %{{.*}}, %[[DST]][%c0, %c96] {{.*}} : vector<4xf32>
// CHECK-NOT:       memref.alloc
// CHECK:         return %[[OUT]]
func.func @softmax(%x: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %0 = call @softmax_kernel(%x) : (tensor<64x100xf32>) -> tensor<64x100xf32>
  return %0 : tensor<64x100xf32>
}
func.func private @softmax_kernel(%x: tensor<64x100xf32>) -> tensor<64x100xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<64x100xf32>) -> tensor<64x100xf32>
  return %0 : tensor<64x100xf32>
}
