// The row-kernel schedules (apply-row-schedules): each result of a kernel with rows (softmax, layer norm, a large
// elementwise kernel) is tiled into rows with its producers fused, so that a row is read from memory once,
// then the rows are vectorized.  The rows of a rank >= 2 result are tiled by one `transform.structured.fuse`
// that the pass builds from the schedule's `rows` sizes: a serial fuse has a loop result per non-zero size, so
// its sizes must be known when the script is written, not passed as parameters.  The steps around it are here.
module attributes {transform.with_named_sequence} {
  // After the rows of %kernel are tiled: the slices of a tensor.empty that the row loops write into become
  // row-sized tensor.empty ops.
  transform.named_sequence @fold_row_destinations(%kernel: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %kernel {
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
    transform.yield
  }

  // Each 1-D result of %roots as rows of `row` elements: split after its first `main` elements (the last
  // multiple of `row`), the first part tiled into a loop over the rows with its producers fused, the `rest`
  // (0 when the rows divide the result) one shorter row of its own.  The parts' destinations stay slices of the
  // result's (no fold_row_destinations): bufferization then writes both in place.
  transform.named_sequence @flat_rows(%roots: !transform.any_op {transform.consumed},
                                      %row: !transform.param<i64> {graph.parameter = "row"},
                                      %main: !transform.param<i64> {graph.parameter = "main"},
                                      %rest: !transform.param<i64> {graph.parameter = "rest"}) {
    transform.foreach %roots : !transform.any_op {
    ^bb0(%root: !transform.any_op):
      %parts = transform.structured.split %root after %main {dimension = 0} : !transform.any_op, !transform.param<i64>
      %rows, %tail = transform.split_handle %parts {fail_on_payload_too_small = false}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %tiled, %loop = transform.structured.fuse %rows tile_sizes [%row]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @fuse_rest failures(propagate) (%tail, %rest)
        : (!transform.any_op, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // @flat_rows with the rows as parallel tasks (an scf.forall).
  transform.named_sequence @flat_row_tasks(%roots: !transform.any_op {transform.consumed},
                                           %row: !transform.param<i64> {graph.parameter = "row"},
                                           %main: !transform.param<i64> {graph.parameter = "main"},
                                           %rest: !transform.param<i64> {graph.parameter = "rest"}) {
    transform.foreach %roots : !transform.any_op {
    ^bb0(%root: !transform.any_op):
      %parts = transform.structured.split %root after %main {dimension = 0} : !transform.any_op, !transform.param<i64>
      %rows, %tail = transform.split_handle %parts {fail_on_payload_too_small = false}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %tiled, %loop = transform.structured.fuse %rows tile_sizes [%row] {use_forall}
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.include @fuse_rest failures(propagate) (%tail, %rest)
        : (!transform.any_op, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // The shorter last row of a 1-D result, when there is one (%tail empty otherwise), as one row of `rest`
  // elements with its producers fused.
  transform.named_sequence @fuse_rest(%tail: !transform.any_op {transform.consumed},
                                      %rest: !transform.param<i64> {transform.readonly}) {
    transform.foreach %tail : !transform.any_op {
    ^bb0(%part: !transform.any_op):
      %tiled, %loop = transform.structured.fuse %part tile_sizes [%rest]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }

  // After the rows of every kernel of %kernel (the module) are vectorized and cut into chunks: their vectors
  // are 1 x N (a row of a tile of one row), which LLVM gets as arrays of one vector, with an extract and an
  // insert around every op (three times the LLVM IR of a 5,000-op elementwise chain).  The leading unit dims
  // are cast away, so the ops are on N-vectors; after the chunks, whose analysis reads the 1 x N forms.
  transform.named_sequence @drop_leading_unit_dims(%kernel: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
    } : !transform.any_op
    transform.apply_patterns to %kernel {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  // Vectorize the ops of every row loop of %kernel and lower what the chunks and LLVM do not take.  No
  // lower_broadcast: it unrolls a broadcast along the row element by element before canonicalization folds it
  // back (a 12000-float row: 15 s in the interpreter), and every broadcast it met folded away anyway.
  transform.named_sequence @vectorize_rows(%kernel: !transform.any_op {transform.readonly}) {
    %loops = transform.structured.match ops{["scf.for", "scf.forall"]} in %kernel
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {
    ^bb0(%loop: !transform.any_op):
      %inner = transform.structured.match ops{["linalg.generic", "linalg.fill"]} in %loop
        : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %inner : !transform.any_op
    }
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.apply_patterns to %kernel {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    transform.yield
  }
}
