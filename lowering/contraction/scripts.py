"""The transform-dialect scripts of the contraction schedules, and the helpers that expand and apply
them (``PEEL``/``HOIST`` macros, ``_sized`` parameters)."""


import re

from mlir import ir
from mlir.dialects.transform import interpreter

from graphfuse.dialect.diagnostics import GraphfuseError


def _peel(loop: str) -> str:
    """Transform IR peeling the last, partial iteration off ``loop`` (an ``scf.for`` handle).

    A loop whose step divides its trip count has nothing to peel: that failure is suppressed, not an error.
    """
    return (f"      transform.sequence {loop} : !transform.any_op failures(suppress) {{\n"
            "      ^bb1(%loop: !transform.any_op):\n"
            '        %for = transform.cast %loop : !transform.any_op to !transform.op<"scf.for">\n'
            '        %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">)\n'
            "          -> (!transform.any_op, !transform.any_op)\n"
            "      }")


def _hoist_accumulators(scope: str) -> str:
    """Transform IR keeping each register tile's accumulator in registers across the loops of ``scope``: the
    tile read before the loops and written after them, carried through as a loop value."""
    return (f"      %loops = transform.structured.match ops{{[\"scf.for\"]}} in {scope}"
            " : (!transform.any_op) -> !transform.any_op\n"
            "      transform.apply_licm to %loops : !transform.any_op\n"
            "      transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op")


def _with_peels(script: str) -> str:
    """``script`` with each line ``PEEL <handle>`` written out by :func:`_peel`, each line ``HOIST <handle>``
    by :func:`_hoist_accumulators` and each line ``SHUFFLE_TRANSPOSES <handle>`` by
    :func:`_shuffle_transposes`."""
    script = re.sub(r"^ *PEEL (\S+)$", lambda m: _peel(m.group(1)), script, flags=re.M)
    script = re.sub(r"^ *SHUFFLE_TRANSPOSES (\S+)$", lambda m: _shuffle_transposes(m.group(1)), script,
                    flags=re.M)
    return re.sub(r"^ *HOIST (\S+)$", lambda m: _hoist_accumulators(m.group(1)), script, flags=re.M)


def _shuffle_transposes(handle: str) -> str:
    """Transform IR turning the transposed reads vectorized in ``handle`` into reads of rows and a
    ``vector.transpose``, lowered as whole-register shuffles where it is a 16x16 block of 32-bit values
    (:data:`SHUFFLED_PACK_BLOCK`); other transposes are left to the default lowering."""
    return f"""      transform.apply_patterns to {handle} {{
        transform.apply_patterns.vector.transfer_permutation_patterns
        transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      transform.apply_patterns to {handle} {{
        transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
      }} : !transform.any_op"""


