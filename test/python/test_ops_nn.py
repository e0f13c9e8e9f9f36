"""Tests of the nn ops (dialect/ops/nn.py and spatial.py): reference semantics and verifier rules.

Expectations are computed independently of the implementation, mostly with
explicit Python loops over tiny arrays in float64.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from graphfuse.dialect.catalog import VerifyError, infer_results, lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.types import TensorSig

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def infer(name: str, sigs: list[TensorSig], attrs: dict[str, Any] | None = None) -> list[TensorSig]:
    spec = lookup_op(f"graph.{name}")
    assert spec is not None
    return infer_results(spec, sigs, spec.with_defaults(attrs or {}), None)


# --------------------------------------------------------------------------
# Loop-based expectations.


def conv2d_loops(x, w, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups=1) -> np.ndarray:
    x, w = x.astype(np.float64), w.astype(np.float64)
    n_, _, h_, w_ = x.shape
    o_, i_, kh, kw = w.shape
    top, left, bottom, right = pads
    (sh, sw), (dh, dw) = strides, dilations
    oh = (h_ + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w_ + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n_, o_, oh, ow))
    per_group = o_ // groups
    for n, o, y, xx in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        g = o // per_group
        acc = 0.0
        for c, i, j in itertools.product(range(i_), range(kh), range(kw)):
            hy, wx = y * sh + i * dh - top, xx * sw + j * dw - left
            if 0 <= hy < h_ and 0 <= wx < w_:
                acc += x[n, g * i_ + c, hy, wx] * w[o, c, i, j]
        out[n, o, y, xx] = acc
    return out


def pool_loops(x, kernel, strides=(1, 1), pads=(0, 0, 0, 0), mode="max", count_include_pad=False) -> np.ndarray:
    n_, c_, h_, w_ = x.shape
    kh, kw = kernel
    top, left, bottom, right = pads
    sh, sw = strides
    oh = (h_ + top + bottom - kh) // sh + 1
    ow = (w_ + left + right - kw) // sw + 1
    out = np.zeros((n_, c_, oh, ow), dtype=np.float64 if mode == "avg" else x.dtype)
    for n, c, y, xx in itertools.product(range(n_), range(c_), range(oh), range(ow)):
        cells = []
        for i, j in itertools.product(range(kh), range(kw)):
            hy, wx = y * sh + i - top, xx * sw + j - left
            if 0 <= hy < h_ and 0 <= wx < w_:
                cells.append(x[n, c, hy, wx])
        if mode == "max":
            out[n, c, y, xx] = max(cells)
        else:
            out[n, c, y, xx] = sum(float(v) for v in cells) / (kh * kw if count_include_pad else len(cells))
    return out


def softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# --------------------------------------------------------------------------
# matmul


def test_matmul_2d_matches_loops():
    a, b = rand(3, 4), rand(4, 5)
    (out,) = evaluate_op("matmul", [a, b])
    expected = [[sum(float(a[i, k]) * float(b[k, j]) for k in range(4)) for j in range(5)] for i in range(3)]
    assert out.dtype == np.float32 and out.shape == (3, 5)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_matmul_transpose_flags_swap_last_two_dims():
    a, b = rand(4, 3), rand(5, 4)  # a^T is 3x4, b^T is 4x5
    (out,) = evaluate_op("matmul", [a, b], {"transpose_a": True, "transpose_b": True})
    expected = [[sum(float(a[k, i]) * float(b[j, k]) for k in range(4)) for j in range(5)] for i in range(3)]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_matmul_transpose_b_on_batched_operand():
    a, b = rand(2, 3, 4), rand(2, 6, 4)
    (out,) = evaluate_op("matmul", [a, b], {"transpose_b": True})
    assert out.shape == (2, 3, 6)
    for n in range(2):
        expected = [[sum(float(a[n, i, k]) * float(b[n, j, k]) for k in range(4)) for j in range(6)] for i in range(3)]
        np.testing.assert_allclose(out[n], expected, rtol=1e-5, atol=1e-5)


def test_matmul_broadcasts_batch_dims():
    a, b = rand(2, 1, 3, 4), rand(5, 4, 2)
    (out,) = evaluate_op("matmul", [a, b])
    assert out.shape == (2, 5, 3, 2)
    for p, q, i, j in itertools.product(range(2), range(5), range(3), range(2)):
        expected = sum(float(a[p, 0, i, k]) * float(b[q, k, j]) for k in range(4))
        assert out[p, q, i, j] == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_matmul_1d_operands_drop_the_promoted_dim():
    v, m, batched = rand(4), rand(3, 4), rand(2, 4, 3)
    (mv,) = evaluate_op("matmul", [m, v])
    assert mv.shape == (3,)
    np.testing.assert_allclose(mv, [sum(float(m[i, k]) * float(v[k]) for k in range(4)) for i in range(3)], rtol=1e-5)
    (vm,) = evaluate_op("matmul", [v, batched])
    assert vm.shape == (2, 3)
    for n, j in itertools.product(range(2), range(3)):
        assert vm[n, j] == pytest.approx(sum(float(v[k]) * float(batched[n, k, j]) for k in range(4)), rel=1e-5)
    (vv,) = evaluate_op("matmul", [v, v])
    assert vv.shape == ()
    assert float(vv) == pytest.approx(sum(float(t) ** 2 for t in v), rel=1e-5)


def test_matmul_integer_operands_wrap():
    a = np.array([[100, 100], [-100, -100]], np.int8)
    b = np.array([[1], [1]], np.int8)
    (out,) = evaluate_op("matmul", [a, b])
    assert out.dtype == np.int8
    # 200 and -200 wrap modulo 256.
    np.testing.assert_array_equal(out, [[200 - 256], [-200 + 256]])
    (out32,) = evaluate_op("matmul", [a.astype(np.int32), b.astype(np.int32)])
    assert out32.dtype == np.int32
    np.testing.assert_array_equal(out32, [[200], [-200]])


def test_matmul_infers_dynamic_dims():
    (sig,) = infer("matmul", [TensorSig((None, 3, 4), "f32"), TensorSig((4, None), "f32")])
    assert sig == TensorSig((None, 3, None), "f32")
    (sig,) = infer("matmul", [TensorSig((2, None), "bf16"), TensorSig((5,), "bf16")])
    assert sig == TensorSig((2,), "bf16")


# --------------------------------------------------------------------------
# bias_add


def test_bias_add_along_channel_axis_of_nchw():
    x, bias = rand(2, 3, 2, 2), rand(3)
    (out,) = evaluate_op("bias_add", [x, bias], {"axis": 1})
    for n, c, h, w in itertools.product(range(2), range(3), range(2), range(2)):
        assert out[n, c, h, w] == pytest.approx(float(x[n, c, h, w]) + float(bias[c]), rel=1e-6)


def test_bias_add_defaults_to_last_axis():
    x, bias = rand(2, 3), rand(3)
    (out,) = evaluate_op("bias_add", [x, bias])
    np.testing.assert_allclose(out, [[float(x[i, j]) + float(bias[j]) for j in range(3)] for i in range(2)], rtol=1e-6)


# --------------------------------------------------------------------------
# softmax, log_softmax


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_sums_to_one_and_matches_float64(axis: int):
    x = rand(3, 4, 5)
    (out,) = evaluate_op("softmax", [x], {"axis": axis})
    np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-6)
    np.testing.assert_allclose(out, softmax64(x, axis), rtol=1e-5, atol=1e-7)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    (out,) = evaluate_op("softmax", [x])
    assert np.all(np.isfinite(out))
    e = [math.exp(-2), math.exp(-1), 1.0]
    np.testing.assert_allclose(out[0], [v / sum(e) for v in e], rtol=1e-6)
    np.testing.assert_allclose(out[1], [1 / 3] * 3, rtol=1e-6)


def test_safe_softmax_is_pytorchs():
    """0 for a row of all -inf (the query rows attention masks whole), NaN where softmax's is, else softmax."""
    torch = pytest.importorskip("torch")
    inf = np.inf
    x = np.array([[-inf, -inf, -inf], [1.0, -inf, 2.0], [np.nan, -inf, -inf], [inf, -inf, 0.0], [0.5, -0.0, 3.0]],
                 dtype=np.float32)
    want = torch.ops.aten._safe_softmax(torch.from_numpy(x), -1).numpy()
    for axis, data in ((-1, x), (0, np.ascontiguousarray(x.T))):
        (out,) = evaluate_op("safe_softmax", [data], {"axis": axis})
        out = out if axis == -1 else out.T
        assert (out[0] == 0).all() and np.array_equal(np.isnan(out), np.isnan(want))
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=0)  # exp may round differently: an ulp
    (plain,) = evaluate_op("softmax", [x])
    assert np.isnan(plain[0]).all()


