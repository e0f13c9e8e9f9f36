"""Parallel loops: large kernels run on several threads with the same results as on one.

parallelize-kernels and tile-kernel-rows give large kernels scf.forall loops;
the runtime lowers them to OpenMP (docs/lowering.md, "Threads"). Each element
is computed by the same code whichever thread runs it, so results must be
bit-identical across thread counts, and match the reference interpreter.
"""

from __future__ import annotations

import importlib.util
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse.lowering import parallel
from graphfuse.lowering.host import THREADS_VARIABLE, default_threads
from graphfuse.lowering.parallel import openmp_library


def _models() -> dict[str, tuple[graphfuse.GraphBuilder, list[np.ndarray]]]:
    rng = np.random.default_rng(0)
    models = {}
    b = graphfuse.GraphBuilder("gelu")
    x = b.arg((1000, 300))
    b.ret(b.gelu(b.add(b.mul(x, b.const(np.float32(2.0))), b.const(np.float32(1.0))), approximate="tanh"))
    models["gelu"] = (b, [rng.normal(size=(1000, 300)).astype(np.float32)])
    b = graphfuse.GraphBuilder("add_layer_norm")
    x, r, g, beta = b.arg((700, 257)), b.arg((700, 257)), b.arg((257,)), b.arg((257,))
    b.ret(b.layer_norm(b.add(x, r), g, beta, begin_norm_axis=-1))
    models["add_layer_norm"] = (b, [rng.normal(size=s).astype(np.float32) for s in [(700, 257)] * 2 + [(257,)] * 2])
    b = graphfuse.GraphBuilder("softmax_and_mask")
    x = b.arg((3, 200, 180))
    s = b.softmax(x, axis=-1)
    b.ret(s, b.greater(s, b.const(np.float32(0.01))))  # two results, one boolean
    models["softmax_and_mask"] = (b, [rng.normal(size=(3, 200, 180)).astype(np.float32)])
    b = graphfuse.GraphBuilder("integers")
    x = b.arg((513, 129), "i32")
    b.ret(b.mul(b.abs(x), b.add(x, b.const(np.int32(3)))))
    models["integers"] = (b, [rng.integers(-50, 50, (513, 129)).astype(np.int32)])
    return models


MODELS = _models()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_threads_give_the_same_results(name: str) -> None:
    builder, inputs = MODELS[name]
    one = graphfuse.compile(builder.module, num_threads=1)
    two = graphfuse.compile(builder.module, num_threads=2)
    assert "scf.forall" in two.linalg
    got_one, got_two = one(*inputs), two(*inputs)
    for a, b, want in zip(got_one, got_two, one.reference(*inputs), strict=True):
        np.testing.assert_array_equal(a, b)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
        else:
            np.testing.assert_array_equal(b, want)


def test_thread_count_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_VARIABLE, "3")
    assert default_threads() == 3
    monkeypatch.setenv(THREADS_VARIABLE, "many")
    with pytest.raises(graphfuse.GraphfuseError, match="GRAPHFUSE_NUM_THREADS must be a positive integer"):
        default_threads()
    monkeypatch.delenv(THREADS_VARIABLE)
    assert default_threads() >= 1


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_bad_thread_counts(bad: object) -> None:
    with pytest.raises(graphfuse.GraphfuseError, match="num_threads must be a positive integer"):
        graphfuse.compile(MODELS["gelu"][0].module, num_threads=bad)


def test_without_the_openmp_runtime_loops_run_serially(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "openmp_library", lambda: None)
    from graphfuse.lowering.codegen.cpu import pipeline

    monkeypatch.setattr(pipeline, "openmp_library", lambda: None)
    assert pipeline.parallel_loops(2) == ("scf-forall-to-for", [])


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the intel-openmp wheel is x86_64 only")
def test_the_openmp_runtime_is_installed() -> None:
    assert openmp_library() is not None


#: Compiles the models above on 3 threads (more than the 2-core CI machine, fewer iterations than some loops have
#: threads) after importing PyTorch or not, and reports which runtime the JIT loaded and whether the results match
#: one thread's bit for bit.
_RUNTIME_PROBE = """
import sys
if sys.argv[1] == "torch":
    import torch  # noqa: F401
import numpy as np
import graphfuse
sys.path.insert(0, sys.argv[2])
from test_parallel import MODELS
same = True
for builder, inputs in MODELS.values():
    one = graphfuse.compile(builder.module, num_threads=1)(*inputs)
    three = graphfuse.compile(builder.module, num_threads=3)(*inputs)
    same &= all(np.array_equal(a, b) for a, b in zip(one, three))
maps = open("/proc/self/maps").read()
print("shim" if "_kmpc_gomp" in maps else "", "iomp" if "libiomp5" in maps else "", "same" if same else "differ")
"""


@pytest.mark.skipif(platform.machine() != "x86_64" or not Path("/proc/self/maps").exists(),
                    reason="libiomp5 is x86_64 only; the probe reads /proc/self/maps")
@pytest.mark.parametrize("first", ["torch", "none"])
def test_jit_code_shares_pytorchs_openmp_threads(first: str) -> None:
    """With PyTorch loaded, JIT code runs its parallel loops on PyTorch's libgomp threads (the __kmpc_* shim), so
    the two do not spin against each other; without it, on libiomp5.  Results are the same bit for bit."""
    pytest.importorskip("torch")
    if first == "torch" and importlib.util.find_spec("graphfuse.lowering._kmpc_gomp") is None:
        pytest.skip("the OpenMP shim was not built (setup.py builds it where a C compiler is found)")
    probe = subprocess.run([sys.executable, "-c", _RUNTIME_PROBE, first, str(Path(__file__).parent)],
                           capture_output=True, text=True, timeout=600)
    assert probe.returncode == 0, probe.stderr
    words = probe.stdout.split()
    assert "same" in words, probe.stdout
    if first == "torch":
        assert "shim" in words and "iomp" not in words, probe.stdout
    else:
        assert "iomp" in words and "shim" not in words, probe.stdout
