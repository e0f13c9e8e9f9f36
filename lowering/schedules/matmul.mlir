// The schedules of matmuls: register tiles over blocks of C that stay in cache, the cores sharing out tasks of
// rows or of panels (graphfuse.lowering.contraction).  Each schedule takes the products it tiles (the ops
// carrying its schedule attribute) and tiles each in turn.  Sizes: `tile_rows` x `tile_columns` is a register
// tile; a block of C is `block_columns` columns (`block_panels` panels of packed B) by `block_depth` steps
// of the reduction.
module attributes {transform.with_named_sequence} {
  // from common.mlir
  transform.named_sequence private @peel_last_iteration(%loop: !transform.any_op {transform.readonly})

  // A plain linalg.matmul: tasks of `rows_per_task` rows across the cores (scf.forall), cache blocks of C
  // columns and of the reduction, register tiles with the reduction innermost, one step of K at a time.  The
  // tile loops and the loop of column blocks are peeled, so that every tile has a size known when compiling.
  transform.named_sequence @register_tiles(
      %products: !transform.any_op {transform.consumed},
      %rows_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_task"},
      %block_columns: !transform.param<i64> {transform.readonly, graph.parameter = "block_columns"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"},
      %tile_columns: !transform.param<i64> {transform.readonly, graph.parameter = "tile_columns"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0, %rows = transform.structured.tile_using_forall %m tile_sizes [%rows_per_task, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      %t1, %cache:2 = transform.structured.tile_using_for %t0 tile_sizes [0, %block_columns, %block_depth]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %t2, %reg:3 = transform.structured.tile_using_for %t1 tile_sizes [%tile_rows, %tile_columns, 1]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%reg#1) : (!transform.any_op) -> ()
      transform.include @peel_last_iteration failures(suppress) (%reg#0) : (!transform.any_op) -> ()
      // the last block of columns, when narrower: a copy of the tile loops with static bounds
      transform.include @peel_last_iteration failures(suppress) (%cache#0) : (!transform.any_op) -> ()
      transform.apply_patterns to %rows {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }

  // A matmul whose B is packed into panels: a generic over (j0, i, j1, k) reading A[i, k] and Bp[j0, k, j1]
  // into C viewed as [M, N / NR, NR].  A register tile is one panel j0, `tile_rows` rows, the panel's
  // columns and one step of K.  The sequences below differ in the tasks the cores share (tasks of panels or
  // of rows, outer blocks of B, a serial product) and then tile each task's product here: blocks of
  // `block_panels` panels by `block_depth` steps of K, register tiles inside.
  transform.named_sequence @packed_register_tiles(
      %task: !transform.any_op {transform.consumed},
      %tasks: !transform.any_op {transform.readonly},
      %block_panels: !transform.param<i64> {transform.readonly},
      %block_depth: !transform.param<i64> {transform.readonly},
      %tile_rows: !transform.param<i64> {transform.readonly}) {
    transform.annotate %tasks "graph.matmul_tiles" : !transform.any_op
    %t1, %cache:2 = transform.structured.tile_using_for %task tile_sizes [%block_panels, 0, 0, %block_depth]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %reg:3 = transform.structured.tile_using_for %t1 tile_sizes [1, %tile_rows, 0, 1]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @peel_last_iteration failures(suppress) (%reg#1) : (!transform.any_op) -> ()
    transform.apply_patterns to %tasks {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // one offset per task (a fused fill computes its own): bufferization then sees the task's block written
    // back onto itself, a copy that is erased
    transform.apply_cse to %tasks : !transform.any_op
    transform.yield
  }

  // Tasks of `task_panels` panels or of `task_rows` rows (the other size 0) across the cores.
  transform.named_sequence @packed_tiles(
      %products: !transform.any_op {transform.consumed},
      %task_panels: !transform.param<i64> {transform.readonly, graph.parameter = "task_panels"},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0, %tasks = transform.structured.tile_using_forall %m tile_sizes [%task_panels, %task_rows, 0, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @packed_register_tiles failures(propagate) (%t0, %tasks, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> ()
    }
    transform.yield
  }

  // @packed_tiles for a product whose C is a fill: the fill is fused into the tasks, each filling its block
  // of C in cache just before computing it, instead of a pass over all of C before.
  transform.named_sequence @packed_tiles_filled(
      %products: !transform.any_op {transform.consumed},
      %task_panels: !transform.param<i64> {transform.readonly, graph.parameter = "task_panels"},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op
      %t0, %tasks = transform.structured.tile_using_forall %m tile_sizes [%task_panels, %task_rows, 0, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %filled, %rows = transform.structured.fuse_into_containing_op %fill into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @packed_register_tiles failures(propagate) (%t0, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> ()
    }
    transform.yield
  }

  // A B larger than a share of the last-level cache: outer blocks of `outer_panels` panels one after the
  // other, tasks of `rows_per_task` rows inside each.
  transform.named_sequence @packed_tiles_outer_blocks(
      %products: !transform.any_op {transform.consumed},
      %outer_panels: !transform.param<i64> {transform.readonly, graph.parameter = "outer_panels"},
      %rows_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_task"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %tb, %bblock = transform.structured.tile_using_for %m tile_sizes [%outer_panels, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %t0, %rows = transform.structured.tile_using_forall %tb tile_sizes [0, %rows_per_task, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @packed_register_tiles failures(propagate) (%t0, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> ()
    }
    transform.yield
  }

  // A product computed inside a task of its own (a batch of a batched matmul): the same blocks of
  // `rows_per_task` rows, one after the other (scf.for).
  transform.named_sequence @packed_tiles_serial(
      %products: !transform.any_op {transform.consumed},
      %rows_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_task"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0, %rows = transform.structured.tile_using_for %m tile_sizes [0, %rows_per_task, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @packed_register_tiles failures(propagate) (%t0, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> ()
    }
    transform.yield
  }

  // Products of a row count known only at run time, at most ROW_DOT_ROWS, with a B [K, N] read at run time (a
  // token's step through GPT-2's Conv1D, x @ W): A seen as [tiles, rows, K] (rows 1 or 4, padded to whole
  // tiles), a generic over (t, i, j, k).  Tasks of `columns_per_task` columns across the cores, each walking the
  // row tiles (a loop counted at run time); in blocks of `block_depth` steps of K, register tiles of the tile's
  // rows by `tile_columns` columns, one step of K at a time, reading each row of B once per tile as it is
  // stored: no copy of B into panels.
  transform.named_sequence @row_tile_columns(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"},
      %tile_columns: !transform.param<i64> {transform.readonly, graph.parameter = "tile_columns"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0, %tasks = transform.structured.tile_using_forall %m tile_sizes [0, 0, %columns_per_task, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.annotate %tasks "graph.matmul_tiles" : !transform.any_op
      %t1, %rows = transform.structured.tile_using_for %t0 tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %tk, %depth = transform.structured.tile_using_for %t1 tile_sizes [0, 0, 0, %block_depth]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %t2, %reg:2 = transform.structured.tile_using_for %tk tile_sizes [0, 0, %tile_columns, 1]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}