def test_log_softmax_matches_float64():
    x = rand(4, 6) * 10
    (out,) = evaluate_op("log_softmax", [x], {"axis": 1})
    np.testing.assert_allclose(out, np.log(softmax64(x, 1)), rtol=1e-5, atol=1e-5)
    (big,) = evaluate_op("log_softmax", [np.array([1000.0, 0.0], np.float32)])
    assert big[0] == pytest.approx(0.0, abs=1e-6) and big[1] == pytest.approx(-1000.0)


# --------------------------------------------------------------------------
# normalizations


def layer_norm_loops(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, begin: int, eps: float) -> np.ndarray:
    lead = x.shape[:begin]
    out = np.zeros(x.shape)
    for idx in itertools.product(*(range(d) for d in lead)):
        vals = [float(v) for v in x[idx].ravel()]
        mean = sum(vals) / len(vals)
        var = sum((v - mean) ** 2 for v in vals) / len(vals)
        out[idx] = (x[idx].astype(np.float64) - mean) / math.sqrt(var + eps) * gamma + beta
    return out


def test_layer_norm_last_axis():
    x, gamma, beta = rand(2, 3, 4), rand(4), rand(4)
    (out,) = evaluate_op("layer_norm", [x, gamma, beta], {"begin_norm_axis": -1})
    np.testing.assert_allclose(out, layer_norm_loops(x, gamma, beta, 2, 1e-5), rtol=1e-4, atol=1e-5)


