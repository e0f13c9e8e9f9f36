"""Ops defined by their expansion (dialect/ops/derived.py): independent formulas, PyTorch's autograd, the
expansion bit-exact against the reference, MindSpore's names."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphfuse import run_function
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.catalog import lookup_op
from graphfuse.dialect.evaluate import evaluate_op
from graphfuse.dialect.matching import graph_op_names
from graphfuse.dialect.ops.derived import DERIVED_OPS
from graphfuse.dialect.ops.shape import random_uniform_array
from graphfuse.pipelines.graph_kernel.op_names import resolve_ops
from graphfuse.pipelines.runner import run_pipeline

torch = pytest.importorskip("torch")

_erf = np.vectorize(math.erf)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _phi(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))


#: name -> (formula in float64 on the operands, attributes)
FORMULAS = {
    "sigmoid_grad": (lambda y, dy: dy * y * (1 - y), {}),
    "tanh_grad": (lambda y, dy: dy * (1 - y * y), {}),
    "sqrt_grad": (lambda y, dy: dy * 0.5 / y, {}),
    "rsqrt_grad": (lambda y, dy: -0.5 * dy * y**3, {}),
    "relu_grad": (lambda dy, x: np.where(x > 0, dy, 0.0), {}),
    "silu_grad": (lambda dy, x: dy * _sigmoid(x) * (1 + x * (1 - _sigmoid(x))), {}),
    "fast_gelu_grad": (lambda dy, x: dy * (_sigmoid(1.702 * x) + 1.702 * x * _sigmoid(1.702 * x)
                                           * (1 - _sigmoid(1.702 * x))), {}),
    "gelu_grad": (lambda dy, x: dy * (_phi(x) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)), {}),
    "softplus_grad": (lambda dy, x: dy * _sigmoid(x), {}),
    "softplus": (lambda x: np.log1p(np.exp(x)), {}),
    "hsigmoid": (lambda x: np.clip(x / 6 + 0.5, 0, 1), {}),
    "hswish": (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), {}),
    "hshrink": (lambda x: np.where(np.abs(x) > 0.5, x, 0.0), {}),
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.2 * x), {"negative_slope": 0.2}),
    "elu": (lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)), {"alpha": 1.5}),
    "cosh": (np.cosh, {}),
    "sinh": (np.sinh, {}),
    "erfc": (lambda x: 1 - _erf(x), {}),
    "addcmul": (lambda x, a, b: x + 0.5 * a * b, {"value": 0.5}),
    "fused_mul_add": (lambda x, y, z: x * y + z, {}),
    "clamp_scalar": (lambda x: np.clip(x, -1.0, 0.5), {"low": -1.0, "high": 0.5}),
    "ones_like": (np.ones_like, {}),
    "zeros_like": (np.zeros_like, {}),
    "fill_v2": (lambda v: np.full((2, 3), v), {"shape": [2, 3]}),
    "expand_dims": (lambda x: np.expand_dims(x, 1), {"axis": 1}),
    "squeeze": (lambda x: x, {}),  # no dimension of size 1 in the operands here
    "identity": (lambda x: x, {}),
    "bias_add_grad": (lambda dy: dy.sum(axis=0), {}),
    "sigmoid_cross_entropy_with_logits": (lambda x, z: np.log1p(np.exp(x)) - x * z, {}),
    "sigmoid_cross_entropy_with_logits_grad": (lambda x, z, d: (_sigmoid(x) - z) * d, {}),
    "div_mod": (lambda x, y: np.floor(x / y), {"rounding_mode": "floor"}),
    "softmax_grad": (lambda y, dy: (dy - (dy * y).sum(-1, keepdims=True)) * y, {}),
    "log_softmax_grad": (lambda y, dy: dy - np.exp(y) * dy.sum(-1, keepdims=True), {}),
    "dropout_grad": (lambda dy, m: dy * m / 0.8, {"keep_prob": 0.8}),
    "assign_add": (lambda v, x: v + x, {}),
    "maximum_grad": (lambda a, b, d: (np.where(a >= b, d, 0.0), np.where(a >= b, 0.0, d)), {}),
    "minimum_grad": (lambda a, b, d: (np.where(a <= b, d, 0.0), np.where(a <= b, 0.0, d)), {}),
    "argmax_with_value": (lambda x: (x.argmax(1), x.max(1)), {"axis": 1}),
    "argmin_with_value": (lambda x: (x.argmin(0), x.min(0)), {}),
    "square_sum_all": (lambda x, y: ((x * x).sum(), (y * y).sum()), {}),
    "equal_count": (lambda x, y: np.array([(x == y).sum()]), {}),
    "apply_momentum": (lambda w, a, lr, g, mom: (w - lr * (a * mom + g), a * mom + g), {}),
    "adam": (lambda w, m, v, b1p, b2p, lr, b1, b2, eps, g: (
        w - lr * np.sqrt(1 - b2p) / (1 - b1p) * (m + (g - m) * (1 - b1)) / (np.sqrt(v + (g * g - v) * (1 - b2)) + eps),
        m + (g - m) * (1 - b1), v + (g * g - v) * (1 - b2)), {}),
    "adam_weight_decay": (lambda w, m, v, lr, b1, b2, eps, decay, g: (
        w - lr * ((b1 * m + (1 - b1) * g) / (np.sqrt(b2 * v + (1 - b2) * g * g) + eps) + decay * w),
        b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g), {}),
    "binary_cross_entropy": (lambda x, y, w: np.mean(-w * (y * np.log(x) + (1 - y) * np.log(1 - x))), {}),
    "bce_with_logits_loss": (lambda x, y, w, pw: np.sum(w * (-pw * y * np.log(_sigmoid(x))
                                                              - (1 - y) * np.log(1 - _sigmoid(x)))),
                             {"reduction": "sum"}),
    "layer_norm_grad": (lambda x, dy, var, mean, g: _layer_norm_grad(x, dy, var, mean, g), {}),
    "repeat_interleave": (lambda x: np.repeat(x, 3, axis=1), {"repeats": 3, "dim": 1}),
    "adam_apply_one_with_decay": (lambda g, v, m, w, lr, b1, c1, b2, c2, d, e: (
        b2 * v + c2 * g * g, b1 * m + c1 * g,
        w - lr * ((b1 * m + c1 * g) / (e + np.sqrt(b2 * v + c2 * g * g)) + d * w)), {}),
    "lamb_apply_optimizer": (lambda g, v, m, w, b1, c1, b2, c2, e, t, u, d: (
        (b1 * m + c1 * g) / (1 - b1**t) / (np.sqrt((b2 * v + c2 * g * g) / (1 - b2**t)) + e) + u * d * w,
        b2 * v + c2 * g * g, b1 * m + c1 * g), {}),
    "lamb_apply_weight": (lambda wn, gn, lr, u, p: p - lr * np.where((wn > 0) & (gn > 0), wn / gn, 1.0) * u, {}),
    # (fill is what the root reads where x <= threshold: positive here, as a squared norm is)
    "clip_by_norm_no_div_sum": (lambda x, t, f, fl: np.maximum(np.where(x > t, np.sqrt(np.where(x > t, x, f)), x),
                                                               fl), {}),
    "dropout": (lambda x: (x * _kept(x.shape, 0.75, 3) / 0.75, _kept(x.shape, 0.75, 3)), {"keep_prob": 0.75,
                                                                                           "seed": 3}),
    "standard_normal": (lambda like: np.sqrt(-2 * np.log(1 - random_uniform_array(like.shape, 4).astype(np.float64)))
                        * np.cos(2 * np.pi * random_uniform_array(like.shape, 4 ^ 0x5BD1E995)), {"seed": 4}),
    "softmax_cross_entropy_with_logits": (lambda x, y: (
        -(y * (x - x.max(-1, keepdims=True) - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))))
        .sum(-1), np.exp(x) / np.exp(x).sum(-1, keepdims=True) - y), {}),
}


#: Operands in (0, 1): probabilities, optimizer hyper-parameters, variances, norms.
UNIT = {"binary_cross_entropy": (0, 1, 2), "adam": (3, 4, 5, 6, 7, 8), "adam_weight_decay": (3, 4, 5, 6, 7),
        "apply_momentum": (2, 4), "bce_with_logits_loss": (1, 2, 3), "layer_norm_grad": (2,),
        "adam_apply_one_with_decay": (1, 4, 5, 6, 7, 8, 9, 10), "lamb_apply_optimizer": (1, 4, 5, 6, 7, 8, 10, 11),
        "lamb_apply_weight": (0, 1, 2), "clip_by_norm_no_div_sum": (0, 1, 2)}


def _kept(shape: tuple[int, ...], keep_prob: float, seed: int) -> np.ndarray:
    return (random_uniform_array(shape, seed) < keep_prob).astype(np.float64)


def _layer_norm_grad(x, dy, var, mean, gamma, eps=1e-7):
    rstd = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * rstd
    dxhat = dy * gamma
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).sum(0), dy.sum(0)


def _operands(name: str, dtype: type = np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(len(name))
    shapes = [sig.shape if sig.rank == 0 else (3, 17) for sig in lookup_op(f"graph.{name}").example[0]]
    arrays = [rng.standard_normal(shape) * 2 for shape in shapes]
    for i in UNIT.get(name, ()):
        arrays[i] = rng.uniform(0.05, 0.95, shapes[i])
    if name in ("adam", "adam_weight_decay"):  # v >= 0
        arrays[2] = np.abs(arrays[2])
    if name == "lamb_apply_optimizer":  # v >= 0, a step count
        arrays[1], arrays[9] = np.abs(arrays[1]), np.asarray(3.0)
    if name == "adam_apply_one_with_decay":  # v >= 0
        arrays[1] = np.abs(arrays[1])
    if name in ("sqrt_grad", "rsqrt_grad"):  # y = sqrt(x) or rsqrt(x) is positive
        arrays[0] = np.abs(arrays[0]) + 0.25
    if name in ("sigmoid_grad", "tanh_grad"):  # y in (0, 1) or (-1, 1)
        arrays[0] = np.tanh(arrays[0])
    if name == "dropout_grad":  # a 0/1 mask
        arrays[1] = (arrays[1] > 0).astype(arrays[1].dtype)
    return [a.astype(dtype) for a in arrays]


def test_every_derived_op_has_a_formula() -> None:
    assert set(FORMULAS) == set(DERIVED_OPS)


@pytest.mark.parametrize("name", sorted(FORMULAS))
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_reference_matches_the_formula(name: str, dtype: str) -> None:
    formula, attrs = FORMULAS[name]
    arrays = _operands(name, np.float32 if dtype == "f32" else np.float16)
    got = evaluate_op(name, arrays, attrs)
    want = formula(*[a.astype(np.float64) for a in arrays])
    want = want if isinstance(want, tuple) else (want,)
    rtol, atol = (5e-6, 2e-6) if dtype == "f32" else (4e-3, 4e-3)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == arrays[0].dtype or g.dtype.kind == "i"  # positions and counts are integers
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=rtol, atol=atol)


def test_gelu_grad_tanh_form_matches_autograd() -> None:
    x = torch.linspace(-5, 5, 41, dtype=torch.float64, requires_grad=True)
    dy = torch.linspace(0.5, 1.5, 41, dtype=torch.float64)
    torch.nn.functional.gelu(x, approximate="tanh").backward(dy)
    (got,) = evaluate_op("gelu_grad", [dy.numpy().astype(np.float32), x.detach().numpy().astype(np.float32)],
                         {"approximate": "tanh"})
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=2e-6, atol=1e-6)


#: gradient op -> (PyTorch function, whether the op takes the function's output y rather than its input x)
AUTOGRAD = {
    "sigmoid_grad": (torch.sigmoid, True),
    "tanh_grad": (torch.tanh, True),
    "sqrt_grad": (torch.sqrt, True),
    "rsqrt_grad": (torch.rsqrt, True),
    "relu_grad": (torch.relu, False),
    "silu_grad": (torch.nn.functional.silu, False),
    "gelu_grad": (torch.nn.functional.gelu, False),
    "softplus_grad": (torch.nn.functional.softplus, False),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD))
def test_gradients_match_autograd(name: str) -> None:
    fn, by_output = AUTOGRAD[name]
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((4, 9)) + (3.0 if name in ("sqrt_grad", "rsqrt_grad") else 0.0),
                     requires_grad=True)
    dy = torch.tensor(rng.standard_normal((4, 9)))
    y = fn(x)
    y.backward(dy)
    operands = [y.detach(), dy] if by_output else [dy, x.detach()]
    (got,) = evaluate_op(name, [t.numpy().astype(np.float32) for t in operands])
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", sorted(DERIVED_OPS))
def test_expansion_is_bit_exact(name: str) -> None:
    """graph-kernel-expand replaces the op by basic ops that compute exactly its reference."""
    attrs = FORMULAS[name][1]
    arrays = _operands(name)
    b = GraphBuilder("f")
    args = [b.arg(a.shape) for a in arrays]
    results = getattr(b, name)(*args, **attrs)
    b.ret(*(results if isinstance(results, tuple | list) else [results]))
    want = run_function(b.module, arrays)
    run_pipeline(b.module, f"builtin.module(graph-kernel-expand{{only-ops={name}}})")
    assert f"graph.{name}" not in graph_op_names(b.module)
    got = run_function(b.module, arrays)
    assert all(np.array_equal(w, g, equal_nan=True) for w, g in zip(want, got, strict=True))


@pytest.mark.parametrize("name", sorted(n for n in DERIVED_OPS if len(lookup_op(f"graph.{n}").results) > 1))
def test_multi_result_ops_compile(name: str) -> None:
    """Lowered through graph-decompose (the same expansion), every result matches the reference."""
    import graphfuse

    attrs = FORMULAS[name][1]
    arrays = _operands(name)
    b = GraphBuilder("f")
    b.ret(*getattr(b, name)(*[b.arg(a.shape) for a in arrays], **attrs))
    exe = graphfuse.compile(b.module)
    for want, got in zip(exe.reference(*arrays), exe(*arrays), strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_layer_norm_grad_matches_autograd() -> None:
    rng = np.random.default_rng(9)
    x = torch.tensor(rng.standard_normal((5, 12)), requires_grad=True)
    gamma = torch.tensor(rng.standard_normal(12), requires_grad=True)
    beta = torch.tensor(rng.standard_normal(12), requires_grad=True)
    dy = torch.tensor(rng.standard_normal((5, 12)))
    torch.nn.functional.layer_norm(x, (12,), gamma, beta, eps=1e-5).backward(dy)
    mean = x.detach().mean(-1, keepdim=True)
    var = x.detach().var(-1, unbiased=False, keepdim=True)
    f32 = [t.numpy().astype(np.float32) for t in (x.detach(), dy, var, mean, gamma.detach())]
    dx, dgamma, dbeta = evaluate_op("layer_norm_grad", f32, {"epsilon": 1e-5})
    for got, want in ((dx, x.grad), (dgamma, gamma.grad), (dbeta, beta.grad)):
        np.testing.assert_allclose(got, want.numpy(), rtol=2e-5, atol=2e-5)


def test_random_ops_have_their_distributions() -> None:
    """random_uniform: uniform on [0, 1) (mean, quartiles), streams of different seeds differ, and the compiled
    code gives the interpreter's bits; dropout keeps keep_prob of the elements; standard_normal is N(0, 1)."""
    import graphfuse

    b = GraphBuilder("f")
    x = b.arg((200, 500))
    b.ret(b.random_uniform(x, seed=11), b.random_uniform(x, seed=12), *b.dropout(x, keep_prob=0.3, seed=5),
          b.standard_normal(x, seed=6))
    exe = graphfuse.compile(b.module)
    ones = np.ones((200, 500), np.float32)
    want = exe.reference(ones)
    got = exe(ones)
    u, v, dropped, mask, normal = got
    assert np.array_equal(u, want[0]) and np.array_equal(v, want[1]) and np.array_equal(mask, want[3])
    assert abs(u.mean() - 0.5) < 0.005 and np.allclose(np.quantile(u, [0.25, 0.75]), [0.25, 0.75], atol=0.005)
    assert u.min() >= 0.0 and u.max() < 1.0 and np.mean(u == v) < 1e-3
    assert set(np.unique(mask)) == {0.0, 1.0} and abs(mask.mean() - 0.3) < 0.005
    np.testing.assert_allclose(dropped, mask / np.float32(0.3), rtol=1e-6)
    assert abs(normal.mean()) < 0.01 and abs(normal.std() - 1.0) < 0.01
    np.testing.assert_allclose(normal, want[4], rtol=1e-5, atol=1e-5)


