"""The tensor-parallel cost model behind docs/distributed.md's predictions."""

from __future__ import annotations

import pytest

from graphfuse.tools.tp_cost_model import LayerModel, main


def _model(**changes) -> LayerModel:
    values = dict(hidden=4096, ffn=11008, tokens=2048, dtype_bytes=2, gflops=100_000.0, bandwidth=50e9,
                  latency=10e-6)
    values.update(changes)
    return LayerModel(**values)


def test_fusing_never_loses_and_hides_at_most_the_smaller_part() -> None:
    model = _model()
    for ranks in (2, 4, 8, 16, 32, 64):
        unfused, _ = model.layer(ranks, fused=False)
        fused, chunks = model.layer(ranks, fused=True)
        _, row = model.compute(ranks)
        reduce = 2 * model.all_reduce(ranks, 2048 * 4096 * 2)
        assert fused <= unfused
        assert unfused - fused <= min(row, reduce) + 1e-12  # the overlap hides no more than the smaller part
        assert chunks in (1, 2, 4, 8, 16)


def test_balanced_compute_and_communication_approach_half() -> None:
    """With no latency and a block's all-reduce as long as its matmul, 16 blocks hide 15/16 of one of them."""
    model = _model(latency=0.0)
    _, row = model.compute(2)
    balanced = _model(latency=0.0, bandwidth=2 * (1 / 2) * 2048 * 4096 * 2 / (row / 2))
    unfused, _ = balanced.layer(2, fused=False)
    fused, chunks = balanced.layer(2, fused=True)
    assert chunks == 16
    assert unfused - fused == pytest.approx(2 * (15 / 16) * row / 2, rel=1e-9)


def test_shared_cores_overlap_nothing() -> None:
    model = _model(shared_cores=True)
    for ranks in (2, 8):
        assert model.layer(ranks, fused=True)[0] == pytest.approx(model.layer(ranks, fused=False)[0])


def test_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--gflops", "1000", "--ranks", "2,4"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "ranks  unfused ms" in out and out.count("x\n") == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["--gflops", "1000", "--ranks", "two"])
    assert exit_info.value.code == 1
    assert "--ranks takes comma-separated integers" in capsys.readouterr().err
