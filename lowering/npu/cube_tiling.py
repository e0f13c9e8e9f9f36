"""Cube tiling of a matmul kernel: the tile sizes over M, N and K, the GM traffic they cause, its lower bound.

A kernel ``C[M, N] = A[M, K] x B[K, N]`` (then an elementwise epilogue on C)
runs on the NPU as

    for m0 in 0..M step tm:                      # C tile [tm, tn] accumulates in L0C
      for n0 in 0..N step tn:
        for k0 in 0..K step tk:                  # GM -> L1: A[m0, k0] [tm, tk], B[k0, n0] [tk, tn]
          C_tile += A_tile x B_tile              # the cube reads its operands through L0A / L0B
        epilogue on the tile (UB), then UB / L0C -> GM

A is read once per column of tiles (``N / tn`` times), B once per row of
tiles (``M / tm`` times), C written once: GM bytes ``e (M K N / tn + K N M /
tm + M N)`` plus the epilogue's operands.  The traffic does not depend on
tk; tm x tn is bounded by L0C (the accumulator), tm x tk by L0A, tk x tn by
L0B and the two operand tiles (two slots each when double buffered) by L1.
:func:`choose_tiles` takes the divisors of M, N and K of at least the
cube's 16 x 16 fractal (or the whole dim) that fit and minimise the GM bytes
(ties: multiples of the fractal, then the largest tk, which means fewer
transfers).  The cube stores its operands and accumulator in whole
fractals, so a tile's footprint in L1, L0A, L0B and L0C is counted with
each dim rounded up to a multiple of 16: a 172-wide tile of N = 5504 (43 x
128) is 11 fractals wide, 2% padding, where 128-wide tiles would read A
43 times instead of 32.

The lower bound printed beside it (:func:`traffic_lower_bound`) is the larger
of the compulsory traffic (every operand read once, C written once) and the
classic bound for a matmul computed through a fast memory of S elements,
``2 M N K / sqrt(S)`` elements moved (Hong and Kung), with S the elements
L1 holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from graphfuse.dialect.npu_target import NpuTarget

__all__ = ["ConvShape", "ConvTiles", "CubeTiles", "choose_conv_tiles", "choose_tiles", "fractal_tile_sizes",
           "traffic_lower_bound"]

#: The cube's fractal: tiles are stored in whole fractals; sizes that are multiples of it are preferred.
FRACTAL = 16


def _padded(size: int) -> int:
    """``size`` rounded up to whole fractals."""
    return -(-size // FRACTAL) * FRACTAL


@dataclass(frozen=True)
class CubeTiles:
    tm: int
    tn: int
    tk: int
    #: GM bytes the tiling moves (operands, accumulator result, epilogue operands)
    gm_bytes: int
    #: bytes per on-chip space at this tiling
    peaks: dict[str, int]


def fractal_tile_sizes(n: int) -> list[int]:
    """The tile sizes of an M, N or K dim of ``n``: its divisors of at least one fractal, and ``n`` itself (a dim
    shorter than a fractal is one padded tile).  A smaller tile would be padded to a whole fractal on chip:
    it saves no space there, and wastes the cube's work."""
    return [d for d in range(1, n + 1) if n % d == 0 and (d >= FRACTAL or d == n)]


def traffic_lower_bound(m: int, n: int, k: int, element_bytes: int, l1_bytes: int) -> int:
    """GM bytes no tiling of ``[M, K] x [K, N]`` through an L1 of ``l1_bytes`` can go below."""
    compulsory = m * k + k * n + m * n
    fast = l1_bytes // element_bytes
    return element_bytes * max(compulsory, math.ceil(2 * m * n * k / math.sqrt(fast)))


