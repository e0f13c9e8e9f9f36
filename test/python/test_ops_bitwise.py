"""graph.bitwise_and / or / xor / not: the reference against numpy's bitwise ops and PyTorch's, and the compiled
CPU code against the reference, on every integer type and on booleans, broadcasting, a batch of 1."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.evaluate import evaluate_op

DTYPES = {"i8": np.int8, "i32": np.int32, "i64": np.int64, "i1": np.bool_}


def sample(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "i1":
        return rng.random(shape) < 0.5
    info = np.iinfo(DTYPES[dtype])
    return rng.integers(info.min, info.max, shape, dtype=DTYPES[dtype], endpoint=True)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_reference_is_numpys_and_pytorchs(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = sample(rng, (3, 4), dtype), sample(rng, (4,), dtype)
    for name, fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)):
        (got,) = evaluate_op(name, [a, b], {}, None)
        np.testing.assert_array_equal(got, fn(a, b))
        np.testing.assert_array_equal(got, getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy())
    (got,) = evaluate_op("bitwise_not", [a], {}, None)
    np.testing.assert_array_equal(got, (~torch.from_numpy(a)).numpy())


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((1, 5), (1, 5)), ((2, 1, 3), (4, 1))])
def test_compiled_matches_the_reference(dtype: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    builder = GraphBuilder("f")
    a, b = builder.arg(shapes[0], dtype), builder.arg(shapes[1], dtype)
    both = builder.op("bitwise_xor", builder.op("bitwise_and", a, b), builder.op("bitwise_or", a, b))
    builder.ret(both, builder.op("bitwise_not", a), builder.op("bitwise_not", both))
    executable = graphfuse.compile(builder.module, entry="f", opt_level=2)
    rng = np.random.default_rng(1)
    inputs = [sample(rng, shape, dtype) for shape in shapes]
    for got, want in zip(executable(*inputs), executable.reference(*inputs), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_floats_are_refused() -> None:
    from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
    from graphfuse.dialect.types import TensorSig

    spec = lookup_op("graph.bitwise_and")
    with pytest.raises(VerifyError, match="must have"):
        infer_results(spec, [TensorSig((4,), "f32")] * 2, {}, None)
