// tile-kernel-rows tiles kernels that hold row reductions by rows, fuses every producer into the row loop
// (one pass over each row) and vectorizes the row; other kernels are left alone, with the reason logged.
// Here the rows stay whole vectors (chunk-vectors=0); chunks.mlir cuts them into register-sized chunks.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{chunk-vectors=0})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vectorize=false})' %s | FileCheck %s --check-prefix=SCALAR
// RUN: graphfuse-opt --split-input-file --log-level=debug --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=512})' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(tile-kernel-rows{max-row=0})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'max-row' of pass 'tile-kernel-rows' must be >= 1, got 0
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(tile-kernel-rows{vector-bits=100})' %s 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: option 'vector-bits' of pass 'tile-kernel-rows' must be 0, 128, 256 or 512, got 100

// softmax: max, exp and sum, normalize, all inside one loop over the 64 rows; reductions as vector.reduction.
// LOG: select-row-schedules: @softmax_kernel: 1 result loop(s) by rows of 128, vectorized
// CHECK-LABEL: func.func private @softmax_kernel
// CHECK:         scf.for %{{.*}} = %c0 to %c64 step %c1
// CHECK:           vector.transfer_read {{.*}} : tensor<1x128xf32>, vector<128xf32>
// CHECK:           vector.reduction <maximumf>
// CHECK:           vector.reduction <add>
// CHECK:           arith.divf {{.*}} : vector<128xf32>
// CHECK:           tensor.insert_slice
// CHECK:         return
// SCALAR-LABEL: func.func private @softmax_kernel
// SCALAR:         scf.for
// SCALAR:           linalg.generic {{.*}} ins(%{{.*}} : tensor<1x128xf32>)
// SCALAR-NOT:     vector.
// SCALAR:         return
func.func private @softmax_kernel(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// add + rms_norm with the sum also returned: each result gets its row loop.
// LOG: select-row-schedules: @add_rms_norm_kernel: 2 result loop(s) by rows of 32, vectorized
// CHECK-LABEL: func.func private @add_rms_norm_kernel
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           vector.reduction <add>
func.func private @add_rms_norm_kernel(%x: tensor<8x32xf32>, %r: tensor<8x32xf32>, %g: tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) attributes {graph.kernel} {
  %0 = "graph.add"(%x, %r) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %1 = "graph.rms_norm"(%0, %g) {epsilon = 9.99999997E-7 : f32} : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %0, %1 : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// Negative cases: an elementwise kernel, a kernel with a convolution the rows would have to cut (a named
// op other than a matmul or contraction), and a function that is not a kernel. A kernel with a matmul is
// tiled, the matmul left whole before the row loop (it is not fused into it: per row it would be a
// matrix-vector product the runtime cannot block).
// LOG: select-row-schedules: @elementwise_kernel is not tiled: it has no reduction and rows shorter than 64 (LLVM vectorizes elementwise loops)
// LOG: select-row-schedules: @matmul_kernel: 1 result loop(s) by rows of 16, vectorized
// LOG: select-row-schedules: @depthwise_kernel is not tiled: it holds linalg.depthwise_conv_2d_nchw_chw
// CHECK-LABEL: func.func private @elementwise_kernel
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
// CHECK-LABEL: func.func private @matmul_kernel
// CHECK-NOT:     scf.for
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<8x32xf32>, tensor<32x16xf32>)
// CHECK-NEXT:    scf.for
// CHECK:           tensor.extract_slice %[[MM]][%{{.*}}, 0] [1, 16] [1, 1]
// CHECK:           vector.reduction <maximumf>
// CHECK-NOT:       linalg.matmul
// CHECK:           scf.yield
// CHECK-LABEL: func.func private @depthwise_kernel
// CHECK-NOT:     scf.for
// CHECK:         linalg.depthwise_conv_2d_nchw_chw
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func private @elementwise_kernel(%x: tensor<8x32xf32>) -> tensor<8x32xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
func.func private @matmul_kernel(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>) -> tensor<8x16xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%x, %w) {transpose_a = false, transpose_b = false} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
func.func private @depthwise_kernel(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x2x2xf32> attributes {graph.kernel} {
  %0 = "graph.conv2d"(%x, %w) {groups = 4 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x2x2xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %1 : tensor<1x4x2x2xf32>
}
func.func @not_a_kernel(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A dynamic row count: a parallel loop over the rows the call has, each row static and vectorized.
// LOG: select-row-schedules: @dynamic_rows_kernel: 1 result loop(s) by rows of 32, vectorized
// CHECK-LABEL: func.func private @dynamic_rows_kernel
// CHECK:         %[[ROWS:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x32xf32>
// CHECK:         scf.forall (%[[ROW:.*]]) in (%[[ROWS]])
// CHECK:           tensor.extract_slice %{{.*}}[%[[ROW]], 0] [1, 32] [1, 1] : tensor<?x32xf32> to tensor<1x32xf32>
// CHECK:           vector.transfer_read {{.*}} : tensor<1x32xf32>, vector<32xf32>
// CHECK:           vector.reduction <maximumf>
// CHECK:           vector.reduction <add>
// CHECK:           tensor.parallel_insert_slice {{.*}}[%[[ROW]], 0] [1, 32] [1, 1]
func.func private @dynamic_rows_kernel(%x: tensor<?x32xf32>) -> tensor<?x32xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<?x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// Rows of dynamic length are not tiled: a reduction over them, or elementwise rows.
// LOG: select-row-schedules: @dynamic_reduction_kernel is not tiled: a reduction has a dynamic length
// LOG: select-row-schedules: @dynamic_row_kernel is not tiled: its rows have a dynamic length
// CHECK-LABEL: func.func private @dynamic_reduction_kernel
// CHECK-NOT:     scf.for
// CHECK-LABEL: func.func private @dynamic_row_kernel
// CHECK-NOT:     scf.for
func.func private @dynamic_reduction_kernel(%x: tensor<8x?xf32>) -> tensor<8x?xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<8x?xf32>) -> tensor<8x?xf32>
  return %0 : tensor<8x?xf32>
}
func.func private @dynamic_row_kernel(%x: tensor<8x?xf32>) -> tensor<8x?xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<8x?xf32>) -> tensor<8x?xf32>
  %1 = "graph.mul"(%0, %x) : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  return %1 : tensor<8x?xf32>
}
