"""bench.forward: the forward-over-sizes bench runs end to end on tiny models, one graphfuse compile serving the
sizes after the first, outputs equal to eager's."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")
pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")

from bench import forward


@pytest.mark.parametrize("model", ["bert", pytest.param("llama", marks=pytest.mark.slow)])  # llama: 22 s
def test_forward_bench_compiles_twice_for_every_size(model: str, tmp_path: Path) -> None:
    """The first size (batch 1) compiles static; the second, whose batch and length differ, symbolic; the others
    run that code: two compiles, none in the timed rounds, no call in eager PyTorch."""
    out = tmp_path / "forward.md"
    status = forward.main(["--model", model, "--hidden", "64", "--layers", "1", "--heads", "4", "--ffn", "128",
                           "--vocab", "128", "--sizes", "1x5,2x9,3x20,2x70", "--rounds", "1",
                           "--markdown", str(out)])
    assert status == 0
    text = out.read_text()
    assert "| 3 x 20 |" in text
    line = next(line for line in text.splitlines() if line.startswith("graphfuse: "))
    assert line.startswith("graphfuse: 2 compiles (0 in the timed rounds), 0 eager calls"), line


def test_forward_bench_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert forward.main(["--variants", "graphfuse"]) == 1
    assert "--variants must include eager, graphfuse and graphfuse-static" in capsys.readouterr().err
    assert forward.main(["--sizes", "2x0"]) == 1
    assert "--sizes must be BATCHxLENGTH sizes" in capsys.readouterr().err