#: Register-tiled matmuls (see :func:`block_contractions`): each ``linalg.matmul`` is cut into row blocks
#: across the cores (``scf.forall``), cache blocks of C columns and of the reduction, and register tiles with
#: the reduction innermost, one step of K at a time; the tile loops and the loop of column blocks are peeled,
#: so that every tile has a size known when compiling.
_TILE_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} attributes{graph.block = GROUP : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0, %rows = transform.structured.tile_using_forall %m tile_sizes [MC, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      %t1, %cache:2 = transform.structured.tile_using_for %t0 tile_sizes [0, NC, KC]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %t2, %reg:3 = transform.structured.tile_using_for %t1 tile_sizes [MR, NR, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %reg#1
      PEEL %reg#0
      // the last block of columns, when narrower: a copy of the tile loops with static bounds
      PEEL %cache#0
      transform.apply_patterns to %rows {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}""")

#: Products of a few rows of A with a transposed B read at run time (a linear layer's weight passed as an
#: argument, one token decoded: x[1, K] @ W[N, K]^T): packing B into panels would copy all of it at every
#: call for products that use each element of it M times, so B is read as it is, one row of W per column of
#: C, K contiguous floats.  One task per tile of R columns (rows of W), shared out by the cores, its rows
#: of A MT at a time; the reduction split into V-lane partial sums (tile_reduction_using_for): a [MT, R, V]
#: accumulator, kept in registers across the loop over K (HOIST in the vectorize script), and one sum of
#: its lanes per tile at the end.  The loop over K is peeled, and the rows and columns short of a tile are
#: products of their own (:func:`_as_row_dot`), so that every tile has a size known when compiling.
_ROW_DOT_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.generic"]} attributes{graph.row_dot} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t0, %tasks = transform.structured.tile_using_forall %m tile_sizes [0, R, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %tasks "graph.matmul_tiles" : !transform.any_op
      transform.annotate %tasks "graph.row_dot_tiles" : !transform.any_op
      %t1, %rows = transform.structured.tile_using_for %t0 tile_sizes [MT, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %fill, %split, %combine, %lanes = transform.structured.tile_reduction_using_for %t1 by tile_sizes = [0, 0, V]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %lanes
      transform.apply_patterns to %tasks {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}""")


def _tasks(tile_sizes: str, filled: bool) -> str:
    """Transform IR sharing the product ``%m`` out as ``scf.forall`` tasks of ``tile_sizes``.

    It defines ``%rows`` (the loop) and ``%t0`` (a task's product).  ``filled``: the fill producing C
    (``%m``'s init) is fused into the loop, so that each task fills its block of C, in cache, just before
    computing it, instead of a pass over all of C before.
    """
    forall = (f"%t0, %tasks = transform.structured.tile_using_forall %m tile_sizes {tile_sizes}\n"
              "        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)")
    if not filled:
        return forall.replace("%tasks", "%rows")
    return ("%fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op\n"
            f"      {forall}\n"
            "      %filled, %rows = transform.structured.fuse_into_containing_op %fill into %tasks\n"
            "        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)")


def _serial_tasks(tile_sizes: str) -> str:
    """:func:`_tasks` for a product computed inside a task of its own (a batch): the same blocks, one after
    the other (``scf.for``)."""
    return (f"%t0, %rows = transform.structured.tile_using_for %m tile_sizes {tile_sizes}\n"
            "        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)")


#: Outer blocks of OP panels of packed B (:func:`outer_panels`) one after the other, the row blocks inside each.
_OUTER_BLOCKS = """%tb, %bblock = transform.structured.tile_using_for %m tile_sizes [OP, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %t0, %rows = transform.structured.tile_using_forall %tb tile_sizes [0, MC, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"""

#: The same schedule for a matmul whose B is packed (:func:`_register_tile_parts`): a generic over
#: (j0, i, j1, k) reading A[i, k] and Bp[j0, k, j1] into C viewed as [M, N / NR, NR]; a register tile is one
#: panel j0, MR rows, the panel's NR columns and one step of K.  TASKS is how the cores share the product
#: (:func:`block_contractions`): outer blocks of B with row blocks inside, row blocks (B in one outer
#: block), or tasks of panels (too few rows).  The copy of B into its panels, a transpose
#: (:func:`_packed_panels`), has a script of its own (:data:`_PACK_SCRIPT`).
_PACKED_TILE_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.generic"]} attributes{graph.block = GROUP : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      TASKS
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      %t1, %cache:2 = transform.structured.tile_using_for %t0 tile_sizes [PC, 0, 0, KC]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %t2, %reg:3 = transform.structured.tile_using_for %t1 tile_sizes [1, MR, 0, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %reg#1
      transform.apply_patterns to %rows {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      // one offset per task (the fused fill computes its own): bufferization then sees the task's block
      // written back onto itself, a copy that is erased
      transform.apply_cse to %rows : !transform.any_op
    }
    transform.yield
  }
}""")

#: The copies of B into panels (:func:`_packed_panels`), for every packed schedule.
_PACK_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %packs = transform.structured.match ops{["linalg.transpose"]} attributes{graph.block} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %packs : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      // the copy: panels shared out across the cores, one row of a panel (a vector) at a time
      %tp, %panels = transform.structured.tile_using_forall %transpose tile_sizes [PACK_PANELS, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %tr, %rl:2 = transform.structured.tile_using_for %tp tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %tr : !transform.any_op
    }
    %tpacks = transform.structured.match ops{["linalg.transpose"]} attributes{graph.pack_transposed} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %tpacks : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      // the copy from Bt [N, K]: a tile of TK rows of a panel read as NR rows of TK contiguous floats of
      // Bt, transposed in registers
      %tp, %panels = transform.structured.tile_using_forall %transpose tile_sizes [PACK_PANELS, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %tr, %rl:3 = transform.structured.tile_using_for %tp tile_sizes [1, TK, TL]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %rl#1
      transform.apply_patterns to %panels {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %tiles = transform.structured.match ops{["linalg.transpose"]} in %panels
        : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tiles : !transform.any_op
      SHUFFLE_TRANSPOSES %panels
    }
    transform.yield
  }
}""")

