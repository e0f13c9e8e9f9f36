"""The torch backend with the on-disk caches on: a later process neither exports nor compiles what an earlier
one did, and gets the same bits.

Tested with the cache on in a directory of the test's; "a new process" is simulated in-process by resetting
Dynamo and forgetting the compiled code (the fast cases), and is a real second process for transformers'
generation (dynamic shapes, a static cache written in place).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import graphfuse.frontends.torch_backend as gtb  # noqa: E402
from graphfuse.frontends.torch_backend import CompilerConfig, ExperimentalConfig, get_backend  # noqa: E402
from graphfuse.lowering import compiler, runtime  # noqa: E402


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("GRAPHFUSE_CACHE", "1")
    monkeypatch.setenv("GRAPHFUSE_CACHE_DIR", str(directory))
    _as_if_in_a_new_process()
    yield directory
    _as_if_in_a_new_process()


def _as_if_in_a_new_process() -> None:
    torch._dynamo.reset()
    gtb.clear_reports()
    compiler.clear_cache()
    runtime.clear_cache()


class _Block(torch.nn.Module):
    """A norm, a linear layer, an activation; a view of the input among the outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(48)
        self.linear = torch.nn.Linear(48, 40)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.nn.functional.gelu(self.linear(self.norm(x))) * 0.5, x.t()


def _run(model: Callable[..., Any], x: torch.Tensor, config: CompilerConfig | None = None) -> Any:
    compiled = torch.compile(model, backend=get_backend(compiler_config=config or CompilerConfig(fallback="error")))
    with torch.no_grad():
        return compiled(x)


def _refuse_export(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch.export ran: the import was not taken from the cache")

    monkeypatch.setattr(torch.export, "export", refused)


def test_a_second_compile_skips_the_export_and_gives_the_same_bits(cache_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    model, x = _Block().eval(), torch.randn(6, 48)
    want, _ = _run(model, x)
    (cold,) = gtb.last_report()
    assert cold.compiled and not cold.from_cache and not cold.eager_calls
    _as_if_in_a_new_process()
    _refuse_export(monkeypatch)
    got, got_view = _run(model, x)
    (warm,) = gtb.last_report()
    assert warm.from_cache == 1 and not warm.eager_calls
    assert torch.equal(got, want) and got.numpy().tobytes() == want.numpy().tobytes()
    assert got_view.data_ptr() == x.data_ptr() and got_view.shape == (48, 6)  # still a view of the input
    assert warm.graph_ops == cold.graph_ops and warm.views == cold.views == 1


def test_other_shapes_and_changed_frozen_weights_miss(cache_dir: Path) -> None:
    torch.manual_seed(1)
    model, x = _Block().eval(), torch.randn(6, 48)
    frozen = CompilerConfig(fallback="error", experimental_config=ExperimentalConfig(frozen_parameter=True))
    _run(model, x, frozen)
    _as_if_in_a_new_process()
    _run(model, torch.randn(7, 48), frozen)
    assert not gtb.last_report()[0].from_cache
    _as_if_in_a_new_process()
    _run(model, x, frozen)
    assert gtb.last_report()[0].from_cache == 1
    with torch.no_grad():
        model.linear.weight.mul_(2.0)  # compiled in as a constant: other code
    want = model(x)[0]
    _as_if_in_a_new_process()
    got, _ = _run(model, x, frozen)
    assert not gtb.last_report()[0].from_cache
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_nothing_is_kept_with_the_cache_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHFUSE_CACHE", "off")
    _run(_Block().eval(), torch.randn(3, 48))
    assert not cache_dir.exists() or not list(cache_dir.rglob("entry.json"))


_GENERATE = textwrap.dedent("""
    import hashlib, json, sys
    import torch
    import transformers as hf
    import graphfuse.frontends.torch_backend as gtb
    from graphfuse.frontends.torch_backend import CompilerConfig, get_backend

    exports = []
    export = torch.export.export
    torch.export.export = lambda *a, **k: exports.append(1) or export(*a, **k)
    torch.manual_seed(0)
    config = hf.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    model = hf.LlamaForCausalLM(config).eval()
    prompt = torch.randint(0, 128, (2, 9))
    mask = torch.ones_like(prompt)
    mask[1, :3] = 0  # a left-padded row
    model.forward = torch.compile(model.forward, backend=get_backend(compiler_config=CompilerConfig(fallback="error")))
    result = {}
    for cache in ("dynamic", "static"):
        with torch.no_grad():
            out = model.generate(prompt, attention_mask=mask, max_new_tokens=6, do_sample=False,
                                 output_logits=True, return_dict_in_generate=True,
                                 **({"cache_implementation": "static"} if cache == "static" else {}))
        logits = torch.stack(out.logits).numpy().tobytes()
        result[cache] = {"tokens": out.sequences.tolist(), "logits": hashlib.sha256(logits).hexdigest()}
    reports = gtb.last_report()
    result["compiles"] = sum(len(r.compiled) for r in reports)
    result["from_cache"] = sum(r.from_cache for r in reports)
    result["eager"] = sum(r.eager_calls for r in reports)
    result["exports"] = len(exports)
    print(json.dumps(result))
""")


def test_generation_in_a_second_process_exports_and_compiles_nothing(cache_dir: Path, tmp_path: Path) -> None:
    """transformers' generation, with the default cache (a length dim compiled symbolic) and a static one
    (written in place), in two processes: the second takes every graph from the cache, with eager's tokens and
    the first process's logits bit for bit."""
    pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    script = tmp_path / "generate.py"
    script.write_text(_GENERATE)
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=os.environ.copy(),
                              check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["compiles"] >= 4 and cold["from_cache"] == 0 and cold["exports"] >= cold["compiles"], cold
    assert warm["exports"] == 0, warm
    assert warm["compiles"] == cold["compiles"] and warm["from_cache"] == warm["compiles"]
    assert warm["exports"] == 0 and cold["eager"] == warm["eager"] == 0
    assert warm["dynamic"] == cold["dynamic"] and warm["static"] == cold["static"]


def test_a_graph_that_failed_is_not_exported_again(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile that failed fails the same way in a later process, told by the cache without exporting."""

    def cumulative(x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=0) + 1

    x = torch.rand(5, 3) + 0.5
    config = CompilerConfig(fallback="eager")
    torch.testing.assert_close(_run(cumulative, x, config), cumulative(x))
    (cold,) = gtb.last_report()
    _as_if_in_a_new_process()
    _refuse_export(monkeypatch)
    torch.testing.assert_close(_run(cumulative, x, config), cumulative(x))
    (warm,) = gtb.last_report()
    assert warm.eager_calls == cold.eager_calls == 1 and not warm.compiled
    assert warm.fallbacks == cold.fallbacks and "aten.cumprod.default" in warm.fallbacks[0]
