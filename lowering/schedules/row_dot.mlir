// Products of a few rows of A with a transposed B read at run time (a linear layer's weight passed as an
// argument, one token decoded: x[1, K] @ W[N, K]^T), as generics over (i, j, k).  Packing B into panels
// would copy all of it at every call, so B is read as it is: one row of W per column of C, K contiguous
// floats.  One task per tile of `columns_per_task` columns (rows of W), shared out by the cores, its rows of
// A `rows_per_tile` at a time; the reduction split into partial sums of one vector's lanes
// (tile_reduction_using_for): an accumulator [rows, columns, lanes] kept in registers across the loop over
// K, and one sum of its lanes per tile at the end.  The loop over K is peeled.  The lane count is a size
// tile_reduction_using_for takes as an attribute, not a parameter: one sequence per vector width.
module attributes {transform.with_named_sequence} {
  // from common.mlir
  transform.named_sequence private @peel_last_iteration(%loop: !transform.any_op {transform.readonly})

  // The tasks of %product and, in each, its tiles of rows: (the tile, the loop of tasks).
  transform.named_sequence @row_dot_tasks(
      %product: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly},
      %rows_per_tile: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op) {
    %t0, %tasks = transform.structured.tile_using_forall %product tile_sizes [0, %columns_per_task, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.annotate %tasks "graph.matmul_tiles" : !transform.any_op
    transform.annotate %tasks "graph.row_dot_tiles" : !transform.any_op
    %t1, %rows = transform.structured.tile_using_for %t0 tile_sizes [%rows_per_tile, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield %t1, %tasks : !transform.any_op, !transform.any_op
  }

  transform.named_sequence @row_dot_4_lanes(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"},
      %rows_per_tile: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_tile"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t1, %tasks = transform.include @row_dot_tasks failures(propagate) (%m, %columns_per_task, %rows_per_tile)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%lanes) : (!transform.any_op) -> ()
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @row_dot_8_lanes(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"},
      %rows_per_tile: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_tile"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t1, %tasks = transform.include @row_dot_tasks failures(propagate) (%m, %columns_per_task, %rows_per_tile)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%lanes) : (!transform.any_op) -> ()
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @row_dot_16_lanes(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"},
      %rows_per_tile: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_tile"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t1, %tasks = transform.include @row_dot_tasks failures(propagate) (%m, %columns_per_task, %rows_per_tile)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%lanes) : (!transform.any_op) -> ()
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }

  // Products of a row count known only at run time, at most ROW_DOT_ROWS (a token's step with transformers'
  // default cache): A's rows padded to whole tiles of 4 and seen as [tiles, 4, K], C as [tiles, 4, N], one
  // generic over (t, i, j, k).  The same tasks of `columns_per_task` columns, each walking the row tiles (a
  // loop counted at run time) with W's rows of its columns in cache; every tile of static size.
  transform.named_sequence @row_tile_dot_tasks(
      %product: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op) {
    %t0, %tasks = transform.structured.tile_using_forall %product tile_sizes [0, 0, %columns_per_task, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.annotate %tasks "graph.matmul_tiles" : !transform.any_op
    transform.annotate %tasks "graph.row_dot_tiles" : !transform.any_op
    %t1, %rows = transform.structured.tile_using_for %t0 tile_sizes [1, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield %t1, %tasks : !transform.any_op, !transform.any_op
  }

  transform.named_sequence @row_tile_dot_4_lanes(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t1, %tasks = transform.include @row_tile_dot_tasks failures(propagate) (%m, %columns_per_task)
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%lanes) : (!transform.any_op) -> ()
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @row_tile_dot_8_lanes(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t1, %tasks = transform.include @row_tile_dot_tasks failures(propagate) (%m, %columns_per_task)
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, 0, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%lanes) : (!transform.any_op) -> ()
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @row_tile_dot_16_lanes(
      %products: !transform.any_op {transform.consumed},
      %columns_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "columns_per_task"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t1, %tasks = transform.include @row_tile_dot_tasks failures(propagate) (%m, %columns_per_task)
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%lanes) : (!transform.any_op) -> ()
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}