#: The copies of B into panels for a product inside a task of its own (SERIAL): one panel after the other.
_SERIAL_PACK_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %spacks = transform.structured.match ops{["linalg.transpose"]} attributes{graph.serial_pack} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %spacks : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tr, %rl:2 = transform.structured.tile_using_for %transpose tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %tr : !transform.any_op
    }
    %stpacks = transform.structured.match ops{["linalg.transpose"]} attributes{graph.serial_pack_transposed}
      in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %stpacks : !transform.any_op {
    ^bb0(%transpose: !transform.any_op):
      %tr, %rl:3 = transform.structured.tile_using_for %transpose tile_sizes [1, TK, TL]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %rl#1
      transform.apply_patterns to %rl#0 {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      %tiles = transform.structured.match ops{["linalg.transpose"]} in %rl#0
        : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tiles : !transform.any_op
      SHUFFLE_TRANSPOSES %rl#0
    }
    transform.yield
  }
}""")

#: Packed products whose elementwise epilogue (a bias, an activation, a residual add: :func:`_fusable_epilogue`)
#: is applied to each block of C while it is in cache, instead of a pass over all of C after the product.  The
#: epilogue (a generic over (i, j0, j1) reading C viewed as panels, writing its own result) is tiled as the
#: product is, and the product fused into each of its loops: outer blocks of B (OUTER), tasks across the
#: cores (TASK_TILES: rows or panels), blocks of PC panels; in a block the product's register tiles, then the
#: epilogue in vectors of one panel row, reading the block from L2 and writing it once.  FILL, TASK_FILL and
#: FUSE_FILL fuse C's fill into each loop in turn (:func:`_epilogue_tile_script`).
_EPILOGUE_TILE_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %eps = transform.structured.match ops{["linalg.generic"]} attributes{graph.epilogue_block = GROUP : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %eps : !transform.any_op {
    ^bb0(%e: !transform.any_op):
      %m = transform.get_producer_of_operand %e[C_OPERAND] : (!transform.any_op) -> !transform.any_op
      FILL
      OUTER
      %e1, %tasks = transform.structured.tile_using_forall %e0 tile_sizes TASK_TILES
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %m1, %rows = transform.structured.fuse_into_containing_op %m0 into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      TASK_FILL
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      %e2, %block = transform.structured.tile_using_for %e1 tile_sizes [0, PC, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %m2, %block2 = transform.structured.fuse_into_containing_op %m1 into %block
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      FUSE_FILL
      %m3, %depth = transform.structured.tile_using_for %m2 tile_sizes [0, 0, 0, KC]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %m4, %reg:3 = transform.structured.tile_using_for %m3 tile_sizes [1, MR, 0, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %reg#1
      %e3, %vec:2 = transform.structured.tile_using_for %e2 tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      // C's block: a slice of an empty tensor becomes an empty tensor of the block's size, a scratch buffer
      transform.apply_patterns to %rows {
        transform.apply_patterns.tensor.fold_tensor_empty
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      transform.apply_cse to %rows : !transform.any_op
    }
    transform.yield
  }
}""")