def test_layer_norm_from_axis_1_of_rank_3():
    x, gamma, beta = rand(2, 3, 4) + 50, rand(3, 4), rand(3, 4)
    (out,) = evaluate_op("layer_norm", [x, gamma, beta], {"begin_norm_axis": 1, "epsilon": 1e-3})
    np.testing.assert_allclose(out, layer_norm_loops(x, gamma, beta, 1, 1e-3), rtol=1e-4, atol=1e-4)


def test_rms_norm_last_axis():
    x, gamma = rand(3, 5), rand(5)
    (out,) = evaluate_op("rms_norm", [x, gamma])
    for i in range(3):
        rms = math.sqrt(sum(float(v) ** 2 for v in x[i]) / 5 + 1e-6)
        np.testing.assert_allclose(out[i], [float(x[i, j]) / rms * float(gamma[j]) for j in range(5)], rtol=1e-5)


def test_rms_norm_zero_row_stays_zero():
    (out,) = evaluate_op("rms_norm", [np.zeros((2, 4), np.float32), np.ones(4, np.float32)])
    np.testing.assert_array_equal(out, 0.0)


def test_batch_norm_per_channel():
    x = rand(2, 3, 2, 2)
    scale, offset, mean, var = rand(3), rand(3), rand(3), np.abs(rand(3)) + 0.1
    (out,) = evaluate_op("batch_norm", [x, scale, offset, mean, var], {"epsilon": 1e-3})
    for n, c, h, w in itertools.product(range(2), range(3), range(2), range(2)):
        expected = (float(x[n, c, h, w]) - float(mean[c])) / math.sqrt(float(var[c]) + 1e-3) * float(scale[c])
        assert out[n, c, h, w] == pytest.approx(expected + float(offset[c]), rel=1e-5, abs=1e-6)


def test_batch_norm_rank_2_input():
    x, ones, zeros = rand(4, 3), np.ones(3, np.float32), np.zeros(3, np.float32)
    (out,) = evaluate_op("batch_norm", [x, ones, zeros, zeros, ones], {"epsilon": 0.0})
    np.testing.assert_allclose(out, x, rtol=1e-6)


# --------------------------------------------------------------------------
# conv2d


@pytest.mark.parametrize(
    "x_shape, w_shape, attrs",
    [
        ((1, 1, 4, 4), (1, 1, 3, 3), {}),
        ((2, 2, 5, 6), (3, 2, 3, 2), {"strides": [2, 1]}),
        ((1, 2, 4, 5), (2, 2, 3, 3), {"pads": [1, 0, 2, 1]}),
        ((1, 1, 6, 7), (2, 1, 2, 3), {"dilations": [2, 2], "pads": [1, 1, 1, 1], "strides": [1, 2]}),
        ((1, 4, 4, 4), (6, 2, 3, 3), {"groups": 2, "pads": [1, 1, 1, 1]}),
        ((2, 3, 5, 5), (3, 1, 3, 3), {"groups": 3, "strides": [2, 2], "pads": [1, 1, 1, 1]}),  # depthwise
        ((1, 2, 4, 4), (4, 1, 2, 2), {"groups": 2}),  # depthwise with channel multiplier 2
    ],
    ids=["plain", "strides", "asymmetric-pads", "dilations", "groups", "depthwise", "depthwise-x2"],
)
def test_conv2d_matches_loops(x_shape, w_shape, attrs):
    x, w = rand(*x_shape), rand(*w_shape)
    (out,) = evaluate_op("conv2d", [x, w], attrs)
    expected = conv2d_loops(
        x,
        w,
        attrs.get("strides", (1, 1)),
        attrs.get("pads", (0, 0, 0, 0)),
        attrs.get("dilations", (1, 1)),
        attrs.get("groups", 1),
    )
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_conv2d_output_size_formula():
    (sig,) = infer(
        "conv2d",
        [TensorSig((1, 4, 7, 9), "f32"), TensorSig((8, 4, 3, 2), "f32")],
        {"strides": [2, 3], "pads": [1, 0, 0, 2], "dilations": [2, 1]},
    )
    # H: (7 + 1 + 0 - 2*2 - 1) // 2 + 1 = 2; W: (9 + 0 + 2 - 1 - 1) // 3 + 1 = 4
    assert sig == TensorSig((1, 8, 2, 4), "f32")


def test_conv2d_dynamic_batch_and_spatial_dims():
    (sig,) = infer("conv2d", [TensorSig((None, 3, None, 8), "f16"), TensorSig((4, 3, 3, 3), "f16")])
    assert sig == TensorSig((None, 4, None, 6), "f16")
    with pytest.raises(VerifyError, match="dynamic dimensions are not supported"):
        infer("conv2d", [TensorSig((1, 3, 8, 8), "f32"), TensorSig((4, 3, None, 3), "f32")])


