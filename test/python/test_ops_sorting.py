"""Reference semantics of graph.topk and graph.sort against torch.topk / torch.sort on the CPU: values and
positions, ties (in the order PyTorch's libstdc++ algorithms leave them), NaN, every numeric dtype, any axis,
and rows built to drive quickselect and introsort into their heap fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.ops import sorting
from graphfuse.dialect.types import TensorSig

torch = pytest.importorskip("torch")
from graphfuse.frontends.torch import to_numpy  # noqa: E402

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i8": torch.int8,
                "i32": torch.int32, "i64": torch.int64}


def tied(shape: tuple[int, ...], levels: int, dtype: str, nans: int = 0, seed: int = 0) -> torch.Tensor:
    """Values drawn from ``levels`` distinct ones (so most rows are full of ties), ``nans`` of them NaN."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randint(0, levels, shape, generator=generator).to(TORCH_DTYPES[dtype])
    if nans:
        x.view(-1)[torch.randint(0, x.numel(), (nans,), generator=generator)] = float("nan")
    return x


def adversarial_row(n: int, run) -> list[int]:
    """McIlroy's antiqsort: values fixed lazily during one run of the algorithm so that every median-of-three
    partition is as bad as possible; the returned row makes the algorithm run out of depth again."""
    gas = n
    values = [gas] * n
    state = {"solid": 0, "candidate": 0}

    def before(a: tuple, b: tuple) -> bool:
        x, y = a[1], b[1]
        if values[x] == gas and values[y] == gas:
            values[x if x == state["candidate"] else y] = state["solid"]
            state["solid"] += 1
        if values[x] == gas:
            state["candidate"] = x
        elif values[y] == gas:
            state["candidate"] = y
        return values[x] < values[y]

    run([(None, j) for j in range(n)], before)
    return values


def assert_same(got: list[np.ndarray], values: torch.Tensor, indices: torch.Tensor) -> None:
    np.testing.assert_array_equal(got[1], indices.numpy())
    np.testing.assert_array_equal(np.asarray(got[0], np.float64), to_numpy(values).astype(np.float64))


@pytest.mark.parametrize("dtype", sorted(TORCH_DTYPES))
@pytest.mark.parametrize("shape, dim", [((7,), 0), ((3, 9), 1), ((3, 9), 0), ((2, 5, 4), -2), ((1, 130), 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch_on_ties(dtype: str, shape: tuple[int, ...], dim: int, largest: bool) -> None:
    size = shape[dim]
    for levels in (1, 2, 3, 2 * size):
        x = tied(shape, levels, dtype, seed=levels)
        for k in sorted({1, 2, size // 2 or 1, size}):
            for ordered in (True, False):
                values, indices = torch.topk(x, k, dim=dim, largest=largest, sorted=ordered)
                got = evaluate_op("topk", [to_numpy(x)], {"k": k, "axis": dim, "largest": largest,
                                                          "sorted": ordered}, None)
                assert_same(got, values, indices)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_nan_is_the_largest(dtype: str, largest: bool) -> None:
    x = tied((4, 20), 3, dtype, nans=9)
    x[0, :] = float("nan")  # a row of NaN only
    x[1, 3] = float("inf")
    x[1, 4] = -float("inf")
    for k in (1, 3, 20):
        values, indices = torch.topk(x, k, largest=largest)
        got = evaluate_op("topk", [to_numpy(x)], {"k": k, "largest": largest}, None)
        np.testing.assert_array_equal(got[1], indices.numpy())
        np.testing.assert_array_equal(np.asarray(got[0], np.float64), to_numpy(values).astype(np.float64))


@pytest.mark.parametrize("dtype", sorted(TORCH_DTYPES))
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
@pytest.mark.parametrize("size", [1, 5, 16, 17, 40, 100])
def test_sort_matches_torch_on_ties(dtype: str, descending: bool, stable: bool, size: int) -> None:
    x = tied((3, size), 3, dtype, nans=2 if dtype in ("f32", "f16", "bf16") else 0, seed=size)
    values, indices = torch.sort(x, dim=-1, descending=descending, stable=stable)
    got = evaluate_op("sort", [to_numpy(x)], {"axis": -1, "descending": descending, "stable": stable}, None)
    assert_same(got, values, indices)


def test_sort_along_a_leading_axis_of_a_batch_of_one() -> None:
    x = tied((20, 1, 3), 4, "i64")
    values, indices = torch.sort(x, dim=0)
    assert_same(evaluate_op("sort", [to_numpy(x)], {"axis": 0}, None), values, indices)


@pytest.mark.parametrize("n", [40, 64, 100])
def test_heap_fallbacks_match_torch(n: int) -> None:
    """Rows on which quickselect and introsort run out of depth and turn to heap select / heapsort."""
    smallest_first = sorting._comparator(False)
    row = adversarial_row(n, lambda a, before: sorting._std_sort(a, 0, n, before))
    x = torch.tensor(row, dtype=torch.float32)
    for descending, data in ((False, x), (True, -x)):
        values, indices = torch.sort(data, descending=descending)
        assert_same(evaluate_op("sort", [to_numpy(data)], {"descending": descending}, None), values, indices)
    k = n // 2
    row = adversarial_row(n, lambda a, before: sorting._nth_element(a, 0, k - 1, n, before))
    x = torch.tensor(row, dtype=torch.int64)
    values, indices = torch.topk(x, k, largest=False)
    assert_same(evaluate_op("topk", [to_numpy(x)], {"k": k, "largest": False}, None), values, indices)
    assert smallest_first((1, 0), (2, 0)) and not smallest_first((float("nan"), 0), (2, 0))


def test_k_zero_gives_empty_results() -> None:
    values, indices = evaluate_op("topk", [np.ones((3, 4), np.float32)], {"k": 0}, None)
    assert values.shape == indices.shape == (3, 0) and indices.dtype == np.int64


def _infer(name: str, sig: TensorSig, attrs: dict) -> list[TensorSig]:
    spec = lookup_op(f"graph.{name}")
    return infer_results(spec, [sig], spec.with_defaults(attrs), None)


def test_inference() -> None:
    assert _infer("topk", TensorSig((5, None), "bf16"), {"k": 3, "axis": 0}) == [
        TensorSig((3, None), "bf16"), TensorSig((3, None), "i64")]
    assert _infer("sort", TensorSig((2, 7), "i32"), {}) == [TensorSig((2, 7), "i32"), TensorSig((2, 7), "i64")]
    # k is checked only against a static axis
    assert _infer("topk", TensorSig((None,), "f32"), {"k": 9})[0] == TensorSig((9,), "f32")


@pytest.mark.parametrize("name, sig, attrs, message", [
    ("topk", TensorSig((6, 4), "f32"), {"k": 5}, "k = 5 must be in [0, 4]"),
    ("topk", TensorSig((6, 4), "i1"), {"k": 1}, "operand tensor<6x4xi1>"),
    ("topk", TensorSig((), "f32"), {"k": 0}, "at least one dimension"),
    ("sort", TensorSig((2, 7), "f32"), {"axis": -3}, "axis -3 is out of range"),
])
def test_invalid(name: str, sig: TensorSig, attrs: dict, message: str) -> None:
    with pytest.raises(VerifyError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _infer(name, sig, attrs)
