"""The lowering forms behind bench/lowering_cases.py: numerics against the reference interpreter (not timing).

- batched matmuls with static shapes are ``linalg.contract`` ops (no reshape for kernel loop fusion to push
  through), turned by the runtime into collapsed, transposed where needed, blocked ``linalg.matmul`` /
  ``batch_matmul`` ops, generic contractions included (a product with an epilogue by a matrix weight is the
  2-D product of the rows instead: outline-fused-ops);
- plain matmuls become register tiles (row blocks across the cores, cache blocks, a C tile carried through
  the K loop in vector registers), at every vector width and with remainders of every block;
- conv2d (groups 1, static shapes) is im2col + one contraction.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.lowering import contraction, runtime
from graphfuse.lowering.contraction import block_contractions, register_tile
from graphfuse.lowering.contraction import sizes as contraction_sizes
from graphfuse.lowering.contraction import strategy as contraction_strategy
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.lowering.structured_ops import conv as structured_conv

TOLERANCE = {"f32": (1e-5, 1e-4), "f16": (2e-3, 2e-2)}  # rtol, atol (relative to the largest magnitude)


def assert_close(want: np.ndarray, got: np.ndarray, dtype: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    w, g = want.astype(np.float64), got.astype(np.float64)
    rtol, atol = TOLERANCE[dtype]
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(1.0, float(np.abs(w).max())))


def compile_and_compare(module_builder, shapes: list[tuple[int, ...]], dtype: str = "f32") -> list[str]:
    """Compile at opt levels 0 and 2, compare both with the reference interpreter; returns the linalg texts."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float16 if dtype == "f16" else np.float32) for s in shapes]
    texts = []
    for level in (0, 2):
        exe = graphfuse.compile(module_builder(), opt_level=level)
        (want,) = exe.reference(*arrays)
        (got,) = exe(*arrays)
        assert_close(want, got, dtype)
        texts.append(str(exe.linalg))
    return texts


def compiled_matching_reference(module, arrays: list[np.ndarray]):
    """``module`` compiled at opt level 2, every f32 result checked against the reference interpreter."""
    exe = graphfuse.compile(module, opt_level=2)
    for want, got in zip(exe.reference(*arrays), exe(*arrays), strict=True):
        assert_close(want, got, "f32")
    return exe


# --------------------------------------------------------------------------
# matmul: rank-3 x rank-2 with an epilogue, 4-D batches, flash attention.


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_linear_bias(dtype: str, transpose_b: bool) -> None:
    def build():
        b = GraphBuilder("f")
        x = b.arg((2, 8, 16), dtype)
        w = b.arg((24, 16) if transpose_b else (16, 24), dtype)
        bias = b.arg((24,), dtype)
        b.ret(b.add(b.matmul(x, w, transpose_b=transpose_b), bias))
        return b.module

    shapes = [(2, 8, 16), (24, 16) if transpose_b else (16, 24), (24,)]
    _, fused = compile_and_compare(build, shapes, dtype)
    # outline-fused-ops made it the 2-D product of x's 16 rows (a view of x), the bias added to each block of C
    # as the product's epilogue; the one reshape left is the view of the result as [2, 8, 24]
    assert "linalg.contract" not in fused and "linalg.matmul" in fused
    assert re.search(r"ins\(%\d+, %arg2 : tensor<16x24x", fused)
    assert fused.count("tensor.expand_shape") == 1 and "into tensor<2x8x24x" in fused


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
def test_batched_4d_matmul(ta: bool, tb: bool) -> None:
    a_shape = (2, 3, 5, 4) if ta else (2, 3, 4, 5)
    b_shape = (2, 3, 6, 5) if tb else (2, 3, 5, 6)

    def build():
        b = GraphBuilder("f")
        x, y = b.arg(a_shape), b.arg(b_shape)
        b.ret(b.relu(b.matmul(x, y, transpose_a=ta, transpose_b=tb)))
        return b.module

    compile_and_compare(build, [a_shape, b_shape])


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("with_mask", [True, False])
def test_flash_attention(dtype: str, with_mask: bool) -> None:
    q_shape, mask_shape = (2, 3, 8, 4), (2, 1, 1, 8)

    def build():
        b = GraphBuilder("f")
        q, k, v = (b.arg(q_shape, dtype) for _ in range(3))
        mask = [b.arg(mask_shape, dtype)] if with_mask else []
        b.ret(b.flash_attention(q, k, v, *mask, scale=0.5))
        return b.module

    _, fused = compile_and_compare(build, [q_shape] * 3 + ([mask_shape] if with_mask else []), dtype)
    # the softmax stays out of the second product's loop nest: both products are named contractions,
    # and the softmax between them is tiled by rows and vectorized
    assert fused.count("linalg.contract") == 2
    assert "scf.for" in fused and "vector.reduction <maximumf>" in fused


# --------------------------------------------------------------------------
# The runtime's contraction rewrite, on IR directly.

CONTRACTIONS = [
    # (A shape, B shape, C shape, A map, B map, C map) over loop dims d0..
    ((2, 8, 16), (16, 24), (2, 8, 24), "(d0, d1, d3)", "(d3, d2)", "(d0, d1, d2)"),  # rows from a batch dim
    ((2, 3, 8, 4), (2, 3, 4, 6), (2, 3, 8, 6), "(d0, d1, d2, d4)", "(d0, d1, d4, d3)", "(d0, d1, d2, d3)"),
    ((2, 3, 8, 4), (2, 3, 6, 4), (2, 3, 8, 6), "(d0, d1, d2, d4)", "(d0, d1, d3, d4)", "(d0, d1, d2, d3)"),  # B^T
    ((5, 12), (12, 2, 3, 4), (2, 5, 3, 4), "(d0, d4)", "(d4, d1, d2, d3)", "(d1, d0, d2, d3)"),  # conv: C transposed
    ((5, 12), (12, 1, 3, 4), (1, 5, 3, 4), "(d0, d4)", "(d4, d1, d2, d3)", "(d1, d0, d2, d3)"),  # a unit dim
]


def _contraction_module(a, b, c, a_map, b_map, c_map, op: str) -> str:
    loops = max(int(ch) for m in (a_map, b_map, c_map) for ch in m if ch.isdigit()) + 1
    dims = ", ".join(f"d{i}" for i in range(loops))
    types = ["tensor<" + "x".join(map(str, s)) + "xf32>" for s in (a, b, c)]
    maps = ", ".join(f"affine_map<({dims}) -> {m}>" for m in (a_map, b_map, c_map))
    if op == "contract":
        body = f"linalg.contract indexing_maps = [{maps}] ins(%a, %b : {types[0]}, {types[1]}) outs(%z : {types[2]})"
        body += f" -> {types[2]}"
    else:
        iterators = ", ".join('"parallel"' if f"d{i}" in c_map else '"reduction"' for i in range(loops))
        body = (
            f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}]}} "
            f"ins(%a, %b : {types[0]}, {types[1]}) outs(%z : {types[2]}) {{\n"
            "    ^bb0(%x: f32, %y: f32, %acc: f32):\n"
            + (
                "      %q = arith.divf %x, %y : f32\n      %p = arith.mulf %q, %y : f32\n"
                if op == "prologue"
                else "      %p = arith.mulf %x, %y : f32\n"
            )
            + "      %s = arith.addf %acc, %p : f32\n      linalg.yield %s : f32\n"
            f"    }} -> {types[2]}"
        )
    return (
        f"func.func @f(%a: {types[0]}, %b: {types[1]}) -> {types[2]} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e = tensor.empty() : {types[2]}\n"
        f"  %z = linalg.fill ins(%zero : f32) outs(%e : {types[2]}) -> {types[2]}\n"
        f"  %r = {body}\n"
        f"  return %r : {types[2]}\n}}"
    )


