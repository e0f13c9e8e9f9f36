"""bench.training: the training-step bench trains every variant from one initialization and compares losses."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")

from bench import training

TINY = ["--batch", "2", "--seq", "4", "--width", "16", "--heads", "2", "--classes", "3", "--check-steps", "3",
        "--steps", "2", "--rounds", "1", "--no-evict"]


def test_training_bench_times_each_variant_and_checks_losses(tmp_path: Path) -> None:
    out = tmp_path / "training.md"
    assert training.main([*TINY, "--variants", "eager,graphfuse,graphfuse-O0", "--markdown", str(out)]) == 0
    text = out.read_text()
    assert "batch 2 x seq 4" in text and "DIFFER" not in text
    for variant in ("eager", "graphfuse", "graphfuse-O0"):
        assert f"| {variant} | " in text


def test_training_bench_reports_diverging_losses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant whose losses part from eager's is marked DIFFER and the exit status is 1."""
    real = training._graphfuse_trainer

    def drifting(*args: object, **kwargs: object) -> training.Trainer:
        trainer = real(*args, **kwargs)
        return training.Trainer(lambda: trainer.step() * 1.01)

    monkeypatch.setattr(training, "_graphfuse_trainer", drifting)
    out = tmp_path / "training.md"
    assert training.main([*TINY, "--variants", "eager,graphfuse", "--markdown", str(out)]) == 1
    assert "DIFFER" in out.read_text()


def test_training_bench_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert training.main(["--variants", "graphfuse"]) == 1
    assert "--variants must include eager" in capsys.readouterr().err
    assert training.main(["--width", "10", "--heads", "4"]) == 1
    assert "a multiple of --heads" in capsys.readouterr().err
