// tile-kernel-rows cuts each vectorized row into register-sized chunks: one loop per phase of reductions
// (layer_norm: the mean, then the variance) with vector accumulators reduced across lanes once after the
// loop, values that depend only on the row's scalars (1 / sqrt(var + eps)) computed once per row before the
// write loop, and the rest of the row in host vectors and one narrower vector. (x - mean, which the variance
// and the write both need, is cheap: it is computed again rather than stored; softmax-rows.mlir shows a
// costly one, softmax's exp, kept in the output row.) Chunks are chunk-vectors
// (4) registers of vector-bits: 4 x 16 floats at 512 bits, 4 x 4 at 128.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=512})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=128})' %s | FileCheck %s --check-prefix=SSE
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,tile-kernel-rows{vector-bits=512 chunk-vectors=0})' %s | FileCheck %s --check-prefix=WHOLE
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(tile-kernel-rows{chunk-vectors=-1})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'chunk-vectors' of pass 'tile-kernel-rows' must be >= 0, got -1

// 1000 = 15 chunks of 64 + 2 vectors of 16 + 8 at 512 bits; 62 chunks of 16 + 2 vectors of 4 at 128 bits.
// CHECK-LABEL: func.func private @layer_norm_kernel
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c8 step %c1
// CHECK:           %[[X:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 1000] [1, 1]
// CHECK:           scf.for %[[J:.*]] = %c64 to %c960 step %c64 iter_args(%[[SUM:.*]] = %{{.*}}) -> (vector<64xf32>)
// CHECK:             vector.transfer_read %[[X]][%c0, %[[J]]]{{.*}} vector<64xf32>
// CHECK:             arith.addf %[[SUM]], %{{.*}} : vector<64xf32>
// CHECK:           vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK:           vector.transfer_read %[[X]][%c0, %c976]{{.*}} vector<16xf32>
// CHECK:           vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// CHECK:           vector.transfer_read %[[X]][%c0, %c992]{{.*}} vector<8xf32>
// CHECK:           %[[MEAN:.*]] = vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK:           scf.for {{.*}} -> (vector<64xf32>)
// CHECK:             arith.subf
// CHECK:             arith.mulf
// CHECK-NOT:       vector.transfer_write
// CHECK:           %[[VAR:.*]] = vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK:           vector.broadcast %[[VAR]] : f32 to vector<64xf32>
// CHECK:           %[[SQRT:.*]] = math.sqrt %{{.*}} : vector<64xf32>
// CHECK:           %[[RSTD:.*]] = arith.divf %{{.*}}, %[[SQRT]] : vector<64xf32>
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %c960 step %c64 iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x1000xf32>)
// CHECK-NOT:         math.sqrt
// CHECK:             arith.mulf %{{.*}}, %[[RSTD]]
// CHECK:             vector.transfer_read %arg1[%[[K]]]{{.*}} vector<64xf32>
// CHECK:             vector.transfer_write %{{.*}}, %[[OUT]][%c0, %[[K]]]{{.*}} vector<64xf32>, tensor<1x1000xf32>
// CHECK:           scf.for {{.*}} = %c960 to %c992 step %c16 {{.*}} -> (tensor<1x1000xf32>)
// CHECK:           vector.transfer_write %{{.*}}[%c0, %c992]{{.*}} vector<8xf32>, tensor<1x1000xf32>
// CHECK:           tensor.insert_slice
// SSE-LABEL: func.func private @layer_norm_kernel
// SSE:         scf.for {{.*}} = %c16 to %c992 step %c16 {{.*}} -> (vector<16xf32>)
// SSE:         scf.for {{.*}} = %c0{{.*}} to %c992 step %c16 {{.*}} -> (tensor<1x1000xf32>)
// SSE:         vector.transfer_write {{.*}} vector<4xf32>, tensor<1x1000xf32>
// WHOLE-LABEL: func.func private @layer_norm_kernel
// WHOLE-NOT:     vector<64xf32>
// WHOLE:         vector.reduction <add>, %{{.*}} : vector<1000xf32> into f32
func.func private @layer_norm_kernel(%x: tensor<8x1000xf32>, %g: tensor<1000xf32>, %b: tensor<1000xf32>) -> tensor<8x1000xf32> attributes {graph.kernel} {
  %0 = "graph.layer_norm"(%x, %g, %b) {begin_norm_axis = -1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<8x1000xf32>, tensor<1000xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
  return %0 : tensor<8x1000xf32>
}

// -----

// Rank 3 and an integer reduction: the row loops are nested, the chunk loop inside the innermost; the max of
// i32 rows combines partial vectors with arith.maxsi.
// CHECK-LABEL: func.func private @int_max_kernel
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} -> (vector<64xi32>)
// CHECK:               arith.maxsi {{.*}} : vector<64xi32>
// CHECK:             vector.reduction <maxsi>, %{{.*}} : vector<64xi32> into i32
// CHECK:             vector.reduction <maxsi>, %{{.*}} : vector<16xi32> into i32
// CHECK:             vector.reduction <maxsi>, %{{.*}} : vector<5xi32> into i32
func.func private @int_max_kernel(%x: tensor<2x3x341xi32>) -> tensor<2x3x341xi32> attributes {graph.kernel} {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<2x3x341xi32>) -> tensor<2x3x1xi32>
  %1 = "graph.sub"(%x, %0) : (tensor<2x3x341xi32>, tensor<2x3x1xi32>) -> tensor<2x3x341xi32>
  return %1 : tensor<2x3x341xi32>
}

