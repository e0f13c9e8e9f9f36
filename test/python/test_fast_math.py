"""The vectorizable f32 exp/tanh/erf of the lowering: accuracy bounds over a dense sweep and special values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphfuse
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.lowering import graph_to_linalg  # noqa: F401  (registers the pass)
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import run_pipeline

_erf64 = np.vectorize(math.erf)


def _compiled(op: str, n: int, fast_math: bool = True):
    b = GraphBuilder("f")
    b.ret(getattr(b, op)(b.arg((n,))))
    run_pipeline(b.module, f"builtin.module(graph-to-linalg{{strict fast-math={str(fast_math).lower()}}})")
    text = str(b.module)
    assert "math.exp" not in text and "math.tanh" not in text and "math.erf" not in text, "a libm call is left"
    return compile_linalg(b.module, "f")


def _ulp_error(got: np.ndarray, want64: np.ndarray) -> np.ndarray:
    """|got - want| in units of the f32 spacing at want (subnormal spacing below the normal range)."""
    spacing = np.spacing(np.abs(want64).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want64) / spacing


SWEEP = np.concatenate([np.linspace(-110.0, 95.0, 400_001), np.linspace(-3.0, 3.0, 200_001)]).astype(np.float32)


@pytest.mark.parametrize("fast_math", [True, False], ids=["fast-math", "no-fast-math"])
@pytest.mark.parametrize(
    ("op", "reference", "max_ulp"),
    [
        # measured (fast math / without): exp 1.13 / 1.30, tanh 1.49 / 1.54, erf 2.26 / 2.22, sigmoid 2.61 / 2.25
        ("exp", lambda x: np.exp(x.astype(np.float64)), 2.0),
        ("tanh", lambda x: np.tanh(x.astype(np.float64)), 3.0),
        ("erf", lambda x: _erf64(x.astype(np.float64)), 4.0),
        ("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x.astype(np.float64))), 3.0),
    ],
)
def test_accuracy_over_a_sweep(op: str, reference, max_ulp: float, fast_math: bool) -> None:
    x = SWEEP if op != "erf" else SWEEP[np.abs(SWEEP) < 12]
    (got,) = _compiled(op, x.size, fast_math)(x)
    want = reference(x)
    finite = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max)
    worst = _ulp_error(got[finite], want[finite]).max()
    assert worst <= max_ulp, f"{op}: {worst:.2f} ulp"
    # results that overflow f32 are +inf, as numpy's f32 functions give
    np.testing.assert_array_equal(np.isinf(got), ~finite)


@pytest.mark.parametrize("op", ["exp", "tanh", "erf", "sigmoid"])
def test_special_values_match_numpy(op: str) -> None:
    x = np.array(
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72, 88.73, -87.0, -103.0, -104.5, 1e-30, -1e-30], dtype=np.float32
    )
    (got,) = _compiled(op, x.size)(x)
    with np.errstate(over="ignore"):
        want = {
            "exp": np.exp,
            "tanh": np.tanh,
            "erf": lambda v: _erf64(v).astype(np.float32),
            "sigmoid": lambda v: (1.0 / (1.0 + np.exp(-v.astype(np.float64)))).astype(np.float32),
        }[op](x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=3e-7, atol=1e-44)


def _row_op(op: str, rows: int, cols: int, fast_math: bool):
    b = GraphBuilder("f")
    x = b.arg((rows, cols))
    if op == "softmax":
        b.ret(b.softmax(x, axis=1))
    elif op == "layer_norm":
        b.ret(b.layer_norm(x, b.arg((cols,)), b.arg((cols,)), epsilon=1e-5))
    else:
        b.ret(b.rms_norm(x, b.arg((cols,)), epsilon=1e-6))
    run_pipeline(b.module, f"builtin.module(graph-to-linalg{{strict fast-math={str(fast_math).lower()}}})")
    return compile_linalg(b.module, "f")


def _row_reference(op: str, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    if op == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if op == "layer_norm":
        d = x - x.mean(axis=1, keepdims=True)
        return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)


@pytest.mark.parametrize(("op", "max_change"), [("softmax", 5.0), ("layer_norm", 1.0), ("rms_norm", 1.0)])
def test_row_reciprocal_keeps_the_error_bound(op: str, max_change: float) -> None:
    """x * (1 / s) per row instead of x / s (and FMAs): the error against float64 does not grow.

    Measured over these rows: the max error in ulps of the row's largest magnitude is the same with and
    without fast math (softmax 40.7, layer_norm 9.9, rms_norm 14.0: the f32 row sums dominate it); each
    element moves by at most 5 ulp of itself for softmax (the two exps differ by up to 2.4 ulp, FMAs against
    separate roundings, and the reciprocal adds its own) and 1 ulp for the norms.
    """
    rows, cols = 512, 1000
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, cols)) * rng.uniform(0.01, 30.0, (rows, 1))).astype(np.float32)
    ones, zeros = np.ones(cols, np.float32), np.zeros(cols, np.float32)
    args = {"softmax": [x], "layer_norm": [x, ones, zeros], "rms_norm": [x, ones]}[op]
    want = _row_reference(op, x)
    # ulps of the row's largest magnitude: cancellation makes small outputs' relative error meaningless
    scale = np.spacing(np.abs(want).max(axis=1, keepdims=True).astype(np.float32)).astype(np.float64)
    (fast,) = _row_op(op, rows, cols, True)(*args)
    (plain,) = _row_op(op, rows, cols, False)(*args)
    errors = [float((np.abs(r.astype(np.float64) - want) / scale).max()) for r in (fast, plain)]
    assert errors[0] <= errors[1] + 1.0, errors
    nonzero = plain != 0
    change = np.abs(fast.astype(np.float64) - plain)[nonzero] / np.spacing(np.abs(plain[nonzero])).astype(np.float64)
    assert change.max() <= max_change


def test_compile_without_fast_math_lowers_the_plain_forms() -> None:
    b = GraphBuilder("add_layer_norm")
    x, r, g, beta = b.arg((70, 257)), b.arg((70, 257)), b.arg((257,)), b.arg((257,))
    b.ret(b.layer_norm(b.add(x, r), g, beta, begin_norm_axis=-1))
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=s).astype(np.float32) for s in [(70, 257)] * 2 + [(257,)] * 2]
    fast = graphfuse.compile(b.module)
    plain = graphfuse.compile(b.module, fast_math=False)
    assert "fastmath<contract>" in fast.linalg and "fastmath<contract>" not in plain.linalg
    np.testing.assert_allclose(plain(*inputs)[0], fast(*inputs)[0], rtol=1e-5, atol=1e-5)


def _exp_of(build) -> np.ndarray:
    """exp of the graph value ``build(builder, x)`` over the nonpositive half of the sweep and special values."""
    x = np.concatenate([-np.abs(SWEEP), np.array([-0.0, -np.inf, np.nan, -87.33655, -103.97, -149.0 * math.log(2)],
                                                 np.float32)]).astype(np.float32)
    b = GraphBuilder("f")
    b.ret(b.exp(build(b, b.arg(x.shape))))
    run_pipeline(b.module, "builtin.module(graph-to-linalg{strict})")
    return compile_linalg(b.module, "f")(x)[0]


def test_nonpositive_exp_scales_once_with_the_same_results() -> None:
    """exp(-|x|) (sigmoid's) takes the one-scaling form: bit-equal to the general form on the same values."""
    once = _exp_of(lambda b, x: b.neg(b.abs(x)))
    twice = _exp_of(lambda b, x: b.mul(b.abs(x), b.const(np.float32(-1.0))))  # same values, not recognized
    np.testing.assert_array_equal(once.view(np.uint32), twice.view(np.uint32))
    assert np.count_nonzero((once > 0) & (once < np.finfo(np.float32).tiny)) > 1000  # subnormal results covered


def test_nonpositive_exp_is_recognized_in_the_ir() -> None:
    """The one-scaling form multiplies by 2^-24; a general exp has no such constant."""
    for build, expected in [(lambda b, x: b.neg(b.abs(x)), True),
                            (lambda b, x: b.sub(x, b.reduce_max(x, axes=[0], keep_dims=True)), True),
                            (lambda b, x: b.neg(x), False)]:
        b = GraphBuilder("f")
        b.ret(b.exp(build(b, b.arg((16,)))))
        run_pipeline(b.module, "builtin.module(graph-to-linalg{strict})")
        assert ("5.96046448E-8" in str(b.module)) == expected


def test_coarse_exp_compiles_to_its_reference_bit_for_bit() -> None:
    """graph.coarse_exp (PyTorch's attention exponential for f16/bf16) compiled equals the catalog's reference
    bit for bit over the sweep and the special values, and stays within its documented 1.3e-4 of exp."""
    from graphfuse.dialect.ops.elementwise import coarse_exp_reference

    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72, 88.73, -87.33, -87.34, 1e-30, -1e-30],
                        dtype=np.float32)
    x = np.concatenate([SWEEP, specials])
    (got,) = _compiled("coarse_exp", x.size)(x)
    want = coarse_exp_reference(x)
    same = (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{(~same).sum()} results differ, first at x = {x[~same][:4]}"
    inside = (x > -87.0) & (x < 88.0)
    relative = np.abs(want[inside] / np.exp(x[inside].astype(np.float64)) - 1)
    assert 5e-5 < relative.max() <= 1.3e-4  # coarse, as the kernel it reproduces, and no coarser
    np.testing.assert_array_equal(want[-len(specials):][1:4], [np.inf, 0.0, np.float32(0.99994659)])
