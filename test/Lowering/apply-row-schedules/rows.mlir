// apply-row-schedules runs the graph.row_schedule written on a kernel's results: the rows tiled by the
// `rows` sizes with the producers fused, as parallel tasks or a serial loop, vectorized or not; a 1-D
// result as rows of `row` elements and a shorter rest.  The attributes are gone afterwards.
// RUN: graphfuse-opt --split-input-file --pass-pipeline='builtin.module(apply-row-schedules)' %s | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Serial rows of one, vectorized whole (chunk_vectors = 0): the sum and the scaling in one loop over rows.
// CHECK-LABEL: func.func private @serial_rows
// CHECK:         scf.for %{{.*}} = %c0 to %c8 step %c1
// CHECK:           vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK:           arith.divf {{.*}} : vector<64xf32>
// CHECK:           tensor.insert_slice {{.*}} : tensor<1x64xf32> into tensor<8x64xf32>
// CHECK-NOT:     graph.row_schedule
// CHECK:         return
func.func private @serial_rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %o = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<8x64xf32>, tensor<8xf32>) outs(%o : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = false, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 0 : i64}} {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Parallel tasks of two rows each, not vectorized: a forall over 4 tasks with the exp fused in.
// CHECK-LABEL: func.func private @tasks_of_two_rows
// CHECK:         scf.forall (%{{.*}}) = (0) to (8) step (2)
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<2x64xf32>)
// CHECK:             math.exp
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<2x64xf32>)
// CHECK:             arith.mulf
// CHECK-NOT:       vector.
// CHECK:         return
func.func private @tasks_of_two_rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ex : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 2, 0>, tasks = true, vectorize = false,
                                     vector_bits = 256 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#flat = affine_map<(d0) -> (d0)>

// A 1-D result of 10000 as 2 rows of 4096 and a rest of 1808, in chunks of 4 vectors of 16 floats.
// CHECK-LABEL: func.func private @flat_rows_and_rest
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c8192 step %c4096
// CHECK:           scf.for {{.*}} step %c64
// CHECK:             vector.transfer_write {{.*}} vector<64xf32>, tensor<4096xf32>
// CHECK:         tensor.extract_slice {{.*}}[8192] [1808] [1]
// CHECK:         tensor.insert_slice {{.*}}[8192] [1808] [1]
// CHECK:         return
func.func private @flat_rows_and_rest(%x: tensor<10000xf32>) -> tensor<10000xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<10000xf32>
  %r = linalg.generic {indexing_maps = [#flat, #flat], iterator_types = ["parallel"]}
      ins(%x : tensor<10000xf32>) outs(%e : tensor<10000xf32>)
      attrs = {graph.row_schedule = {row = 4096 : i64, tasks = false, vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<10000xf32>
  return %r : tensor<10000xf32>
}

// -----

#flat = affine_map<(d0) -> (d0)>

// Rows that divide the result: parallel tasks and no rest.
// CHECK-LABEL: func.func private @flat_row_tasks
// CHECK:         scf.forall (%{{.*}}) = (0) to (8192) step (1024)
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return
func.func private @flat_row_tasks(%x: tensor<8192xf32>) -> tensor<8192xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8192xf32>
  %r = linalg.generic {indexing_maps = [#flat, #flat], iterator_types = ["parallel"]}
      ins(%x : tensor<8192xf32>) outs(%e : tensor<8192xf32>)
      attrs = {graph.row_schedule = {row = 1024 : i64, tasks = true, vector_bits = 256 : i64, chunk_vectors = 2 : i64}} {
  ^bb0(%a: f32, %out: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<8192xf32>
  return %r : tensor<8192xf32>
}

// -----

// An op without a schedule is left as it is.
// CHECK-LABEL: func.func private @unscheduled
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
#flat = affine_map<(d0) -> (d0)>
func.func private @unscheduled(%x: tensor<8192xf32>) -> tensor<8192xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8192xf32>
  %r = linalg.generic {indexing_maps = [#flat, #flat], iterator_types = ["parallel"]}
      ins(%x : tensor<8192xf32>) outs(%e : tensor<8192xf32>) {
  ^bb0(%a: f32, %out: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<8192xf32>
  return %r : tensor<8192xf32>
}
