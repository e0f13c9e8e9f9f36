"""Matmuls for the CPU, scheduled with the transform dialect before bufferization.

``linalg.matmul`` lowered as it is loops over (i, j, k): the innermost loop
walks a column of B (stride N) into one accumulator, which neither
vectorizes nor reuses cache lines (0.25 GFLOP/s on 1024x1024x4096).  Each
statically shaped ``linalg.matmul`` here becomes register tiles:

- f32 B copied into panels of one register tile's columns, ``[N / NR, K, NR]``
  (:func:`_register_tile_parts`): each K step of a tile reads the next row of
  its panel instead of a row N floats further on.  The copy is one pass over
  B, in vector rows, across the cores;
- outer blocks of panels sized to stay in the last-level cache
  (:func:`outer_panels`), one after the other;
- in each, blocks of ``ROW_BLOCK_TILES`` register tiles of rows, one per
  ``scf.forall`` iteration (the cores share them out);
- in each, blocks of 256 columns of C and 256 steps of the reduction, so that
  the block of B stays in L2;
- in each, register tiles of C (:func:`register_tile`: 6 rows of two
  registers at 256 bits) computed one step of K at a time: the tile is read
  once before the K loop and carried through it in vector registers
  (``hoist_loop_invariant_subsets``), and each step is 6 broadcasts of A times
  one row of the panel as FMAs (``lower_contraction`` to outer products).
  Rows that the row blocks do not divide are a product of their own, and so
  are columns short of a last panel (one narrower panel): every tile has a
  size known when compiling, and becomes vector code.

An elementwise epilogue that alone reads the product (a bias, an activation,
a residual add: :func:`_fusable_epilogue`) is applied to each block of 256
columns of a task's rows right after the block is computed, while it is in
L2 (:data:`_EPILOGUE_TILE_SCRIPT`): the block of C is a scratch buffer on the
stack, and the epilogue's result is written once, instead of C written
whole and read back by a pass of its own.  Shapes whose blocks would have no
size known when compiling keep that pass (:func:`_static_blocks_of_c`).

An f32 batched matmul of at least ``BATCH_TASKS_PER_THREAD`` batches per
thread (attention's heads) is shared out by batches: one task per batch,
whose product gets the same register tiles and packed B in a serial
schedule (:func:`_share_out_batches`): one fork of the threads for all the
batches, where a product per batch forks twice (its copy of B and its
tiles) and leaves a core idle at the end of each.  Other batched matmuls
of at most ``MAX_UNROLLED_BATCHES`` batches are one such matmul per batch
(:func:`_unroll_batches`).  More batches keep the earlier form: blocks of
256 x 256 of (j, k) and the loops in (i, k, j) order,
C[i, j:j+256] += A[i, k] * B[k, j:j+256], which LLVM's loop vectorizer
turns into FMA vector code.

Other statically shaped contractions (``linalg.contract``, generic
multiply-accumulate loops) are first rewritten as one of those two named ops
on collapsed, transposed where needed, operands (``_as_named_matmul``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, tensor
from mlir.dialects.transform import interpreter

from graphfuse.dialect.constants import array_to_attr, attr_to_array
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.matching import producer
from graphfuse.lowering.fast_math import fadd, fmul
from graphfuse.lowering.host import last_level_cache_bytes, vector_bits
from graphfuse.lowering.isolation import isolated

__all__ = ["BLOCK", "block_contractions"]

BLOCK = 256
#: Register tiles of rows per block of C rows that one task (an ``scf.forall`` iteration) computes.
ROW_BLOCK_TILES = 8
#: Panels of B one task of the packing copy writes at most (fewer where that evens out the threads: 8 panels
#: are 2 tasks of 4 on two threads, not one task that leaves a core idle).
PACK_PANELS = 8
#: Marks a copy into panels with the panels each of its tasks writes (_mark_pack_tasks).
PACK_TASKS = "graph.pack_tasks"
#: Steps of K per tile of the copy into panels from a transposed B: NR rows of as many contiguous floats read,
#: transposed in registers (256x512x1360 with B transposed, both cores: 1 step 4.2 ms, 4 steps 4.7, 8 steps 3.9,
#: 16 steps 5.4; B as it is 3.6).
PACK_DEPTH = 8
#: With 16 lanes (AVX-512) the tiles of that copy are 16x16 blocks transposed by shuffles of whole registers
#: (upstream's ``shuffle_16x16``): 16 loads, 64 shuffles and 16 stores per block.  256x256x2048 with B
#: transposed, one thread: the copy took 13% of the product's 3.03 ms as 8-step tiles, 5% of 2.84 ms so.
SHUFFLED_PACK_BLOCK = 16

#: A packed product with fewer row blocks than this is shared out by tasks of ``PANEL_TASK`` panels of B: a
#: few row blocks leave cores idle in their last round (256 rows are five blocks of 48 and 16 rows; by
#: panels 256x512x512, 256x512x1360 and 256x1360x512 ran 8-14% faster on both cores than by row blocks).
MIN_ROW_TASKS = 6
PANEL_TASK = 8
#: Marks a convolution computed directly from its input (graphfuse.lowering.structured_ops._direct_conv) for
#: :func:`schedule_direct_convs`.
DIRECT_CONV = "graph.direct_conv"
#: Marks a direct convolution whose vector lanes are its filters (graphfuse.lowering.structured_ops._direct_conv:
#: loops n, oh, ow, f, c, kh, kw, the weights read as [C, KH, KW, F]); without it, the lanes are output columns.
FILTER_LANES = "graph.filter_lanes"
#: Output rows of a direct convolution one task computes (:data:`_DIRECT_CONV_SCRIPT`; 56x56, 64 channels: 1, 2
#: and 4 within the noise of each other).
CONV_TASK_ROWS = 2
#: Rows of a matmul's elementwise epilogue one task computes (:data:`_EPILOGUE_SCRIPT`).
EPILOGUE_ROWS = 16
#: Batched matmuls of at most this many batches become one matmul per batch (:func:`_unroll_batches`).
MAX_UNROLLED_BATCHES = 16
#: f32 batched matmuls of at least this many batches per thread are shared out by batches, each batch a task
#: computing its product alone (:func:`_batch_tasks_script`): attention's heads.  Fewer batches are one product
#: after the other, each across the cores (a task per batch would leave cores idle).
BATCH_TASKS_PER_THREAD = 2
#: Marks a matmul computed inside a task of batches: its schedule is serial (``scf.for``, no nested tasks).
SERIAL = "graph.serial"
#: Share of the last-level cache one block of packed B takes (:func:`outer_panels`).
OUTER_BLOCK_SHARE = 8
#: The last-level cache assumed when the OS lists none.
_UNKNOWN_CACHE_BYTES = 32 << 20

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


def _pack_sizes(lanes: int, panel: int) -> dict[str, int]:
    """The tile sizes of the copies from a transposed B into panels of ``panel`` columns for vectors of ``lanes``
    floats: TK steps of K by TL columns of a panel."""
    if lanes == SHUFFLED_PACK_BLOCK:
        return {"TK": SHUFFLED_PACK_BLOCK, "TL": SHUFFLED_PACK_BLOCK}
    return {"TK": PACK_DEPTH, "TL": panel}


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

#: Rows of A up to which a product with a transposed B read at run time gets the row-dot schedule.  With W
#: an argument, on 2 cores (interleaved, W of 1-16 MB): 8x512x512 0.024 ms against 0.052 packed,
#: 32x512x1408 0.162 against 0.211, 16x1024x4096 0.49 against 1.12; even at 64 rows (0.29), packed ahead
#: from 128 (0.49 against 0.57).
ROW_DOT_ROWS = 32
#: The most rows of A in a row-dot tile: more are tiles of their own, each reading the tile's rows of W
#: again (from the L1 cache: 8 rows of 1024 floats are 32 KB).
ROW_DOT_TILE_ROWS = 4
#: The most rows of W (columns of C) in a row-dot tile.
ROW_DOT_TILE = 8


def row_dot_tile(rows: int, bits: int) -> int:
    """Rows of W per row-dot tile for ``rows`` rows of A: ``rows * tile`` vector accumulators, at most half the
    register file (16 of 32 with 512-bit vectors, 8 of 16 below), so that the rows of W and A loaded at each
    step stay in registers too.  A 1x1024 by 4096x1024 product on 2 cores (W in cache, interleaved runs):
    tiles of 8 at 0.109 ms against 0.118 for 4; 4 rows of A with tiles of 8 (32 accumulators) at 0.153
    against 0.140 for 4."""
    registers = 32 if bits >= 512 else 16
    return max(1, min(ROW_DOT_TILE, registers // 2 // rows))


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


#: The operand maps of the plain named ops, as result dim positions: A, B, C.
_DEFAULT_MAPS = {
    "linalg.matmul": ((0, 2), (2, 1), (0, 1)),
    "linalg.batch_matmul": ((0, 1, 3), (0, 3, 2), (0, 1, 2)),
}


def _map_dims(attr: ir.Attribute) -> tuple[int, ...] | None:
    result = []
    for expr in ir.AffineMapAttr(attr).value.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        result.append(expr.position)
    return tuple(result)


def _materialize_transposes(op: ir.Operation) -> bool:
    """Rewrite a matmul reading a transposed operand (through its indexing maps) as transpose + plain matmul.

    With B transposed, the blocked (i, k, j) loop would read B with stride K
    in its innermost loop; one explicit ``linalg.transpose`` (K x N copies,
    nothing next to the M x N x K products) gives the contiguous form.
    """
    if "indexing_maps" not in op.attributes:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    defaults = _DEFAULT_MAPS[op.name]
    if None in maps or maps[2] != defaults[2]:
        return False
    operands = list(op.operands)
    with op.location, ir.InsertionPoint(op):
        for k in (0, 1):
            if maps[k] == defaults[k]:
                continue
            if sorted(maps[k]) != sorted(defaults[k]):
                return False
            permutation = [maps[k].index(d) for d in defaults[k]]
            source = ir.RankedTensorType(operands[k].type)
            shape = [source.shape[p] for p in permutation]
            init = tensor.empty(shape, source.element_type)
            operands[k] = linalg.transpose(operands[k], outs=[init], permutation=permutation)
        build = linalg.matmul if op.name == "linalg.matmul" else linalg.batch_matmul
        result = build(operands[0], operands[1], outs=[operands[2]])
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


# --------------------------------------------------------------------------- contractions as 2-D / 3-D matmuls


#: Casts a contraction body may hold that the named ops' (signed) operand extension would get wrong.
_UNSIGNED_CASTS = frozenset({"arith.extui", "arith.uitofp"})


def _static_tensor(value: ir.Value) -> ir.RankedTensorType | None:
    t = value.type
    if isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape:
        return ir.RankedTensorType(t)
    return None


def _layout(
    axes_dims: tuple[int, ...], groups: list[list[int]], unit: set[int]
) -> tuple[list[int], list[list[int]]]:
    """The axis order putting a tensor's axes in group order, and the reassociation collapsing each group.

    Axis ``i`` of the tensor is indexed by loop dim ``axes_dims[i]``; the axes
    of size-1 loop dims (``unit``) go first and join the first group.
    """
    order = [axes_dims.index(d) for d in axes_dims if d in unit]
    for group in groups:
        order += [axes_dims.index(d) for d in group]
    lengths = [len(g) for g in groups]
    lengths[0] += len(axes_dims) - sum(lengths)
    reassociation, start = [], 0
    for length in lengths:
        reassociation.append(list(range(start, start + length)))
        start += length
    return order, reassociation


def _pack(value: ir.Value, axes_dims: tuple[int, ...], groups: list[list[int]], unit: set[int]) -> ir.Value:
    """``value`` transposed (an explicit copy, only when needed) and collapsed to one axis per group."""
    order, reassociation = _layout(axes_dims, groups, unit)
    t = ir.RankedTensorType(value.type)
    if order != list(range(t.rank)):
        init = tensor.empty([t.shape[p] for p in order], t.element_type)
        value = linalg.transpose(value, outs=[init], permutation=order).results[0]
    if len(reassociation) == t.rank:
        return value
    shape = ir.RankedTensorType(value.type).shape
    sizes = [math.prod(shape[a] for a in group) for group in reassociation]
    return tensor.collapse_shape(ir.RankedTensorType.get(sizes, t.element_type), value, reassociation)


def _unpack(
    value: ir.Value, like: ir.RankedTensorType, axes_dims: tuple[int, ...], groups: list[list[int]], unit: set[int]
) -> ir.Value:
    """The inverse of :func:`_pack` for the product: expanded to the ordered axes, transposed back to ``like``."""
    order, reassociation = _layout(axes_dims, groups, unit)
    ordered_shape = [like.shape[p] for p in order]
    if len(reassociation) != like.rank:
        value = tensor.expand_shape(
            ir.RankedTensorType.get(ordered_shape, like.element_type), value, reassociation, [], ordered_shape
        )
    if order != list(range(like.rank)):
        inverse = [order.index(a) for a in range(like.rank)]
        init = tensor.empty(list(like.shape), like.element_type)
        value = linalg.transpose(value, outs=[init], permutation=inverse).results[0]
    return value


def _as_named_matmul(op: ir.Operation) -> bool:
    """Rewrite a contraction that is not a plain named matmul as collapse/transpose + matmul or batch_matmul.

    ``linalg.contract`` (what graph-to-linalg emits for batched matmuls and
    convolutions) and generic contractions (what reshape propagation makes
    of a named matmul in a fused kernel: ``(d0, d1, d3) x (d3, d2) -> (d0, d1,
    d2)``) are not blocked; as loops their innermost loop is the reduction,
    which neither vectorizes nor reuses cache lines.  Grouping the loop dims
    into batch, rows (M), columns (N) and reduction (K), collapsing each group
    into one dim (size-1 dims dropped) and transposing an operand whose dims
    are out of that order gives a ``linalg.matmul`` ([M, K] x [K, N]) or
    ``linalg.batch_matmul`` that the blocking below makes fast.
    """
    if len(op.results) != 1 or len(op.operands) != 3 or not linalg.isa_contraction_op(op):
        return False
    if any(o.operation.name in _UNSIGNED_CASTS for o in op.regions[0].blocks[0].operations):
        return False  # the named ops extend their operands as signed
    types = [_static_tensor(v) for v in op.operands]
    if None in types:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if None in maps or any(len(set(m)) != len(m) for m in maps):
        return False  # a broadcast (constant index) or diagonal read
    sizes: dict[int, int] = {}
    for t, dims in zip(types, maps, strict=True):
        for axis, d in enumerate(dims):
            sizes[d] = t.shape[axis]
    a_dims, b_dims, c_dims = (set(m) for m in maps)
    unit = {d for d, size in sizes.items() if size == 1}
    batch = [d for d in maps[2] if d in a_dims and d in b_dims and d not in unit]
    rows = [d for d in maps[2] if d in a_dims and d not in b_dims and d not in unit]
    cols = [d for d in maps[2] if d in b_dims and d not in a_dims and d not in unit]
    reduced = [d for d in maps[0] if d in b_dims and d not in c_dims and d not in unit]
    classified = set(batch) | set(rows) | set(cols) | set(reduced) | unit
    if not rows or not cols or not reduced or classified != set(sizes):
        return False  # a dim of one operand only, a matvec, an outer product: left as it is
    lead = [batch] if batch else []
    with op.location, ir.InsertionPoint(op):
        a = _pack(op.operands[0], maps[0], [*lead, rows, reduced], unit)
        b = _pack(op.operands[1], maps[1], [*lead, reduced, cols], unit)
        c = _pack(op.operands[2], maps[2], [*lead, rows, cols], unit)
        build = linalg.batch_matmul if batch else linalg.matmul
        product = build(a, b, outs=[c])
        result = _unpack(product, types[2], maps[2], [*lead, rows, cols], unit)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


class _Schedule(NamedTuple):
    """What the schedule of a group of products depends on (:func:`block_contractions`)."""

    rows_per_block: int
    depth: int  # K
    packed: bool  # B packed into panels (the generic of _packed_product), else a plain linalg.matmul
    by_panels: bool  # the cores share panels of B (too few row blocks), else row blocks
    outer: bool  # B takes several outer blocks (outer_panels)
    filled: bool  # C's init is a fill, fused into the tasks
    #: when each block of C gets an elementwise epilogue (_EPILOGUE_TILE_SCRIPT): the epilogue's operand that is C
    epilogue_operand: int | None
    serial: bool  # the product is a task's own (a batch of a batched matmul): its blocks one after the other
    panel_task: int  # panels of B per task when the cores share panels (panel_task)


def block_contractions(module: ir.Module, threads: int = 1) -> None:
    """Tile and reorder every statically shaped matmul of ``module``, other contractions made matmuls first;
    the row blocks are sized for ``threads`` threads (:func:`row_block`)."""
    schedule_direct_convs(module)
    general: list[ir.Operation] = []

    def collect_general(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("linalg.contract", "linalg.generic"):
            general.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect_general)
    for op in general:
        _as_named_matmul(op)
    row_dots = [part for op in _static_ops(module, ("linalg.matmul",)) if _row_dot(op) for part in _as_row_dot(op)]
    for op in _static_ops(module, tuple(_DEFAULT_MAPS)):
        _materialize_transposes(op)
    mr, nr = register_tile(vector_bits())
    batched = _static_ops(module, ("linalg.batch_matmul",))  # again: the transposes replaced some
    tasks = [op for op in batched if _batch_tasks(op, threads, nr)]
    for op in batched:
        if op not in tasks:
            _unroll_batches(op)
    if tasks:
        _share_out_batches(module, tasks)
    named = [op for op in _static_ops(module, tuple(_DEFAULT_MAPS)) if "indexing_maps" not in op.attributes]
    if row_dots:
        _schedule_row_dots(module, row_dots, threads)
    if not named:  # dynamic shapes keep the plain loops: blocking would need dynamically sized buffers
        if row_dots:
            _vectorize_tiles(module)
        return
    for op in named:
        op.attributes["graph.block"] = ir.UnitAttr.get()
    matmuls = [op for op in named if op.name == "linalg.matmul"]
    parts = []
    for op in matmuls:
        serial = SERIAL in op.attributes  # a product inside a task of its own: no epilogue of its own
        epilogue = _fusable_epilogue(op) if not serial and _static_blocks_of_c(op, mr, nr, threads) else None
        if epilogue is None:
            for user in _elementwise_epilogues(op):
                user.attributes["graph.epilogue"] = ir.UnitAttr.get()
        parts += _register_tile_parts(op, mr, nr, threads, epilogue)
    groups: dict[_Schedule, list[tuple[ir.Operation, ir.Operation | None]]] = {}
    for op, packed, epilogue in parts:
        serial = SERIAL in op.attributes
        rows_per_block = _rows(op) if serial else row_block(_rows(op), mr, threads)
        by_panels = packed and not serial and _shared_by_panels(_rows(op), _panels(op), mr)
        outer = packed and not serial and not by_panels and _panels(op) > outer_panels(_depth(op), nr)
        filled = packed and not serial and _fill_of(op.operands[2]) is not None
        operand = None if epilogue is None else [v.owner for v in epilogue.operands].index(op)
        tasks_of = panel_task(_panels(op), threads) if by_panels else PANEL_TASK
        schedule = _Schedule(rows_per_block, _depth(op), packed, by_panels, outer, filled, operand, serial, tasks_of)
        groups.setdefault(schedule, []).append((op, epilogue))
    # Each product is marked with its group's number before any schedule runs: a schedule replaces the ops
    # it tiles, and the Python handles of those would then point at erased operations.
    i64 = ir.IntegerType.get_signless(64)
    for group, ops in enumerate(groups.values()):
        for op, epilogue in ops:
            op.attributes["graph.block"] = ir.IntegerAttr.get(i64, group)
            if epilogue is not None:
                epilogue.attributes["graph.epilogue_block"] = ir.IntegerAttr.get(i64, group)
    schedule_of_group = list(groups)
    for group, (rows_per_block, depth, packed, by_panels, outer, filled, operand, serial, tasks_of) in \
            enumerate(groups):
        if operand is not None:
            script = _epilogue_tile_script(by_panels, outer, filled)
        else:
            script = _PACKED_TILE_SCRIPT if packed else _TILE_SCRIPT  # one schedule per group
            if serial:
                tasks = _serial_tasks("[0, MC, 0, 0]")
            elif by_panels:
                tasks = _tasks("[PT, 0, 0, 0]", filled)
            else:
                tasks = _OUTER_BLOCKS if outer else _tasks("[0, MC, 0, 0]", filled)
            script = script.replace("TASKS", tasks)
        sizes = {"GROUP": group, "MC": rows_per_block, "OP": outer_panels(depth, nr), "PT": tasks_of,
                 "NC": BLOCK, "PC": BLOCK // nr, "KC": BLOCK, "MR": mr, "NR": nr, "PACK_PANELS": PACK_PANELS,
                 "C_OPERAND": operand}
        # each product with its fill and epilogue in a function of its own while its fusions run (isolation.py)
        clusters = [[op for op in (_fill_of(product.operands[2]), product, epilogue) if op is not None]
                    for product, epilogue in groups[schedule_of_group[group]]]
        with isolated(module, clusters):
            _apply(module, _sized(script, sizes), "tiling matmuls")
    if any(schedule.packed for schedule in groups):
        pack_sizes = _pack_sizes(vector_bits() // 32, nr)
        for panels in _mark_pack_tasks(module, threads):
            marked = _PACK_SCRIPT
            for mark in ("graph.block", "graph.pack_transposed"):
                marked = marked.replace(f"attributes{{{mark}}}", f"attributes{{{mark}, {PACK_TASKS} = {panels} : i64}}")
            _apply(module, _sized(marked, {"PACK_PANELS": panels, **pack_sizes}),
                   "tiling the copies of B into panels")
        _apply(module, _sized(_SERIAL_PACK_SCRIPT, pack_sizes), "tiling the copies of B into panels")
    _erase_fused_products(module)
    _erase_unused_fills(module)
    epilogues = re.sub(r"\bEC\b", str(nr), re.sub(r"\bER\b", str(EPILOGUE_ROWS), _EPILOGUE_SCRIPT))
    _apply(module, _with_peels(epilogues), "tiling matmul epilogues")
    _vectorize_tiles(module)
    _apply(module, _BATCH_SCRIPT.replace(" B, B]", f" {BLOCK}, {BLOCK}]"), "blocking batched matmuls")
    _clear_marks(module)


def _vectorize_tiles(module: ir.Module) -> None:
    if _mark_static_tiles(module):
        _apply(module, _VECTORIZE_SCRIPT, "vectorizing matmul tiles")


def _row_dot(op: ir.Operation) -> bool:
    """Whether ``op`` (a static f32 ``linalg.matmul``) is A[M, K] @ Bt[N, K]^T with few rows and Bt read at run
    time: the row-dot schedule's case (:data:`_ROW_DOT_SCRIPT`).  A constant Bt is packed once when compiling
    instead, which the register-tiled schedule then reads faster."""
    if "indexing_maps" not in op.attributes or producer(op.operands[1], "arith.constant") is not None:
        return False
    maps = [_map_dims(a) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != [(0, 2), (1, 2), (0, 1)]:
        return False
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if not all(isinstance(t.element_type, ir.F32Type) for t in types):
        return False
    (m, k), n = types[0].shape, types[1].shape[0]
    return m <= ROW_DOT_ROWS and n >= 2 and k >= 2


def _as_row_dot(op: ir.Operation) -> list[ir.Operation]:
    """``op`` as the generics the row-dot schedule tiles: C in whole tiles of ROW_DOT_TILE_ROWS rows and
    :func:`row_dot_tile` columns, the rows and the columns short of a tile as products of their own, so that
    every tile has a size known when compiling; the product and sum contractible into one FMA (a named
    matmul's body has no fast-math flags)."""
    a, bt, c = op.operands
    (m, k), n = ir.RankedTensorType(a.type).shape, ir.RankedTensorType(bt.type).shape[0]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    i64 = ir.IntegerType.get_signless(64)
    tile_rows = min(m, ROW_DOT_TILE_ROWS)
    tile = row_dot_tile(tile_rows, vector_bits())
    whole, whole_rows = n - n % tile, m - m % tile_rows
    parts, result = [], c
    with op.location, ir.InsertionPoint(op):
        for row, height in ((0, whole_rows), (whole_rows, m - whole_rows)):
            for column, width in ((0, whole), (whole, n - whole)):
                if not width or not height:
                    continue
                lhs = a if height == m else _slice(a, [row, 0], [height, k])
                rhs = bt if width == n else _slice(bt, [column, 0], [width, k])
                full = (height, width) == (m, n)
                dest = result if full else _slice(result, [row, column], [height, width])
                generic = linalg.GenericOp([dest.type], [lhs, rhs], [dest], op.attributes["indexing_maps"],
                                           ir.ArrayAttr.get([parallel, parallel, reduction]))
                element = ir.RankedTensorType(c.type).element_type
                body = generic.regions[0].blocks.append(element, element, element)
                with ir.InsertionPoint(body):
                    linalg.YieldOp([fadd(body.arguments[2], fmul(body.arguments[0], body.arguments[1]))])
                generic.attributes["graph.row_dot"] = ir.IntegerAttr.get(i64, min(width, tile))
                generic.attributes["graph.row_dot_rows"] = ir.IntegerAttr.get(i64, min(height, tile_rows))
                parts.append(generic.operation)
                result = generic.results[0] if full else _insert(generic.results[0], result, [row, column])
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return parts


def _schedule_row_dots(module: ir.Module, ops: list[ir.Operation], threads: int) -> None:
    """Tile the products marked ``graph.row_dot = R`` (:data:`_ROW_DOT_SCRIPT`): one task per tile of R
    columns (the cores share them out), V-lane partial sums."""
    lanes = max(1, vector_bits() // 32)
    tiles = {(ir.IntegerAttr(op.attributes["graph.row_dot"]).value,
              ir.IntegerAttr(op.attributes["graph.row_dot_rows"]).value) for op in ops}
    for width, height in sorted(tiles):
        marks = f"attributes{{graph.row_dot = {width} : i64, graph.row_dot_rows = {height} : i64}}"
        script = _ROW_DOT_SCRIPT.replace("attributes{graph.row_dot}", marks)
        _apply(module, _sized(script, {"R": width, "MT": height, "V": lanes}), "tiling row-dot products")
    # the tiles' fills and sums of lanes; the partial products are marked with every matmul tile
    _mark_static_tiles(module, ("linalg.fill", "linalg.reduce"), "graph.row_dot_tiles")


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


#: Per mapping of a direct convolution's vector lanes: its mark, its epilogue's mark, its tasks (CR output rows
#: of one image), its register tiles (MR rows of one output row and one (c, kh, kw) step) and which of their
#: loops holds the rows (peeled).
_CONV_MAPPINGS = {
    "columns": {"CONV_MARK": DIRECT_CONV, "EPILOGUE_MARK": "graph.conv_epilogue",
                "TASK_TILES": "[1, 0, CR, 0, 0, 0, 0]", "REG_TILES": "[0, MR, 1, 0, 1, 1, 1]", "ROW_LOOP": "0"},
    "filters": {"CONV_MARK": FILTER_LANES, "EPILOGUE_MARK": "graph.filter_lanes_epilogue",
                "TASK_TILES": "[1, CR, 0, 0, 0, 0, 0]", "REG_TILES": "[0, 1, MR, 0, 1, 1, 1]", "ROW_LOOP": "1"},
}


def schedule_direct_convs(module: ir.Module) -> None:
    """Tile and vectorize the direct convolutions of ``module``: with their elementwise epilogue where one alone
    reads them (:data:`_DIRECT_CONV_EPILOGUE_SCRIPT`), else on their own (:data:`_DIRECT_CONV_SCRIPT`), each
    with the tiles of its lanes' mapping (:data:`_CONV_MAPPINGS`)."""
    convs: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if DIRECT_CONV in op.attributes:
            convs.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not convs:
        return
    mr, nr = register_tile(vector_bits())
    i64 = ir.IntegerType.get_signless(64)
    # per mapping: the epilogues' operands that are the convolution (one script each), and whether some
    # convolution has no epilogue
    operands: dict[str, set[int]] = {"columns": set(), "filters": set()}
    #: per (mapping, operand): each convolution with its fill and epilogue, outlined while its script runs
    clusters: dict[tuple[str, int], list[list[ir.Operation]]] = {}
    alone: set[str] = set()
    for conv in convs:
        mapping = "filters" if FILTER_LANES in conv.attributes else "columns"
        if mapping == "filters":
            del conv.attributes[DIRECT_CONV]  # matched by FILTER_LANES alone
        epilogue = _conv_epilogue(conv)
        if epilogue is None:
            alone.add(mapping)
            continue
        operand = [v.owner for v in epilogue.operands].index(conv)
        epilogue.attributes[_CONV_MAPPINGS[mapping]["EPILOGUE_MARK"]] = ir.IntegerAttr.get(i64, operand)
        for mark in (DIRECT_CONV, FILTER_LANES):  # scheduled with its epilogue
            if mark in conv.attributes:
                del conv.attributes[mark]
        conv.attributes["graph.fused_conv"] = ir.UnitAttr.get()
        operands[mapping].add(operand)
        fill = _fill_of(conv.operands[2])  # the operand the script fuses as the fill
        clusters.setdefault((mapping, operand), []).append([op for op in (fill, conv, epilogue) if op is not None])
    ladder = _column_ladder("%columns", nr // 2).rstrip("\n")

    def script(template: str, sizes: dict[str, object]) -> str:
        return _sized(template, sizes).replace("      COLUMN_LADDER %columns", ladder)

    for mapping, marks in _CONV_MAPPINGS.items():
        sizes = {**marks, "CR": CONV_TASK_ROWS, "MR": mr, "NR": nr}  # the marks first: their tiles hold MR, CR
        for operand in sorted(operands[mapping]):
            with isolated(module, clusters[mapping, operand]):  # fusions cost as their function (isolation.py)
                _apply(module, script(_DIRECT_CONV_EPILOGUE_SCRIPT, {**sizes, "OPERAND": operand}),
                       "tiling direct convolutions with their epilogues")
        if mapping in alone:
            _apply(module, script(_DIRECT_CONV_SCRIPT, sizes), "tiling direct convolutions")
    _erase_fused_products(module)
    _erase_unused_fills(module)


def _conv_epilogue(conv: ir.Operation) -> ir.Operation | None:
    """The sole elementwise reader of direct convolution ``conv``'s result (:func:`_sole_elementwise_reader`),
    when the tasks of CONV_TASK_ROWS output rows divide the rows; None otherwise."""
    user = _sole_elementwise_reader(conv)
    shape = None if user is None else ir.RankedTensorType(user.results[0].type).shape
    if shape is None or shape != ir.RankedTensorType(conv.results[0].type).shape:
        return None
    rows = shape[2]
    if rows % CONV_TASK_ROWS and rows > CONV_TASK_ROWS:
        return None  # a last task of fewer rows: its block of the output would have no static size
    return user


def _static_ops(module: ir.Module, names: tuple[str, ...]) -> list[ir.Operation]:
    """The ops of ``module`` named one of ``names`` whose operands all have static shapes."""
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name in names and all(_static_tensor(v) for v in op.operands):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    return found


def _unroll_batches(op: ir.Operation) -> None:
    """A ``linalg.batch_matmul`` of at most ``MAX_UNROLLED_BATCHES`` batches as that many plain matmuls.

    Each batch's product then gets a matmul's register tiles, row blocks across the cores and packed B
    (attention's products: 8 heads of [1024, 64] x [64, 1024]).  More batches keep the blocked batch loops
    (the code would grow with the batch count).
    """
    a, b, c = op.operands
    batches = ir.RankedTensorType(c.type).shape[0]
    if batches > MAX_UNROLLED_BATCHES or "indexing_maps" in op.attributes:
        return
    with op.location, ir.InsertionPoint(op):
        fill_value, result = _unfilled(c)
        for index in range(batches):
            views = [_batch_slice(v, index) for v in (a, b, result)]
            if fill_value is not None:  # each batch fills its own C, where its product's row blocks can
                views[2] = linalg.fill(fill_value, outs=[views[2]])
            product = linalg.matmul(views[0], views[1], outs=[views[2]])
            shape = ir.RankedTensorType(product.type).shape
            result = tensor.insert_slice(product, result, [], [], [], [index, 0, 0], [1, *shape], [1, 1, 1])
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _batch_tasks(op: ir.Operation, threads: int, panel: int) -> bool:
    """Whether a static f32 ``linalg.batch_matmul`` is shared out by batches (:func:`_batch_tasks_script`): at
    least BATCH_TASKS_PER_THREAD batches per thread, the plain maps, B packable (f32), and each batch's B one
    outer block of panels ``panel`` wide (:func:`outer_panels`): the serial schedule has no outer blocks, and
    a larger B read by each task alone would come from memory."""
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if (types[2].shape[0] < BATCH_TASKS_PER_THREAD * threads or "indexing_maps" in op.attributes
            or not all(isinstance(t.element_type, ir.F32Type) for t in types)):
        return False
    if 1 in types[2].shape[1:]:  # one row or column: folding the unit dims leaves a vecmat the script cannot name
        return False
    _, depth, columns = types[1].shape
    return -(-columns // panel) <= outer_panels(depth, panel)


def _share_out_batches(module: ir.Module, ops: list[ir.Operation]) -> None:
    """One task per batch for ``ops`` (:func:`_batch_tasks_script`), C's fill and B's transpose computed in the
    tasks; the tasks' products are then marked SERIAL."""
    # per kind, each product with the fill and transpose its tasks compute: outlined while its script runs,
    # fusions costing in proportion to their function (isolation.py)
    kinds: dict[int, list[list[ir.Operation]]] = {}
    for op in ops:
        _collapse_first(op, 1)
        _collapse_first(op, 2)
        fill, transposed = _fill_of(op.operands[2]), producer(op.operands[1], "linalg.transpose")
        kind = int(fill is not None) | 2 * int(transposed is not None)
        op.attributes["graph.batch_tasks"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), kind)
        kinds.setdefault(kind, []).append([p for p in (fill, transposed, op) if p is not None])
    for kind, clusters in sorted(kinds.items()):
        with isolated(module, clusters):
            _apply(module, _batch_tasks_script(kind), "sharing batched matmuls out by batches")
    # the transposes of all batches, each task now computing its own (the fills are erased with the others')
    _erase_unread(module, lambda op: op.name == "linalg.transpose")

    def mark(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.matmul":
            op.attributes[SERIAL] = ir.UnitAttr.get()
            # specialize writes the default maps out: dropped, the product reads as the plain form it is
            maps = ir.ArrayAttr(op.attributes["indexing_maps"]) if "indexing_maps" in op.attributes else []
            if tuple(_map_dims(a) for a in maps) == _DEFAULT_MAPS["linalg.matmul"]:
                del op.attributes["indexing_maps"]
        return ir.WalkResult.ADVANCE

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.forall" and "graph.batch_tasks" in op.attributes:
            op.walk(mark)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


def _collapse_first(op: ir.Operation, operand: int) -> None:
    """Make ``op``'s operand, a ``tensor.collapse_shape`` of a fill or of a transpose (a 4-D attention's heads
    collapsed by :func:`_as_named_matmul`), the fill or transpose of the collapsed value instead, so that the
    batch tasks compute it in each task (:func:`_batch_tasks_script` fuses direct producers only).  A transpose
    qualifies when it keeps each collapsed group's dims in place."""
    collapse = producer(op.operands[operand], "tensor.collapse_shape")
    if collapse is None or any(use.owner != op for use in collapse.results[0].uses):
        return
    groups = [list(ir.ArrayAttr(g)) for g in ir.ArrayAttr(collapse.attributes["reassociation"])]
    groups = [[ir.IntegerAttr(d).value for d in g] for g in groups]
    source = collapse.operands[0]
    inner = producer(source, "linalg.fill") or producer(source, "linalg.transpose")
    if inner is None or len(list(inner.results[0].uses)) != 1:
        return
    result_type = ir.RankedTensorType(collapse.results[0].type)
    with op.location, ir.InsertionPoint(op):
        if inner.name == "linalg.fill":
            init = tensor.collapse_shape(result_type, inner.operands[1], collapse.attributes["reassociation"])
            value = linalg.fill(inner.operands[0], outs=[init])
        else:
            permutation = list(ir.DenseI64ArrayAttr(inner.attributes["permutation"]))
            if any(permutation[d] != d for g in groups if len(g) > 1 for d in g):
                return
            first = {g[0]: k for k, g in enumerate(groups)}  # a group's first dim -> its collapsed axis
            inner_type = ir.RankedTensorType(inner.operands[0].type)
            sizes = [math.prod(inner_type.shape[d] for d in g) for g in groups]
            collapsed = tensor.collapse_shape(ir.RankedTensorType.get(sizes, inner_type.element_type),
                                              inner.operands[0], collapse.attributes["reassociation"])
            order = [first[permutation[g[0]]] for g in groups]
            init = tensor.empty([sizes[a] for a in order], inner_type.element_type)
            value = linalg.transpose(collapsed, outs=[init], permutation=order).results[0]
    op.operands[operand] = value
    collapse.erase()
    inner.erase()


def _unfilled(c: ir.Value) -> tuple[ir.Value | None, ir.Value]:
    """(the value ``c`` is filled with, the tensor to compute parts of C in) for a filled ``c``, else (None, c).

    The tensor is the fill's destination, or a new allocation where that is an empty tensor: the runtime
    gives each use of an empty tensor a buffer of its own, and the parts, slices of it inserted back,
    would be computed apart and copied.
    """
    fill = _fill_of(c)
    if fill is None:
        return None, c
    value, dest = fill.operands
    if producer(dest, "tensor.empty") is not None:
        dest = bufferization.alloc_tensor(c.type, [])
    return value, dest


def _batch_slice(value: ir.Value, index: int) -> ir.Value:
    """``value[index]`` of a [batch, rows, columns] tensor, as a [rows, columns] tensor."""
    t = ir.RankedTensorType(value.type)
    rows, cols = t.shape[1:]
    return tensor.extract_slice(ir.RankedTensorType.get([rows, cols], t.element_type), value, [], [], [],
                                [index, 0, 0], [1, rows, cols], [1, 1, 1])


def _rows(op: ir.Operation) -> int:
    return ir.RankedTensorType(op.operands[0].type).shape[0]


def _shared_by_panels(rows: int, panels: int, tile_rows: int) -> bool:
    """Whether a packed product's tasks are panels of B rather than row blocks: too few row blocks to share.

    A convolution's product has as many rows as filters (64 against 3136 columns at 56x56), a token's
    linear layer one.  The rows of a task are then all the rows, with a peeled rest: no second product.
    Counted in blocks of the default size (``ROW_BLOCK_TILES`` tiles), whatever size :func:`row_block` picks.
    """
    return rows < MIN_ROW_TASKS * tile_rows * ROW_BLOCK_TILES and panels >= 2 * PANEL_TASK


def _panels(op: ir.Operation) -> int:
    """Panels of B a packed product reads (its C viewed as [M, panels, NR])."""
    return ir.RankedTensorType(op.operands[2].type).shape[1]


def _fill_of(value: ir.Value) -> ir.Operation | None:
    """The ``linalg.fill`` producing ``value``, if one does."""
    return producer(value, "linalg.fill")


def _powers_of_two(n: int) -> list[int]:
    """The powers of two that sum to ``n``, largest first (24 -> [16, 8])."""
    return [1 << bit for bit in reversed(range(n.bit_length())) if n >> bit & 1]


def _depth(op: ir.Operation) -> int:
    """K, the length of the reduction."""
    return ir.RankedTensorType(op.operands[0].type).shape[1]


def outer_panels(depth: int, panel: int) -> int:
    """Panels of packed B in one outer block: the row blocks of all cores work through it before the next.

    The block, ``depth`` rows of that many panels, takes at most 1 / ``OUTER_BLOCK_SHARE`` of the
    last-level cache, so the cores read it from there and not from memory: without the outer blocks, each
    row block walks all of B, and two cores at different places of a 16 MB B (1024x1024x4096) read it from
    memory (1.2x the time, one process, interleaved).  A whole number of cache blocks, at least one.
    """
    cache_panels = max(1, BLOCK // panel)
    budget = (last_level_cache_bytes() or _UNKNOWN_CACHE_BYTES) // OUTER_BLOCK_SHARE
    return max(1, budget // (depth * panel * 4) // cache_panels) * cache_panels


def _register_tile_parts(op: ir.Operation, tile_rows: int, panel: int, threads: int,
                         epilogue: ir.Operation | None = None) -> list[tuple[ir.Operation, bool, ir.Operation | None]]:
    """Replace ``op`` (a static ``linalg.matmul``) by the ops the schedules tile: [(op, whether B is packed, the
    part's epilogue or None)].

    - B is packed into panels of ``panel`` columns when it is f32: a register tile reads one row of B per
      step of K, and in B as it is those rows are N floats apart, so the K rows of a block fall on the same
      few cache sets and each on its own page (a 1024x1024x4096 matmul's rows of B are 16 KB apart) and
      are read from L3 again for every tile.  Packed, a panel ``Bp[j0]`` is K rows of ``panel`` floats one
      after the other; the product is a generic over (j0, i, j1, k) reading A[i, k] and Bp[j0, k, j1] into
      C viewed as [M, N / panel, panel] (a reshape of the same buffer).  Columns that do not fill a last
      panel are products of their own, one narrower panel each, of powers of two (24 columns are 16 + 8:
      LLVM splits a loop-carried vector<8x24xf32> accumulator lane by lane through the stack, and the 24
      columns of 1000x1000x3000 took a sixth of its time).
    - The rows are cut in two when the row blocks (:func:`row_block`) do not divide them: the blocks'
      rows, then the rest as one block of its own, so that every block and every register tile of
      either has a size known when compiling (a block of the rest's size in a loop of full blocks would
      make every tile's size dynamic, and its last tile scalar code).
    - ``epilogue`` (:func:`_fusable_epilogue`, packed products only) is applied to each part
      (:func:`_epilogue_on_part`), whose C is then a tensor of its own (a scratch block once tiled), and
      replaced by the parts' results; the parts are then built where it was, after every value it reads.
    """
    a, b, c = op.operands
    types = [ir.RankedTensorType(v.type) for v in (a, b, c)]
    (m, k), n = types[0].shape, types[2].shape[1]
    packed = all(isinstance(t.element_type, ir.F32Type) for t in types)
    serial = SERIAL in op.attributes  # a task's product: all its rows one block, no second product
    whole = n - n % panel if packed else n
    column_ranges = [(0, whole)] if whole else []
    start = whole
    for width in _powers_of_two(n - whole):
        column_ranges.append((start, width))
        start += width
    parts: list[tuple[ir.Operation, bool, ir.Operation | None]] = []
    element = types[2].element_type
    epilogue = epilogue if packed else None
    with op.location, ir.InsertionPoint(epilogue or op):
        # a filled C: each product fills its own part, in its row blocks where the part is in cache, instead
        # of one pass over all of C before
        fill_value, result = _unfilled(c) if packed else (None, c)
        filled = fill_value is not None
        if epilogue is not None:  # the parts' epilogues write the epilogue's result; each product a C of its own
            result = epilogue.operands[len(epilogue.operands) - 1]
            if producer(result, "tensor.empty") is not None:  # one buffer for the parts (see _unfilled)
                result = bufferization.alloc_tensor(result.type, [])
        for column, width in column_ranges:
            columns = panel if width % panel == 0 else width
            if packed:
                rhs = _packed_panels(b, column, width, columns, serial)
            else:
                rhs = b if width == n else _slice(b, [0, column], [k, width])
            row_ranges = [(0, m)] if serial else _row_ranges(m, width // columns, tile_rows, threads, packed)
            for row, size in row_ranges:
                lhs = a if size == m else _slice(a, [row, 0], [size, k])
                dest = _slice(result, [row, column], [size, width]) if (size, width) != (m, n) else result
                if packed:
                    dest = _split_columns(dest, columns)
                out = dest
                if epilogue is not None:  # C is a scratch tensor; each block of it is filled, used and dropped
                    dest = tensor.empty([size, width // columns, columns], element)
                if filled:
                    dest = linalg.fill(fill_value, outs=[dest])
                product = _packed_product(lhs, rhs, dest) if packed else linalg.matmul(lhs, rhs, outs=[dest])
                product_op, part_epilogue = product.owner, None
                if serial:
                    product_op.attributes[SERIAL] = ir.UnitAttr.get()
                if epilogue is not None:
                    product = _epilogue_on_part(epilogue, op.results[0], product, out, (row, size),
                                                (column, width), columns)
                    part_epilogue = product.owner
                parts.append((product_op, packed, part_epilogue))
                if packed:
                    product = tensor.collapse_shape(ir.RankedTensorType.get([size, width], element), product,
                                                    [[0], [1, 2]])
                result = product if (size, width) == (m, n) else _insert(product, result, [row, column])
    if epilogue is not None:
        epilogue.results[0].replace_all_uses_with(result)
        epilogue.erase()
    else:
        op.results[0].replace_all_uses_with(result)
    op.erase()
    if packed:
        _erase_unused_producers(b)  # the panels were copied from B's source, or are a constant of their own
    return parts


def _erase_unused_producers(value: ir.Value) -> None:
    """Erase ``value``'s producer when nothing reads it, then the producers of its operands left unread.

    Bufferization would still compute them (a transpose of B) or keep them (a weight constant).
    """
    op = producer(value)
    if op is None or op.name not in _PURE_PRODUCERS:
        return
    if any(True for result in op.results for _ in result.uses):
        return
    operands = list(op.operands)
    op.erase()
    for operand in operands:
        _erase_unused_producers(operand)


def _split_columns(value: ir.Value, columns: int) -> ir.Value:
    """[rows, N] viewed as [rows, N / columns, columns]."""
    t = ir.RankedTensorType(value.type)
    rows, n = t.shape
    shape = [rows, n // columns, columns]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), value, [[0], [1, 2]], [], shape)


#: Ops without side effects that :func:`_erase_unused_producers` may erase.
_PURE_PRODUCERS = frozenset({"linalg.transpose", "tensor.empty", "arith.constant"})


def _transposed_source(b: ir.Value) -> ir.Value | None:
    """Bt [N, K] when ``b`` is ``linalg.transpose(Bt)`` (a linear layer's weight, stored [out, in]), else None."""
    transpose = producer(b, "linalg.transpose")
    if transpose is None or list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"])) != [1, 0]:
        return None
    return transpose.operands[0]


def _constant_panels(b: ir.Value, transposed: bool, column: int, width: int, columns: int) -> ir.Value | None:
    """The panels of :func:`_packed_panels` as a constant when B (``transposed``: Bt [N, K]) is one (a
    model's weight imported as a constant): packed once when compiling, not on every call."""
    constant = producer(b, "arith.constant")
    if constant is None:
        return None
    attr = ir.DenseElementsAttr(constant.attributes["value"])
    element = ir.RankedTensorType(b.type).element_type
    k = ir.RankedTensorType(b.type).shape[1 if transposed else 0]
    panels_type = ir.RankedTensorType.get([width // columns, k, columns], element)
    if attr.is_splat:
        return arith.constant(panels_type, ir.DenseElementsAttr.get_splat(panels_type, attr.get_splat_value()))
    array = attr_to_array(attr)
    if transposed:  # Bt rows [column, column + width): [panels, columns, K] -> [panels, K, columns]
        panels = array[column:column + width].reshape(width // columns, columns, k).transpose(0, 2, 1)
    else:  # B columns [column, column + width): [K, panels, columns] -> [panels, K, columns]
        panels = array[:, column:column + width].reshape(k, width // columns, columns).transpose(1, 0, 2)
    return arith.constant(panels_type, array_to_attr(np.ascontiguousarray(panels)))


def _packed_panels(b: ir.Value, column: int, width: int, columns: int, serial: bool = False) -> ir.Value:
    """Columns ``column`` to ``column + width`` of B [K, N] copied into panels [width / columns, K, columns],
    the copy marked for the schedule.

    This is what lowering ``linalg.pack`` makes, without the copy of B into a padded buffer it adds.  When
    B is the transpose of Bt [N, K], the panels are copied from Bt: panel j0 is the transpose of the
    ``columns`` rows of Bt from j0 * columns, one copy where transposing first would make two (and the
    transpose alone, rows of B written N floats apart, cost more than the packing).
    """
    t = ir.RankedTensorType(b.type)
    k, n = t.shape
    source = _transposed_source(b)
    constant = _constant_panels(b if source is None else source, source is not None, column, width, columns)
    if constant is not None:
        return constant
    panels = tensor.empty([width // columns, k, columns], t.element_type)
    if source is None:
        part = b if width == n else _slice(b, [0, column], [k, width])
        copy = linalg.transpose(_split_columns(part, columns), outs=[panels], permutation=[1, 0, 2])
        copy.attributes["graph.serial_pack" if serial else "graph.block"] = ir.UnitAttr.get()
        return copy.results[0]
    rows = source if width == n else _slice(source, [column, 0], [width, k])
    shape = [width // columns, columns, k]
    split = tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), rows, [[0, 1], [2]], [], shape)
    copy = linalg.transpose(split, outs=[panels], permutation=[0, 2, 1])
    copy.attributes["graph.serial_pack_transposed" if serial else "graph.pack_transposed"] = ir.UnitAttr.get()
    return copy.results[0]


def _slice(value: ir.Value, offsets: list[int], sizes: list[int]) -> ir.Value:
    """The static slice of ``value`` at ``offsets`` of ``sizes``, unit strides."""
    element = ir.RankedTensorType(value.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), value, [], [], [], offsets, sizes,
                                [1] * len(sizes))


def _insert(part: ir.Value, into: ir.Value, offsets: list[int]) -> ir.Value:
    shape = ir.RankedTensorType(part.type).shape
    return tensor.insert_slice(part, into, [], [], [], offsets, list(shape), [1] * len(shape))


def _packed_product(a: ir.Value, packed_b: ir.Value, c_view: ir.Value) -> ir.Value:
    """C[i, j0, j1] += A[i, k] * Bp[j0, k, j1], a generic over (j0, i, j1, k)."""
    f32 = ir.RankedTensorType(c_view.type).element_type
    maps = [ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(d) for d in dims]) for dims in ((1, 3), (0, 3, 2), (1, 0, 2))]
    parallel, reduction = (ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in ("parallel", "reduction"))
    generic = linalg.GenericOp([c_view.type], [a, packed_b], [c_view],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(amap) for amap in maps]),
                               ir.ArrayAttr.get([parallel, parallel, parallel, reduction]))
    body = generic.regions[0].blocks.append(f32, f32, f32)
    with ir.InsertionPoint(body):
        linalg.YieldOp([arith.addf(body.arguments[2], arith.mulf(body.arguments[0], body.arguments[1]))])
    return generic.results[0]


def _sole_elementwise_reader(product: ir.Operation) -> ir.Operation | None:
    """The all-parallel generic beside ``product`` (same block) that is the only user of its result, reads it
    once through an identity map and writes one f32 result without reading its init; else None.

    Such a generic can be computed on each block of the product as soon as the block is (an epilogue).
    """
    uses = list(product.results[0].uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner
    if user.name != "linalg.generic" or user.parent != product.parent or len(user.results) != 1:
        return None
    iterators = [str(t) for t in ir.ArrayAttr(user.attributes["iterator_types"])]
    result = ir.RankedTensorType(user.results[0].type)
    if not isinstance(result.element_type, ir.F32Type) or not all("parallel" in t for t in iterators):
        return None
    body = user.regions[0].blocks[0]
    if any(True for _ in body.arguments[len(body.arguments) - 1].uses):
        return None
    maps = list(ir.ArrayAttr(user.attributes["indexing_maps"]))
    reads = [k for k, v in enumerate(list(user.operands)[:-1]) if v == product.results[0]]
    if len(reads) != 1 or _map_dims(maps[reads[0]]) != tuple(range(len(iterators))):
        return None
    return user


def _fusable_epilogue(matmul: ir.Operation) -> ir.Operation | None:
    """The sole elementwise reader of f32 ``matmul``'s result (:func:`_sole_elementwise_reader`), when the
    packed schedule can apply it to each block of C (:data:`_EPILOGUE_TILE_SCRIPT`), else None: a static 2-D
    generic whose other inputs are tensors read by projections of (i, j): [M, N] (a residual), [N] (a bias),
    [M] or a scalar.
    """
    user = _sole_elementwise_reader(matmul)
    if user is None or user not in _elementwise_epilogues(matmul):
        return None
    inputs = list(user.operands)[:-1]
    if not all(isinstance(v.type, ir.RankedTensorType) for v in inputs):
        return None
    for attr in list(ir.ArrayAttr(user.attributes["indexing_maps"]))[:-1]:
        if _map_dims(attr) not in ((0, 1), (1,), (0,), ()):
            return None
    return user


def _row_ranges(rows: int, panels: int, tile_rows: int, threads: int, packed: bool) -> list[tuple[int, int]]:
    """(first row, rows) of a product's parts (:func:`_register_tile_parts`): whole row blocks, then the rest,
    unless the product is shared out by panels (:func:`_shared_by_panels`), which keeps all rows together."""
    block = row_block(rows, tile_rows, threads)
    rest = rows % block if rows > block and not (packed and _shared_by_panels(rows, panels, tile_rows)) else 0
    return [(0, rows - rest), (rows - rest, rest)] if rest else [(0, rows)]


def _static_blocks_of_c(matmul: ir.Operation, tile_rows: int, panel: int, threads: int) -> bool:
    """Whether every block of C the packed schedules give ``matmul``'s parts (outer blocks, tasks, blocks of PC
    panels) has a size known when compiling: an epilogue applied to each block then computes the block in a
    scratch buffer of its own (a dynamic one could not be allocated in the loop)."""
    (m, k), n = ir.RankedTensorType(matmul.operands[0].type).shape, ir.RankedTensorType(matmul.results[0].type).shape[1]
    if n % panel:
        return False  # a narrower last panel: a part of its own, not worth a schedule here
    panels, cache_panels = n // panel, max(1, BLOCK // panel)

    def even(total: int, tile: int) -> bool:
        return total % tile == 0 or total <= tile

    for _, rows in _row_ranges(m, panels, tile_rows, threads, packed=True):
        if _shared_by_panels(rows, panels, tile_rows):
            task = panel_task(panels, threads)
            ok = even(panels, task) and even(task, cache_panels)
        elif panels > outer_panels(k, panel):
            ok = even(panels, outer_panels(k, panel))
        else:
            ok = even(panels, cache_panels)
        if not ok:
            return False
    return True


def _epilogue_on_part(epilogue: ir.Operation, source: ir.Value, product: ir.Value, out: ir.Value,
                      rows: tuple[int, int], columns: tuple[int, int], panel: int) -> ir.Value:
    """``epilogue`` (reading the product ``source``) applied to ``product``, the part [rows, columns] of C
    viewed as [rows, columns / panel, panel], into ``out`` (the same part of the epilogue's result): a
    generic over (i, j0, j1) reading the product and slices of the epilogue's other inputs."""
    (row, size), (column, width) = rows, columns
    maps = list(ir.ArrayAttr(epilogue.attributes["indexing_maps"]))
    body = epilogue.regions[0].blocks[0]
    inputs: list[ir.Value] = []
    input_maps: list[ir.AffineMap] = []
    split = [width // panel, panel]
    d = [ir.AffineDimExpr.get(k) for k in range(3)]
    arguments: list[int] = []  # the body argument each new input stands for (the output's is unused)
    for k, (value, attr) in enumerate(zip(list(epilogue.operands)[:-1], maps[:-1], strict=True)):
        dims = _map_dims(attr)
        element = ir.RankedTensorType(value.type).element_type
        if value == source:
            value, exprs = product, d
        elif dims == (0, 1):
            part = _slice(value, [row, column], [size, width])
            value = tensor.expand_shape(ir.RankedTensorType.get([size, *split], element), part, [[0], [1, 2]], [],
                                        [size, *split])
            exprs = d
        elif dims == (1,):
            part = _slice(value, [column], [width])
            value = tensor.expand_shape(ir.RankedTensorType.get(split, element), part, [[0, 1]], [], split)
            exprs = d[1:]
        elif dims == (0,):
            value, exprs = _slice(value, [row], [size]), d[:1]
        else:
            exprs = []
        inputs.append(value)
        input_maps.append(ir.AffineMap.get(3, 0, exprs))
        arguments.append(k)
    identity = ir.AffineMap.get(3, 0, d)
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    generic = linalg.GenericOp([out.type], inputs, [out],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [*input_maps, identity]]),
                               ir.ArrayAttr.get([parallel] * 3))
    new_body = generic.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in [*inputs, out]])
    values = {body.arguments[k]: new_body.arguments[n] for n, k in enumerate(arguments)}
    values[body.arguments[len(arguments)]] = new_body.arguments[len(arguments)]
    for op in body.operations:
        copy = op.operation.clone(ip=ir.InsertionPoint(new_body))
        for k, operand in enumerate(op.operands):
            if operand in values:
                copy.operands[k] = values[operand]
        values.update(zip(op.results, copy.results, strict=True))
    return generic.results[0]


def _mark_pack_tasks(module: ir.Module, threads: int) -> list[int]:
    """Mark each copy of B into panels shared out across the cores with the panels per task that even out the
    threads (``PACK_TASKS``: at most PACK_PANELS, :func:`panel_task`'s rule down to one panel); the sizes used."""
    sizes: set[int] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.transpose" and ("graph.block" in op.attributes or
                                              "graph.pack_transposed" in op.attributes):
            panels = ir.RankedTensorType(op.results[0].type).shape[0]
            size = even_tasks(panels, threads, PACK_PANELS, 1)
            op.attributes[PACK_TASKS] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), size)
            sizes.add(size)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return sorted(sizes)


def even_tasks(items: int, threads: int, largest: int, smallest: int) -> int:
    """Items per task, from ``largest`` down to ``smallest``: the size whose busiest thread (a contiguous share of
    the tasks each) takes the fewest items, the largest such; ``largest`` on one thread."""
    if threads == 1:
        return largest

    def busiest(task: int) -> int:
        tasks = -(-items // task)
        return -(-tasks // threads) * task

    return min(range(largest, smallest - 1, -1), key=busiest)


def panel_task(panels: int, threads: int = 1) -> int:
    """Panels of B per ``scf.forall`` iteration of a product shared out by panels: between half and all of
    ``PANEL_TASK``, the one whose busiest thread computes the fewest panels, the largest such.  On two threads
    24 panels (768 columns) are 4 tasks of 6 rather than 3 of 8, which left one core idle a third of the time."""
    return even_tasks(panels, threads, PANEL_TASK, PANEL_TASK // 2)


def row_block(rows: int, tile_rows: int, threads: int = 1) -> int:
    """Rows of C per ``scf.forall`` iteration: between half and all of ``ROW_BLOCK_TILES`` register tiles.

    The size is the one whose busiest thread (each thread a share of the row blocks, the static schedule)
    computes the fewest rows, counting its share of the rest rows (a product of their own,
    :func:`_register_tile_parts`) and a tile's worth more for that product's extra pass over B; the largest
    such size.  On one thread that is the largest size dividing ``rows``, else the default.  On two, 1024 rows
    are 24 blocks of 42 (12 each) rather than 21 of 48 (11 against 10).
    """
    default = tile_rows * ROW_BLOCK_TILES
    if rows <= default:
        return rows

    def busiest(block: int) -> int:
        blocks, rest = divmod(rows, block)
        return -(-blocks // threads) * block + (-(-rest // threads) + tile_rows if rest else 0)

    return min((tile_rows * tiles for tiles in range(ROW_BLOCK_TILES, ROW_BLOCK_TILES // 2 - 1, -1)), key=busiest)


def register_tile(bits: int) -> tuple[int, int]:
    """(rows, columns) of the C tile a matmul keeps in vector registers, for ``bits``-wide vectors.

    Each row two registers wide.  With 16 registers (below 512 bits), six rows: 12 accumulators, two
    registers of B and a broadcast of A; an FMA has a latency of 4 cycles and two issue per cycle, so 8
    independent accumulators are the least that keeps both units busy and 12 leave slack (288x256x256 in
    cache on one core: 8 rows of one register ran at 61% of OpenBLAS's speed, 6 rows of two at 85%).
    With 32 registers (512 bits), eight rows: 16 accumulators.
    """
    lanes = max(1, bits // 32)
    return (8, 2 * lanes) if bits >= 512 else (6, 2 * lanes)


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


def _mark_static_tiles(module: ir.Module, ops: tuple[str, ...] = ("linalg.matmul", "linalg.generic"),
                       loops: str = "graph.matmul_tiles") -> int:
    """Mark the statically shaped ``ops`` inside the loops marked ``loops`` (the tiled row blocks) for
    vectorization; how many.

    A tile left dynamic would stay a scalar loop; the row split and the peeled tile loops leave none.
    """
    marked = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal marked
        if op.name in ops and all(_static_tensor(v) for v in op.operands):
            op.attributes["graph.vectorize"] = ir.UnitAttr.get()
            marked += 1
        return ir.WalkResult.ADVANCE

    def blocks(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("scf.forall", "scf.for") and loops in op.attributes:
            op.walk(visit)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(blocks)
    return marked


def _elementwise_epilogues(matmul: ir.Operation) -> list[ir.Operation]:
    """The statically shaped, all-parallel 2-D generics of the function body that read ``matmul``'s result."""
    found = []
    for use in matmul.results[0].uses:
        user = use.owner
        if user.name != "linalg.generic" or user.parent != matmul.parent or len(user.results) != 1:
            continue
        iterators = [str(t) for t in ir.ArrayAttr(user.attributes["iterator_types"])]
        values = [*user.operands, *user.results]
        if all("parallel" in t for t in iterators) and len(iterators) == 2 and all(_static_tensor(v) for v in values):
            found.append(user)
    return found


def _erase_unread(module: ir.Module, erasable: Callable[[ir.Operation], bool]) -> None:
    """Erase the ops of ``module`` for which ``erasable(op)`` holds and whose results nothing reads.

    Bufferization would still compute them, into buffers of their own.
    """
    unread: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if erasable(op) and not any(True for r in op.results for _ in r.uses):
            unread.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in unread:
        op.erase()


def _erase_fused_products(module: ir.Module) -> None:
    """Erase the products left unread once fused into their epilogue's loops (:data:`_EPILOGUE_TILE_SCRIPT`,
    :data:`_DIRECT_CONV_EPILOGUE_SCRIPT`): fusion computes each block inside the loops and leaves the whole
    product where it was, unscheduled."""
    _erase_unread(module, lambda op: op.name == "linalg.generic"
                  and ("graph.block" in op.attributes or "graph.fused_conv" in op.attributes))


def _erase_unused_fills(module: ir.Module) -> None:
    """Erase the fills no op reads any more (C's fill, once each product fills its own part in its row blocks)."""
    _erase_unread(module, lambda op: op.name == "linalg.fill" and len(op.results) == 1)


def _clear_marks(module: ir.Module) -> None:
    def visit(op: ir.Operation) -> ir.WalkResult:
        for name in ("graph.matmul_tiles", "graph.vectorize", "graph.block", "graph.epilogue", "graph.pack_transposed",
                     "graph.epilogue_block", "graph.conv_epilogue", "graph.filter_lanes_epilogue", "graph.fused_conv",
                     _CONV_COLUMNS, FILTER_LANES,
                     "graph.serial_pack", "graph.serial_pack_transposed", "graph.batch_tasks", "graph.row_dot",
                     "graph.row_dot_rows", "graph.row_dot_tiles", SERIAL, PACK_TASKS):
            if name in op.attributes:
                del op.attributes[name]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