#: Elementwise ops on a matmul's result at the function's top level (a bias add after the product, which
#: the graph pipeline's row tiling leaves in the matmul's kernel): rows across the cores, each row in
#: vectors of NR columns (the last, narrower, peeled), vectorized with the register tiles.
_EPILOGUE_SCRIPT = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.generic"]} attributes{graph.epilogue} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %t0, %rows = transform.structured.tile_using_forall %op tile_sizes [ER, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %rows "graph.matmul_tiles" : !transform.any_op
      %t1, %loops:2 = transform.structured.tile_using_for %t0 tile_sizes [1, EC]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %loops#1
      transform.apply_patterns to %rows {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}"""

#: The static register tiles marked by :func:`_mark_static_tiles` become vector code: the C tile is read once
#: before the K loop and kept in registers across it (``hoist_loop_invariant_subsets``), each K step is MR
#: broadcasts of A times one row of B as FMAs (``lower_contraction`` to outer products).
_VECTORIZE_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
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
      HOIST %block
      transform.apply_patterns to %block {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
        transform.apply_patterns.vector.lower_outerproduct
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
        transform.apply_patterns.canonicalization
      } : !transform.any_op
    }
    transform.yield
  }
}""")

def _conv_tiles(tile: str, epilogue: str = "") -> str:
    """Transform IR computing a direct convolution's task ``%tile`` (in the loop ``%rows``) in register tiles:
    tiles of NR lanes (output columns, or filters: dimension 3 either way), their remainder in tiles of
    powers of two (COLUMN_LADDER, written out by :func:`_column_ladder`), then of MR rows (filters, or
    output columns: REG_TILES, the loop ROW_LOOP of them peeled), one output row and one (c, kh, kw) step;
    the unit loops folded away, each tile is MR broadcast floats times NR contiguous ones, into an MR x NR
    accumulator held in registers across the reduction loops.  ``epilogue``: transform IR tiling the task's
    epilogue, vectorized with the tiles."""
    return f"""      %tc, %columns = transform.structured.tile_using_for %{tile} tile_sizes [0, 0, 0, NR, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %tc "{_CONV_COLUMNS}" : !transform.any_op
      COLUMN_LADDER %columns
      %column_tiles = transform.structured.match ops{{["linalg.generic"]}} attributes{{{_CONV_COLUMNS}}} in %rows
        : (!transform.any_op) -> !transform.any_op
      transform.foreach %column_tiles : !transform.any_op {{
      ^bb1(%ct: !transform.any_op):
        %tr, %reg:5 = transform.structured.tile_using_for %ct tile_sizes REG_TILES
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
              !transform.any_op, !transform.any_op)
        PEEL %reg#ROW_LOOP
      }}
{epilogue}      transform.apply_patterns to %rows {{
        transform.apply_patterns.tensor.fold_tensor_empty
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      transform.apply_patterns to %rows {{
        transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      }} : !transform.any_op
      %tiles = transform.structured.match ops{{["linalg.generic"]}} in %rows : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tiles : !transform.any_op
      // hoisted before the permuted reads and writes of the accumulators (filters in the lanes, C [F, OW])
      // become transposes, which then run once per tile instead of twice per step
      HOIST %rows
      transform.apply_patterns to %rows {{
        transform.apply_patterns.vector.transfer_permutation_patterns
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
"""


#: Marks the column tiles of a direct convolution's task (:func:`_conv_tiles`) for their register tiling.
_CONV_COLUMNS = "graph.conv_columns"


