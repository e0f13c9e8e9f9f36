// select-row-schedules records each row kernel's schedule on the ops computing its results, as
// graph.row_schedule, and changes nothing else; kernels without rows get none.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,select-row-schedules{vector-bits=512})' %s | FileCheck %s
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,select-row-schedules{vector-bits=256 chunk-vectors=2 parallel-min-elements=1024})' %s | FileCheck %s --check-prefix=NARROW
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(graph-to-linalg,fuse-kernel-loops,select-row-schedules{vectorize=false})' %s | FileCheck %s --check-prefix=SCALAR
// RUN: not graphfuse-opt --pass-pipeline='builtin.module(select-row-schedules{chunk-vectors=-1})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'chunk-vectors' of pass 'select-row-schedules' must be >= 0, got -1

// A softmax of 8192 results: rows of its 3 loops' first dim, serial (below parallel-min-elements).
// CHECK-LABEL: func.func private @softmax_kernel
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {{.*}} attrs = {graph.row_schedule = {chunk_vectors = 4 : i64, rows = array<i64: 1, 0>, tasks = false, vector_bits = 512 : i64, vectorize = true}}
// CHECK-NEXT:    ^bb0
// NARROW-LABEL: func.func private @softmax_kernel
// NARROW:         graph.row_schedule = {chunk_vectors = 2 : i64, rows = array<i64: 1, 0>, tasks = true, vector_bits = 256 : i64, vectorize = true}
// SCALAR-LABEL: func.func private @softmax_kernel
// SCALAR:         graph.row_schedule = {{{.*}}vectorize = false}
func.func private @softmax_kernel(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// A dynamic row count: rows of one row each are static, and their count is shared out at run time (tasks).
// CHECK-LABEL: func.func private @dynamic_rows_kernel
// CHECK:         graph.row_schedule = {chunk_vectors = 4 : i64, rows = array<i64: 1, 1, 0>, tasks = true, vector_bits = 512 : i64, vectorize = true}
// CHECK-NOT:     graph.row_schedule
// CHECK:         return
func.func private @dynamic_rows_kernel(%x: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %0 : tensor<?x?x32xf32>
}

// -----

// A product with rows counted at run time: its elementwise epilogue (the bias add) is tiled by rows, which the
// contraction schedules do not apply to blocks of such a product; a static product's stays with its schedule.
// CHECK-LABEL: func.func private @dynamic_product_kernel
// CHECK:         linalg.matmul
// CHECK:         graph.row_schedule = {chunk_vectors = 4 : i64, rows = array<i64: 1, 0>, tasks = true, vector_bits = 512 : i64, vectorize = true}
// CHECK-LABEL: func.func private @static_product_kernel
// CHECK-NOT:     graph.row_schedule
// CHECK:         return
func.func private @dynamic_product_kernel(%x: tensor<?x32xf32>, %w: tensor<32x128xf32>, %b: tensor<128xf32>)
    -> tensor<?x128xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%x, %w) : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
  %1 = "graph.add"(%0, %b) : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %1 : tensor<?x128xf32>
}
func.func private @static_product_kernel(%x: tensor<64x32xf32>, %w: tensor<32x128xf32>, %b: tensor<128xf32>)
    -> tensor<64x128xf32> attributes {graph.kernel} {
  %0 = "graph.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
  %1 = "graph.add"(%0, %b) : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}

// -----

// Two results, each a root of its own: the rms norm and the sum before it.
// CHECK-LABEL: func.func private @add_rms_norm_kernel
// CHECK-COUNT-2: graph.row_schedule = {chunk_vectors = 4 : i64, rows = array<i64: 1, 1, 0>, tasks = false, vector_bits = 512 : i64, vectorize = true}
// CHECK-NOT:     graph.row_schedule
// CHECK:         return
func.func private @add_rms_norm_kernel(%x: tensor<2x8x32xf32>, %r: tensor<2x8x32xf32>, %w: tensor<32xf32>)
    -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) attributes {graph.kernel} {
  %0:2 = "graph.add_rms_norm"(%x, %r, %w) {epsilon = 1.0e-6 : f32}
    : (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>)
  return %0#0, %0#1 : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// Rows longer than max-row (4096): vectorized only if the chunks leave no longer vector (max_vector), and
// the 32768 results parallel tasks.
// CHECK-LABEL: func.func private @long_softmax_kernel
// CHECK:         graph.row_schedule = {chunk_vectors = 4 : i64, max_vector = 4096 : i64, rows = array<i64: 1, 0>, tasks = true, vector_bits = 512 : i64, vectorize = true}
// SCALAR-LABEL: func.func private @long_softmax_kernel
// SCALAR-NOT:     max_vector
// SCALAR:         return
func.func private @long_softmax_kernel(%x: tensor<4x8192xf32>) -> tensor<4x8192xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x8192xf32>) -> tensor<4x8192xf32>
  return %0 : tensor<4x8192xf32>
}

// -----

// A 1-D elementwise kernel: rows of 64 chunks of 16 floats (4096), parallel tasks.  At 256 bits with chunks
// of 2 vectors a row is 64 x 16 = 1024 floats.
// CHECK-LABEL: func.func private @flat_kernel
// CHECK:         graph.row_schedule = {chunk_vectors = 4 : i64, row = 4096 : i64, tasks = true, vector_bits = 512 : i64}
// NARROW-LABEL: func.func private @flat_kernel
// NARROW:         graph.row_schedule = {chunk_vectors = 2 : i64, row = 1024 : i64, tasks = true, vector_bits = 256 : i64}
// SCALAR-LABEL: func.func private @flat_kernel
// SCALAR-NOT:     graph.row_schedule
// SCALAR:         return
func.func private @flat_kernel(%x: tensor<100003xf32>) -> tensor<100003xf32> attributes {graph.kernel} {
  %0 = "graph.relu"(%x) : (tensor<100003xf32>) -> tensor<100003xf32>
  %1 = "graph.mul"(%0, %x) : (tensor<100003xf32>, tensor<100003xf32>) -> tensor<100003xf32>
  return %1 : tensor<100003xf32>
}

// -----

// Negative: no schedule for a transpose, rows shorter than a chunk, a row of dynamic length, a function not a
// kernel.
// CHECK-LABEL: func.func private @transpose_kernel
// CHECK-NOT:     graph.row_schedule
// CHECK-LABEL: func.func private @narrow_kernel
// CHECK-NOT:     graph.row_schedule
// CHECK-LABEL: func.func private @dynamic_kernel
// CHECK-NOT:     graph.row_schedule
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT:     graph.row_schedule
func.func private @transpose_kernel(%x: tensor<256x512xf32>) -> tensor<512x256xf32> attributes {graph.kernel} {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<256x512xf32>) -> tensor<512x256xf32>
  %1 = "graph.exp"(%0) : (tensor<512x256xf32>) -> tensor<512x256xf32>
  return %1 : tensor<512x256xf32>
}
func.func private @narrow_kernel(%x: tensor<4096x48xf32>) -> tensor<4096x48xf32> attributes {graph.kernel} {
  %0 = "graph.exp"(%x) : (tensor<4096x48xf32>) -> tensor<4096x48xf32>
  return %0 : tensor<4096x48xf32>
}
func.func private @dynamic_kernel(%x: tensor<8x?xf32>) -> tensor<8x?xf32> attributes {graph.kernel} {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<8x?xf32>) -> tensor<8x?xf32>
  return %0 : tensor<8x?xf32>
}
func.func @not_a_kernel(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