# --------------------------------------------------------------------------
# pooling


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel": [2, 2]},
        {"kernel": [3, 2], "strides": [2, 1]},
        {"kernel": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel": [2, 3], "pads": [1, 0, 0, 2]},
    ],
)
def test_max_pool2d_matches_loops(attrs):
    x = rand(2, 2, 5, 5) - 3  # negative values: padding must never win
    (out,) = evaluate_op("max_pool2d", [x], attrs)
    expected = pool_loops(x, attrs["kernel"], attrs.get("strides", (1, 1)), attrs.get("pads", (0, 0, 0, 0)))
    np.testing.assert_array_equal(out, expected)


def test_max_pool2d_integer_input_pads_with_type_minimum():
    x = np.array([[[[-128, -100], [-120, -128]]]], np.int8)
    (out,) = evaluate_op("max_pool2d", [x], {"kernel": [2, 2], "pads": [1, 1, 1, 1]})
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, pool_loops(x, (2, 2), pads=(1, 1, 1, 1)))
    assert out[0, 0, 0, 0] == -128  # window holding only x[0, 0] and padding


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel": [2, 2]},
        {"kernel": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel": [2, 3], "strides": [1, 2], "pads": [0, 2, 1, 1]},
    ],
)
def test_avg_pool2d_matches_loops(attrs, count_include_pad):
    x = rand(1, 2, 5, 6)
    (out,) = evaluate_op("avg_pool2d", [x], {**attrs, "count_include_pad": count_include_pad})
    expected = pool_loops(
        x, attrs["kernel"], attrs.get("strides", (1, 1)), attrs.get("pads", (0, 0, 0, 0)), "avg", count_include_pad
    )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_avg_pool2d_corner_divisor_depends_on_count_include_pad():
    x = np.ones((1, 1, 2, 2), np.float32)
    attrs = {"kernel": [2, 2], "pads": [1, 1, 1, 1]}
    (excl,) = evaluate_op("avg_pool2d", [x], attrs)
    (incl,) = evaluate_op("avg_pool2d", [x], {**attrs, "count_include_pad": True})
    np.testing.assert_array_equal(excl, np.ones((1, 1, 3, 3)))
    np.testing.assert_array_equal(incl[0, 0], [[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.25]])


def test_pool_dynamic_spatial_dims():
    (sig,) = infer("avg_pool2d", [TensorSig((None, 3, None, 9), "f32")], {"kernel": [3, 3], "strides": [2, 2]})
    assert sig == TensorSig((None, 3, None, 4), "f32")


# --------------------------------------------------------------------------
# dynamic_quant


def test_dynamic_quant_rounds_half_to_even():
    # max |x| = 127 makes scale exactly 1, so x / scale is x itself: exact .5 cases.
    x = np.array([[127.0, 0.5, 1.5, 2.5, -0.5, -2.5, -3.5, 126.5]], np.float32)
    y, scale = evaluate_op("dynamic_quant", [x])
    assert y.dtype == np.int8 and scale.dtype == np.float32
    assert scale.shape == (1,) and scale[0] == 1.0
    np.testing.assert_array_equal(y, [[127, 0, 2, 2, 0, -2, -4, 126]])


def test_dynamic_quant_matches_row_loops():
    x = rand(3, 2, 5)
    y, scale = evaluate_op("dynamic_quant", [x])
    assert y.shape == (3, 2, 5) and scale.shape == (3, 2)
    for i, j in itertools.product(range(3), range(2)):
        amax = max(abs(float(v)) for v in x[i, j])
        assert scale[i, j] == pytest.approx(amax / 127, rel=1e-6)
        for k in range(5):
            q = float(x[i, j, k]) / float(scale[i, j])
            assert abs(int(y[i, j, k]) - q) <= 0.5 + 1e-4
    # The row maximum maps to +-127.
    np.testing.assert_array_equal(np.abs(y).max(axis=-1), 127)


def test_dynamic_quant_saturates_at_minus_128():
    # A subnormal row maximum: 190 * 2^-149 / 127 rounds to 2^-149, so x / scale = -190 saturates.
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    x = np.array([[-190 * tiny, 190 * tiny, 0.0]], np.float32)
    y, scale = evaluate_op("dynamic_quant", [x])
    assert scale[0] == tiny
    np.testing.assert_array_equal(y, [[-128, 127, 0]])


def test_dynamic_quant_applies_smooth_scales_first():
    x = np.array([[1.0, -2.0, 4.0], [0.5, 0.25, -1.0]], np.float32)
    smooth = np.array([2.0, 0.5, 0.25], np.float32)
    y, scale = evaluate_op("dynamic_quant", [x, smooth])
    # Smoothed rows: [2, -1, 1] and [1, 0.125, -0.25].
    np.testing.assert_allclose(scale, [2 / 127, 1 / 127], rtol=1e-6)
    # Quotients -63.5 and 63.5 are exact in f32 and go to the even neighbour.
    np.testing.assert_array_equal(y, [[127, -64, 64], [127, 16, -32]])