// -----

// Negative case: a row that fits one chunk (64 floats at 512 bits) stays one vector.
// CHECK-LABEL: func.func private @short_row_kernel
// CHECK-NOT:     -> (vector<
// CHECK:         vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK:         vector.transfer_write {{.*}} vector<64xf32>, tensor<1x64xf32>
func.func private @short_row_kernel(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %0 = "graph.rms_norm"(%x, %g) {epsilon = 9.99999997E-7 : f32} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// A [rows, 1] operand broadcast along the row (a transfer_read whose map ends in 0) is the same in every
// chunk: it is read once per row at each chunk width, before the loops, and each chunk adds the row of %g.
// CHECK-LABEL: func.func private @broadcast_read_kernel
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c8 step %c1
// CHECK:           %[[S:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 1] [1, 1]
// CHECK:           %[[S64:.*]] = vector.transfer_read %[[S]][%c0, %c0]{{.*}}permutation_map = #map{{.*}} vector<64xf32>
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %c960 step %c64
// CHECK-NOT:         permutation_map
// CHECK:             %[[G:.*]] = vector.transfer_read %arg1[%[[J]]]{{.*}} vector<64xf32>
// CHECK:             arith.addf %[[S64]], %[[G]]
// CHECK:             vector.transfer_write
// CHECK:           scf.for {{.*}} = %c960 to %c992 step %c16
// CHECK-NOT:     vector<1000xf32>
// WHOLE-LABEL: func.func private @broadcast_read_kernel
// WHOLE:         vector.transfer_read {{.*}}permutation_map = #map{{.*}} : tensor<1x1xf32>, vector<1000xf32>
func.func private @broadcast_read_kernel(%s: tensor<8x1xf32>, %g: tensor<1000xf32>) -> (tensor<8x1000xf32>, tensor<8x1xf32>) attributes {graph.kernel} {
  %0 = "graph.add"(%s, %g) : (tensor<8x1xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
  %1 = "graph.exp"(%0) : (tensor<8x1000xf32>) -> tensor<8x1000xf32>
  %2 = "graph.reduce_sum"(%1) {axes = array<i64: -1>, keep_dims = true} : (tensor<8x1000xf32>) -> tensor<8x1xf32>
  return %0, %2 : tensor<8x1000xf32>, tensor<8x1xf32>
}

// -----

// A row's reduced value broadcast back over a short row reaches the row loop as a broadcast of a one-element
// vector along the row: a splat at the chunk width (16 floats at 128 bits).  The chunks build it once per row;
// casting away the unit dims folds its extract in the loop into a broadcast there (LLVM hoists it again).
// SSE-LABEL: func.func private @reduced_row_kernel
// SSE:         vector.reduction <maximumf>
// SSE:         scf.for %[[ROW:.*]] = %c0 to %c8 step %c1
// SSE:           %[[MAX:.*]] = vector.transfer_read {{.*}} : tensor<1xf32>, vector<1xf32>
// SSE:           scf.for %{{.*}} = %{{.*}} to %c64 step %c16
// SSE:             %[[SPLAT:.*]] = vector.broadcast %[[MAX]] : vector<1xf32> to vector<16xf32>
// SSE:             arith.addf %{{.*}}, %[[SPLAT]]
// SSE-NOT:     vector<64xf32>
func.func private @reduced_row_kernel(%x: tensor<8x64xf32>, %s: tensor<8x1xf32>, %a: tensor<8x64xf32>) -> (tensor<8x1xf32>, tensor<8x64xf32>, tensor<8x64xf32>) attributes {graph.kernel} {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: -1>, keep_dims = true} : (tensor<8x64xf32>) -> tensor<8x1xf32>
  %1 = "graph.mul"(%s, %a) : (tensor<8x1xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = "graph.add"(%1, %x) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %3 = "graph.add"(%2, %0) : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  return %0, %2, %3 : tensor<8x1xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