def choose_tiles(m: int, n: int, k: int, element_bytes: int, accumulator_bytes: int, target: NpuTarget,
                 double_buffer: bool, epilogue: list[tuple[str, int, bool]]) -> CubeTiles | str:
    """The tiling of least GM traffic that fits ``target``, or why none does.

    ``epilogue`` lists the kernel's other on-chip buffers as (what it follows: "mn", "m", "n" or "", its
    element bytes, whether it is transferred from or to GM): they live in UB, one tile each.
    """
    best: tuple | None = None
    smallest_need: dict[str, int] | None = None
    for tm in fractal_tile_sizes(m):
        for tn in fractal_tile_sizes(n):
            accumulator = target.buffer("l0c").footprint(_padded(tm) * _padded(tn) * accumulator_bytes)
            if accumulator > target.buffer("l0c").bytes:
                continue
            ub = 0
            for follows, size, transferred in epilogue:
                elements = {"mn": tm * tn, "m": tm, "n": tn, "": 1}[follows]
                slots = 2 if double_buffer and transferred and (m // tm) * (n // tn) > 1 else 1
                ub += slots * target.buffer("ub").footprint(elements * size)
            if ub > target.buffer("ub").bytes:
                continue
            for tk in reversed(fractal_tile_sizes(k)):
                a, b = _padded(tm) * _padded(tk) * element_bytes, _padded(tk) * _padded(tn) * element_bytes
                steps = (m // tm) * (n // tn) * (k // tk)
                slots = 2 if double_buffer and steps > 1 else 1
                l1 = slots * (target.buffer("l1").footprint(a) + target.buffer("l1").footprint(b))
                need = {"l1": l1, "l0a": target.buffer("l0a").footprint(a), "l0b": target.buffer("l0b").footprint(b)}
                if smallest_need is None or sum(need.values()) < sum(smallest_need.values()):
                    smallest_need = need
                if any(need[s] > target.buffer(s).bytes for s in need):
                    continue
                gm = element_bytes * (m * k * (n // tn) + k * n * (m // tm))
                aligned = sum(1 for t in (tm, tn, tk) if t % FRACTAL == 0)
                key = (gm, -aligned, -tk, -tm * tn)
                if best is None or key < best[0]:
                    peaks = {"l1": l1, "l0c": accumulator, "ub": ub}
                    best = (key, CubeTiles(tm, tn, tk, gm, peaks))
                break  # the largest tk that fits: smaller ones move the same bytes
    if best is None:
        wanted = ", ".join(f"{s.upper()} {b}" for s, b in (smallest_need or {}).items())
        return (f"no tiling of [{m}, {k}] x [{k}, {n}] fits: the smallest tiles need {wanted or 'more'} bytes "
                f"(L0C holds {target.buffer('l0c').bytes}, L1 {target.buffer('l1').bytes})")
    return best[1]


@dataclass(frozen=True)
class ConvShape:
    """A convolution ``out[N, F, OH, OW] = x[N, C, H, W] (zero-padded) * w[F, C, KH, KW]``."""

    n: int
    c: int
    h: int
    w: int
    f: int
    kh: int
    kw: int
    oh: int
    ow: int
    strides: tuple[int, int]
    dilations: tuple[int, int]
    #: zero rows above and columns left of x in the padded input
    pad_top: int
    pad_left: int
    #: the padded input's width (x's columns and their padding: every tile holds whole rows)
    padded_w: int
    #: depthwise (F = C, filter f reads channel f alone, weights [C, KH, KW]): a vector op, in UB
    depthwise: bool = False
    #: weights read from GM (a pooling has none: its window is only a shape)
    gm_weights: bool = True
    #: groups (``c`` is then a group's channels, and a filter tile stays inside one group)
    groups: int = 1

    def window_rows(self, toh: int) -> int:
        """Rows of the padded input that ``toh`` output rows read."""
        return (toh - 1) * self.strides[0] + (self.kh - 1) * self.dilations[0] + 1


@dataclass(frozen=True)
class ConvTiles:
    tn: int
    tf: int
    toh: int
    tc: int
    gm_bytes: int
    peaks: dict[str, int]


def choose_conv_tiles(shape: ConvShape, element_bytes: int, accumulator_bytes: int, target: NpuTarget,
                      double_buffer: bool, epilogue: list[tuple[str, int, bool]]) -> ConvTiles | str:
    """The tiling of a convolution kernel of least GM traffic that fits ``target``, or why none does.

    The kernel runs as loops over tiles of the batch (``tn``), the filters (``tf``) and the output rows
    (``toh``, each a window of :meth:`ConvShape.window_rows` input rows, the halo read again by the next tile),
    the accumulator tile ``[tn, tf, toh, OW]`` in L0C, and inside them a loop over ``tc`` input channels: the
    input window ``[tn, tc, rows, padded W]`` and the weights ``[tf, tc, KH, KW]`` move GM -> L1 (two slots
    each when double buffered).  As a matmul of ``[N OH OW, C KH KW] x [C KH KW, F]`` (the cube builds the
    im2col fractals from the window in L1), tf is the N tile: at least a fractal (or all of F); the
    accumulator counts in whole fractals.  The input is read once per filter tile, the weights once per
    batch x row tile.  ``epilogue`` lists the UB buffers as (the loops they follow among "n", "f", "o"
    (output rows) and "w" (output columns, whole), element bytes, transferred).
    """
    s = shape
    best: tuple | None = None
    smallest: int | None = None
    ub_space, l1_space, l0c_space = target.buffer("ub"), target.buffer("l1"), target.buffer("l0c")
    if s.depthwise:  # the vector unit: everything in UB, no fractals, each filter tile reads its own channels
        l1_space = l0c_space = ub_space
    channel_tiles = [d for d in range(s.c, 0, -1) if s.c % d == 0 and (d * s.kh * s.kw >= FRACTAL or d == s.c)]
    per_group = s.f // s.groups
    filter_tiles = [d for d in range(1, s.f + 1) if s.f % d == 0] if s.depthwise else fractal_tile_sizes(per_group)
    for tn in (d for d in range(1, s.n + 1) if s.n % d == 0):
        for tf in filter_tiles:
            for toh in (d for d in range(1, s.oh + 1) if s.oh % d == 0):
                if s.depthwise:
                    accumulator = ub_space.footprint(tn * tf * toh * s.ow * accumulator_bytes)
                else:
                    accumulator = l0c_space.footprint(_padded(tn * toh * s.ow) * _padded(tf) * accumulator_bytes)
                if accumulator > l0c_space.bytes:
                    continue
                tiles = (s.n // tn) * (s.f // tf) * (s.oh // toh)
                ub = 0
                for follows, size, transferred in epilogue:
                    extent = {"n": tn, "f": tf, "o": toh, "w": s.ow}
                    elements = math.prod(extent[c] for c in follows)
                    slots = 2 if double_buffer and transferred and tiles > 1 else 1
                    ub += slots * ub_space.footprint(elements * size)
                if s.depthwise:
                    ub += accumulator
                if ub > ub_space.bytes:
                    continue
                rows = s.window_rows(toh)
                # the most channels a step that fit: fewer, smaller transfers move the same bytes
                for tc in [s.c] if s.depthwise else channel_tiles:
                    channels = tf if s.depthwise else tc  # a depthwise window holds the filter tile's channels
                    window = tn * channels * rows * s.padded_w * element_bytes
                    if not s.gm_weights:
                        weights = 0
                    elif s.depthwise:
                        weights = tf * s.kh * s.kw * element_bytes
                    else:
                        weights = _padded(tf) * _padded(tc * s.kh * s.kw) * element_bytes
                    slots = 2 if double_buffer and tiles * (s.c // tc) > 1 else 1
                    l1 = slots * (l1_space.footprint(window) + (l1_space.footprint(weights) if weights else 0))
                    need = l1 + ub if s.depthwise else l1
                    smallest = need if smallest is None else min(smallest, need)
                    if need > l1_space.bytes:
                        continue
                    x_rows = min(rows, s.h)  # a window's rows of x itself (an upper bound: borders read fewer)
                    # a filter tile reads every channel (of its group), or its own
                    x_reads = 1 if s.depthwise else per_group // tf
                    weight_count = s.f * (1 if s.depthwise else s.c) * s.kh * s.kw if s.gm_weights else 0
                    gm = element_bytes * (x_reads * s.n * s.c * s.groups * (s.oh // toh) * x_rows * s.w
                                          + (s.n // tn) * (s.oh // toh) * weight_count)
                    key = (gm, -tc, -tn * tf * toh)
                    if best is None or key < best[0]:
                        peaks = {"ub": need} if s.depthwise else {"l1": l1, "l0c": accumulator, "ub": ub}
                        best = (key, ConvTiles(tn, tf, toh, tc, gm, peaks))
                    break
    if best is None:
        need = f"{'UB' if s.depthwise else 'L1'} {smallest}" if smallest is not None else "more"
        return (f"no tiling of the convolution fits: the smallest tiles need {need} bytes "
                f"(L0C holds {l0c_space.bytes}, L1 {l1_space.bytes}, UB {ub_space.bytes})")
    return best[1]
