"""The vectorizable f32 exp/tanh/erf of the lowering: accuracy bounds over a dense sweep and special values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphfuse.dialect.builder import GraphBuilder
from graphfuse.lowering import graph_to_linalg  # noqa: F401  (registers the pass)
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import run_pipeline

_erf64 = np.vectorize(math.erf)


def _compiled(op: str, n: int):
    b = GraphBuilder("f")
    b.ret(getattr(b, op)(b.arg((n,))))
    run_pipeline(b.module, "builtin.module(graph-to-linalg{strict})")
    text = str(b.module)
    assert "math.exp" not in text and "math.tanh" not in text and "math.erf" not in text, "a libm call is left"
    return compile_linalg(b.module, "f")


def _ulp_error(got: np.ndarray, want64: np.ndarray) -> np.ndarray:
    """|got - want| in units of the f32 spacing at want (subnormal spacing below the normal range)."""
    spacing = np.spacing(np.abs(want64).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want64) / spacing


SWEEP = np.concatenate([np.linspace(-110.0, 95.0, 400_001), np.linspace(-3.0, 3.0, 200_001)]).astype(np.float32)


@pytest.mark.parametrize(
    ("op", "reference", "max_ulp"),
    [
        ("exp", lambda x: np.exp(x.astype(np.float64)), 2.0),
        ("tanh", lambda x: np.tanh(x.astype(np.float64)), 3.0),
        ("erf", lambda x: _erf64(x.astype(np.float64)), 4.0),
    ],
)
def test_accuracy_over_a_sweep(op: str, reference, max_ulp: float) -> None:
    x = SWEEP if op != "erf" else SWEEP[np.abs(SWEEP) < 12]
    (got,) = _compiled(op, x.size)(x)
    want = reference(x)
    finite = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max)
    worst = _ulp_error(got[finite], want[finite]).max()
    assert worst <= max_ulp, f"{op}: {worst:.2f} ulp"
    # results that overflow f32 are +inf, as numpy's f32 functions give
    np.testing.assert_array_equal(np.isinf(got), ~finite)


@pytest.mark.parametrize("op", ["exp", "tanh", "erf"])
def test_special_values_match_numpy(op: str) -> None:
    x = np.array(
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72, 88.73, -87.0, -103.0, -104.5, 1e-30, -1e-30], dtype=np.float32
    )
    (got,) = _compiled(op, x.size)(x)
    with np.errstate(over="ignore"):
        want = {"exp": np.exp, "tanh": np.tanh, "erf": lambda v: _erf64(v).astype(np.float32)}[op](x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=3e-7, atol=1e-44)
