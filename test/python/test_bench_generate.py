"""bench.generate: the generation-latency bench runs end to end on a tiny Llama and reports equal tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")
pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")

from bench import generate


def test_generate_bench_times_each_variant_and_checks_tokens(tmp_path: Path) -> None:
    out = tmp_path / "generate.md"
    status = generate.main(["--hidden", "64", "--layers", "1", "--heads", "4", "--kv-heads", "2", "--ffn", "128",
                            "--vocab", "128", "--prompt", "5", "--new-tokens", "3", "--rounds", "1",
                            "--variants", "eager,graphfuse", "--markdown", str(out)])
    assert status == 0
    text = out.read_text()
    assert "| eager |" in text and "| graphfuse |" in text and "DIFFER" not in text
    assert "prompt 5 tokens, 3 new tokens, greedy, static KV cache" in text


def test_generate_bench_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main(["--variants", "graphfuse"]) == 1
    assert "--variants must include eager" in capsys.readouterr().err
    assert generate.main(["--new-tokens", "1"]) == 1
    assert "--new-tokens must be at least 2" in capsys.readouterr().err
