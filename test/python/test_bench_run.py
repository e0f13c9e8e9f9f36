"""The bench machinery on tiny shapes (not timed): the table is produced and every variant's error is computed."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import run
from bench.workloads import WORKLOADS


def test_bench_table_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    markdown = tmp_path / "latest.md"
    status = run.main(
        [
            "--shapes",
            "small",
            "--workloads",
            "gelu",
            "--peers",
            "numpy,1t,torch",  # torch eager only when torch is installed; no torch.compile or IREE (slow to build)
            "--calls",
            "2",
            "--rounds",
            "1",
            "--no-evict",
            "--stream-mib",
            "8",
            "--markdown",
            str(markdown),
        ]
    )
    assert status == 0
    text = markdown.read_text()
    needles = ("commit", "CPU:", "2 threads", "GFLOP/s", "## Summary", "numpy", run.FUSED, run.ONE_THREAD)
    for needle in (*needles, *run.TRIAD.values()):
        assert needle in text, needle
    assert WORKLOADS["gelu"].title in capsys.readouterr().out


def test_run_workload_errors() -> None:
    """Errors against numpy are computed for every variant that ran, and are small."""
    workload = WORKLOADS["softmax"]
    labels = [run.FUSED, run.O0]
    result = run.run_workload(
        workload, workload.sizes["small"], labels, None, calls=1, rounds=1, evict=run.machine.Evictor(False, 0)
    )
    assert set(result.seconds) == {"numpy", *labels}
    assert result.errors["numpy"] == 0.0
    assert all(result.errors[label] < 1e-5 for label in labels)


def test_iree_missing_is_reported(tmp_path: Path) -> None:
    assert run.iree_status(tmp_path / "no-such-python") == run.IREE_HINT


def test_odd_shapes_are_not_powers_of_two() -> None:
    shapes = run.load_shapes("odd", list(WORKLOADS))
    assert shapes["gelu"]["n"] == 10_000_003
    assert all(any(v & (v - 1) for v in params.values()) for params in shapes.values())


def test_iree_child_imports_without_graphfuse() -> None:
    """The IREE child runs in the peers venv, where graphfuse is not installed: nothing it imports may need it.

    A fresh interpreter with graphfuse made unimportable imports the child's module and builds its evictor.
    """
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['graphfuse'] = None\n"
        "from bench import iree_peer\n"
        "iree_peer.Evictor(True, 1 << 20)\n"
    )
    env = {"PYTHONPATH": str(Path(run.__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_failure_is_one_line_of_the_table() -> None:
    """A peer's multi-line compiler diagnostics become one short line."""
    note = run.failure_note(RuntimeError("iree-compile failed:\n  error: op not legal\n    %0 = torch.aten.x"))
    assert note.startswith("failed: RuntimeError: iree-compile failed: error: op not legal")
    assert "\n" not in note and len(note) <= 160
