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
L2 (``schedules/matmul_epilogue.mlir``): the block of C is a scratch buffer on the
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
on collapsed, transposed where needed, operands (``as_named_matmul``).

The package, by concern: ``strategy`` chooses each contraction's schedule and records it on the op as a
``graph.schedule`` attribute, ``application`` applies the recorded schedules in the order their rewrites
need; ``schedules/`` holds the schedules, a transform-dialect library
of named sequences with parameters, one ``.mlir`` file per op family; ``library`` loads it and runs the
sequence a schedule attribute names; ``panels`` builds the register-tile parts and packed B, ``layout``
rewrites other contractions as named matmuls, ``sizes`` holds the sizes, and ``marks`` the marker attributes
and the clean-up.
"""

from mlir import ir

from graphfuse.lowering.contraction.application import apply_schedules
from graphfuse.lowering.contraction.sizes import (
    BATCH_TASKS_PER_THREAD,
    BLOCK,
    DIRECT_CONV,
    EPILOGUE_ROWS,
    FILTER_LANES,
    MAX_UNROLLED_BATCHES,
    ROW_DOT_ROWS,
    ROW_DOT_TILE_ROWS,
    SHUFFLED_PACK_BLOCK,
    even_tasks,
    outer_panels,
    panel_task,
    register_tile,
    row_block,
    row_dot_tile,
)
from graphfuse.lowering.contraction.strategy import select_schedules
from graphfuse.lowering.schedules.library import loaded

__all__ = [
    "BATCH_TASKS_PER_THREAD",
    "BLOCK",
    "DIRECT_CONV",
    "EPILOGUE_ROWS",
    "FILTER_LANES",
    "MAX_UNROLLED_BATCHES",
    "ROW_DOT_ROWS",
    "ROW_DOT_TILE_ROWS",
    "SHUFFLED_PACK_BLOCK",
    "apply_schedules",
    "block_contractions",
    "even_tasks",
    "outer_panels",
    "panel_task",
    "register_tile",
    "row_block",
    "row_dot_tile",
    "select_schedules",
]


def block_contractions(module: ir.Module, threads: int = 1) -> None:
    """Schedule every statically shaped contraction of ``module`` for ``threads`` threads and apply the
    schedules: :func:`select_schedules`, then :func:`apply_schedules`."""
    with loaded(module.context):  # one parse of the schedules' library for both
        select_schedules(module, threads)
        apply_schedules(module)

