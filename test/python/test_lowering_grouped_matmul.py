"""graph.grouped_matmul: its reference against PyTorch's grouped products, and its CPU lowering against the reference.

The group ends are an input of the compiled function, so each compiled shape is run on several sets of ends:
uneven groups, empty groups, one group of every row, rows past the last end, and the ends the op defines beyond
PyTorch's usual ones (negative, past the last row, decreasing)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.lowering import host
from graphfuse.lowering.grouped_matmul import BLOCK_ROWS, column_tasks

#: group ends for 100 rows in 4 groups, each a case of the op's documented semantics
ENDS_100 = {
    "uneven": [30, 30, 77, 100],  # blocks of 32 and smaller powers of two, one empty group
    "empty-first-groups": [0, 0, 61, 100],
    "one-group-of-every-row": [0, 100, 100, 100],
    "rows-past-the-last-end": [5, 38, 70, 71],  # 29 rows in no group: zeros
    "no-rows": [0, 0, 0, 0],
    "negative-and-past-the-end": [-60, 55, 130, -1],  # slice bounds: -60 is row 40, 130 the end, -1 row 99
    "decreasing": [90, 20, 64, 100],  # rows 20-63 fall in groups 0 and 2: group 2's product
}


def _module(rows: int | str, depth: int, columns: int, groups: int, dtype: str, transposed: bool, end_type: str) -> str:
    weights = f"{groups}x{columns}x{depth}" if transposed else f"{groups}x{depth}x{columns}"
    types = f"(tensor<{rows}x{depth}x{dtype}>, tensor<{weights}x{dtype}>, tensor<{groups}x{end_type}>)"
    result = f"tensor<{rows}x{columns}x{dtype}>"
    return (f"func.func @moe(%x: tensor<{rows}x{depth}x{dtype}>, %w: tensor<{weights}x{dtype}>, "
            f"%ends: tensor<{groups}x{end_type}>) -> {result} {{\n"
            f'  %0 = "graph.grouped_matmul"(%x, %w, %ends) {{transpose_weights = {str(transposed).lower()}}} '
            f": {types} -> {result}\n"
            f"  return %0 : {result}\n}}")


def _inputs(rows: int, depth: int, columns: int, groups: int, dtype: np.dtype, transposed: bool,
            seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, depth)).astype(np.float32).astype(dtype)
    shape = (groups, columns, depth) if transposed else (groups, depth, columns)
    return x, rng.standard_normal(shape).astype(np.float32).astype(dtype)


def _fallback(x: np.ndarray, weights: np.ndarray, ends: np.ndarray, transposed: bool) -> np.ndarray:
    """transformers' grouped_mm_fallback (what Mixtral and Qwen2-MoE call under torch.compile)."""
    torch = pytest.importorskip("torch")
    moe = pytest.importorskip("transformers.integrations.moe")
    w = torch.from_numpy(weights)
    out = moe._grouped_mm_fallback(torch.from_numpy(x), w.transpose(1, 2) if transposed else w,
                                   torch.from_numpy(ends))
    return out.numpy()


def _reference(x: np.ndarray, weights: np.ndarray, ends: np.ndarray, transposed: bool) -> np.ndarray:
    return evaluate_op("grouped_matmul", [x, weights, ends], {"transpose_weights": transposed})[0]


# --------------------------------------------------------------------------
# The reference against PyTorch.