def test_dynamic_quant_zero_row_gives_zero_scale_and_values():
    x = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.0]], np.float32)
    with np.errstate(all="raise"):  # no 0/0 hidden in the computation
        y, scale = evaluate_op("dynamic_quant", [x])
    np.testing.assert_array_equal(scale, [0.0, 1 / np.float32(127)])
    np.testing.assert_array_equal(y, [[0, 0, 0], [127, -127, 0]])


# --------------------------------------------------------------------------
# f16 and bf16


LOW_PRECISION_CASES = [
    ("matmul", [(2, 3, 4), (4, 5)], {}),
    ("bias_add", [(2, 3, 2, 2), (3,)], {"axis": 1}),
    ("softmax", [(3, 6)], {}),
    ("log_softmax", [(3, 6)], {"axis": 0}),
    ("layer_norm", [(2, 3, 4), (3, 4), (3, 4)], {"begin_norm_axis": 1}),
    ("rms_norm", [(3, 8), (8,)], {}),
    ("batch_norm", [(2, 3, 2, 2), (3,), (3,), (3,), (3,)], {}),
    ("conv2d", [(1, 2, 5, 5), (4, 1, 3, 3)], {"groups": 2, "pads": [1, 1, 1, 1]}),
    ("max_pool2d", [(1, 2, 5, 5)], {"kernel": [2, 2], "strides": [2, 2]}),
    ("avg_pool2d", [(1, 2, 5, 5)], {"kernel": [3, 3], "pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize("dtype, tol", [(np.float16, 2e-3), (ml_dtypes.bfloat16, 1.6e-2)], ids=["f16", "bf16"])
@pytest.mark.parametrize("name, shapes, attrs", LOW_PRECISION_CASES, ids=[c[0] for c in LOW_PRECISION_CASES])
def test_low_precision_keeps_dtype_and_matches_f32(name, shapes, attrs, dtype, tol):
    arrays = [rand(*s).astype(dtype) for s in shapes]
    if name == "batch_norm":
        arrays[4] = (np.abs(arrays[4].astype(np.float32)) + 0.5).astype(dtype)  # positive variance
    (low,) = evaluate_op(name, arrays, attrs)
    (full,) = evaluate_op(name, [a.astype(np.float32) for a in arrays], attrs)
    assert low.dtype == np.dtype(dtype)
    # Same (rounded) inputs, so the only difference is rounding the f32 result.
    np.testing.assert_allclose(low.astype(np.float32), full, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_dynamic_quant_low_precision_input(dtype):
    x = rand(2, 8).astype(dtype)
    y, scale = evaluate_op("dynamic_quant", [x, np.full(8, 0.5, dtype)])
    y32, scale32 = evaluate_op("dynamic_quant", [x.astype(np.float32), np.full(8, 0.5, np.float32)])
    assert y.dtype == np.int8 and scale.dtype == np.float32
    np.testing.assert_array_equal(y, y32)
    np.testing.assert_array_equal(scale, scale32)


# --------------------------------------------------------------------------
# Verifier rules.


def z(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


VERIFY_ERRORS = [
    ("matmul", [z(2, 3), z(4, 5)], {}, r"contraction dimensions differ.*has 3.*has 4"),
    ("matmul", [z(3, 4), z(5, 4)], {"transpose_a": True}, "contraction dimensions differ"),
    ("matmul", [z(4), z(4, 5)], {"transpose_a": True}, "'transpose_a' needs operand a of rank >= 2"),
    ("matmul", [z(2, 3, 4), z(3, 4, 5)], {}, "batch dimensions .* are not broadcast-compatible"),
    ("matmul", [z(3, 4), z(4, 5, dtype=np.float16)], {}, "must have the same element type"),
    ("matmul", [z(3, 4, dtype=np.bool_), z(4, 5, dtype=np.bool_)], {}, "numeric element type"),
    ("matmul", [z(), z(4)], {}, "operand a tensor<f32> must have rank >= 1"),
    ("bias_add", [z(2, 3, 4, 4), z(4)], {"axis": 1}, r"operand bias tensor<4xf32> must be 1-D of length 3"),
    ("bias_add", [z(2, 3), z(1, 3)], {}, "must be 1-D of length 3"),
    ("bias_add", [z(2, 3), z(3)], {"axis": 2}, "axis 2 is out of range for rank 2"),
    ("bias_add", [z(2, 3, dtype=np.int32), z(3, dtype=np.int32)], {}, "floating-point element type"),
    ("softmax", [z(4, 8, dtype=np.int32)], {}, r"operand x tensor<4x8xi32> must have a floating-point element type"),
    ("log_softmax", [z(4, 8)], {"axis": -3}, "axis -3 is out of range"),
    ("layer_norm", [z(2, 3, 4), z(3, 4), z(4)], {"begin_norm_axis": 1}, r"operand beta tensor<4xf32> must have"),
    ("layer_norm", [z(2, 3, 4), z(3), z(4)], {}, r"operand gamma tensor<3xf32> must have the normalized shape"),
    ("layer_norm", [z(2, 4), z(4), z(4)], {"epsilon": -1.0}, "'epsilon' must be a finite non-negative"),
    ("layer_norm", [z(2, 4), z(4), z(4)], {"begin_norm_axis": 2}, "begin_norm_axis 2 is out of range"),
    ("rms_norm", [z(2, 4), z(2)], {}, r"operand gamma tensor<2xf32> must be 1-D of length 4"),
    ("rms_norm", [z(2, 4), z(4, dtype=np.float16)], {}, "same element type"),
    ("batch_norm", [z(2, 3, 4), z(3), z(3), z(2), z(3)], {}, r"operand mean tensor<2xf32> must be 1-D of length 3"),
    ("batch_norm", [z(3), z(3), z(3), z(3), z(3)], {}, "must have rank >= 2"),
    ("conv2d", [z(1, 4, 5, 5), z(2, 3, 3, 3)], {}, r"input channels .* \(4\) must equal .* \(3\) times groups \(1\)"),
    ("conv2d", [z(1, 4, 5, 5), z(3, 2, 3, 3)], {"groups": 2}, r"\(3\) must be divisible by groups \(2\)"),
    ("conv2d", [z(1, 4, 5, 5), z(4, 1, 3, 3)], {"groups": 2}, "must equal the per-group channels"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3)], {"groups": 0}, "'groups' must be positive"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 0, 3)], {}, "must have a height and a width of at least 1"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3)], {"pads": [1, 1, 1]}, "'pads' must have 4 values"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3)], {"pads": [0, -1, 0, 0]}, "'pads' must contain only non-negative"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3)], {"strides": [1, 0]}, "'strides' must contain only positive"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3)], {"dilations": [0, 1]}, "'dilations' must contain only positive"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3)], {"strides": [1]}, "'strides' must have 2 values"),
    ("conv2d", [z(1, 1, 4, 4), z(1, 1, 3, 6)], {"pads": [0, 1, 0, 0]}, "kernel width 6 exceeds the padded input width"),
    ("conv2d", [z(1, 1, 4, 4), z(1, 1, 3, 3)], {"dilations": [2, 1]}, "dilated kernel height 5 exceeds"),
    ("conv2d", [z(1, 5, 5), z(1, 1, 3, 3)], {}, r"operand x tensor<1x5x5xf32> must have rank 4 \(NCHW\)"),
    ("conv2d", [z(1, 1, 5, 5), z(1, 1, 3, 3, dtype=np.float16)], {}, "same element type"),
    ("max_pool2d", [z(1, 1, 3, 3)], {"kernel": [4, 2]}, "kernel height 4 exceeds the padded input height 3"),
    ("max_pool2d", [z(1, 1, 3, 3)], {"kernel": [2, 2], "pads": [2, 0, 0, 0]}, "must be smaller than the kernel"),
    ("max_pool2d", [z(1, 1, 3, 3)], {}, "requires attribute 'kernel'"),
    ("max_pool2d", [z(1, 1, 3, 3)], {"kernel": [2]}, "'kernel' must have 2 values"),
    ("max_pool2d", [z(1, 1, 3, 3, dtype=np.bool_)], {"kernel": [2, 2]}, "numeric element type"),
    ("avg_pool2d", [z(1, 1, 3, 3, dtype=np.int32)], {"kernel": [2, 2]}, "floating-point element type"),
    ("avg_pool2d", [z(1, 1, 3, 3)], {"kernel": [2, 0]}, "'kernel' must contain only positive"),
    ("avg_pool2d", [z(1, 3, 3)], {"kernel": [2, 2]}, "must have rank 4"),
    ("dynamic_quant", [z(2, 4), z(3)], {}, r"operand smooth_scales tensor<3xf32> must be 1-D of length 4"),
    ("dynamic_quant", [z(2, 4), z(1, 4)], {}, "operand smooth_scales .* must be 1-D"),
    ("dynamic_quant", [z(2, 4), z(4, dtype=np.float16)], {}, "same element type"),
    ("dynamic_quant", [z(2, 4, dtype=np.int8)], {}, "operand x tensor<2x4xi8> must have a floating-point"),
    ("dynamic_quant", [z()], {}, "must have rank >= 1"),
]