def test_optimizers_match_pytorch() -> None:
    """adam (no bias-correction difference: PyTorch's Adam at step t) and momentum SGD against torch.optim."""
    rng = np.random.default_rng(5)
    w0, g = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    param = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.Adam([param], lr=lr, betas=(b1, b2), eps=eps)
    param.grad = torch.tensor(g)
    opt.step()
    f32 = np.float32
    zeros = np.zeros_like(w0, dtype=f32)
    scalars = [np.array(v, f32) for v in (b1, b2, lr, b1, b2, eps)]
    new_w, m, _ = evaluate_op("adam", [w0.astype(f32), zeros, zeros, *scalars, g.astype(f32)])
    # PyTorch adds eps to sqrt(v_hat) where MindSpore's form adds it to sqrt(v): equal up to eps's scale
    np.testing.assert_allclose(new_w, param.detach().numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(m, opt.state[param]["exp_avg"].numpy(), rtol=2e-6, atol=1e-7)
    param = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.SGD([param], lr=lr, momentum=0.9)
    for _ in range(2):
        param.grad = torch.tensor(g)
        opt.step()
    w, accum = w0.astype(f32), zeros
    for _ in range(2):
        w, accum = evaluate_op("apply_momentum", [w, accum, np.array(lr, f32), g.astype(f32), np.array(0.9, f32)])
    np.testing.assert_allclose(w, param.detach().numpy(), rtol=2e-6, atol=1e-6)


def test_mindspore_names_resolve(capsys: pytest.CaptureFixture[str]) -> None:
    names = tuple(n for names in DERIVED_OPS.values() for n in names)
    assert resolve_ops(names, "enable_expand_ops") == set(DERIVED_OPS)
    assert "unknown operator" not in capsys.readouterr().err


@pytest.mark.parametrize(("beta", "threshold"), [(1.0, 20.0), (2.0, 5.0), (0.5, 20.0), (-1.0, 20.0), (3.0, 1.0)])
def test_softplus_beta_and_threshold_match_torch(beta: float, threshold: float) -> None:
    """PyTorch's softplus: x where beta x > threshold, log1p(exp(beta x)) / beta elsewhere; NaN and infinities
    included, and the far negative tail to its relative accuracy (a plain log(1 + e) loses it)."""
    x = np.concatenate([np.linspace(-90, 90, 721), [np.nan, np.inf, -np.inf, 0.0, threshold / beta, -17.0, -30.0]])
    x = x.astype(np.float32)
    (got,) = evaluate_op("softplus", [x], {"beta": beta, "threshold": threshold})
    # in f32, as PyTorch compares beta x with the threshold (threshold / beta sits on the switch)
    want = torch.nn.functional.softplus(torch.from_numpy(x), beta=beta, threshold=threshold).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    # (below f32's smallest normal number the result is a subnormal or 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=np.finfo(np.float32).tiny)


def test_softplus_defaults_have_no_threshold() -> None:
    """MindSpore's Softplus (the defaults): log(1 + exp(x)) everywhere, finite far above PyTorch's threshold."""
    x = np.array([25.0, 80.0, -40.0], np.float32)
    (got,) = evaluate_op("softplus", [x])
    np.testing.assert_allclose(got, np.log1p(np.exp(x.astype(np.float64))), rtol=2e-7)
