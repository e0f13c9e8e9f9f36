// Steps the contraction schedules share.  Each schedule of this folder is a named sequence of the transform
// dialect; its parameters are `!transform.param<i64>` arguments whose `graph.parameter` names the entry of the
// op's schedule attribute that sets them (graphfuse.lowering.schedules.library).
module attributes {transform.with_named_sequence} {
  // Peel the last, partial iteration off %loop (an scf.for), so that every tile has a size known when
  // compiling.  A loop whose step divides its trip count has nothing to peel: that failure is silenceable,
  // and callers include this sequence with failures(suppress).
  transform.named_sequence @peel_last_iteration(%loop: !transform.any_op {transform.readonly}) {
    %for = transform.cast %loop : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  // Keep each register tile's accumulator in registers across the loops of %scope: the tile is read before
  // the loops and written after them, carried through as a loop value.
  transform.named_sequence @hoist_accumulators(%scope: !transform.any_op {transform.readonly}) {
    %loops = transform.structured.match ops{["scf.for"]} in %scope : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op
    transform.yield
  }

  // The transposed reads vectorized in %scope as reads of rows and a vector.transpose, lowered as
  // whole-register shuffles where it is a 16x16 block of 32-bit values; other transposes keep the default
  // lowering.
  transform.named_sequence @shuffle_transposes(%scope: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %scope {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %scope {
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
    } : !transform.any_op
    transform.yield
  }
}