@pytest.mark.parametrize(
    "name, arrays, attrs, match", VERIFY_ERRORS, ids=[f"{c[0]}-{i}" for i, c in enumerate(VERIFY_ERRORS)]
)
def test_verifier_rejects(name, arrays, attrs, match):
    with pytest.raises(VerifyError, match=match):
        evaluate_op(name, arrays, attrs)


def test_every_nn_example_verifies_and_evaluates():
    for name in ("matmul", "bias_add", "softmax", "log_softmax", "layer_norm", "rms_norm", "batch_norm", "conv2d",
                 "max_pool2d", "avg_pool2d", "dynamic_quant", "group_norm", "resize"):
        spec = lookup_op(f"graph.{name}")
        assert spec is not None and spec.group == "nn" and spec.doc and spec.summary
        sigs, attrs = spec.example
        results = infer_results(spec, sigs, spec.with_defaults(attrs), None)
        outputs = evaluate_op(name, [rand(*s.shape) for s in sigs], attrs)
        assert [o.shape for o in outputs] == [r.shape for r in results]


# --------------------------------------------------------------------------
# group_norm


def group_norm_loops(x, gamma, beta, groups, eps) -> np.ndarray:
    """Each (sample, group) normalized over its channels and positions, in float64."""
    x64 = x.astype(np.float64)
    out = np.empty_like(x64)
    per_group = x.shape[1] // groups
    for n, g in itertools.product(range(x.shape[0]), range(groups)):
        block = x64[n, g * per_group:(g + 1) * per_group]
        out[n, g * per_group:(g + 1) * per_group] = (block - block.mean()) / math.sqrt(block.var() + eps)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return out * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize(("shape", "groups"), [((2, 6, 5), 3), ((2, 6, 5), 6), ((3, 4, 2, 3), 1), ((2, 8), 4)])