def _einsum(a_map: str, b_map: str, c_map: str) -> str:
    letters = {f"d{i}": "abcdefgh"[i] for i in range(8)}
    return ",".join("".join(letters[d.strip()] for d in m.strip("()").split(",")) for m in (a_map, b_map)) + (
        "->" + "".join(letters[d.strip()] for d in c_map.strip("()").split(","))
    )


@pytest.mark.parametrize("op", ["contract", "generic"])
@pytest.mark.parametrize(("a", "b", "c", "a_map", "b_map", "c_map"), CONTRACTIONS)
def test_contractions_become_blocked_matmuls(op: str, a, b, c, a_map: str, b_map: str, c_map: str) -> None:
    text = _contraction_module(a, b, c, a_map, b_map, c_map, op)
    with ir.Context():
        module = ir.Module.parse(text)
        block_contractions(module)
        rewritten = str(module)
    assert "linalg.contract" not in rewritten
    assert "scf.for" in rewritten, rewritten  # only named matmuls are blocked: the contraction became one
    with ir.Context():
        compiled = compile_linalg(ir.Module.parse(text), "f")
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32)
    (got,) = compiled(x, y)
    np.testing.assert_allclose(got, np.einsum(_einsum(a_map, b_map, c_map), x, y), rtol=1e-5, atol=1e-4)


def test_contraction_with_a_prologue_is_left_alone() -> None:
    """A generic whose body is more than multiply-add (an elementwise producer fused in) is not a matmul."""
    a, b, c, a_map, b_map, c_map = CONTRACTIONS[0]
    text = _contraction_module(a, b, c, a_map, b_map, c_map, "prologue")
    with ir.Context():
        module = ir.Module.parse(text)
        block_contractions(module)
        rewritten = str(module)
    assert "arith.divf" in rewritten and "linalg.matmul" not in rewritten and "scf.for" not in rewritten


# --------------------------------------------------------------------------
# Register-tiled matmuls: sizes that are multiples of the register tile and of the cache blocks, and sizes
# that leave a rest of each (rows and columns of C narrower than a tile, a reduction not a multiple of 256),
# with B packed (columns a multiple of the tile) or not.

MATMULS = [(64, 32, 64), (37, 50, 29), (130, 300, 270), (37, 300, 96)]


def _matmul_module(m: int, k: int, n: int) -> str:
    a, b, c = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    return (
        f"func.func @f(%a: {a}, %b: {b}) -> {c} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e = tensor.empty() : {c}\n"
        f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
        f"  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%z : {c}) -> {c}\n"
        f"  return %r : {c}\n}}"
    )


@pytest.mark.parametrize("bits", [128, 256, 512])
@pytest.mark.parametrize(("m", "k", "n"), MATMULS)
def test_matmuls_become_register_tiles(bits: int, m: int, k: int, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: bits)
    runtime.clear_cache()  # compiled at another width by another case
    text = _matmul_module(m, k, n)
    with ir.Context():
        module = ir.Module.parse(text)
        block_contractions(module)
        tiled = str(module)
    rows, cols = register_tile(bits)
    assert "scf.forall" in tiled and "vector.fma" in tiled, tiled
    # the C tile is read before the K loop and carried through it in registers, not loaded and stored per step:
    # full tiles, and the narrower static tiles of a rest
    # (rows x 1 x columns when B is packed: one panel of columns)
    carried = {tuple(map(int, t)) for t in re.findall(r"\) -> \(vector<(\d+)x(?:1x)?(\d+)xf32>\)", tiled)}
    assert carried and all(r <= rows and c <= cols for r, c in carried), tiled
    assert ((rows, cols) in carried) == (m >= rows and n >= cols)
    assert "graph.vectorize" not in tiled and "graph.matmul_tiles" not in tiled  # the schedule's marks are gone
    # every tile has a static size and became vector code: none is left as a loop over a dynamic slice
    assert "linalg.matmul" not in tiled and "linalg.generic" not in tiled, tiled
    # C's fill runs in the row blocks (each fills its block, in cache, before computing it), not as a pass
    # over all of C before: no fill is left at the function's top level (4 spaces in)
    assert not re.search(r"^    %\S+ = linalg.fill", tiled, re.M), tiled
    # B is packed into panels ([N / cols, K, cols]); columns short of a last panel into narrower panels of
    # powers of two (29 % 16 = 13 = 8 + 4 + 1), so that every tile's accumulator is
    assert (f"tensor<{n // cols}x{k}x{cols}xf32>" in tiled) == (n >= cols), tiled
    narrow = {int(w) for w in re.findall(rf"tensor<1x{k}x(\d+)xf32>", tiled)} - {cols}
    assert narrow == {1 << bit for bit in range(8) if (n % cols) >> bit & 1}, (narrow, tiled)
    assert all(c & (c - 1) == 0 for _, c in carried), carried
    with ir.Context():
        compiled = compile_linalg(ir.Module.parse(text), "f")
    # the only intermediate buffers are B's panels (aligned): C is computed in the output, not in a buffer
    # of its own copied there, and B is copied once, not into a padded buffer first
    assert sum(w.nbytes for w in compiled.workspace) <= 4 * k * n + 2 * 64
    # and no copy of a block onto itself is left (a task's block of C, C viewed as panels and back)
    assert "memcpy" not in compiled.llvm_dialect_ir and "memrefCopy" not in compiled.llvm_dialect_ir
    rng = np.random.default_rng(m)
    x, y = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    (got,) = compiled(x, y)
    assert_close(x.astype(np.float64) @ y, got.astype(np.float64), "f32")
    runtime.clear_cache()


def _tiled_and_compiled(text: str, threads: int | None = None):
    """(the module's text after block_contractions, the module compiled), both for ``threads`` threads when
    given (else the schedule's default and the runtime's)."""
    with ir.Context():
        module = ir.Module.parse(text)
        block_contractions(module, threads or 1)
        tiled = str(module)
    with ir.Context():
        return tiled, compile_linalg(ir.Module.parse(text), "f", threads=threads)