@pytest.mark.parametrize("transposed", [False, True], ids=["k-n", "n-k"])
@pytest.mark.parametrize("case", sorted(ENDS_100))
def test_reference_is_transformers_fallback(case: str, transposed: bool) -> None:
    """Every case, Python slice bounds included (negative, past the end, decreasing), as the fallback's loop
    computes it; rows in no group are its zeros."""
    x, weights = _inputs(100, 16, 12, 4, np.float32, transposed)
    ends = np.array(ENDS_100[case], np.int32)
    np.testing.assert_allclose(_reference(x, weights, ends, transposed), _fallback(x, weights, ends, transposed),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ends", [[30, 30, 77, 100], [0, 100, 100, 100], [90, 20, 64, 100], [5, 38, 70, 71]])
def test_reference_is_torch_grouped_mm(ends: list[int]) -> None:
    """torch._grouped_mm's CPU kernel (what eager Mixtral calls) on the rows of some group; it leaves the rows of
    no group undefined, where the op gives zeros."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip("this PyTorch has no torch._grouped_mm")
    x, weights = _inputs(100, 16, 12, 4, np.float32, transposed=False)
    offs = torch.tensor(ends, dtype=torch.int32)
    try:
        want = torch._grouped_mm(torch.from_numpy(x), torch.from_numpy(weights), offs=offs).numpy()
    except (RuntimeError, NotImplementedError) as error:
        pytest.skip(f"torch._grouped_mm does not run on this CPU build: {error}")
    covered = max(ends)
    got = _reference(x, weights, np.array(ends, np.int32), transposed=False)
    np.testing.assert_allclose(got[:covered], want[:covered], rtol=1e-5, atol=1e-5)
    assert not got[covered:].any()


def test_reference_of_no_groups_and_no_rows_is_empty_or_zeros() -> None:
    no_groups = _reference(np.ones((3, 2), np.float32), np.ones((0, 2, 4), np.float32), np.zeros(0, np.int64), False)
    assert no_groups.shape == (3, 4) and not no_groups.any()
    no_rows = _reference(np.ones((0, 2), np.float32), np.ones((2, 2, 4), np.float32), np.array([0, 0]), False)
    assert no_rows.shape == (0, 4)


# --------------------------------------------------------------------------
# The compiled code against the reference.


def _check(executable: graphfuse.Executable, x: np.ndarray, weights: np.ndarray, ends: np.ndarray) -> None:
    (got,) = executable(x, weights, ends)
    (want,) = executable.reference(x, weights, ends)
    assert got.dtype == want.dtype and got.shape == want.shape
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    scale = max(1.0, float(np.abs(want64).max(initial=0)))
    # f32: summation order only; bf16: the f32 sums rounded once, one bf16 step apart at most
    tolerance = 1e-5 if got.dtype == np.float32 else 2 ** -7
    assert np.abs(got64 - want64).max(initial=0) <= tolerance * scale
    # the rows of no group are zeros, exactly, and no other row is
    assert np.array_equal(np.all(got64 == 0, axis=1), np.all(want64 == 0, axis=1))


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("transposed", [False, True], ids=["k-n", "n-k"])
def test_compiled_matches_reference(transposed: bool, dtype: str) -> None:
    """100 rows in 4 groups, 96 columns (3 column tasks): every case of ends with one compiled function."""
    assert column_tasks(96) == 3 and BLOCK_ROWS < 100
    numpy_dtype = np.float32 if dtype == "f32" else ml_dtypes.bfloat16
    executable = graphfuse.compile(_module(100, 40, 96, 4, dtype, transposed, "i32"))
    x, weights = _inputs(100, 40, 96, 4, numpy_dtype, transposed)
    for ends in ENDS_100.values():
        _check(executable, x, weights, np.array(ends, np.int32))


@pytest.mark.parametrize("rows, ends", [
    (1, [0, 1, 1]),  # a batch of one token, top-1
    (2, [1, 1, 2]),  # one token, top-2: two groups of one row
    (2, [0, 2, 2]),
    (33, [33, 33, 33]),  # a whole block and one row, all in the first group
    (64, [3, 35, 64]),
])
def test_compiled_few_rows(rows: int, ends: list[int]) -> None:
    """Decoding: a handful of rows, i64 ends, 8 columns (one task, each block's schedule shares it out)."""
    executable = graphfuse.compile(_module(rows, 24, 8, 3, "f32", True, "i64"))
    x, weights = _inputs(rows, 24, 8, 3, np.float32, transposed=True)
    _check(executable, x, weights, np.array(ends, np.int64))


@pytest.mark.parametrize("dots", ["host", "none"])
def test_bf16_blocks_and_last_blocks(dots: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """bf16 at 300 rows: with bf16 dot products blocks of up to PAIR_BLOCK_ROWS rows on the pair products (the
    dot instruction in the code), without them blocks of BLOCK_ROWS; groups that are whole blocks and a rest
    (131 = 128 + 3), a rest alone (119, 49), one row, and rows in no group; against the reference."""
    if dots == "none":
        monkeypatch.setenv(host.DOT_PRODUCTS_VARIABLE, "none")
    host.dot_products.cache_clear()
    try:
        executable = graphfuse.compile(_module(300, 64, 64, 4, "bf16", True, "i32"))
        on_pairs = "bf16" in host.dot_products()
    finally:
        host.dot_products.cache_clear()
    assert ("llvm.x86.avx512bf16.dpbf16ps.512" in executable.function.llvm_dialect_ir) == on_pairs
    x, weights = _inputs(300, 64, 64, 4, ml_dtypes.bfloat16, transposed=True, seed=5)
    for ends in ([131, 250, 251, 300], [0, 128, 256, 290], [119, 119, 240, 270]):
        _check(executable, x, weights, np.array(ends, np.int32))


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_compiled_with_dynamic_rows(dtype: str) -> None:
    """Rows known only when it runs (a MoE layer at any number of tokens): one compile for 0, 1, 33, 100 and
    300 rows (past a block of 64), 96 columns in 3 column tasks; ends past the rows clamp to them."""
    numpy_dtype = np.float32 if dtype == "f32" else ml_dtypes.bfloat16
    executable = graphfuse.compile(_module("?", 40, 96, 4, dtype, True, "i32"))
    for rows, ends in ((0, [0, 0, 0, 0]), (1, [0, 1, 1, 1]), (33, [3, 3, 20, 33]), (100, ENDS_100["uneven"]),
                       (100, ENDS_100["negative-and-past-the-end"]), (300, [64, 200, 210, 300])):
        x, weights = _inputs(rows, 40, 96, 4, numpy_dtype, transposed=True, seed=rows)
        _check(executable, x, weights, np.array(ends, np.int32))


def test_compiled_at_a_mixture_of_experts_size() -> None:
    """The zoo's Mixtral at bench size: 512 rows (256 tokens, top-2) over 4 experts of 256 -> 1024 as PyTorch
    stores them ([experts, n, k]), 16 column tasks; against transformers' fallback."""
    x, weights = _inputs(512, 256, 1024, 4, np.float32, transposed=True, seed=1)
    ends = np.array([130, 250, 390, 512], np.int32)
    executable = graphfuse.compile(_module(512, 256, 1024, 4, "f32", True, "i32"))
    (got,) = executable(x, weights, ends)
    want = _fallback(x, weights, ends, transposed=True)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("depth, groups", [(0, 2), (2, 0)], ids=["no-contraction", "no-group"])
def test_empty_contraction_or_no_group_compiles_to_zeros(depth: int, groups: int) -> None:
    """graph-fold-empty-tensors folds the op to zeros when x or the weights are empty: no row has a product."""
    executable = graphfuse.compile(_module(4, depth, 3, groups, "f32", False, "i64"))
    x, weights = _inputs(4, depth, 3, groups, np.float32, transposed=False)
    (got,) = executable(x, weights, np.arange(1, groups + 1, dtype=np.int64))
    assert got.shape == (4, 3) and not got.any()
