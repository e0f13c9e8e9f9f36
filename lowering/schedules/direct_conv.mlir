// The schedules of direct convolutions (graphfuse.lowering.structured_ops.conv): one generic over (n, d1, d2,
// d3, c, kh, kw) whose vector lanes are d3, output columns (d1 filters, d2 output rows) or filters (d1 output
// rows, d2 output columns).  Tasks of output rows of one image across the cores, C's fill fused into them,
// each task in register tiles: tiles of `vector_columns` lanes, their remainder in tiles of narrower powers
// of two (the column ladder: 24 columns become 16 + 8), then `tile_dim1` x `tile_dim2` of (d1, d2), one
// (c, kh, kw) step.  With the unit loops folded away, a tile is MR broadcast floats times NR contiguous ones
// into an MR x NR accumulator held in registers across the reduction loops.
module attributes {transform.with_named_sequence} {
  // from common.mlir
  transform.named_sequence private @peel_last_iteration(%loop: !transform.any_op {transform.readonly})
  transform.named_sequence private @hoist_accumulators(%scope: !transform.any_op {transform.readonly})


  // Level 0 of the column ladder: the last, partial tile peeled off %columns and computed in tiles of
  // %width_0 columns, each peeled in turn by the next level.  A tile of a width that is not a power of two
  // (vector<8x24xf32> accumulators) would be split by LLVM lane by lane through the stack.  A loop that its
  // step divides has no remainder: the peel fails, silenceably, and ends the ladder.
  transform.named_sequence @column_ladder_0(
      %columns: !transform.any_op {transform.readonly},
      %width_0: !transform.param<i64> {transform.readonly},
      %width_1: !transform.param<i64> {transform.readonly},
      %width_2: !transform.param<i64> {transform.readonly},
      %width_3: !transform.param<i64> {transform.readonly},
      %width_4: !transform.param<i64> {transform.readonly}) {
    %for = transform.cast %columns : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.foreach %rest : !transform.any_op {
    ^bb0(%peeled: !transform.any_op):
      %narrow = transform.structured.match ops{["linalg.generic"]} attributes{graph.conv_columns} in %peeled
        : (!transform.any_op) -> !transform.any_op
      %tiles, %narrower = transform.structured.tile_using_for %narrow tile_sizes [0, 0, 0, %width_0, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @column_ladder_1 failures(suppress) (%narrower, %width_1, %width_2, %width_3, %width_4)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // Level 1 of the column ladder: the last, partial tile peeled off %columns and computed in tiles of
  // %width_1 columns, each peeled in turn by the next level.  A tile of a width that is not a power of two
  // (vector<8x24xf32> accumulators) would be split by LLVM lane by lane through the stack.  A loop that its
  // step divides has no remainder: the peel fails, silenceably, and ends the ladder.
  transform.named_sequence @column_ladder_1(
      %columns: !transform.any_op {transform.readonly},
      %width_1: !transform.param<i64> {transform.readonly},
      %width_2: !transform.param<i64> {transform.readonly},
      %width_3: !transform.param<i64> {transform.readonly},
      %width_4: !transform.param<i64> {transform.readonly}) {
    %for = transform.cast %columns : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.foreach %rest : !transform.any_op {
    ^bb0(%peeled: !transform.any_op):
      %narrow = transform.structured.match ops{["linalg.generic"]} attributes{graph.conv_columns} in %peeled
        : (!transform.any_op) -> !transform.any_op
      %tiles, %narrower = transform.structured.tile_using_for %narrow tile_sizes [0, 0, 0, %width_1, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @column_ladder_2 failures(suppress) (%narrower, %width_2, %width_3, %width_4)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // Level 2 of the column ladder: the last, partial tile peeled off %columns and computed in tiles of
  // %width_2 columns, each peeled in turn by the next level.  A tile of a width that is not a power of two
  // (vector<8x24xf32> accumulators) would be split by LLVM lane by lane through the stack.  A loop that its
  // step divides has no remainder: the peel fails, silenceably, and ends the ladder.
  transform.named_sequence @column_ladder_2(
      %columns: !transform.any_op {transform.readonly},
      %width_2: !transform.param<i64> {transform.readonly},
      %width_3: !transform.param<i64> {transform.readonly},
      %width_4: !transform.param<i64> {transform.readonly}) {
    %for = transform.cast %columns : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.foreach %rest : !transform.any_op {
    ^bb0(%peeled: !transform.any_op):
      %narrow = transform.structured.match ops{["linalg.generic"]} attributes{graph.conv_columns} in %peeled
        : (!transform.any_op) -> !transform.any_op
      %tiles, %narrower = transform.structured.tile_using_for %narrow tile_sizes [0, 0, 0, %width_2, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @column_ladder_3 failures(suppress) (%narrower, %width_3, %width_4)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // Level 3 of the column ladder: the last, partial tile peeled off %columns and computed in tiles of
  // %width_3 columns, each peeled in turn by the next level.  A tile of a width that is not a power of two
  // (vector<8x24xf32> accumulators) would be split by LLVM lane by lane through the stack.  A loop that its
  // step divides has no remainder: the peel fails, silenceably, and ends the ladder.
  transform.named_sequence @column_ladder_3(
      %columns: !transform.any_op {transform.readonly},
      %width_3: !transform.param<i64> {transform.readonly},
      %width_4: !transform.param<i64> {transform.readonly}) {
    %for = transform.cast %columns : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.foreach %rest : !transform.any_op {
    ^bb0(%peeled: !transform.any_op):
      %narrow = transform.structured.match ops{["linalg.generic"]} attributes{graph.conv_columns} in %peeled
        : (!transform.any_op) -> !transform.any_op
      %tiles, %narrower = transform.structured.tile_using_for %narrow tile_sizes [0, 0, 0, %width_3, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @column_ladder_4 failures(suppress) (%narrower, %width_4)
        : (!transform.any_op, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // Level 4 of the column ladder: the last, partial tile peeled off %columns and computed in tiles of
  // %width_4 columns.  A tile of a width that is not a power of two
  // (vector<8x24xf32> accumulators) would be split by LLVM lane by lane through the stack.  A loop that its
  // step divides has no remainder: the peel fails, silenceably, and ends the ladder.
  transform.named_sequence @column_ladder_4(
      %columns: !transform.any_op {transform.readonly},
      %width_4: !transform.param<i64> {transform.readonly}) {
    %for = transform.cast %columns : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.foreach %rest : !transform.any_op {
    ^bb0(%peeled: !transform.any_op):
      %narrow = transform.structured.match ops{["linalg.generic"]} attributes{graph.conv_columns} in %peeled
        : (!transform.any_op) -> !transform.any_op
      %tiles, %narrower = transform.structured.tile_using_for %narrow tile_sizes [0, 0, 0, %width_4, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }

  // A task's convolution %tile (in the loop of tasks %rows) in register tiles.  The widths are the ladder's,
  // halving from half a tile's width down to 1 and then repeating 1 (a level with nothing to peel ends it).
  transform.named_sequence @conv_register_tiles(
      %tile: !transform.any_op {transform.consumed},
      %rows: !transform.any_op {transform.readonly},
      %vector_columns: !transform.param<i64> {transform.readonly},
      %tile_dim1: !transform.param<i64> {transform.readonly},
      %tile_dim2: !transform.param<i64> {transform.readonly},
      %width_0: !transform.param<i64> {transform.readonly},
      %width_1: !transform.param<i64> {transform.readonly},
      %width_2: !transform.param<i64> {transform.readonly},
      %width_3: !transform.param<i64> {transform.readonly},
      %width_4: !transform.param<i64> {transform.readonly}) {
    %tc, %columns = transform.structured.tile_using_for %tile tile_sizes [0, 0, 0, %vector_columns, 0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.annotate %tc "graph.conv_columns" : !transform.any_op
    transform.include @column_ladder_0 failures(suppress) (%columns, %width_0, %width_1, %width_2, %width_3, %width_4)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %column_tiles = transform.structured.match ops{["linalg.generic"]} attributes{graph.conv_columns} in %rows
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %column_tiles : !transform.any_op {
    ^bb0(%ct: !transform.any_op):
      %tr, %reg:5 = transform.structured.tile_using_for %ct tile_sizes [0, %tile_dim1, %tile_dim2, 0, 1, 1, 1]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      // the loop of the tile's rows peeled (the other, of unit steps, has nothing to peel)
      transform.include @peel_last_iteration failures(suppress) (%reg#1) : (!transform.any_op) -> ()
      transform.include @peel_last_iteration failures(suppress) (%reg#0) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  // The tiles of the loop of tasks %rows as vector code.
  transform.named_sequence @conv_vectorize(%rows: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %rows {
      transform.apply_patterns.tensor.fold_tensor_empty
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %rows {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
    } : !transform.any_op
    %tiles = transform.structured.match ops{["linalg.generic"]} in %rows : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles : !transform.any_op
    // hoisted before the permuted reads and writes of the accumulators (filters in the lanes, C [F, OW])
    // become transposes, which then run once per tile instead of twice per step
    transform.include @hoist_accumulators failures(propagate) (%rows) : (!transform.any_op) -> ()
    transform.apply_patterns to %rows {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  // Tasks of `task_dim1` x `task_dim2` of (d1, d2), one of them the output rows and the other 0, and one image.
  transform.named_sequence @direct_conv(
      %convs: !transform.any_op {transform.consumed},
      %task_dim1: !transform.param<i64> {transform.readonly, graph.parameter = "task_dim1"},
      %task_dim2: !transform.param<i64> {transform.readonly, graph.parameter = "task_dim2"},
      %vector_columns: !transform.param<i64> {transform.readonly, graph.parameter = "vector_columns"},
      %tile_dim1: !transform.param<i64> {transform.readonly, graph.parameter = "tile_dim1"},
      %tile_dim2: !transform.param<i64> {transform.readonly, graph.parameter = "tile_dim2"},
      %width_0: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_0"},
      %width_1: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_1"},
      %width_2: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_2"},
      %width_3: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_3"},
      %width_4: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_4"}) {
    transform.foreach %convs : !transform.any_op {
    ^bb0(%conv: !transform.any_op):
      %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
      %t0, %tasks = transform.structured.tile_using_forall %conv tile_sizes [1, %task_dim1, %task_dim2, 0, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %filled, %rows = transform.structured.fuse_into_containing_op %fill into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @conv_register_tiles failures(propagate)
        (%t0, %rows, %vector_columns, %tile_dim1, %tile_dim2, %width_0, %width_1, %width_2, %width_3, %width_4)
        : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      transform.include @conv_vectorize failures(propagate) (%rows) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  // A convolution whose elementwise epilogue (a bias, an activation, a residual add) alone reads it: the
  // epilogue (over the output [N, F, OH, OW]) is tiled into tasks of `task_rows` output rows, the convolution
  // and its fill fused into each and tiled as in @direct_conv, and the epilogue follows in vectors of
  // `vector_columns` output columns.  The task's block of the convolution's output is a scratch buffer, the
  // epilogue's result written once.
  transform.named_sequence @direct_conv_with_epilogue(
      %convs: !transform.any_op {transform.consumed},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %vector_columns: !transform.param<i64> {transform.readonly, graph.parameter = "vector_columns"},
      %tile_dim1: !transform.param<i64> {transform.readonly, graph.parameter = "tile_dim1"},
      %tile_dim2: !transform.param<i64> {transform.readonly, graph.parameter = "tile_dim2"},
      %width_0: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_0"},
      %width_1: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_1"},
      %width_2: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_2"},
      %width_3: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_3"},
      %width_4: !transform.param<i64> {transform.readonly, graph.parameter = "remainder_width_4"}) {
    transform.foreach %convs : !transform.any_op {
    ^bb0(%conv: !transform.any_op):
      %e = transform.get_consumers_of_result %conv[0] : (!transform.any_op) -> !transform.any_op
      %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
      %e1, %tasks = transform.structured.tile_using_forall %e tile_sizes [1, 0, %task_rows, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %c1, %rows0 = transform.structured.fuse_into_containing_op %conv into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %f1, %rows = transform.structured.fuse_into_containing_op %fill into %rows0
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @conv_register_tiles failures(propagate)
        (%c1, %rows, %vector_columns, %tile_dim1, %tile_dim2, %width_0, %width_1, %width_2, %width_3, %width_4)
        : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      %te, %vec:3 = transform.structured.tile_using_for %e1 tile_sizes [0, 1, 1, %vector_columns]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%vec#2) : (!transform.any_op) -> ()
      transform.include @conv_vectorize failures(propagate) (%rows) : (!transform.any_op) -> ()
    }
    transform.yield
  }
}
