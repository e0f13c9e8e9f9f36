"""graphfuse.compile: fuse, lower and run whole graphs; same results as the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphfuseError
from graphfuse.tools.models import MODELS, model_inputs


def _elementwise_module():
    b = graphfuse.GraphBuilder("f")
    x, y = b.arg((8, 16)), b.arg((16,))
    s = b.add(x, y)
    b.ret(b.mul(b.gelu(s, approximate="tanh"), b.sigmoid(s)), b.greater(s, b.const(np.float32(0.0))))
    return b.module


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_every_opt_level_matches_the_interpreter(opt_level: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=16).astype(np.float32)
    executable = graphfuse.compile(_elementwise_module(), opt_level=opt_level)
    got = executable(x, y)
    want = executable.reference(x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(got[1], want[1])


def test_fused_has_fewer_loop_nests_than_unfused() -> None:
    unfused = graphfuse.compile(_elementwise_module(), opt_level=0)
    fused = graphfuse.compile(_elementwise_module(), opt_level=2)
    assert fused.kernels >= 1 and unfused.kernels == 0
    assert fused.linalg.count("linalg.generic") <= unfused.linalg.count("linalg.generic")


def test_cached_per_module_and_options() -> None:
    module = _elementwise_module()
    assert graphfuse.compile(module, opt_level=2) is graphfuse.compile(module, opt_level=2)
    assert graphfuse.compile(module, opt_level=2) is not graphfuse.compile(module, opt_level=0)


def test_flags_and_pipeline_text() -> None:
    module = _elementwise_module()
    flagged = graphfuse.compile(module, graph_kernel_flags="--opt_level=0")
    assert flagged.kernels == 0
    custom = graphfuse.compile(module, pipeline="builtin.module(graph-canonicalize)")
    assert custom.pipeline == "builtin.module(graph-canonicalize)"
    with pytest.raises(GraphfuseError, match="either pipeline= or opt_level="):
        graphfuse.compile(module, pipeline="builtin.module(graph-dce)", opt_level=1)


def test_source_as_text_and_path(tmp_path) -> None:
    text = str(_elementwise_module())
    path = tmp_path / "model.mlir"
    path.write_text(text)
    x, y = np.ones((8, 16), np.float32), np.ones(16, np.float32)
    a = graphfuse.compile(text)(x, y)
    b = graphfuse.compile(path)(x, y)
    np.testing.assert_array_equal(a[0], b[0])


def test_call_time_errors() -> None:
    executable = graphfuse.compile(_elementwise_module())
    with pytest.raises(GraphfuseError, match=r"argument 0: expected dtype float32"):
        executable(np.ones((8, 16), np.float64), np.ones(16, np.float32))
    with pytest.raises(GraphfuseError, match=r"argument 1: expected shape \(16,\)"):
        executable(np.ones((8, 16), np.float32), np.ones(15, np.float32))
    with pytest.raises(GraphfuseError, match=r"expected 2 argument"):
        executable(np.ones((8, 16), np.float32))


def test_missing_entry_and_bad_pipeline() -> None:
    module = _elementwise_module()
    with pytest.raises(GraphfuseError, match="no function named 'g'"):
        graphfuse.compile(module, entry="g")
    with pytest.raises(GraphfuseError, match="no-such-pass"):
        graphfuse.compile(module, pipeline="builtin.module(no-such-pass)")


def test_intermediates_reuse_one_workspace() -> None:
    """Intermediate buffers are allocated once per compiled function, not per call."""
    executable = graphfuse.compile(_elementwise_module(), opt_level=0)
    workspace = executable.function.workspace
    assert workspace, "the unfused graph has intermediates"
    before = [w.ctypes.data for w in workspace]
    x, y = np.ones((8, 16), np.float32), np.ones(16, np.float32)
    executable(x, y)
    executable(x, y)
    assert [w.ctypes.data for w in executable.function.workspace] == before


def test_intermediates_share_the_workspace_when_their_lifetimes_do_not_overlap() -> None:
    """An unfused chain of 12 ops has 11 intermediates; two are live at a time, so two buffers' bytes suffice."""
    b = graphfuse.GraphBuilder("chain")
    x, w = b.arg((64, 64)), b.arg((64, 64))
    value = x
    for k in range(12):
        value = b.add(value, w) if k % 2 else b.tanh(value)
    b.ret(value)
    executable = graphfuse.compile(b.module, opt_level=0)
    (arena,) = executable.function.workspace
    assert arena.nbytes <= 2 * 64 * 64 * 4
    assert arena.ctypes.data % 64 == 0
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2)]
    np.testing.assert_allclose(executable(*inputs)[0], executable.reference(*inputs)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("opt_level", [0, 2])
def test_bundled_models(name: str, opt_level: int) -> None:
    module = MODELS[name]().module
    inputs = model_inputs(name)
    executable = graphfuse.compile(module, opt_level=opt_level)
    got = executable(*inputs)
    want = executable.reference(*inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(w).max())))


def test_enable_debug_mode_names_the_kernel_producing_nan() -> None:
    """--enable_debug_mode: a NaN in a result is an error naming the kernel that first produced it."""
    b = graphfuse.GraphBuilder("f")
    x = b.arg((4, 8))
    y = b.sqrt(b.sub(b.mul(x, x), b.const(np.float32(1.0))))  # NaN where |x| < 1
    b.ret(b.add(b.exp(y), y))
    module = b.module
    ok = np.full((4, 8), 2.0, np.float32)
    bad = ok.copy()
    bad[1, 2] = 0.5
    plain = graphfuse.compile(module)
    assert np.isnan(plain(bad)[0]).sum() == 1  # without debug mode the NaN is returned
    debug = graphfuse.compile(module, graph_kernel_flags="--enable_debug_mode")
    assert debug.debug and debug.kernels >= 1
    debug(ok)
    with pytest.raises(
        GraphfuseError,
        match=r"enable_debug_mode: @f result 0: 1 NaN, 0 Inf; first produced by "
        r"kernel @f_kernel_0 output \d+ from finite inputs",
    ):
        debug(bad)
