// The copies of B into panels [N / NR, K, NR] that the packed matmul schedules read (each a linalg.transpose).
// Shared out across the cores, `panels_per_task` panels per task; `_serial` forms are the copies of a product
// computed inside a task of its own, one panel after the other.
module attributes {transform.with_named_sequence} {
  // from common.mlir
  transform.named_sequence private @peel_last_iteration(%loop: !transform.any_op {transform.readonly})
  transform.named_sequence private @shuffle_transposes(%scope: !transform.any_op {transform.readonly})

  // The copy from B [K, N]: one row of a panel (a vector) at a time.
  transform.named_sequence @pack_panels(
      %copies: !transform.any_op {transform.consumed},
      %panels_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "panels_per_task"}) {
    transform.foreach %copies : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tp, %panels = transform.structured.tile_using_forall %transpose tile_sizes [%panels_per_task, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %tr, %rl:2 = transform.structured.tile_using_for %tp tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %tr : !transform.any_op
    }
    transform.yield
  }

  // The copy from a transposed B [N, K]: a tile of `steps` rows of a panel read as `lanes` rows of `steps`
  // contiguous floats of B, transposed in registers.
  transform.named_sequence @pack_transposed_panels(
      %copies: !transform.any_op {transform.consumed},
      %panels_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "panels_per_task"},
      %steps: !transform.param<i64> {transform.readonly, graph.parameter = "steps"},
      %lanes: !transform.param<i64> {transform.readonly, graph.parameter = "lanes"}) {
    transform.foreach %copies : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tp, %panels = transform.structured.tile_using_forall %transpose tile_sizes [%panels_per_task, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %tr, %rl:3 = transform.structured.tile_using_for %tp tile_sizes [1, %steps, %lanes]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%rl#1) : (!transform.any_op) -> ()
      transform.apply_patterns to %panels {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %tiles = transform.structured.match ops{["linalg.transpose"]} in %panels
        : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tiles : !transform.any_op
      transform.include @shuffle_transposes failures(propagate) (%panels) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  // The copy of bf16 B into panels of pairs [N / NR, K / 2, NR, 2] (graphfuse.lowering.contraction.pairs), from B
  // [K, N] or from a transposed Bt [N, K]: tasks of `panels_per_task` panels; tiles of `steps` pairs of K by
  // `lanes` columns of a panel, each a block of 32-bit pairs transposed in registers.  The tiles are marked
  // `graph.pair_copy` and so vectorized (graphfuse.lowering.contraction.pair_copies): upstream's vectorizer
  // would move the pairs' two halves one bf16 at a time.
  transform.named_sequence @pack_pair_panels(
      %copies: !transform.any_op {transform.consumed},
      %panels_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "panels_per_task"},
      %steps: !transform.param<i64> {transform.readonly, graph.parameter = "steps"},
      %lanes: !transform.param<i64> {transform.readonly, graph.parameter = "lanes"}) {
    transform.foreach %copies : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tp, %panels = transform.structured.tile_using_forall %transpose tile_sizes [%panels_per_task, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %tr, %rl:3 = transform.structured.tile_using_for %tp tile_sizes [1, %steps, %lanes, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%rl#1) : (!transform.any_op) -> ()
      transform.apply_patterns to %panels {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %tiles = transform.structured.match ops{["linalg.transpose"]} in %panels
        : (!transform.any_op) -> !transform.any_op
      transform.annotate %tiles "graph.pair_copy" : !transform.any_op
      transform.annotate %panels "graph.pair_copies" : !transform.any_op
    }
    transform.yield
  }

  // The sums of int8 B's columns an int8 product's C starts from (graphfuse.lowering.contraction.pairs), a
  // generic of loops (panel, column, k) from a transposed B or (k, panel, column) from B [K, N]: tasks of
  // `task_outer` or `task_inner` panels (the other 0) across the cores; LLVM vectorizes each task's loops.
  transform.named_sequence @column_sums(
      %sums: !transform.any_op {transform.consumed},
      %task_outer: !transform.param<i64> {transform.readonly, graph.parameter = "task_outer"},
      %task_inner: !transform.param<i64> {transform.readonly, graph.parameter = "task_inner"}) {
    transform.foreach %sums : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %t, %tasks = transform.structured.tile_using_forall %op tile_sizes [%task_outer, %task_inner, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }

  transform.named_sequence @pack_panels_serial(%copies: !transform.any_op {transform.consumed}) {
    transform.foreach %copies : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tr, %rl:2 = transform.structured.tile_using_for %transpose tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %tr : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @pack_transposed_panels_serial(
      %copies: !transform.any_op {transform.consumed},
      %steps: !transform.param<i64> {transform.readonly, graph.parameter = "steps"},
      %lanes: !transform.param<i64> {transform.readonly, graph.parameter = "lanes"}) {
    transform.foreach %copies : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tr, %rl:3 = transform.structured.tile_using_for %transpose tile_sizes [1, %steps, %lanes]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%rl#1) : (!transform.any_op) -> ()
      transform.apply_patterns to %rl#0 {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %tiles = transform.structured.match ops{["linalg.transpose"]} in %rl#0
        : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tiles : !transform.any_op
      transform.include @shuffle_transposes failures(propagate) (%rl#0) : (!transform.any_op) -> ()
    }
    transform.yield
  }
}