def _column_ladder(loop: str, width: int, depth: int = 0) -> str:
    """Transform IR peeling the last, partial tile off the column loop ``loop`` (tiles of ``2 * width``
    columns) and computing that remainder in tiles of ``width``, ``width / 2``, ... 1 columns, each peeled in
    turn: 24 columns become 16 + 8.  A tile of a width that is not a power of two (vector<8x24xf32>
    accumulators carried through the reduction loops) is split by LLVM lane by lane through the stack:
    a 56-wide 3x3 convolution's 24-column tiles ran at a fifth of its 32-column ones.  A loop that its step
    divides has no remainder: that peel fails, suppressed, and ends the ladder."""
    pad = "      " + "    " * depth
    d = depth
    text = (f"{pad}transform.sequence {loop} : !transform.any_op failures(suppress) {{\n"
            f"{pad}^bb0(%columns{d}: !transform.any_op):\n"
            f'{pad}  %for{d} = transform.cast %columns{d} : !transform.any_op to !transform.op<"scf.for">\n'
            f'{pad}  %main{d}, %rest{d} = transform.loop.peel %for{d} : (!transform.op<"scf.for">)\n'
            f"{pad}    -> (!transform.any_op, !transform.any_op)\n"
            f"{pad}  transform.foreach %rest{d} : !transform.any_op {{\n"
            f"{pad}  ^bb1(%peeled{d}: !transform.any_op):\n"
            f'{pad}    %narrow{d} = transform.structured.match ops{{["linalg.generic"]}} attributes{{{_CONV_COLUMNS}}}'
            f" in %peeled{d}\n"
            f"{pad}      : (!transform.any_op) -> !transform.any_op\n"
            f"{pad}    %tiles{d}, %narrower{d} = transform.structured.tile_using_for %narrow{d}"
            f" tile_sizes [0, 0, 0, {width}, 0, 0, 0]\n"
            f"{pad}      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n")
    if width > 1:
        text += _column_ladder(f"%narrower{d}", width // 2, depth + 1)
    return text + f"{pad}  }}\n{pad}}}\n"


#: Direct convolutions (graphfuse.lowering.structured_ops._direct_conv) marked CONV_MARK: tasks of CR output
#: rows (and one image; TASK_TILES) across the cores, C's fill fused into them, each task in register tiles
#: (:func:`_conv_tiles`).
_DIRECT_CONV_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %convs = transform.structured.match ops{["linalg.generic"]} attributes{CONV_MARK} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %convs : !transform.any_op {
    ^bb0(%conv: !transform.any_op):
      %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
      %t0, %tasks = transform.structured.tile_using_forall %conv tile_sizes TASK_TILES
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %filled, %rows = transform.structured.fuse_into_containing_op %fill into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
""" + _conv_tiles("t0") + """    }
    transform.yield
  }
}""")

#: A direct convolution whose elementwise epilogue (a bias, an activation, a residual add) alone reads it: the
#: epilogue is tiled into tasks of CR output rows and the convolution (with its fill) fused into each, then
#: tiled as in :data:`_DIRECT_CONV_SCRIPT`; the epilogue follows in vectors of NR output columns.  The task's
#: block of the convolution's output is a scratch buffer on the stack, the epilogue's result written once.
_DIRECT_CONV_EPILOGUE_SCRIPT = _with_peels("""module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %eps = transform.structured.match ops{["linalg.generic"]} attributes{EPILOGUE_MARK = OPERAND : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %eps : !transform.any_op {
    ^bb0(%e: !transform.any_op):
      %conv = transform.get_producer_of_operand %e[OPERAND] : (!transform.any_op) -> !transform.any_op
      %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
      %e1, %tasks = transform.structured.tile_using_forall %e tile_sizes [1, 0, CR, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %c1, %rows0 = transform.structured.fuse_into_containing_op %conv into %tasks
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %f1, %rows = transform.structured.fuse_into_containing_op %fill into %rows0
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
""" + _conv_tiles("c1", """      %te, %vec:3 = transform.structured.tile_using_for %e1 tile_sizes [0, 1, 1, NR]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      PEEL %vec#2
""") + """    }
    transform.yield
  }
}""")

#: Batched matmuls: blocks of B (256 x 256) kept in L2, the loops in (i, k, j) order for LLVM's vectorizer.
_BATCH_SCRIPT = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %bmm = transform.structured.match ops{["linalg.batch_matmul"]} attributes{graph.block} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmm : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %t, %l:2 = transform.structured.tile_using_for %m tile_sizes [0, 0, B, B]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %g = transform.structured.generalize %t : (!transform.any_op) -> !transform.any_op
      %i = transform.structured.interchange %g iterator_interchange = [0, 1, 3, 2]
        : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
}"""