@pytest.mark.parametrize(("panels", "threads", "tasks"), [(20, None, 3), (24, 2, 4)])
def test_few_rows_share_panels_across_the_cores(panels: int, threads: int | None, tasks: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """13 rows are one row block: the cores share the panels of B instead, 8 per task (20 panels: 3 tasks), or
    fewer where that evens out the threads (24 panels on 2 threads: 4 tasks of 6)."""
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    runtime.clear_cache()
    m, k, n = 13, 40, panels * 16
    tiled, compiled = _tiled_and_compiled(_matmul_module(m, k, n), threads)
    # the product's tasks (the packing copy's come first)
    found = re.findall(r"scf.forall \(%\w+\) in \((\d+)\) shared_outs\(%\w+ = %\w+\) -> \(tensor<(\w+)>", tiled)
    assert (str(tasks), f"{m}x{panels}x16xf32") in found, found
    assert "linalg.matmul" not in tiled and "linalg.generic" not in tiled, tiled
    rng = np.random.default_rng(13)
    x, y = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    (got,) = compiled(x, y)
    assert_close(x.astype(np.float64) @ y, got.astype(np.float64), "f32")
    runtime.clear_cache()


def _transposed_b_module(m: int, k: int, n: int) -> str:
    """@f(a[m, k], w[n, k]) = a @ w^T, w read through the matmul's indexing map (a linear layer's weight)."""
    a, w, c = f"tensor<{m}x{k}xf32>", f"tensor<{n}x{k}xf32>", f"tensor<{m}x{n}xf32>"
    return (
        f"func.func @f(%a: {a}, %w: {w}) -> {c} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e = tensor.empty() : {c}\n"
        f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
        "  %r = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,"
        f" affine_map<(i, j, k) -> (i, j)>] ins(%a, %w : {a}, {w}) outs(%z : {c}) -> {c}\n"
        f"  return %r : {c}\n}}"
    )


@pytest.mark.parametrize("bits", [256, 512])
@pytest.mark.parametrize(("m", "k", "n"), [(37, 50, 29), (40, 301, 48), (64, 32, 64)])
def test_transposed_b_is_packed_from_its_source(bits: int, m: int, k: int, n: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """B read transposed (a linear layer's weight [N, K]), more rows of A than the row-dot schedule takes: the
    panels are copied from the weight, one copy; with 16 lanes in 16x16 blocks transposed by shuffles.

    Steps of K that the copy's tiles do not divide (301) and columns short of a panel (29) included.
    """
    assert m > contraction.ROW_DOT_ROWS
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: bits)
    runtime.clear_cache()
    _, cols = register_tile(bits)
    text = _transposed_b_module(m, k, n)
    tiled, compiled = _tiled_and_compiled(text)
    # no transposed copy of the whole weight ([K, N]); the panels' copies read it as [panels, cols, K]
    assert f"tensor<{k}x{n}xf32>" not in tiled, tiled
    if n >= cols:  # the whole panels are read from the weight's rows viewed as [panels, cols, K]
        assert f"tensor<{n // cols}x{cols}x{k}xf32>" in tiled, tiled
    assert "vector.transfer_read" in tiled and "linalg.transpose" not in tiled, tiled
    if bits == 512 and k >= contraction.SHUFFLED_PACK_BLOCK and n >= contraction.SHUFFLED_PACK_BLOCK:
        assert re.search(r"vector.shuffle .* : vector<16xf32>, vector<16xf32>", tiled), tiled
    # B's panels are the only workspace
    assert sum(b.nbytes for b in compiled.workspace) <= 4 * k * n + 2 * 64
    rng = np.random.default_rng(k)
    x, y = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((n, k)).astype(np.float32)
    (got,) = compiled(x, y)
    assert_close(x.astype(np.float64) @ y.T.astype(np.float64), got.astype(np.float64), "f32")
    runtime.clear_cache()


@pytest.mark.parametrize("bits", [256, 512])
@pytest.mark.parametrize(("m", "k", "n"), [(1, 1024, 64), (1, 100, 43), (3, 17, 8), (4, 7, 2), (9, 40, 20),
                                         (32, 64, 16)])
def test_few_rows_read_a_transposed_b_as_it_is(bits: int, m: int, k: int, n: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """x[M <= 32, K] @ W[N, K]^T with W an argument (a linear layer, a few tokens): no copy of W into panels;
    tasks of row_dot_tile rows of W, each in tiles of up to 4 rows of x with a [rows, R, lanes] accumulator
    of partial sums in vectors over K and one sum of lanes per tile; rows and columns short of a tile and
    steps of K short of the vector width are tiles of their own."""
    assert contraction.row_dot_tile(1, 512) == 8 and contraction.row_dot_tile(4, 512) == 4
    assert contraction.row_dot_tile(2, 256) == 4 and contraction.row_dot_tile(4, 256) == 2
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: bits)
    runtime.clear_cache()
    text = _transposed_b_module(m, k, n)
    tiled, compiled = _tiled_and_compiled(text, threads=2)
    rows = min(m, contraction.ROW_DOT_TILE_ROWS)
    lanes, tile = bits // 32, contraction.row_dot_tile(rows, bits)
    assert "linalg.transpose" not in tiled and f"tensor<{k}x{n}xf32>" not in tiled, tiled  # W is read as it is
    assert "linalg.matmul" not in tiled, tiled
    if k >= lanes:
        assert f"vector<{rows}x{min(n, tile)}x{lanes}xf32>" in tiled, tiled  # the accumulator of a tile
    tasks = re.findall(r"scf.forall \(%\w+\) in \((\d+)\)", tiled)
    per_rows = [t for t in (n // tile, 1 if n % tile else 0) if t]  # whole tiles of columns, then the rest
    assert sorted(map(int, tasks)) == sorted(per_rows * (1 + (m > rows and m % rows != 0))), tasks
    assert sum(b.nbytes for b in compiled.workspace) < 4 * k * n
    assert "llvm.intr.vector.reduce.fadd" in compiled.llvm_dialect_ir
    rng = np.random.default_rng(k)
    x, y = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((n, k)).astype(np.float32)
    (got,) = compiled(x, y)
    assert_close(x.astype(np.float64) @ y.T.astype(np.float64), got.astype(np.float64), "f32")
    runtime.clear_cache()


@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize(("m", "k", "n"), [(37, 50, 29), (20, 31, 48)])
def test_constant_b_is_packed_when_compiling(m: int, k: int, n: int, transpose_b: bool) -> None:
    """A weight imported as a constant: its panels are a constant too, no copy runs when the matmul is called."""
    rng = np.random.default_rng(n)
    weight = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    b = GraphBuilder("f")
    x = b.arg((m, k))
    b.ret(b.matmul(x, b.const(weight), transpose_b=transpose_b))
    tiled, compiled = _tiled_and_compiled(graphfuse.compile(b.module, opt_level=2).linalg)
    _, cols = register_tile(contraction_strategy.vector_bits())
    # the panels ([N / cols, K, cols], and narrower panels of powers of two for the last columns) are constants
    constants = re.findall(r"arith.constant dense<[^>]*> : tensor<(\d+)x(\d+)x(\d+)xf32>", tiled)
    expected = {(n // cols, k, cols)} if n >= cols else set()
    expected |= {(1, k, 1 << bit) for bit in range(8) if (n % cols) >> bit & 1}
    assert {tuple(map(int, c)) for c in constants} == expected, constants
    # no copy into panels is left, and the weight as given is gone
    assert "linalg.transpose" not in tiled and "vector.transfer_read %cst" not in tiled, tiled
    assert f"tensor<{n}x{k}xf32>" not in tiled and f"tensor<{k}x{n}xf32>" not in tiled, tiled
    assert not compiled.workspace
    # the panels' global starts on a cache line, as the workspace's buffers do
    globals_ = re.findall(r"llvm.mlir.global private constant @\S+\(.*\{(.*)\}", compiled.llvm_dialect_ir)
    assert globals_ and all("alignment = 64" in g for g in globals_), globals_
    a = rng.standard_normal((m, k)).astype(np.float32)
    (got,) = compiled(a)
    want = a.astype(np.float64) @ (weight.T if transpose_b else weight).astype(np.float64)
    assert_close(want, got.astype(np.float64), "f32")


def test_bias_after_a_matmul_runs_across_the_cores_in_vectors() -> None:
    """A bias add reading a matmul's result (matmul_bias_add's epilogue): row tasks, rows in vectors."""
    m, k, n = 50, 24, 37
    a, b, c = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    text = (
        "#id = affine_map<(d0, d1) -> (d0, d1)>\n#row = affine_map<(d0, d1) -> (d1)>\n"
        f"func.func @f(%a: {a}, %b: {b}, %bias: tensor<{n}xf32>) -> {c} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e = tensor.empty() : {c}\n"
        f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
        f"  %p = linalg.matmul ins(%a, %b : {a}, {b}) outs(%z : {c}) -> {c}\n"
        "  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = [\"parallel\", \"parallel\"]}"
        f" ins(%p, %bias : {c}, tensor<{n}xf32>) outs(%e : {c}) {{\n"
        "  ^bb0(%x: f32, %y: f32, %o: f32):\n    %s = arith.addf %x, %y : f32\n    linalg.yield %s : f32\n  }"
        f" -> {c}\n  return %r : {c}\n}}"
    )
    tiled, compiled = _tiled_and_compiled(text)
    rows = contraction.EPILOGUE_ROWS
    # the add: a task per EPILOGUE_ROWS rows, in vectors (no generic left), the last columns peeled
    assert re.search(rf"scf.forall \(%\w+\) in \({-(-m // rows)}\) shared_outs\(%\w+ = %\w+\) -> \({c}\)", tiled), tiled
    assert "linalg.generic" not in tiled and "graph.epilogue" not in tiled, tiled
    assert re.search(r"arith.addf %\S+, %\S+ : vector<1x\d+xf32>", tiled), tiled
    rng = np.random.default_rng(5)
    x, y, z = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,)))
    (got,) = compiled(x, y, z)
    assert_close(x.astype(np.float64) @ y + z, got.astype(np.float64), "f32")


def _matmul_epilogue_module(m: int, k: int, n: int, reads_product_twice: bool = False) -> str:
    """C = A @ B, then gelu-like tanh(C + bias) * C + residual in one generic (the product read once, or twice)."""
    a, b, c = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    product_inputs = "%p, %p, %bias, %res" if reads_product_twice else "%p, %bias, %res"
    product_types = f"{c}, {c}, tensor<{n}xf32>, {c}" if reads_product_twice else f"{c}, tensor<{n}xf32>, {c}"
    maps = "#id, #id, #row, #id, #id" if reads_product_twice else "#id, #row, #id, #id"
    names = ["%x", *(["%x2"] if reads_product_twice else []), "%y", "%r", "%o"]
    arguments = ", ".join(f"{name}: f32" for name in names)
    second = "%x2" if reads_product_twice else "%x"
    return (
        "#id = affine_map<(d0, d1) -> (d0, d1)>\n#row = affine_map<(d0, d1) -> (d1)>\n"
        f"func.func @f(%a: {a}, %b: {b}, %bias: tensor<{n}xf32>, %res: {c}) -> {c} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e = tensor.empty() : {c}\n"
        f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
        f"  %p = linalg.matmul ins(%a, %b : {a}, {b}) outs(%z : {c}) -> {c}\n"
        f"  %q = linalg.generic {{indexing_maps = [{maps}], iterator_types = [\"parallel\", \"parallel\"]}}"
        f" ins({product_inputs} : {product_types}) outs(%e : {c}) {{\n"
        f"  ^bb0({arguments}):\n"
        "    %s = arith.addf %x, %y : f32\n    %t = math.tanh %s : f32\n"
        f"    %u = arith.mulf %t, {second} : f32\n    %v = arith.addf %u, %r : f32\n    linalg.yield %v : f32\n  }}"
        f" -> {c}\n  return %q : {c}\n}}"
    )


def _check_epilogue_module(compiled, m: int, k: int, n: int) -> None:
    """Run :func:`_matmul_epilogue_module`'s compiled function on random inputs against numpy."""
    rng = np.random.default_rng(m + n)
    x, y, bias, res = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,), (m, n)))
    (got,) = compiled(x, y, bias, res)
    product = x.astype(np.float64) @ y
    assert_close(np.tanh(product + bias) * product + res, got.astype(np.float64), "f32")
    runtime.clear_cache()


