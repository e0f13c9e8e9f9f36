// Packed matmuls whose elementwise epilogue (a bias, an activation, a residual add) alone reads them: the
// epilogue is applied to each block of C while the block is in cache, instead of a pass over all of C after
// the product.  The epilogue (a generic over (i, j0, j1) reading C viewed as panels, writing its own result)
// is tiled as the product is and the product fused into each of its loops: outer blocks of B where B is
// larger than a share of the last-level cache, tasks across the cores (`task_rows` rows or `task_panels`
// panels, the other 0), blocks of `block_panels` panels.  In a block come the product's register tiles
// (`tile_rows` rows of one panel, one step of K, blocks of `block_depth` steps), then the epilogue in vectors
// of one panel row, reading the block from L2 and writing it once.  The block of C is a scratch buffer.
// Each schedule takes the products (the ops carrying its schedule attribute); a product's epilogue is the
// sole reader of its result.  The `_filled` forms fuse C's fill into each loop in turn.
module attributes {transform.with_named_sequence} {
  // from common.mlir
  transform.named_sequence private @peel_last_iteration(%loop: !transform.any_op {transform.readonly})

  // The register tiles of a task's product %m1 and the vectors of its epilogue %e1, in blocks of panels.
  transform.named_sequence @epilogue_blocks(
      %e1: !transform.any_op {transform.consumed},
      %m1: !transform.any_op {transform.consumed},
      %rows: !transform.any_op {transform.readonly},
      %block_panels: !transform.param<i64> {transform.readonly},
      %block_depth: !transform.param<i64> {transform.readonly},
      %tile_rows: !transform.param<i64> {transform.readonly}) {
    %e2, %block = transform.structured.tile_using_for %e1 tile_sizes [0, %block_panels, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %m2, %block2 = transform.structured.fuse_into_containing_op %m1 into %block
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @epilogue_register_tiles failures(propagate) (%e2, %m2, %rows, %block_depth, %tile_rows)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // @epilogue_blocks with C's fill %fill1 fused into each block.
  transform.named_sequence @epilogue_blocks_filled(
      %e1: !transform.any_op {transform.consumed},
      %m1: !transform.any_op {transform.consumed},
      %fill1: !transform.any_op {transform.consumed},
      %rows: !transform.any_op {transform.readonly},
      %block_panels: !transform.param<i64> {transform.readonly},
      %block_depth: !transform.param<i64> {transform.readonly},
      %tile_rows: !transform.param<i64> {transform.readonly}) {
    %e2, %block = transform.structured.tile_using_for %e1 tile_sizes [0, %block_panels, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %m2, %block2 = transform.structured.fuse_into_containing_op %m1 into %block
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %filled, %block3 = transform.structured.fuse_into_containing_op %fill1 into %block2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @epilogue_register_tiles failures(propagate) (%e2, %m2, %rows, %block_depth, %tile_rows)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // In a block: the product %m2 in register tiles, its epilogue %e2 in vectors of one panel row.
  transform.named_sequence @epilogue_register_tiles(
      %e2: !transform.any_op {transform.consumed},
      %m2: !transform.any_op {transform.consumed},
      %rows: !transform.any_op {transform.readonly},
      %block_depth: !transform.param<i64> {transform.readonly},
      %tile_rows: !transform.param<i64> {transform.readonly}) {
    %m3, %depth = transform.structured.tile_using_for %m2 tile_sizes [0, 0, 0, %block_depth]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %m4, %reg:3 = transform.structured.tile_using_for %m3 tile_sizes [1, %tile_rows, 0, 1]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @peel_last_iteration failures(suppress) (%reg#1) : (!transform.any_op) -> ()
    %e3, %vec:2 = transform.structured.tile_using_for %e2 tile_sizes [1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // C's block: a slice of an empty tensor becomes an empty tensor of the block's size, a scratch buffer
    transform.apply_patterns to %rows {
      transform.apply_patterns.tensor.fold_tensor_empty
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %rows : !transform.any_op
    transform.yield
  }

  transform.named_sequence @packed_tiles_with_epilogue(
      %products: !transform.any_op {transform.consumed},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %task_panels: !transform.param<i64> {transform.readonly, graph.parameter = "task_panels"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %e = transform.get_consumers_of_result %m[0] : (!transform.any_op) -> !transform.any_op
      %e1, %tasks = transform.structured.tile_using_forall %e tile_sizes [%task_rows, %task_panels, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %m1, %rows = transform.structured.fuse_into_containing_op %m into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      transform.include @epilogue_blocks failures(propagate) (%e1, %m1, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>) -> ()
    }
    transform.yield
  }

  transform.named_sequence @packed_tiles_with_epilogue_filled(
      %products: !transform.any_op {transform.consumed},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %task_panels: !transform.param<i64> {transform.readonly, graph.parameter = "task_panels"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %e = transform.get_consumers_of_result %m[0] : (!transform.any_op) -> !transform.any_op
      %fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op
      %e1, %tasks = transform.structured.tile_using_forall %e tile_sizes [%task_rows, %task_panels, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %m1, %rows = transform.structured.fuse_into_containing_op %m into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %fill1, %rows1 = transform.structured.fuse_into_containing_op %fill into %rows
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      transform.include @epilogue_blocks_filled failures(propagate)
        (%e1, %m1, %fill1, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
           !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // B larger than a share of the last-level cache: outer blocks of `outer_panels` panels one after the
  // other, the tasks inside each.
  transform.named_sequence @packed_tiles_with_epilogue_outer_blocks(
      %products: !transform.any_op {transform.consumed},
      %outer_panels: !transform.param<i64> {transform.readonly, graph.parameter = "outer_panels"},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %task_panels: !transform.param<i64> {transform.readonly, graph.parameter = "task_panels"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %e = transform.get_consumers_of_result %m[0] : (!transform.any_op) -> !transform.any_op
      %e0, %bblock = transform.structured.tile_using_for %e tile_sizes [0, %outer_panels, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %m0, %bblock2 = transform.structured.fuse_into_containing_op %m into %bblock
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.apply_patterns to %bblock {
        transform.apply_patterns.tensor.fold_tensor_empty
      } : !transform.any_op
      %e1, %tasks = transform.structured.tile_using_forall %e0 tile_sizes [%task_rows, %task_panels, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %m1, %rows = transform.structured.fuse_into_containing_op %m0 into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      transform.include @epilogue_blocks failures(propagate) (%e1, %m1, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>) -> ()
    }
    transform.yield
  }

  transform.named_sequence @packed_tiles_with_epilogue_outer_blocks_filled(
      %products: !transform.any_op {transform.consumed},
      %outer_panels: !transform.param<i64> {transform.readonly, graph.parameter = "outer_panels"},
      %task_rows: !transform.param<i64> {transform.readonly, graph.parameter = "task_rows"},
      %task_panels: !transform.param<i64> {transform.readonly, graph.parameter = "task_panels"},
      %block_panels: !transform.param<i64> {transform.readonly, graph.parameter = "block_panels"},
      %block_depth: !transform.param<i64> {transform.readonly, graph.parameter = "block_depth"},
      %tile_rows: !transform.param<i64> {transform.readonly, graph.parameter = "tile_rows"}) {
    transform.foreach %products : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %e = transform.get_consumers_of_result %m[0] : (!transform.any_op) -> !transform.any_op
      %fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op
      %e0, %bblock = transform.structured.tile_using_for %e tile_sizes [0, %outer_panels, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %m0, %bblock2 = transform.structured.fuse_into_containing_op %m into %bblock
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %fill0, %bblock3 = transform.structured.fuse_into_containing_op %fill into %bblock2
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.apply_patterns to %bblock {
        transform.apply_patterns.tensor.fold_tensor_empty
      } : !transform.any_op
      %e1, %tasks = transform.structured.tile_using_forall %e0 tile_sizes [%task_rows, %task_panels, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      %m1, %rows = transform.structured.fuse_into_containing_op %m0 into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %fill1, %rows1 = transform.structured.fuse_into_containing_op %fill0 into %rows
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      transform.include @epilogue_blocks_filled failures(propagate)
        (%e1, %m1, %fill1, %rows, %block_panels, %block_depth, %tile_rows)
        : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
           !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // Elementwise ops on a matmul's result left outside its schedule (a bias add after the product that the
  // graph pipeline's row tiling leaves in the matmul's kernel): tasks of `rows_per_task` rows across the
  // cores, each row in vectors of `vector_columns` columns (the last, narrower, peeled), vectorized with the
  // register tiles.
  transform.named_sequence @epilogue_rows(
      %epilogues: !transform.any_op {transform.consumed},
      %rows_per_task: !transform.param<i64> {transform.readonly, graph.parameter = "rows_per_task"},
      %vector_columns: !transform.param<i64> {transform.readonly, graph.parameter = "vector_columns"}) {
    transform.foreach %epilogues : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %t0, %rows = transform.structured.tile_using_forall %op tile_sizes [%rows_per_task, 0]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      %t1, %loops:2 = transform.structured.tile_using_for %t0 tile_sizes [1, %vector_columns]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_last_iteration failures(suppress) (%loops#1) : (!transform.any_op) -> ()
      transform.apply_patterns to %rows {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}