def _batch_tasks_script(kind: int) -> str:
    """Transform IR sharing the batched matmuls marked ``graph.batch_tasks = kind`` out by batches.

    One ``scf.forall`` iteration per batch, whose product (its unit batch dim folded away, made a named
    ``linalg.matmul`` again) then gets a matmul's register tiles in a serial schedule: one fork of the threads
    per batched product instead of two per batch (p @ v of 8 heads of 256x256x64 on 2 cores: 0.73-0.79 ->
    0.55-0.60 ms).  ``kind`` bit 0: C's init is a fill, computed in the tasks; bit 1: B is a transpose of its
    source (``q @ k^T``), computed in the tasks too, where the copy into panels then reads the source's rows
    (:func:`_transposed_source`) instead of a transposed copy made by one thread before (12x384x64 attention:
    a serial loop of scalar copies while the other core waited).
    """
    producers, fusions, loop = [], [], "%tasks"
    for bit, operand in ((1, 2), (2, 1)):
        if kind & bit:
            producers.append(f"%p{operand} = transform.get_producer_of_operand %m[{operand}]"
                             " : (!transform.any_op) -> !transform.any_op")
            fusions.append(f"%f{operand}, %l{operand} = transform.structured.fuse_into_containing_op %p{operand}"
                           f" into {loop}\n"
                           "        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)")
            loop = f"%l{operand}"
    indent = "\n      "
    return f"""module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %bmm = transform.structured.match ops{{["linalg.batch_matmul"]}} attributes{{graph.batch_tasks = {kind} : i64}}
      in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmm : !transform.any_op {{
    ^bb0(%m: !transform.any_op):
      {indent.join(producers)}
      %t, %tasks = transform.structured.tile_using_forall %m tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      {indent.join(fusions)}
      transform.annotate {loop} "graph.batch_tasks" : !transform.any_op
      %batched = transform.structured.match ops{{["linalg.batch_matmul", "linalg.transpose"]}} in {loop}
        : (!transform.any_op) -> !transform.any_op
      %g = transform.structured.generalize %batched : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to {loop} {{
        transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      %generics = transform.structured.match ops{{["linalg.generic"]}} in {loop}
        : (!transform.any_op) -> !transform.any_op
      %named = transform.structured.specialize %generics : (!transform.any_op) -> !transform.any_op
    }}
    transform.yield
  }}
}}"""


def _epilogue_tile_script(by_panels: bool, outer: bool, filled: bool) -> str:
    """:data:`_EPILOGUE_TILE_SCRIPT` for one group: tasks of panels or of rows, outer blocks of B or not, C's
    fill fused into each block of PC panels or not (through each loop around it, outermost first)."""
    def fuse(producer: str, into: str, fused: str, loop: str) -> str:
        return (f"%{fused}, %{loop} = transform.structured.fuse_into_containing_op %{producer} into %{into}\n"
                "        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)")

    fill = "%fill = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op"
    outer_blocks = ("%e0, %bblock = transform.structured.tile_using_for %e tile_sizes [0, OP, 0]\n"
                    "        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n      "
                    + fuse("m", "bblock", "m0", "bblock2"))
    outer_fold = ("transform.apply_patterns to %bblock {\n"
                  "        transform.apply_patterns.tensor.fold_tensor_empty\n"
                  "      } : !transform.any_op")
    fills = ["fill", "fill0", "fill1"] if outer else ["fill", "fill1"]
    pieces = {
        "FILL": fill if filled else "",
        "OUTER": outer_blocks + ("\n      " + fuse("fill", "bblock2", "fill0", "bblock3") if filled else "")
        + "\n      " + outer_fold if outer else "",
        "TASK_FILL": fuse(fills[-2], "rows", "fill1", "rows1") if filled else "",
        "FUSE_FILL": fuse("fill1", "block2", "filled", "block3") if filled else "",
        "TASK_TILES": "[0, PT, 0]" if by_panels else "[MC, 0, 0]",
    }
    script = _EPILOGUE_TILE_SCRIPT
    if not outer:
        script = script.replace("%e0", "%e").replace("%m0", "%m")
    for name, text in pieces.items():
        script = script.replace(f"      {name}\n", f"      {text}\n" if text else "")
    return script.replace("TASK_TILES", pieces["TASK_TILES"])


def _sized(script: str, sizes: dict[str, object]) -> str:
    """``script`` with each placeholder word of ``sizes`` replaced by its value."""
    for name, size in sizes.items():
        script = re.sub(rf"\b{name}\b", str(size), script)
    return script


def _apply(module: ir.Module, text: str, what: str) -> None:
    script = ir.Module.parse(text, module.context)
    try:
        interpreter.apply_named_sequence(module, script.body.operations[0], script)
    except (ir.MLIRError, ValueError) as error:
        raise GraphfuseError(f"{what} failed: {error}") from None
