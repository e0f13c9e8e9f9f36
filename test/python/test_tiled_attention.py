"""flash_attention over lengths known only at run time: the tiled online-softmax lowering
(lowering/structured_ops/attention.py), one compile called at many sizes against the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.lowering.structured_ops.attention import KEY_BLOCK, LAST_KEY_BLOCKS, QUERY_BLOCK, SMALL_QUERY_BLOCK

Shape = tuple[int | None, ...]

#: Lengths around every edge of the tiles: none, one, a tile of queries and one more, each block of the last
#: step of keys and one more, a whole block of queries and one more, a block of keys and a narrower one and
#: three more.
LENGTHS = sorted({0, 1, SMALL_QUERY_BLOCK - 1, SMALL_QUERY_BLOCK + 1, *LAST_KEY_BLOCKS[1:],
                  *(width + 1 for width in LAST_KEY_BLOCKS[1:]), QUERY_BLOCK, QUERY_BLOCK + 1,
                  KEY_BLOCK + LAST_KEY_BLOCKS[-1] + 3})


def _compile(q: Shape, k: Shape, v: Shape, mask: Shape | None = None, safe: bool = False,
             dtype: str = "f32") -> graphfuse.Executable:
    b = GraphBuilder("attention")
    operands = [b.arg(q, dtype), b.arg(k, dtype), b.arg(v, dtype)]
    if mask is not None:
        operands.append(b.arg(mask, dtype))
    b.ret(b.flash_attention(*operands, scale=0.25, safe_softmax=safe))
    return graphfuse.compile(b.module)


def _sized(shape: Shape, sizes: dict[str, int], names: tuple[str | None, ...]) -> tuple[int, ...]:
    return tuple(sizes[name] if d is None else d for d, name in zip(shape, names, strict=True))


def _check(exe: graphfuse.Executable, arrays: list[np.ndarray]) -> None:
    want = exe.reference(*arrays)
    got = exe(*arrays)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=2e-5, equal_nan=True)


def _tiled(exe: graphfuse.Executable) -> bool:
    """Whether the attention was lowered tiled: its tasks, and no product of the whole score matrix."""
    return "scf.forall" in exe.linalg and "linalg.batch_matmul" not in exe.linalg


def test_self_attention_at_every_length() -> None:
    exe = _compile((4, None, 32), (4, None, 32), (4, None, 32))
    assert _tiled(exe)
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        _check(exe, [rng.standard_normal((4, n, 32), dtype=np.float32) for _ in range(3)])


@pytest.mark.parametrize(("queries", "keys"), [(1, 0), (1, 37), (5, KEY_BLOCK * 2), (QUERY_BLOCK + 2, 20), (0, 5)])
def test_query_and_key_counts_apart(queries: int, keys: int) -> None:
    # a token's step over a cache (1 query, many keys), a prompt over an empty cache
    exe = _compile((2, 3, None, 16), (2, 3, None, 16), (2, 3, None, 24))
    assert _tiled(exe)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 3, queries, 16), dtype=np.float32)
    k = rng.standard_normal((2, 3, keys, 16), dtype=np.float32)
    v = rng.standard_normal((2, 3, keys, 24), dtype=np.float32)
    _check(exe, [q, k, v])


def test_keys_and_values_broadcast_over_heads() -> None:
    # multi-query attention: one head of keys and values read by every query head
    exe = _compile((2, 4, None, 16), (2, 1, None, 16), (2, 1, None, 16))
    assert _tiled(exe)
    rng = np.random.default_rng(2)
    for n in (3, QUERY_BLOCK + SMALL_QUERY_BLOCK + 1):
        q = rng.standard_normal((2, 4, n, 16), dtype=np.float32)
        k, v = (rng.standard_normal((2, 1, n, 16), dtype=np.float32) for _ in range(2))
        _check(exe, [q, k, v])


@pytest.mark.parametrize("safe", [False, True])
@pytest.mark.parametrize("mask", [(2, 1, None, None), (2, 1, 1, None), (1, None, 1), (None, None)])
def test_masks_with_hidden_keys_and_hidden_rows(mask: Shape, safe: bool) -> None:
    # an additive mask as HF builds it (causal, padding), some rows hiding every key: softmax's NaN, or
    # safe_softmax's 0
    exe = _compile((2, 2, None, 16), (2, 2, None, 16), (2, 2, None, 16), mask, safe)
    assert _tiled(exe)
    rng = np.random.default_rng(3)
    for n in (5, KEY_BLOCK + 1):
        q, k, v = (rng.standard_normal((2, 2, n, 16), dtype=np.float32) for _ in range(3))
        names = ("b", "h", "q", "k")[4 - len(mask):]
        shape = _sized(mask, {"b": 2, "h": 2, "q": n, "k": n}, names)
        hidden = rng.random(shape) < 0.3
        m = np.where(hidden, np.float32(-np.inf), rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
        if shape[-2] == n:
            m[..., 0, :] = -np.inf  # the first query row hides every key
        _check(exe, [q, k, v, m])


def test_special_values_propagate() -> None:
    exe = _compile((2, None, 16), (2, None, 16), (2, None, 16))
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 9, 16), dtype=np.float32) for _ in range(3))
    q[0, 3, 5] = np.nan  # one query row NaN
    k[1, 7, 0] = np.inf  # a key of infinite score: NaN or inf-dominated rows, as the reference gives
    v[1, 2, 3] = -0.0
    _check(exe, [q, k, v])


def test_other_element_types_keep_the_untiled_form() -> None:
    exe = _compile((2, None, 16), (2, None, 16), (2, None, 16), dtype="bf16")
    assert not _tiled(exe)
    rng = np.random.default_rng(5)
    import ml_dtypes

    arrays = [rng.standard_normal((2, 5, 16)).astype(ml_dtypes.bfloat16) for _ in range(3)]
    want, got = exe.reference(*arrays), exe(*arrays)
    np.testing.assert_allclose(got[0].astype(np.float32), want[0].astype(np.float32), rtol=2e-2, atol=2e-2)


def test_static_lengths_keep_the_untiled_form() -> None:
    exe = _compile((2, 16, 16), (2, 16, 16), (2, 16, 16))
    assert "scf.forall" not in exe.linalg or "linalg.batch_matmul" in exe.linalg


def test_a_dynamic_mask_dim_that_would_broadcast_is_refused_when_called() -> None:
    # the tiled form reads the mask row by row along its dynamic dims: one of size 1 where the scores have more
    # rows would be read past its end, so the call is refused as an elementwise op's would be
    exe = _compile((2, None, 16), (2, None, 16), (2, None, 16), (None, None))
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 5, 16), dtype=np.float32) for _ in range(3))
    with pytest.raises(graphfuse.GraphfuseError, match=r"operand #3 of 'graph\.flash_attention'"):
        exe(q, k, v, np.zeros((1, 5), np.float32))
    _check(exe, [q, k, v, np.zeros((5, 5), np.float32)])
