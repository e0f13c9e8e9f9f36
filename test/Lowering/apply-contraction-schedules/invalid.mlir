// Negative: a schedule the library cannot run is an error at the op that carries it, naming what is wrong;
// an op without a schedule is left as it is.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(apply-contraction-schedules)' %s

func.func @unknown_sequence(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{graph.schedule names no sequence of the schedule library: 'tiles'}}
  %r = linalg.matmul {graph.schedule = {sequence = "tiles"}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @a_step_not_a_schedule(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{graph.schedule names no sequence of the schedule library: 'packed_register_tiles'}}
  %r = linalg.matmul {graph.schedule = {sequence = "packed_register_tiles"}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @missing_and_unknown(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{@register_tiles takes the parameters rows_per_task, block_columns, block_depth, tile_rows, tile_columns; missing block_depth, tile_columns; unknown rows}}
  %r = linalg.matmul {graph.schedule = {sequence = "register_tiles", rows_per_task = 8 : i64, block_columns = 8 : i64,
                                        tile_rows = 4 : i64, rows = 2 : i64}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @not_an_integer(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{parameter 'block' of @batch_matmul_blocks must be an integer, got "256"}}
  %r = linalg.matmul {graph.schedule = {sequence = "batch_matmul_blocks", block = "256"}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @not_a_dictionary(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{graph.schedule must be a dictionary naming a sequence, got "register_tiles"}}
  %r = linalg.matmul {graph.schedule = "register_tiles"}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A schedule that fails on its op: the direct convolution's schedule computes C's fill in each task, and here C
// is an argument: the transform interpreter's error, at the op.
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @schedule_fails(%x: tensor<1x3x6x26xf32>, %w: tensor<8x3x3x3xf32>, %init: tensor<1x8x4x24xf32>)
    -> tensor<1x8x4x24xf32> {
  // expected-error @+1 {{the contraction schedule failed in @direct_conv: could not find a producer for operand number: 2}}
  %r = linalg.generic {indexing_maps = [#in, #w, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"],
                       graph.schedule = {sequence = "direct_conv", task_dim1 = 0 : i64, task_dim2 = 2 : i64,
                                         vector_columns = 16 : i64, tile_dim1 = 4 : i64, tile_dim2 = 1 : i64,
                                         remainder_width_0 = 8 : i64, remainder_width_1 = 4 : i64,
                                         remainder_width_2 = 2 : i64, remainder_width_3 = 1 : i64,
                                         remainder_width_4 = 1 : i64}}
    ins(%x, %w : tensor<1x3x6x26xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<1x8x4x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x24xf32>
  return %r : tensor<1x8x4x24xf32>
}

// -----

// expected-error @+1 {{@register_tiles tiles a linalg.matmul of 3 loops, not a func.func of 0 loops}}
func.func @not_a_contraction(%a: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {
    graph.schedule = {sequence = "register_tiles", rows_per_task = 4 : i64, block_columns = 8 : i64,
                      block_depth = 8 : i64, tile_rows = 2 : i64, tile_columns = 8 : i64}} {
  return %a : tensor<8x8xf32>
}

// -----

func.func @another_family(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{@pack_panels tiles a linalg.transpose of 3 loops, not a linalg.matmul of 3 loops}}
  %r = linalg.matmul {graph.schedule = {sequence = "pack_panels", panels_per_task = 2 : i64}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @zero_size(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{parameter 'tile_rows' of @register_tiles must be positive, got 0}}
  %r = linalg.matmul {graph.schedule = {sequence = "register_tiles", rows_per_task = 4 : i64, block_columns = 8 : i64,
                                        block_depth = 8 : i64, tile_rows = 0 : i64, tile_columns = 8 : i64}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Tasks of rows or of panels: one of the two sizes, not neither.
#a = affine_map<(j0, i, j1, k) -> (i, k)>
#b = affine_map<(j0, i, j1, k) -> (j0, k, j1)>
#c = affine_map<(j0, i, j1, k) -> (i, j0, j1)>
func.func @no_tasks(%a: tensor<8x32xf32>, %b: tensor<4x32x16xf32>, %c: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  // expected-error @+1 {{@packed_tiles needs one of task_panels, task_rows positive}}
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                       graph.schedule = {sequence = "packed_tiles", task_panels = 0 : i64, task_rows = 0 : i64,
                                         block_panels = 2 : i64, block_depth = 32 : i64, tile_rows = 6 : i64}}
    ins(%a, %b : tensor<8x32xf32>, tensor<4x32x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  return %r : tensor<8x4x16xf32>
}

// -----

#a = affine_map<(j0, i, j1, k) -> (i, k)>
#b = affine_map<(j0, i, j1, k) -> (j0, k, j1)>
#c = affine_map<(j0, i, j1, k) -> (i, j0, j1)>
func.func @no_epilogue(%a: tensor<8x32xf32>, %b: tensor<4x32x16xf32>, %c: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  // expected-error @+1 {{@packed_tiles_with_epilogue fuses the op into its epilogue, but its result has no sole linalg.generic reader}}
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                       graph.schedule = {sequence = "packed_tiles_with_epilogue", task_panels = 0 : i64, task_rows = 8 : i64,
                                         block_panels = 2 : i64, block_depth = 32 : i64, tile_rows = 6 : i64}}
    ins(%a, %b : tensor<8x32xf32>, tensor<4x32x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  return %r : tensor<8x4x16xf32>
}
