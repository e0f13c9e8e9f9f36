// The last step of every contraction schedule: the static tiles marked `graph.vectorize` become vector code.
// A register tile of C is read once before the loop over K and kept in registers across it
// (hoist_loop_invariant_subsets); each step of K is `tile_rows` broadcasts of A times one row of B, as FMAs
// (lower_contraction to outer products).
module attributes {transform.with_named_sequence} {
  // from common.mlir
  transform.named_sequence private @hoist_accumulators(%scope: !transform.any_op {transform.readonly})

  transform.named_sequence @vectorize_register_tiles(%root: !transform.any_op {transform.readonly}) {
    %tiles = transform.structured.match ops{["linalg.matmul", "linalg.generic", "linalg.reduce", "linalg.fill"]}
      attributes{graph.vectorize} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles : !transform.any_op
    %blocks = transform.structured.match ops{["scf.forall", "scf.for"]} attributes{graph.matmul_tiles} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %blocks : !transform.any_op {
    ^bb0(%block: !transform.any_op):
      transform.apply_patterns to %block {
        transform.apply_patterns.vector.reduction_to_contract
        transform.apply_patterns.vector.transfer_permutation_patterns
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      transform.include @hoist_accumulators failures(propagate) (%block) : (!transform.any_op) -> ()
      transform.apply_patterns to %block {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
        transform.apply_patterns.vector.lower_outerproduct
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}
