// tile-kernel-rows takes elementwise kernels too: rank >= 2 with rows of at least one chunk (4 vectors of
// vector-bits) and at most max-row, and 1-D kernels of at least 2 rows of 4096 (and parallel-min-elements).
// Their rows are vectorized and cut into chunks like row reductions; a long computation per element (here
// a sigmoid: an exp and a division) is written two host vectors per chunk, which keeps it in registers.
// A 1-D kernel is split at the last multiple of 4096: those rows are an scf.forall writing into the
// kernel's whole destination (no intermediate slice), the rest one shorter row. Kernels with transposes
// are left to LLVM's loop vectorizer, with the reason logged.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=512})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --log-level=debug --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=512})' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=512 elementwise=false})' %s | FileCheck %s --check-prefix=OFF

// LOG: select-row-schedules: @swish_kernel: 1 result loop(s) by rows of 1000, vectorized
// CHECK-LABEL: func.func private @swish_kernel
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<300x1000xf32>
// CHECK:         scf.forall (%[[ROW:.*]]) in (300) shared_outs(%[[OUT:.*]] = %[[EMPTY]])
// CHECK:           %[[X:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 1000] [1, 1]
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %c992 step %c32 iter_args(%[[DST:.*]] = %{{.*}}) -> (tensor<1x1000xf32>)
// CHECK:             vector.transfer_read %[[X]][%c0, %[[J]]]{{.*}} vector<32xf32>
// CHECK:             vector.transfer_read %arg1[%[[J]]]{{.*}} vector<32xf32>
// CHECK:             arith.shli {{.*}} : vector<32xi32>
// CHECK:             arith.divf {{.*}} : vector<32xf32>
// CHECK:             vector.transfer_write %{{.*}}, %[[DST]][%c0, %[[J]]]{{.*}} vector<32xf32>
// CHECK:           vector.transfer_write %{{.*}}[%c0, %c992]{{.*}} vector<8xf32>, tensor<1x1000xf32>
// CHECK:           tensor.parallel_insert_slice
// OFF-LABEL: func.func private @swish_kernel
// OFF-NOT:     scf.forall
// OFF:         linalg.generic
func.func private @swish_kernel(%x: tensor<300x1000xf32>, %b: tensor<1000xf32>) -> tensor<300x1000xf32> attributes {graph.kernel} {
  %0 = "graph.add"(%x, %b) : (tensor<300x1000xf32>, tensor<1000xf32>) -> tensor<300x1000xf32>
  %1 = "graph.sigmoid"(%0) : (tensor<300x1000xf32>) -> tensor<300x1000xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<300x1000xf32>, tensor<300x1000xf32>) -> tensor<300x1000xf32>
  return %2 : tensor<300x1000xf32>
}

// -----

// 100003 = 24 rows of 4096 + 1699; the short computation (relu * x) keeps chunks of 4 vectors.
// LOG: apply-row-schedules: @flat_kernel: 1-D, 24 rows of 4096 and a rest of 1699, vectorized
// CHECK-LABEL: func.func private @flat_kernel
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<100003xf32>
// CHECK:         %[[ROWS:.*]] = scf.forall (%[[I:.*]]) = (0) to (98304) step (4096) shared_outs(%[[OUT:.*]] = %[[EMPTY]]) -> (tensor<100003xf32>)
// CHECK:           tensor.extract_slice %[[OUT]][%[[I]]] [4096] [1] : tensor<100003xf32> to tensor<4096xf32>
// CHECK:           scf.for {{.*}} step %c64{{.*}} -> (tensor<4096xf32>)
// CHECK:             vector.transfer_write {{.*}} vector<64xf32>, tensor<4096xf32>
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[I]]] [4096] [1]
// CHECK:         %[[REST:.*]] = tensor.extract_slice %[[ROWS]][98304] [1699] [1]
// CHECK:         scf.for {{.*}} = %c0 to %c1664 step %c64 iter_args(%{{.*}} = %[[REST]]) -> (tensor<1699xf32>)
// CHECK:         scf.for {{.*}} = %c1664 to %c1696 step %c16
// CHECK:         vector.transfer_write {{.*}}[%c1696]{{.*}} vector<3xf32>, tensor<1699xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[ROWS]][98304] [1699] [1]
// CHECK-NOT:     tensor.insert_slice
func.func private @flat_kernel(%x: tensor<100003xf32>) -> tensor<100003xf32> attributes {graph.kernel} {
  %0 = "graph.relu"(%x) : (tensor<100003xf32>) -> tensor<100003xf32>
  %1 = "graph.mul"(%0, %x) : (tensor<100003xf32>, tensor<100003xf32>) -> tensor<100003xf32>
  return %1 : tensor<100003xf32>
}

// -----

// Negative cases: a transpose, rows shorter than a chunk, a 1-D kernel below the threshold; and a row
// reduction with a 1-D result, which is a row kernel, not a 1-D elementwise one (taking it for one
// aborted in the tiling).
// LOG: select-row-schedules: @transpose_kernel is not tiled: it holds linalg.transpose
// LOG: select-row-schedules: @narrow_kernel is not tiled: it has no reduction and rows shorter than 64
// LOG: select-row-schedules: @short_flat_kernel is not tiled: it has no reduction and a 1-D result below 16384 elements
// LOG: select-row-schedules: @row_sum_kernel: 1 result loop(s) by rows of 2, vectorized
// CHECK-LABEL: func.func private @transpose_kernel
// CHECK-NOT:     scf.for
// CHECK-LABEL: func.func private @narrow_kernel
// CHECK-NOT:     scf.for
// CHECK-LABEL: func.func private @short_flat_kernel
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
// CHECK-LABEL: func.func private @row_sum_kernel
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c3 step %c1
// CHECK:           vector.reduction <add>, %{{.*}} : vector<2xf32> into f32
// CHECK:           tensor.insert_slice %{{.*}}[%[[ROW]]] [1] [1] : tensor<1xf32> into tensor<3xf32>
func.func private @transpose_kernel(%x: tensor<256x512xf32>) -> tensor<512x256xf32> attributes {graph.kernel} {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<256x512xf32>) -> tensor<512x256xf32>
  %1 = "graph.exp"(%0) : (tensor<512x256xf32>) -> tensor<512x256xf32>
  return %1 : tensor<512x256xf32>
}
func.func private @narrow_kernel(%x: tensor<4096x48xf32>) -> tensor<4096x48xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<4096x48xf32>) -> tensor<4096x48xf32>
  return %0 : tensor<4096x48xf32>
}
func.func private @short_flat_kernel(%x: tensor<12000xf32>) -> tensor<12000xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<12000xf32>) -> tensor<12000xf32>
  return %0 : tensor<12000xf32>
}
func.func private @row_sum_kernel(%x: tensor<3x2xf32>) -> tensor<3xf32> attributes {graph.kernel} {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keep_dims = false} : (tensor<3x2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
