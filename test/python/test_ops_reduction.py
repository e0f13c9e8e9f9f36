"""Reference semantics and verification of reduce_sum, reduce_mean, reduce_max, reduce_min."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.types import TensorSig

NP_DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "i8": np.int8,
    "i32": np.int32,
    "i64": np.int64,
}
REDUCERS = {
    "reduce_sum": sum,
    "reduce_mean": lambda values: sum(values) / len(values),
    "reduce_max": max,
    "reduce_min": min,
}
RTOL = {"f32": 1e-6, "f16": 2e-3, "bf16": 1.6e-2}


def _loop_reduce(x: np.ndarray, axes: list[int], keep_dims: bool, combine) -> np.ndarray:
    """Reduce with explicit loops: group every element by its index outside ``axes``."""
    axes = [a % x.ndim for a in axes]
    groups: dict[tuple[int, ...], list[float]] = {}
    for index in np.ndindex(x.shape):
        key = tuple(0 if i in axes else v for i, v in enumerate(index))
        groups.setdefault(key, []).append(float(x[index]))
    kept_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    out = np.empty(kept_shape, dtype=np.float64)
    for key, values in groups.items():
        out[key] = combine(values)
    if keep_dims:
        return out
    return out.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _infer(name: str, sig: TensorSig, attrs: dict) -> list[TensorSig]:
    spec = lookup_op(f"graph.{name}")
    return infer_results(spec, [sig], spec.with_defaults(attrs), None)


def _sample(dtype: str) -> np.ndarray:
    values = np.array([3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8, 9, 7, -9, 3, 2, 3, 8, 4, -6, 2, 6, 4])
    return values.reshape(2, 3, 4).astype(NP_DTYPES[dtype])


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axes", [[1], [-1], [0, 2], [-3, -2, -1]])
@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_reduction_matches_loops(name: str, axes: list[int], keep_dims: bool) -> None:
    x = _sample("f32")
    (out,) = evaluate_op(name, [x], {"axes": axes, "keep_dims": keep_dims})
    expected = _loop_reduce(x, axes, keep_dims, REDUCERS[name])
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        (name, dtype)
        for name in sorted(REDUCERS)
        for dtype in ("f16", "bf16", "i8", "i32", "i64")
        if name != "reduce_mean" or not dtype.startswith("i")  # reduce_mean is float-only
    ],
)
def test_reduction_in_each_dtype(name: str, dtype: str) -> None:
    x = _sample(dtype)
    (out,) = evaluate_op(name, [x], {"axes": [-1]})
    assert out.dtype == x.dtype and out.shape == (2, 3)
    expected = _loop_reduce(x, [-1], False, REDUCERS[name])
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=RTOL.get(dtype, 0))


@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_low_precision_close_to_f32(name: str) -> None:
    x32 = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    (full,) = evaluate_op(name, [x32], {"axes": [1]})
    for dtype in ("f16", "bf16"):
        (low,) = evaluate_op(name, [x32.astype(NP_DTYPES[dtype])], {"axes": [1]})
        np.testing.assert_allclose(low.astype(np.float32), full, rtol=RTOL[dtype], atol=RTOL[dtype])


@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_empty_axes_is_identity(name: str) -> None:
    x = _sample("f32")
    (out,) = evaluate_op(name, [x], {"axes": []})
    assert out.shape == x.shape and np.array_equal(out, x)
    assert _infer(name, TensorSig((2, None), "f32"), {"axes": [], "keep_dims": True}) == [TensorSig((2, None), "f32")]


def test_int_sum_accumulates_in_operand_type() -> None:
    x = np.array([100, 100, 100], np.int8)  # 300 wraps to 44 in i8
    (out,) = evaluate_op("reduce_sum", [x], {"axes": [0]})
    assert out.dtype == np.int8 and int(out) == 44


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_min_propagate_nan(name: str) -> None:
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    (out,) = evaluate_op(name, [x], {"axes": [1]})
    assert np.isnan(out[0]) and not np.isnan(out[1])


def test_empty_axis_sum_is_zero_and_mean_is_nan_without_warning() -> None:
    x = np.zeros((2, 0), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (total,) = evaluate_op("reduce_sum", [x], {"axes": [1]})
        (mean,) = evaluate_op("reduce_mean", [x], {"axes": [1], "keep_dims": True})
    assert total.tolist() == [0.0, 0.0]
    assert mean.shape == (2, 1) and np.isnan(mean).all()


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_min_reject_empty_axis(name: str) -> None:
    with pytest.raises(VerifyError, match=f"cannot reduce an empty axis with {name}"):
        _infer(name, TensorSig((3, 0), "f32"), {"axes": [-1]})


def test_dynamic_dims_in_inference() -> None:
    sig = TensorSig((None, 4, None), "f32")
    assert _infer("reduce_sum", sig, {"axes": [1]}) == [TensorSig((None, None), "f32")]
    assert _infer("reduce_max", sig, {"axes": [2], "keep_dims": True}) == [TensorSig((None, 4, 1), "f32")]


def test_reduce_all_axes_gives_rank_0() -> None:
    assert _infer("reduce_min", TensorSig((2, 3), "i32"), {"axes": [0, 1]}) == [TensorSig((), "i32")]


def test_rejects_duplicate_axes() -> None:
    with pytest.raises(VerifyError, match="duplicate"):
        _infer("reduce_sum", TensorSig((2, 3), "f32"), {"axes": [1, -1]})


def test_rejects_axis_out_of_range() -> None:
    with pytest.raises(VerifyError, match="axes 2 is out of range for rank 2"):
        _infer("reduce_max", TensorSig((2, 3), "f32"), {"axes": [2]})


@pytest.mark.parametrize(("name", "dtype"), [("reduce_mean", "i32"), ("reduce_sum", "i1"), ("reduce_max", "i1")])
def test_rejects_wrong_dtype(name: str, dtype: str) -> None:
    with pytest.raises(VerifyError, match="must have"):
        _infer(name, TensorSig((2, 3), dtype), {"axes": [0]})


# --------------------------------------------------------------------------
# cumsum


def _loop_cumsum(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """The running sum with explicit loops over each line along ``axis`` (float64)."""
    out = np.zeros(x.shape, np.float64)
    moved, target = np.moveaxis(x.astype(np.float64), axis, -1), np.moveaxis(out, axis, -1)
    n = x.shape[axis]
    for line in np.ndindex(moved.shape[:-1]):
        for i in range(n):
            js = [j for j in range(n) if (j >= i if reverse else j <= i) and not (exclusive and j == i)]
            target[(*line, i)] = sum(moved[(*line, j)] for j in js)
    return out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "bf16", "i32"])
def test_cumsum_reference_is_the_running_sum(dtype: str, exclusive: bool, reverse: bool) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-4, 5, (3, 5, 2)).astype(NP_DTYPES[dtype])  # small integers: exact in every dtype
    for axis in (0, 1, -1):
        attrs = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
        (got,) = evaluate_op("cumsum", [x], attrs)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got.astype(np.float64), _loop_cumsum(x, axis % 3, exclusive, reverse))


def test_cumsum_rejects_booleans_scalars_and_bad_axes() -> None:
    for sig, axis, message in ((TensorSig((4,), "i1"), 0, "numeric element type"),
                               (TensorSig((), "f32"), 0, "at least one dimension"),
                               (TensorSig((4, 2), "f32"), -3, "out of range")):
        with pytest.raises(VerifyError, match=message):
            _infer("cumsum", sig, {"axis": axis})


@pytest.mark.parametrize(("dtype", "shape", "axis", "exclusive", "reverse"), [
    ("f32", (6, 33), 1, False, False), ("f32", (9, 4, 3), 0, True, True), ("bf16", (5, 17), -1, True, False),
    ("i64", (2, 10), 1, False, True), ("f16", (40,), 0, False, False),
])
def test_cumsum_compiled_matches_the_reference(dtype: str, shape: tuple, axis: int, exclusive: bool,
                                               reverse: bool) -> None:
    import graphfuse

    b = graphfuse.GraphBuilder("cumsum")
    b.ret(b.cumsum(b.arg(shape, dtype), axis=axis, exclusive=exclusive, reverse=reverse))
    executable = graphfuse.compile(b.module)
    x = (np.random.default_rng(1).standard_normal(shape) * 3).astype(NP_DTYPES[dtype])
    np.testing.assert_array_equal(executable(x)[0], executable.reference(x)[0])