def test_group_norm_matches_loops(shape: tuple[int, ...], groups: int) -> None:
    x, gamma, beta = rand(*shape) * 3 + 1, rand(shape[1]), rand(shape[1])
    (got,) = evaluate_op("group_norm", [x, gamma, beta], {"num_groups": groups, "epsilon": 1e-5})
    np.testing.assert_allclose(got, group_norm_loops(x, gamma, beta, groups, 1e-5), rtol=1e-5, atol=1e-5)


def test_group_norm_one_group_per_sample_is_layer_norm_over_all_but_the_batch() -> None:
    x = rand(2, 4, 3)
    ones, zeros = np.ones(4, np.float32), np.zeros(4, np.float32)
    (grouped,) = evaluate_op("group_norm", [x, ones, zeros], {"num_groups": 1})
    (layered,) = evaluate_op("layer_norm", [x, np.ones((4, 3), np.float32), np.zeros((4, 3), np.float32)],
                             {"begin_norm_axis": 1})
    np.testing.assert_allclose(grouped, layered, rtol=1e-6, atol=1e-6)


def test_group_norm_nan_stays_in_its_group() -> None:
    x = rand(1, 4, 3)
    x[0, 0, 1] = np.nan
    (got,) = evaluate_op("group_norm", [x, np.ones(4, np.float32), np.zeros(4, np.float32)], {"num_groups": 2})
    assert np.isnan(got[0, :2]).all() and np.isfinite(got[0, 2:]).all()


def test_group_norm_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x, gamma, beta = rand(2, 6, 7) * 4, rand(6), rand(6)
    for groups in (1, 2, 3, 6):
        (got,) = evaluate_op("group_norm", [x, gamma, beta], {"num_groups": groups, "epsilon": 1e-5})
        want = torch.nn.functional.group_norm(*(torch.from_numpy(a) for a in (x,)), groups, torch.from_numpy(gamma),
                                              torch.from_numpy(beta), 1e-5)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=2e-6)


# --------------------------------------------------------------------------
# resize


def resize_taps_loops(size: int, out: int, mode: str, align_corners: bool, scale: float | None):
    """PyTorch's CPU formulas written out per position (float32 steps; double where PyTorch computes in double)."""
    f32 = np.float32
    if align_corners:
        step = f32(size - 1) / f32(out - 1) if out > 1 else f32(0)
    else:
        step = f32(1.0 / scale) if scale else f32(size) / f32(out)
    taps = []
    for p in range(out):
        if mode == "nearest":
            index = p if out == size else p // 2 if out == 2 * size else math.floor(f32(p) * step)
            taps.append((min(index, size - 1),))
        elif mode == "nearest_exact":
            taps.append((min(math.floor(f32((p + 0.5) * float(step))), size - 1),))
        elif out == size:
            taps.append((p, p, 1.0, 0.0))
        else:
            source = f32(p) * step if align_corners else max(f32((p + 0.5) * float(step) - 0.5), f32(0))
            first = min(math.floor(source), size - 1)
            far = min(max(f32(source - f32(first)), f32(0)), f32(1))
            taps.append((first, first + (first < size - 1), float(f32(1) - far), float(far)))
    return taps


