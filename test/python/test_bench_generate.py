"""bench.generate: the generation-latency bench runs end to end on a tiny Llama and reports equal tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")
pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")

from bench import generate


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_generate_bench_times_each_variant_and_checks_tokens(cache: str, tmp_path: Path) -> None:
    """Two prompt lengths: nothing compiled in the timed rounds or run in eager PyTorch; with the default cache
    graphfuse compiles the prompt and the step static, then once symbolic each (the step at the second token,
    the prompt at the second prompt length: one generation is 3 compiles)."""
    out = tmp_path / "generate.md"
    status = generate.main(["--cache", cache, "--hidden", "64", "--layers", "1", "--heads", "4", "--kv-heads", "2",
                            "--ffn", "128", "--vocab", "128", "--prompts", "5,9", "--new-tokens", "3",
                            "--rounds", "1", "--variants", "eager,graphfuse", "--markdown", str(out)])
    assert status == 0
    text = out.read_text()
    assert "| eager |" in text and "DIFFER" not in text
    cache_text = "default DynamicCache" if cache == "dynamic" else "static KV cache"
    assert f"prompts of 5, 9 tokens, 3 new tokens, greedy, {cache_text}" in text
    row = next(line for line in text.splitlines() if line.startswith("| graphfuse |")).split(" | ")
    compiles, eager_calls = row[4:6]
    assert compiles.endswith(" (0)") and eager_calls == "0", row  # none in the timed rounds, none in eager
    if cache == "dynamic":
        assert compiles == "4 (0)", row


def test_generate_bench_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main(["--variants", "graphfuse"]) == 1
    assert "--variants must include eager" in capsys.readouterr().err
    assert generate.main(["--new-tokens", "1"]) == 1
    assert "--new-tokens must be at least 2" in capsys.readouterr().err
    assert generate.main(["--prompts", "5,0"]) == 1
    assert "--prompts must be positive lengths" in capsys.readouterr().err
