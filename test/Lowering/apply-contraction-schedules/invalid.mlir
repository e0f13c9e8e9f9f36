// Negative: a schedule the library cannot run is an error at the op that carries it, naming what is wrong;
// an op without a schedule is left as it is.
// RUN: graphfuse-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(apply-contraction-schedules)' %s

func.func @unknown_sequence(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{graph.schedule names no sequence of the contraction schedules: 'tiles'}}
  %r = linalg.matmul {graph.schedule = {sequence = "tiles"}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @a_step_not_a_schedule(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{graph.schedule names no sequence of the contraction schedules: 'packed_register_tiles'}}
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

// A schedule that fails on its op (one that fuses C's fill, where C is an argument): the transform
// interpreter's error, at the op.
func.func @schedule_fails(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{the contraction schedule failed in @packed_tiles_filled: could not find a producer for operand number: 2}}
  %r = linalg.matmul {graph.schedule = {sequence = "packed_tiles_filled", task_panels = 0 : i64, task_rows = 4 : i64,
                                        block_panels = 1 : i64, block_depth = 8 : i64, tile_rows = 2 : i64}}
    ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
