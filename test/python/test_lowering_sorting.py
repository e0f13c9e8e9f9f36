"""graph.topk and graph.sort compiled for the CPU against the reference interpreter, bit for bit: rows full of
ties, NaN and infinities, every numeric dtype, any axis, batch 1, dynamic outer dims, and rows that drive
quickselect and introsort into their heap fallbacks (the positions of ties are PyTorch's in both)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.ops import sorting
from graphfuse.dialect.types import NUMPY_DTYPES

DTYPES = ("f32", "f16", "bf16", "i8", "i32", "i64")


def compiled(op: str, shape: tuple[int | None, ...], dtype: str, attrs: dict, opt_level: int = 0):
    builder = GraphBuilder("f")
    values, indices = builder.op(op, builder.arg(shape, dtype), **attrs)
    builder.ret(values, indices)
    return graphfuse.compile(builder.module, entry="f", opt_level=opt_level)


def tied(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, levels: int, nans: int = 0) -> np.ndarray:
    x = rng.integers(0, levels, shape).astype(np.float32)
    if nans and dtype in ("f32", "f16", "bf16"):
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, nans)] = np.nan
        flat[rng.integers(0, flat.size, 1)] = np.inf
    return x.astype(NUMPY_DTYPES[dtype])


def assert_identical(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        wide = np.float64 if w.dtype.kind == "f" or w.dtype == ml_dtypes.bfloat16 else np.int64
        np.testing.assert_array_equal(g.astype(wide), w.astype(wide))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, axis, k", [((6, 4), -1, 2), ((1, 4), 1, 2), ((3, 9), 0, 2), ((2, 5, 4), 1, 5),
                                            ((2, 130), -1, 2), ((33,), 0, 20), ((2, 40), 1, 40)])
@pytest.mark.parametrize("largest, ordered", [(True, True), (False, True), (True, False)])
def test_topk(dtype: str, shape: tuple[int, ...], axis: int, k: int, largest: bool, ordered: bool) -> None:
    executable = compiled("topk", shape, dtype, {"k": k, "axis": axis, "largest": largest, "sorted": ordered})
    rng = np.random.default_rng(k)
    for levels in (1, 3, 1000):
        x = tied(rng, shape, dtype, levels, nans=3)
        assert_identical(executable(x), executable.reference(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, axis", [((24,), 0), ((1, 7), 1), ((3, 17), -1), ((20, 2), 0), ((2, 100), 1)])
@pytest.mark.parametrize("descending, stable", [(False, False), (True, False), (False, True), (True, True)])
def test_sort(dtype: str, shape: tuple[int, ...], axis: int, descending: bool, stable: bool) -> None:
    executable = compiled("sort", shape, dtype, {"axis": axis, "descending": descending, "stable": stable})
    rng = np.random.default_rng(len(shape))
    for levels in (2, 5, 1000):
        x = tied(rng, shape, dtype, levels, nans=2)
        assert_identical(executable(x), executable.reference(x))


@pytest.mark.parametrize("n", [40, 100])
def test_heap_fallbacks(n: int) -> None:
    """The antiqsort rows of test_ops_sorting: introsort's heapsort and quickselect's heap select."""
    from test_ops_sorting import adversarial_row

    row = adversarial_row(n, lambda a, before: sorting._std_sort(a, 0, n, before))
    x = np.asarray([row], np.float32)
    for attrs, data in (({"descending": False}, x), ({"descending": True}, -x)):
        executable = compiled("sort", (1, n), "f32", attrs)
        assert_identical(executable(data), executable.reference(data))
    k = n // 2
    row = adversarial_row(n, lambda a, before: sorting._nth_element(a, 0, k - 1, n, before))
    executable = compiled("topk", (n,), "i64", {"k": k, "largest": False})
    x = np.asarray(row, np.int64)
    assert_identical(executable(x), executable.reference(x))


def test_dynamic_outer_dim() -> None:
    executable = compiled("topk", (None, 8), "f32", {"k": 2})
    rng = np.random.default_rng(0)
    for rows in (1, 5):
        x = tied(rng, (rows, 8), "f32", 3)
        got = executable(x, out=[np.empty((rows, 2), np.float32), np.empty((rows, 2), np.int64)])
        assert_identical(got, executable.reference(x))


@pytest.mark.parametrize("descending, stable", [(False, False), (True, False), (False, True)])
def test_sort_along_a_dynamic_axis(descending: bool, stable: bool) -> None:
    """One compile sorts rows of every length as PyTorch does (the introsort's depth limit computed when it
    runs): empty, 1, at and past the insertion-sort threshold of 16, long rows, rows that drive introsort into
    its heapsort, and a dynamic outer dim beside it (Mixtral's tokens sorted by expert at any length)."""
    from test_ops_sorting import adversarial_row

    executable = compiled("sort", (None, None), "f32", {"axis": 1, "descending": descending, "stable": stable})
    rng = np.random.default_rng(7)
    for rows, n in ((1, 0), (2, 1), (3, 16), (1, 17), (4, 100), (1, 1000)):
        for levels in (2, 1000):
            x = tied(rng, (rows, n), "f32", levels, nans=2 if n else 0)
            assert_identical(executable(x), executable.reference(x))
    row = adversarial_row(100, lambda a, before: sorting._std_sort(a, 0, 100, before))
    x = np.asarray([row], np.float32) * (-1 if descending else 1)
    assert_identical(executable(x), executable.reference(x))


def test_router_at_opt_level_2() -> None:
    """A MoE router as Mixtral builds it: softmax, top-2, the weights divided by their sum."""
    builder = GraphBuilder("f")
    logits = builder.arg((12, 4), "f32")
    values, indices = builder.op("topk", builder.op("softmax", logits, axis=-1), k=2)
    builder.ret(builder.op("div", values, builder.op("reduce_sum", values, axes=[-1], keep_dims=True)), indices)
    executable = graphfuse.compile(builder.module, entry="f", opt_level=2)
    x = tied(np.random.default_rng(0), (12, 4), "f32", 3)
    got, want = executable(x), executable.reference(x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])


def test_k_zero() -> None:
    executable = compiled("topk", (3, 4), "f32", {"k": 0})
    values, indices = executable(np.ones((3, 4), np.float32))
    assert values.shape == indices.shape == (3, 0)
