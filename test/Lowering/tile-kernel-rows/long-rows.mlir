// Rows longer than max-row (a vocabulary's logits, a long sequence's scores) are vectorized when every row
// body is cut into register-sized chunks: no vector longer than max-row is left.  Without chunks
// (chunk-vectors=0) such rows would stay whole-row vectors, so they are tiled but not vectorized.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{max-row=128 vector-bits=256},canonicalize)' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{max-row=128 vector-bits=256 chunk-vectors=0})' %s | FileCheck %s --check-prefix=WHOLE
// RUN: graphfuse-opt --split-input-file --log-level=debug --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{max-row=128 vector-bits=256})' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// softmax over rows of 256 floats with max-row 128: chunks of 4 vectors of 8 floats.
// LOG: select-row-schedules: @softmax_kernel: 1 result loop(s) by rows of 256, vectorized
// CHECK-LABEL: func.func private @softmax_kernel
// CHECK-NOT:     vector<256xf32>
// CHECK:         scf.for
// CHECK:           vector.transfer_read {{.*}} : tensor<1x256xf32>, vector<32xf32>
// CHECK:           vector.reduction <maximumf>
// CHECK:           vector.reduction <add>
// CHECK:           vector.transfer_write {{.*}} : vector<32xf32>, tensor<1x256xf32>
// CHECK-NOT:     vector<256xf32>
// CHECK:         return
// WHOLE-LABEL: func.func private @softmax_kernel
// WHOLE:         scf.for
// WHOLE:           linalg.generic {{.*}} ins(%{{.*}} : tensor<1x256xf32>)
// WHOLE-NOT:     vector.
// WHOLE:         return
func.func private @softmax_kernel(%x: tensor<4x256xf32>) -> tensor<4x256xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x256xf32>) -> tensor<4x256xf32>
  return %0 : tensor<4x256xf32>
}

// -----

// A row of 200 (not a multiple of a chunk): 6 chunks of 32 floats, then one vector of 8.
// LOG: select-row-schedules: @rms_norm_kernel: 1 result loop(s) by rows of 200, vectorized
// CHECK-LABEL: func.func private @rms_norm_kernel
// CHECK-NOT:     vector<200xf32>
// CHECK:           vector<32xf32>
// CHECK:           vector<8xf32>
// CHECK-NOT:     vector<200xf32>
// CHECK:         return
// WHOLE-LABEL: func.func private @rms_norm_kernel
// WHOLE-NOT:     vector.
// WHOLE:         return
func.func private @rms_norm_kernel(%x: tensor<2x200xf32>, %g: tensor<200xf32>) -> tensor<2x200xf32> attributes {graph.kernel} {
  %0 = "graph.rms_norm"(%x, %g) {epsilon = 9.99999997E-7 : f32} : (tensor<2x200xf32>, tensor<200xf32>) -> tensor<2x200xf32>
  return %0 : tensor<2x200xf32>
}