@pytest.mark.parametrize("mode", ["nearest", "nearest_exact", "bilinear"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_resize_taps_are_pytorch_formulas(mode: str, align_corners: bool) -> None:
    from graphfuse.dialect.ops.spatial import resize_taps

    if align_corners and mode != "bilinear":
        return
    for size, out, scale in itertools.product((1, 2, 5, 7), (1, 3, 10, 14), (None, 1.5, 2.0, 0.4)):
        ratio = 0.0 if align_corners or scale is None else float(np.float32(1.0 / scale))
        got = resize_taps(size, out, mode, align_corners, ratio)
        want = resize_taps_loops(size, out, mode, align_corners, None if align_corners else scale)
        columns = [got[0][0]] if mode != "bilinear" else [got[0][0], got[1][0], got[0][1], got[1][1]]
        assert [tuple(float(c[p]) for c in columns) for p in range(out)] == [tuple(map(float, t)) for t in want]


def test_resize_bilinear_reads_along_w_then_h() -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4)  # a plane a + 4 b: bilinear reproduces it
    (got,) = evaluate_op("resize", [x], {"size": [5, 7], "mode": "bilinear", "align_corners": True})
    rows, cols = np.linspace(0, 2, 5), np.linspace(0, 3, 7)
    np.testing.assert_allclose(got[0], 4 * rows[:, None] + cols[None, :], rtol=1e-6, atol=1e-6)
    (same,) = evaluate_op("resize", [x], {"size": [3, 4], "mode": "bilinear"})
    np.testing.assert_array_equal(same, x)


def test_resize_nearest_keeps_integers_and_the_leading_dims() -> None:
    ids = np.arange(10, dtype=np.int64).reshape(2, 5)
    (got,) = evaluate_op("resize", [ids], {"size": [10]})
    np.testing.assert_array_equal(got, np.repeat(ids, 2, axis=1))
    (got,) = evaluate_op("resize", [ids], {"size": [3], "mode": "nearest_exact"})
    np.testing.assert_array_equal(got, ids[:, [0, 2, 4]])


def test_resize_spreads_inf_as_pytorch_does() -> None:
    """A weight of 0 on an infinity is NaN (0 * inf), also where the size stays (PyTorch's weights 1 and 0)."""
    x = np.zeros((1, 2, 3), np.float32)
    x[0, 1, 1] = np.inf
    (same,) = evaluate_op("resize", [x], {"size": [2, 3], "mode": "bilinear"})
    assert np.isnan(same[0, 1, 1]) and np.isfinite(np.delete(same.reshape(-1), 4)).all()
    (wide,) = evaluate_op("resize", [x], {"size": [4, 6], "mode": "bilinear"})
    # F.interpolate's answer: inf where the infinity has a positive weight, NaN where its weight is 0
    nan, inf = np.nan, np.inf
    want = [[nan, nan, nan, nan, nan, 0]] + [[nan, inf, inf, inf, inf, 0]] * 3
    np.testing.assert_array_equal(wide[0], np.array(want, np.float32))


@pytest.mark.parametrize(("shape", "attrs", "message"), [
    ((2, 5, 6), {"size": [4, 4, 4]}, "must have 1 or 2 entries"),
    ((6,), {"size": [4, 4]}, "must have rank >= 2"),
    ((2, 5, 6), {"size": [4, -1]}, "'size' must contain only positive values"),
    ((2, 0, 6), {"size": [4, 4]}, "must be static and non-empty"),
    ((2, 5, 6), {"size": [4, 4], "align_corners": True}, "'align_corners' is for mode \"bilinear\""),
    ((2, 5, 6), {"size": [4, 4], "mode": "bilinear", "align_corners": True, "ratio_h": 0.5}, "must be 0 with"),
    ((2, 5, 6), {"size": [4], "ratio_h": 0.5}, "'ratio_h' must be 0 when only the last dim"),
    ((2, 5, 6), {"size": [4, 4], "ratio_w": math.inf}, "must be finite and >= 0"),
    ((2, 5, 6), {"size": [4, 4], "mode": "area"}, "attribute 'mode' must be one of"),
])
def test_resize_rejects(shape: tuple[int, ...], attrs: dict[str, Any], message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        infer("resize", [TensorSig(shape, "f32")], attrs)
    with pytest.raises(VerifyError, match="floating-point element type"):
        infer("resize", [TensorSig((2, 5, 6), "i32")], {"size": [4, 4], "mode": "bilinear"})


def test_resize_matches_torch_interpolate() -> None:
    """Nearest modes bit for bit; bilinear within an ulp or two (PyTorch contracts its sums into FMAs)."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    x = rand(2, 3, 5, 7)
    for mode, align_corners, size, scale in itertools.product(("nearest", "nearest-exact", "bilinear"), (False, True),
                                                             ((9, 4), (5, 7), (1, 13)), (None, (1.5, 0.6))):
        if align_corners and mode != "bilinear":
            continue
        options = {} if mode != "bilinear" else {"align_corners": align_corners}
        if scale is None:
            want = F.interpolate(torch.from_numpy(x), size=size, mode=mode, **options).numpy()
            ratios = (0.0, 0.0)
        else:
            want = F.interpolate(torch.from_numpy(x), scale_factor=scale, mode=mode, **options).numpy()
            ratios = (0.0, 0.0) if align_corners else tuple(float(np.float32(1.0 / s)) for s in scale)
        (got,) = evaluate_op("resize", [x], {"size": list(want.shape[-2:]), "mode": mode.replace("-", "_"),
                                             "align_corners": align_corners, "ratio_h": ratios[0],
                                             "ratio_w": ratios[1]})
        if mode == "bilinear":
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(got, want)
