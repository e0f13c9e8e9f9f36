// Negative: a row schedule that cannot run is an error at the op that carries it, naming what is wrong.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(apply-row-schedules)' %s

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @not_a_dictionary(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule must be a dictionary, got [1, 0]}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) attrs = {graph.row_schedule = [1, 0]} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @missing_and_unknown(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule of rows takes rows, vectorize, tasks, vector_bits, chunk_vectors and optionally max_vector; missing chunk_vectors, vector_bits; unknown tile}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = false, vectorize = true, tile = 2 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @wrong_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule: entry 'tasks' must be a boolean, got 1 : i64}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = 1 : i64, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @sizes_for_other_loops(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule: 'rows' needs a size >= 0 for each of the op's 2 loops, not all 0; got [1, 1, 0]}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 1, 0>, tasks = false, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @no_rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule: 'rows' needs a size >= 0 for each of the op's 2 loops, not all 0; got [0, 0]}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 0, 0>, tasks = false, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @odd_vector_width(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule: vector_bits must be 128, 256 or 512 and chunk_vectors >= 0, got 100 and 4}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = false, vectorize = true,
                                     vector_bits = 100 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @flat_rows_of_a_matrix(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule with 'row' tiles a static 1-D result by a positive row, not tensor<8x64xf32> by 16}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {row = 16 : i64, tasks = false, vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @dynamic_rows_by_two(%x: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {graph.kernel} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  // expected-error @+1 {{graph.row_schedule: a loop of dynamic extent is tiled by 1 (rows of static shape); loop 0 is not, in [2, 0]}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 2, 0>, tasks = true, vectorize = true, vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
func.func private @dynamic_flat_rows(%x: tensor<?xf32>) -> tensor<?xf32> attributes {graph.kernel} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  // expected-error @+1 {{graph.row_schedule with 'row' tiles a static 1-D result by a positive row, not tensor<?xf32> by 4096}}
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>)
      attrs = {graph.row_schedule = {row = 4096 : i64, tasks = true, vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

func.func private @a_matmul(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32>
    attributes {graph.kernel} {
  // expected-error @+1 {{graph.row_schedule tiles a linalg.generic or linalg.fill, not linalg.matmul}}
  %r = linalg.matmul {graph.row_schedule = {rows = array<i64: 1, 0, 0>, tasks = false, vectorize = true,
                                            vector_bits = 512 : i64, chunk_vectors = 4 : i64}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @outside_a_kernel(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{graph.row_schedule is on a result of a kernel (a function of fused loops): this op is not one}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = false, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @roots_disagree(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) attributes {graph.kernel} {
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = false, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  // expected-error @+1 {{the roots of a kernel take one row schedule but for their 'rows' sizes; @roots_disagree's differ}}
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>)
      attrs = {graph.row_schedule = {rows = array<i64: 1, 0>, tasks = true, vectorize = true,
                                     vector_bits = 512 : i64, chunk_vectors = 4 : i64}} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x64xf32>
  return %r, %s : tensor<8x64xf32>, tensor<8x64xf32>
}