@pytest.mark.parametrize(("m", "k", "n"), [(96, 40, 512), (300, 64, 256), (1030, 64, 512)])
def test_epilogue_runs_on_each_block_of_c(m: int, k: int, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """An elementwise epilogue reading the product once is applied to each block of C in the product's tasks
    (tasks of panels for 96 rows, of 30 rows for 300; outer blocks of B and a rest of 22 rows for 1030 with a
    small cache): no pass over C of its own, C computed in a scratch block, the epilogue's result written once."""
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    if m > 1000:  # two outer blocks of B
        monkeypatch.setattr(contraction_sizes, "last_level_cache_bytes", lambda: 8 * 64 * 16 * 4 * 16)
    runtime.clear_cache()
    tiled, compiled = _tiled_and_compiled(_matmul_epilogue_module(m, k, n))
    # one parallel loop nest for the product and its epilogue (plus the copy of B into panels), no epilogue
    # task of its own, no whole-size product left, every op vector code
    assert tiled.count("scf.forall (") == 2 + (m > 1000), tiled
    assert "linalg.generic" not in tiled and "linalg.matmul" not in tiled, tiled
    assert re.search(r"math.tanh %\S+ : vector<1x1x16xf32>", tiled), tiled
    # the only buffer besides the output is B's panels: C is a scratch block on the stack
    assert sum(w.nbytes for w in compiled.workspace) <= 4 * k * n + 2 * 64, compiled.workspace
    _check_epilogue_module(compiled, m, k, n)


@pytest.mark.parametrize(("m", "k", "n", "twice"), [(96, 40, 120, False), (96, 40, 128, True)])
def test_epilogue_keeps_its_own_pass(m: int, k: int, n: int, twice: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Epilogues left as a pass of their own (rows across the cores, in vectors): columns short of a last panel
    (a block of C of no static size), and an epilogue reading the product twice."""
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    runtime.clear_cache()
    tiled, compiled = _tiled_and_compiled(_matmul_epilogue_module(m, k, n, reads_product_twice=twice))
    rows = contraction.EPILOGUE_ROWS
    assert re.search(rf"scf.forall \(%\w+\) in \({-(-m // rows)}\)", tiled), tiled
    _check_epilogue_module(compiled, m, k, n)


@pytest.mark.parametrize(("threads", "tasks"), [(1, 1), (2, 2)])
def test_the_copy_into_panels_is_shared_evenly(threads: int, tasks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """8 panels of B: one task of 8 on one thread, 2 tasks of 4 on two (one task left a core idle)."""
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    runtime.clear_cache()
    m, k, n = 256, 64, 8 * 16
    tiled, compiled = _tiled_and_compiled(_matmul_module(m, k, n), threads)
    found = re.findall(r"scf.forall \(%\w+\) in \((\d+)\) shared_outs\(%\w+ = %\w+\) -> \(tensor<(\w+)>", tiled)
    assert (str(tasks), f"8x{k}x16xf32") in found, found
    assert "graph.pack_tasks" not in tiled, tiled
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    (got,) = compiled(x, y)
    assert_close(x.astype(np.float64) @ y, got.astype(np.float64), "f32")
    runtime.clear_cache()


@pytest.mark.parametrize(("panels", "threads", "task"), [
    (20, 1, 8), (64, 1, 8),  # one thread: the default
    (16, 2, 8), (64, 2, 8),  # 2 and 8 tasks: even already
    (24, 2, 6), (24, 4, 6),  # 768 columns: 4 tasks of 6, not 3 of 8 (one core idle a third of the time)
    (20, 2, 5),  # 4 tasks of 5, not 8 + 8 + 4
])
def test_panel_tasks_share_evenly(panels: int, threads: int, task: int) -> None:
    assert contraction.panel_task(panels, threads) == task


@pytest.mark.parametrize(("rows", "threads", "block"), [
    (40, 2, 40),  # one block
    (1024, 1, 48), (1024, 2, 42),  # 21 blocks of 48 are 11 against 10 on two threads; 24 of 42 are 12 each
    (300, 1, 30), (300, 2, 30),  # a divisor: no rest product
    (1000, 2, 48),  # 20 blocks, 10 each, and 40 rows of rest
])
def test_row_blocks_share_evenly(rows: int, threads: int, block: int) -> None:
    assert contraction.row_block(rows, 6, threads) == block


def test_several_matmuls_in_one_function() -> None:
    """Each matmul gets its own row blocks and register tiles (x @ w1 @ w2, B packed in one, not the other).

    Two schedules run one after the other (one per form). Touching a product the first had replaced
    crashed graphfuse-bisect on test/Tools/Inputs/bisect-silu.mlir (its lit test); here both forms are
    checked against numpy.
    """
    f32 = "xf32>"
    x, w1, w2, h, y = (f"tensor<{s}{f32}" for s in ("24x40", "40x48", "48x7", "24x48", "24x7"))
    text = (
        f"func.func @f(%x: {x}, %w1: {w1}, %w2: {w2}) -> {y} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e1 = tensor.empty() : {h}\n  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : {h}) -> {h}\n"
        f"  %h = linalg.matmul ins(%x, %w1 : {x}, {w1}) outs(%z1 : {h}) -> {h}\n"
        f"  %e2 = tensor.empty() : {y}\n  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : {y}) -> {y}\n"
        f"  %y = linalg.matmul ins(%h, %w2 : {h}, {w2}) outs(%z2 : {y}) -> {y}\n"
        f"  return %y : {y}\n}}"
    )
    tiled, compiled = _tiled_and_compiled(text)
    # a K loop carrying a C tile in registers in each (and no matmul left as loops)
    assert len(re.findall(r"\) -> \(vector<", tiled)) >= 2 and "linalg.matmul" not in tiled, tiled
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((24, 40), (40, 48), (48, 7)))
    (got,) = compiled(a, b, c)
    assert_close(a.astype(np.float64) @ b @ c, got.astype(np.float64), "f32")


@pytest.mark.parametrize("shape", [(4, 16, 48), (64, 48), (2, 2, 16, 48)])
def test_reshaped_matmul_result_is_computed_in_the_output(shape: tuple[int, ...]) -> None:
    """A matmul's [M, N] result returned in another shape (a language model's logits as [B, S, V]) is computed in
    the output itself: no copy of the whole result at the end of the call."""
    b = graphfuse.GraphBuilder("f")
    x, w = b.arg((64, 32)), b.arg((48, 32))
    b.ret(b.reshape(b.matmul(x, w, transpose_b=True), shape))
    rng = np.random.default_rng(5)
    exe = compiled_matching_reference(b.module, [rng.standard_normal(s).astype(np.float32)
                                                 for s in ((64, 32), (48, 32))])
    assert "memcpy" not in exe.function.llvm_dialect_ir


THREADS = 2
TASK_BATCHES = contraction.BATCH_TASKS_PER_THREAD * THREADS


def _batched_matmul_module(batches: int, m: int, k: int, n: int, dtype: str = "f32") -> str:
    """``@f(a, b) = a @ b`` for ``batches`` batches of [m, k] x [k, n], C a filled zero."""
    a, b, c = (f"tensor<{batches}x{s}x{dtype}>" for s in (f"{m}x{k}", f"{k}x{n}", f"{m}x{n}"))
    return (
        f"func.func @f(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %zero = arith.constant 0.0 : {dtype}\n"
        f"  %e = tensor.empty() : {c}\n  %z = linalg.fill ins(%zero : {dtype}) outs(%e : {c}) -> {c}\n"
        f"  %r = linalg.batch_matmul ins(%a, %b : {a}, {b}) outs(%z : {c}) -> {c}\n"
        f"  return %r : {c}\n}}"
    )


@pytest.mark.parametrize(("batches", "dtype"), [
    (TASK_BATCHES - 1, "f32"), (TASK_BATCHES, "f32"), (contraction.MAX_UNROLLED_BATCHES + 1, "f32"),
    (TASK_BATCHES, "f16"), (contraction.MAX_UNROLLED_BATCHES + 1, "f16"),
])
def test_batched_matmuls(batches: int, dtype: str) -> None:
    """f32 with at least BATCH_TASKS_PER_THREAD batches per thread: one task per batch, each a register-tiled
    product in a serial schedule; fewer batches (or other types, up to MAX_UNROLLED_BATCHES): one register-tiled
    matmul per batch after the other; more of another type: the blocked batch loops."""
    tiled, compiled = _tiled_and_compiled(_batched_matmul_module(batches, 20, 24, 16, dtype), THREADS)
    tasks = dtype == "f32" and batches >= TASK_BATCHES
    unrolled = not tasks and batches <= contraction.MAX_UNROLLED_BATCHES
    if tasks or unrolled:  # each batch computed in place in the result: no batch's C copied out and back
        assert "memcpy" not in compiled.llvm_dialect_ir and "memrefCopy" not in compiled.llvm_dialect_ir
    carried = len(re.findall(r"\) -> \(vector<", tiled))  # K loops carrying a C tile (a batch's tiles and rest)
    if tasks:  # one forall over the batches, no forall inside it; one product's tiles, not one per batch
        outer = re.findall(r"scf.forall \(%\w+\) in \((\d+)\)", tiled)
        assert outer == [str(batches)], outer
        assert 1 <= carried < batches and "scf.for" in tiled, tiled
    else:
        assert carried >= batches if unrolled else carried == 0, tiled
    assert ("linalg.generic" in tiled) == (not tasks and not unrolled)  # the batch loops' generalized product
    rng = np.random.default_rng(batches)
    numpy_type = np.float32 if dtype == "f32" else np.float16
    x = rng.standard_normal((batches, 20, 24)).astype(numpy_type)
    y = rng.standard_normal((batches, 24, 16)).astype(numpy_type)
    (got,) = compiled(x, y)
    want = np.einsum("bik,bkj->bij", x.astype(np.float64), y.astype(np.float64))
    assert_close(want, got.astype(np.float64), dtype)


def test_batch_tasks_only_when_each_b_is_one_outer_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch's B larger than one outer block of panels (here 32 panels against 16, the cache made small)
    keeps a product per batch across the cores, with its outer blocks: the serial schedule has none."""
    monkeypatch.setattr(contraction_sizes, "last_level_cache_bytes", lambda: 64 * 1024)
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    runtime.clear_cache()
    batches = TASK_BATCHES
    assert contraction.outer_panels(24, 16) < 512 // 16
    tiled, compiled = _tiled_and_compiled(_batched_matmul_module(batches, 20, 24, 512), THREADS)
    assert f"[{batches - 1}, 0, 0] [1, 20, 24]" in tiled, tiled  # the last batch's A, a product of its own
    rng = np.random.default_rng(batches)
    x, y = rng.standard_normal((batches, 20, 24)), rng.standard_normal((batches, 24, 512))
    (got,) = compiled(x.astype(np.float32), y.astype(np.float32))
    assert_close(np.einsum("bik,bkj->bij", x, y), got.astype(np.float64), "f32")


def test_batch_tasks_compute_the_heads_transpose_and_fill() -> None:
    """Attention's q @ k^T over [1, heads, S, D]: the heads collapsed after k's transpose and C's fill (as
    as_named_matmul gives them) are collapsed first, so that each head's task computes its own: no transpose
    or fill of all heads left before the tasks (one thread copied k^T alone while the other waited)."""
    heads = TASK_BATCHES
    q, k, c = (f"tensor<1x{heads}x{s}xf32>" for s in ("20x24", "16x24", "20x16"))
    qc, kt, ktc, cc = (f"tensor<{s}xf32>" for s in (f"{heads}x20x24", f"1x{heads}x24x16", f"{heads}x24x16",
                                                     f"{heads}x20x16"))
    text = (
        f"func.func @f(%q: {q}, %k: {k}) -> {cc} {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %e = tensor.empty() : {c}\n  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
        f"  %te = tensor.empty() : {kt}\n"
        f"  %t = linalg.transpose ins(%k : {k}) outs(%te : {kt}) permutation = [0, 1, 3, 2]\n"
        f"  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : {q} into {qc}\n"
        f"  %tc = tensor.collapse_shape %t [[0, 1], [2], [3]] : {kt} into {ktc}\n"
        f"  %zc = tensor.collapse_shape %z [[0, 1], [2], [3]] : {c} into {cc}\n"
        f"  %r = linalg.batch_matmul ins(%qc, %tc : {qc}, {ktc}) outs(%zc : {cc}) -> {cc}\n"
        f"  return %r : {cc}\n}}"
    )
    tiled, compiled = _tiled_and_compiled(text, THREADS)
    before, _, _ = tiled.partition("scf.forall")
    assert "linalg.transpose" not in before and "linalg.fill" not in before, tiled
    assert re.findall(r"scf.forall \(%\w+\) in \((\d+)\)", tiled) == [str(heads)], tiled  # serial inside
    rng = np.random.default_rng(heads)
    x, y = rng.standard_normal((1, heads, 20, 24)), rng.standard_normal((1, heads, 16, 24))
    (got,) = compiled(x.astype(np.float32), y.astype(np.float32))
    assert_close(np.einsum("bhik,bhjk->bhij", x, y)[0], got.astype(np.float64), "f32")


def test_register_tile_fits_the_register_file() -> None:
    """Two registers of columns: six rows (12 of 16 registers) below 512 bits, eight (16 of 32) at 512."""
    assert [register_tile(bits) for bits in (128, 256, 512)] == [(6, 8), (6, 16), (8, 32)]


# --------------------------------------------------------------------------
# conv2d as im2col + matmul.

CONVS = [
    # (x shape, w shape, strides, pads, dilations)
    ((1, 8, 10, 10), (6, 8, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
    ((2, 4, 9, 7), (5, 4, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1]),
    ((1, 6, 8, 8), (4, 6, 1, 1), [1, 1], [0, 0, 0, 0], [1, 1]),  # 1x1: the input is the matrix
    ((2, 6, 8, 8), (4, 6, 1, 1), [2, 2], [0, 0, 0, 0], [1, 1]),  # 1x1 stride 2: gathered
    ((1, 3, 9, 8), (4, 3, 3, 2), [2, 1], [1, 0, 2, 1], [2, 1]),  # asymmetric pads, dilation
]


@pytest.mark.parametrize(("x", "w", "strides", "pads", "dilations"), CONVS)
def test_conv2d_im2col(x, w, strides: list[int], pads: list[int], dilations: list[int]) -> None:
    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg(x), b.arg(w)
        b.ret(b.relu(b.conv2d(xs, ws, strides=strides, pads=pads, dilations=dilations)))
        return b.module

    unfused, fused = compile_and_compare(build, [x, w])
    for text in (unfused, fused):
        assert "linalg.contract" in text and "conv_2d" not in text


GROUPED_CONVS = [
    # (x shape, w shape, groups, strides, pads, dilations): grouped, not depthwise; a channel multiplier of 2
    ((2, 8, 9, 10), (12, 2, 3, 3), 4, [1, 1], [1, 1, 1, 1], [1, 1]),
    ((1, 6, 8, 8), (6, 3, 3, 1), 2, [2, 1], [0, 1, 2, 0], [1, 2]),
    ((1, 3, 7, 7), (6, 1, 3, 3), 3, [1, 1], [1, 1, 1, 1], [1, 1]),
]


@pytest.mark.parametrize(("x", "w", "groups", "strides", "pads", "dilations"), GROUPED_CONVS)
def test_grouped_conv2d_is_a_batched_im2col_matmul(x, w, groups: int, strides: list[int], pads: list[int],
                                                    dilations: list[int]) -> None:
    """The group is the contraction's batch dim: no named grouped convolution (scalar loops) is left."""
    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg(x), b.arg(w)
        b.ret(b.relu(b.conv2d(xs, ws, strides=strides, pads=pads, dilations=dilations, groups=groups)))
        return b.module

    unfused, fused = compile_and_compare(build, [x, w])
    for text in (unfused, fused):
        assert "linalg.contract" in text and "conv_2d" not in text


DIRECT_CONVS = [
    # (x shape, w shape, pads): output rows of a register tile and more (NR = 16 at 256 bits), filters that
    # leave a rest of the MR-filter tile, batches, kernels 3x3, 1x3 and 1x1, asymmetric pads
    ((1, 8, 6, 20), (10, 8, 3, 3), [1, 1, 1, 1]),
    ((2, 3, 5, 33), (7, 3, 1, 3), [0, 1, 0, 1]),
    ((1, 4, 3, 16), (6, 4, 1, 1), [0, 0, 0, 0]),
    ((1, 5, 7, 18), (12, 5, 3, 3), [2, 0, 1, 1]),
]


@pytest.mark.parametrize(("x", "w", "pads"), DIRECT_CONVS)
def test_unit_stride_conv2d_is_direct(x, w, pads: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit-stride f32 convolution with output rows of a register tile or wider is computed from its input:
    no im2col matrix, no packed panels, every tile in vector registers."""
    monkeypatch.setattr(structured_conv, "vector_bits", lambda: 256)
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    runtime.clear_cache()

    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg(x), b.arg(w)
        b.ret(b.relu(b.conv2d(xs, ws, pads=pads)))
        return b.module

    unfused, fused = compile_and_compare(build, [x, w])
    for text in (unfused, fused):
        assert "graph.direct_conv" in text and "linalg.contract" not in text and "conv_2d" not in text
    tiled, compiled = _tiled_and_compiled(fused)
    # every tile became vector FMAs held across the reduction: no generic left, none scalar
    assert "math.fma" in tiled and "vector<" in tiled and "graph.direct_conv" not in tiled, tiled
    assert not re.search(r"linalg.generic[^\n]*graph.direct_conv", tiled)
    # the intermediate buffers are the padded input and the product before its relu: no im2col matrix
    # (C*KH*KW x N*OH*OW floats)
    padded = math.prod(x[:2]) * (x[2] + pads[0] + pads[2]) * (x[3] + pads[1] + pads[3]) * 4
    (want,) = compiled.outputs
    assert sum(b.nbytes for b in compiled.workspace) <= padded + math.prod(want.shape) * 4 + 2 * 64
    runtime.clear_cache()


@pytest.mark.parametrize(("bits", "width", "columns"), [
    (512, 56, {32, 16, 8}), (512, 50, {32, 16, 2}), (512, 45, {32, 8, 4, 1}), (256, 23, {16, 4, 2, 1}),
    (256, 30, {16, 8, 4, 2}),
])
@pytest.mark.parametrize("epilogue", [False, True])
def test_direct_conv_column_tiles_are_powers_of_two(bits: int, width: int, columns: set[int], epilogue: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A row's columns past its last full tile of NR are tiles of powers of two (56 = 32 + 16 + 8): LLVM splits
    a loop-carried vector<8x24xf32> accumulator lane by lane through the stack (a fifth of the speed)."""
    monkeypatch.setattr(structured_conv, "vector_bits", lambda: bits)
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: bits)
    runtime.clear_cache()
    x, w = (1, 3, 4, width), (12, 3, 3, 3)

    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg(x), b.arg(w)
        conv = b.conv2d(xs, ws, pads=[1, 1, 1, 1])
        bias = b.const(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(12, 1, 1))
        b.ret(b.relu(b.add(conv, bias)) if epilogue else conv)
        return b.module

    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(x).astype(np.float32), rng.standard_normal(w).astype(np.float32)]
    exe = compiled_matching_reference(build(), arrays)
    tiled, _ = _tiled_and_compiled(str(exe.linalg))
    # a tile of one column is a vector of its filters only (its unit dimension folded away)
    shapes = re.findall(r"math.fma [^\n]*: vector<(\d+x)?(\d+)xf32>", tiled)
    widths = {int(c) if rows else 1 for rows, c in shapes}
    assert widths == columns, (widths, tiled)
    runtime.clear_cache()


@pytest.mark.parametrize(("bits", "filters", "lanes"), [(256, 40, {16, 8}), (512, 40, {32, 8}), (256, 16, {16})])
@pytest.mark.parametrize("width", [17, 32])
@pytest.mark.parametrize(("epilogue", "constant_weight"), [(False, False), (True, True), (True, False)])
def test_direct_conv_with_filters_in_the_lanes(bits: int, filters: int, lanes: set[int], width: int,
                                               epilogue: bool, constant_weight: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With a register tile's columns of filters or more, the filters are the lanes: tiles of MR output columns
    x NR filters (the rest of the filters in powers of two), the weights read as [C, KH, KW, F] (transposed
    when compiling when they are a constant), the accumulators carried through the reduction in that layout
    (transposed to the output's once per tile, outside the loops)."""
    monkeypatch.setattr(structured_conv, "vector_bits", lambda: bits)
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: bits)
    runtime.clear_cache()
    if width < register_tile(bits)[1]:
        width += register_tile(bits)[1]  # a direct convolution needs rows of a register tile
    x, w = (1, 5, 6, width), (filters, 5, 3, 3)
    rng = np.random.default_rng(11)
    weight = rng.standard_normal(w).astype(np.float32)

    def build():
        b = GraphBuilder("f")
        xs = b.arg(x)
        ws = b.const(weight) if constant_weight else b.arg(w)
        conv = b.conv2d(xs, ws, pads=[1, 1, 1, 1])
        bias = b.const(np.linspace(-1.0, 1.0, filters, dtype=np.float32).reshape(filters, 1, 1))
        b.ret(b.relu(b.add(conv, bias)) if epilogue else conv)
        return b.module

    arrays = [rng.standard_normal(x).astype(np.float32)] + ([] if constant_weight else [weight])
    exe = compiled_matching_reference(build(), arrays)
    linalg_text = str(exe.linalg)
    assert ("linalg.transpose" in linalg_text) != constant_weight, linalg_text
    assert f"tensor<5x3x3x{filters}xf32>" in linalg_text, linalg_text
    tiled, _ = _tiled_and_compiled(linalg_text)
    # (a tile of one output column is a vector of its filters only: its unit dimension folded away)
    fmas = re.findall(r"math.fma %\S+, %\S+, (%\S+) : vector<(?:(\d+)x)?(\d+)xf32>", tiled)
    mr = register_tile(bits)[0]
    rows = {mr} | ({width % mr} if width % mr else set())
    assert {int(c) for _, _, c in fmas} == lanes and {int(r or 1) for _, r, _ in fmas} == rows, fmas
    # each step adds into the loop's accumulator itself, no transpose of it in between
    assert all(acc.startswith("%arg") for acc, _, _ in fmas), tiled
    runtime.clear_cache()


@pytest.mark.parametrize("returned_too", [False, True])
def test_direct_conv_epilogue_runs_on_each_task(returned_too: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """conv + bias + residual + relu: the elementwise epilogue is computed in the convolution's tasks, on each
    task's block of output rows (a scratch buffer on the stack), unless the convolution's result is also
    returned (then the epilogue is a pass of its own).  (Tasks of 2 rows divide the 12 rows.)"""
    monkeypatch.setattr(structured_conv, "vector_bits", lambda: 256)
    monkeypatch.setattr(contraction_strategy, "vector_bits", lambda: 256)
    runtime.clear_cache()
    x, w = (1, 8, 12, 40), (8, 8, 3, 3)

    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg(x), b.arg(w)
        bias = b.const(np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(8, 1, 1))
        conv = b.conv2d(xs, ws, pads=[1, 1, 1, 1])
        out = b.relu(b.add(b.add(conv, bias), xs))
        b.ret(out, conv) if returned_too else b.ret(out)
        return b.module

    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(x).astype(np.float32), rng.standard_normal(w).astype(np.float32)]
    exe = compiled_matching_reference(build(), arrays)
    tiled, compiled = _tiled_and_compiled(str(exe.linalg))
    # the convolution's tasks; the epilogue's relu (a select) in vectors inside them, or a generic of its own after
    assert len(re.findall(r"scf.forall \(", tiled)) == 1, tiled
    assert bool(re.search(r"arith.select %\S+, %\S+, %\S+ : vector<\d+xi1>, vector<\d+xf32>", tiled)) != returned_too, \
        tiled
    assert ("linalg.generic" in tiled) == returned_too, tiled
    padded = 8 * 14 * 42 * 4
    if not returned_too:  # the convolution's output is no buffer: only the padded input is
        assert sum(b.nbytes for b in compiled.workspace) <= padded + 2 * 64, compiled.workspace
    runtime.clear_cache()


@pytest.mark.parametrize(
    ("strides", "dilations", "width"), [([2, 2], [1, 1], 40), ([1, 1], [2, 2], 40), ([1, 1], [1, 1], 8)]
)
def test_other_convs_keep_im2col(strides: list[int], dilations: list[int], width: int,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Strided or dilated convolutions, and output rows narrower than a register tile, stay im2col + matmul."""
    monkeypatch.setattr(structured_conv, "vector_bits", lambda: 256)

    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg((1, 4, 9, width)), b.arg((5, 4, 3, 3))
        b.ret(b.conv2d(xs, ws, strides=strides, dilations=dilations, pads=[2, 2, 2, 2]))
        return b.module

    for text in compile_and_compare(build, [(1, 4, 9, width), (5, 4, 3, 3)]):
        assert "linalg.contract" in text and "graph.direct_conv" not in text


def test_conv2d_f16_im2col() -> None:
    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg((1, 4, 6, 6), "f16"), b.arg((4, 4, 3, 3), "f16")
        b.ret(b.conv2d(xs, ws, pads=[1, 1, 1, 1]))
        return b.module

    compile_and_compare(build, [(1, 4, 6, 6), (4, 4, 3, 3)], "f16")


def test_conv2d_over_the_im2col_limit_keeps_the_named_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(structured_conv, "IM2COL_MAX_BYTES", 0)

    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg((1, 4, 6, 6)), b.arg((4, 4, 3, 3))
        b.ret(b.conv2d(xs, ws, pads=[1, 1, 1, 1]))
        return b.module

    unfused, _ = compile_and_compare(build, [(1, 4, 6, 6), (4, 4, 3, 3)])
    assert "linalg.conv_2d_nchw_fchw" in unfused and "linalg.contract" not in unfused


DEPTHWISE_CONVS = [
    # (x shape, kernel, pads): rows of a full column tile and more, narrower ones (the column ladder alone),
    # 7x7 and 3x3 kernels, asymmetric pads, channels that leave a rest of the MR-filter tile
    ((2, 10, 9, 40), (7, 7), [3, 3, 3, 3]),
    ((1, 64, 8, 8), (7, 7), [3, 3, 3, 3]),
    ((3, 5, 6, 5), (3, 3), [1, 0, 1, 2]),
    ((1, 16, 4, 1), (3, 1), [1, 0, 1, 0]),
]


@pytest.mark.parametrize(("x", "kernel", "pads"), DEPTHWISE_CONVS)
@pytest.mark.parametrize("epilogue", [False, True])
def test_depthwise_conv2d_is_direct(x, kernel, pads: list[int], epilogue: bool) -> None:
    """A unit-stride f32 depthwise convolution (ConvNeXt's 7x7, MobileNet's 3x3) is the direct convolution with
    one input channel per filter: shared out across the cores, every tile of MR channels x NR output columns in
    vector registers, with a bias and activation after it computed on each task."""
    channels = x[1]
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((channels, 1, *kernel)).astype(np.float32)

    def build():
        b = GraphBuilder("f")
        xs, ws = b.arg(x), b.arg(weight.shape)
        conv = b.conv2d(xs, ws, pads=pads, groups=channels)
        bias = b.const(np.linspace(-1.0, 1.0, channels, dtype=np.float32).reshape(channels, 1, 1))
        b.ret(b.relu(b.add(conv, bias)) if epilogue else conv)
        return b.module

    arrays = [rng.standard_normal(x).astype(np.float32), weight]
    exe = compiled_matching_reference(build(), arrays)
    linalg_text = str(exe.linalg)
    assert "graph.direct_conv" in linalg_text and "depthwise_conv" not in linalg_text, linalg_text
    tiled, _ = _tiled_and_compiled(linalg_text)
    assert "scf.forall" in tiled and re.search(r"math.fma [^\n]*: vector<", tiled), tiled
    assert not re.search(r"linalg.generic[^\n]*graph.direct_conv", tiled)


WINDOW_KERNELS = {  # name -> (x shape, graph op builder): large enough to be shared out across the cores
    "max_pool": ((2, 64, 66, 66), lambda b, x: b.max_pool2d(x, kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    "avg_pool": ((1, 96, 64, 64), lambda b, x: b.avg_pool2d(x, kernel=[2, 2], strides=[2, 2])),
    "strided_depthwise": ((2, 64, 64, 64), lambda b, x: b.conv2d(
        x, b.const(np.linspace(-1, 1, 64 * 9, dtype=np.float32).reshape(64, 1, 3, 3)), strides=[2, 2],
        pads=[1, 1, 1, 1], groups=64)),
    "im2col_stem": ((4, 3, 64, 64), lambda b, x: b.conv2d(
        x, b.const(np.linspace(-1, 1, 32 * 3 * 49, dtype=np.float32).reshape(32, 3, 7, 7)), strides=[2, 2],
        pads=[3, 3, 3, 3])),
}


@pytest.mark.parametrize("name", sorted(WINDOW_KERNELS))
def test_window_ops_and_im2col_gathers_are_shared_out(name: str) -> None:
    """Pooling, strided depthwise convolutions and the im2col gather of a strided convolution run as tasks over
    their leading parallel loops (their padding fused into each task), with the reference's results."""
    shape, op = WINDOW_KERNELS[name]

    def build():
        b = GraphBuilder("f")
        b.ret(op(b, b.arg(shape)))
        return b.module

    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    exe = compiled_matching_reference(build(), [x])
    linalg_text = str(exe.linalg)
    assert "scf.forall" in linalg_text, linalg_text
    forall = linalg_text[linalg_text.index("scf.forall"):]
    assert re.search(r"linalg\.(pooling|depthwise|generic)", forall.split("scf.forall.in_parallel")[0]), forall


@pytest.mark.parametrize(("x", "w"), [((1, 6, 5, 40), (6, 6, 3, 3)), ((2, 6, 5, 5), (6, 1, 3, 3))])
@pytest.mark.parametrize("level", [0, 2])
def test_direct_conv_from_its_bias_with_a_short_last_task(x, w, level: int) -> None:
    """A direct convolution (plain with filters short of the lanes, or depthwise) whose accumulator starts from
    its bias operand, over 5 output rows: the last task of CONV_TASK_ROWS rows has 1, a dynamic size the
    bias's broadcast into that task's block must not need vectorizing."""
    rng = np.random.default_rng(8)
    b = GraphBuilder("f")
    b.ret(b.conv2d(b.arg(x), b.arg(w), b.arg((w[0],)), pads=[1, 1, 1, 1], groups=x[1] // w[1]))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (x, w, (w[0],))]
    exe = graphfuse.compile(b.module, opt_level=level)
    assert "graph.direct_conv" in str(exe.linalg)
    (want,), (got,) = exe.reference(*arrays), exe(*arrays)
    assert_close(want, got, "f32")
