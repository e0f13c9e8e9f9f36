// The schedules of batched matmuls (linalg.batch_matmul, loops (b, i, j, k)).
module attributes {transform.with_named_sequence} {
  // Blocks of `block` columns of C by `block` steps of the reduction, the block of B kept in L2, and the loops
  // in (b, i, k, j) order, C[i, j:j+block] += A[i, k] * B[k, j:j+block], which LLVM's loop vectorizer turns
  // into FMA vector code: batched products with too many batches to unroll.
  transform.named_sequence @batch_matmul_blocks(
      %products: !transform.any_op {transform.consumed},
      %block: !transform.param<i64> {transform.readonly, graph.parameter = "block"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t, %l:2 = transform.structured.tile_using_for %m tile_sizes [0, 0, %block, %block]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %g = transform.structured.generalize %t : (!transform.any_op) -> !transform.any_op
      %i = transform.structured.interchange %g iterator_interchange = [0, 1, 3, 2]
        : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }

  // Batches shared out as tasks, one scf.forall iteration per batch: its product, the unit batch dim folded
  // away, becomes a named linalg.matmul again, which the matmul schedules then tile serially inside the task
  // (one fork of the threads for all the batches).  The `_filled` forms compute C's fill in the tasks, the
  // `_transposed` forms B's transpose (q @ k^T), so that each task's copy of B into panels reads the source's
  // rows.
  transform.named_sequence @batch_tasks(%products: !transform.any_op {transform.consumed}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t, %tasks = transform.structured.tile_using_forall %m tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @batch_task_products failures(propagate) (%tasks) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  transform.named_sequence @batch_tasks_filled(%products: !transform.any_op {transform.consumed}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op
      %t, %tasks = transform.structured.tile_using_forall %m tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %filled, %loop = transform.structured.fuse_into_containing_op %fill into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @batch_task_products failures(propagate) (%loop) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  transform.named_sequence @batch_tasks_transposed(%products: !transform.any_op {transform.consumed}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %transpose = transform.get_producer_of_operand %m[1] : (!transform.any_op) -> !transform.any_op
      %t, %tasks = transform.structured.tile_using_forall %m tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %transposed, %loop = transform.structured.fuse_into_containing_op %transpose into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @batch_task_products failures(propagate) (%loop) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  transform.named_sequence @batch_tasks_filled_transposed(%products: !transform.any_op {transform.consumed}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op
      %transpose = transform.get_producer_of_operand %m[1] : (!transform.any_op) -> !transform.any_op
      %t, %tasks = transform.structured.tile_using_forall %m tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %filled, %filled_tasks = transform.structured.fuse_into_containing_op %fill into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %transposed, %loop = transform.structured.fuse_into_containing_op %transpose into %filled_tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.include @batch_task_products failures(propagate) (%loop) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  // In the loop of tasks %loop: each task's batched product (and transpose) with the unit batch dim folded
  // away, named again (linalg.matmul, linalg.transpose).
  transform.named_sequence @batch_task_products(%loop: !transform.any_op {transform.readonly}) {
    transform.annotate %loop "graph.batch_tasks" : !transform.any_op
    %batched = transform.structured.match ops{["linalg.batch_matmul", "linalg.transpose"]} in %loop
      : (!transform.any_op) -> !transform.any_op
    %g = transform.structured.generalize %batched : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %loop {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %generics = transform.structured.match ops{["linalg.generic"]} in %loop
      : (!transform.any_op) -> !transform.any_op
    %named = transform.structured.specialize %generics : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
