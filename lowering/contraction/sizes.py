"""The sizes of the contraction schedules: blocks, register tiles, tasks per thread, panels per cache."""



from mlir import ir

from graphfuse.lowering.host import last_level_cache_bytes

BLOCK = 256
#: Register tiles of rows per block of C rows that one task (an ``scf.forall`` iteration) computes.
ROW_BLOCK_TILES = 8
#: Panels of B one task of the packing copy writes at most (fewer where that evens out the threads: 8 panels
#: are 2 tasks of 4 on two threads, not one task that leaves a core idle).
PACK_PANELS = 8
#: Steps of K per tile of the copy into panels from a transposed B: NR rows of as many contiguous floats read,
#: transposed in registers (256x512x1360 with B transposed, both cores: 1 step 4.2 ms, 4 steps 4.7, 8 steps 3.9,
#: 16 steps 5.4; B as it is 3.6).
PACK_DEPTH = 8
#: With 16 lanes (AVX-512) the tiles of that copy are 16x16 blocks transposed by shuffles of whole registers
#: (upstream's ``shuffle_16x16``): 16 loads, 64 shuffles and 16 stores per block.  256x256x2048 with B
#: transposed, one thread: the copy took 13% of the product's 3.03 ms as 8-step tiles, 5% of 2.84 ms so.
SHUFFLED_PACK_BLOCK = 16
#: The tiles of the copies into panels of bf16 pairs are 16 pairs of K by 16 columns: 16 x 16 words of 32 bits
#: transposed in registers (from a transposed B), or 16 pairs of rows of 16 columns interleaved.
PAIR_PACK_BLOCK = 16

#: A packed product with fewer row blocks than this is shared out by tasks of ``PANEL_TASK`` panels of B: a
#: few row blocks leave cores idle in their last round (256 rows are five blocks of 48 and 16 rows; by
#: panels 256x512x512, 256x512x1360 and 256x1360x512 ran 8-14% faster on both cores than by row blocks).
MIN_ROW_TASKS = 6
PANEL_TASK = 8
#: Marks a convolution computed directly from its input (graphfuse.lowering.structured_ops._direct_conv) for
#: its schedule (``direct_conv.mlir``).
DIRECT_CONV = "graph.direct_conv"
#: Marks a direct convolution whose vector lanes are its filters (graphfuse.lowering.structured_ops._direct_conv:
#: loops n, oh, ow, f, c, kh, kw, the weights read as [C, KH, KW, F]); without it, the lanes are output columns.
FILTER_LANES = "graph.filter_lanes"
#: Output rows of a direct convolution one task computes (``direct_conv.mlir``; 56x56, 64 channels: 1, 2
#: and 4 within the noise of each other).
CONV_TASK_ROWS = 2
#: Rows of a matmul's elementwise epilogue one task computes (``@epilogue_rows``).
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


def pack_tile(lanes: int, panel: int) -> tuple[int, int]:
    """The tiles of the copies from a transposed B into panels of ``panel`` columns for vectors of ``lanes``
    floats: (steps of K, columns of a panel)."""
    if lanes == SHUFFLED_PACK_BLOCK:
        return SHUFFLED_PACK_BLOCK, SHUFFLED_PACK_BLOCK
    return PACK_DEPTH, panel


#: Rows of A up to which a product with a transposed B read at run time gets the row-dot schedule.  With W
#: an argument, on 2 cores (interleaved, W of 1-16 MB): 8x512x512 0.024 ms against 0.052 packed,
#: 32x512x1408 0.162 against 0.211, 16x1024x4096 0.49 against 1.12; even at 64 rows (0.29), packed ahead
#: from 128 (0.49 against 0.57).
ROW_DOT_ROWS = 32
#: The most rows of A in a row-dot tile: more are tiles of their own, each reading the tile's rows of W
#: again (from the L1 cache: 8 rows of 1024 floats are 32 KB).
ROW_DOT_TILE_ROWS = 4
#: Steps of K a register tile of x @ W's few rows takes before the next tile of columns (``row_tile_columns``):
#: each tile reads a block of W's rows together, not one segment of every row of W in turn.  W of 512 x 2048
#: from memory at one row: 40 GB/s walking all of K per tile, 45 in blocks of 8 (16: 41, 4: 45, 1: 42).
ROW_TILE_DEPTH = 8
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
