"""`make demo` runs end to end: fusion, the reference interpreter, and the compiled unfused and fused block."""

from __future__ import annotations

import re

from graphfuse.tools import demo


def test_demo_compiles_and_matches(capsys) -> None:
    assert demo._main([]) == 0
    out = capsys.readouterr().out
    assert "identical within 1e-4" in out
    runs = re.findall(r"(unfused|fused)\s+(\d+) kernels, compiled in .* max \|y - y_built\| = (\S+)", out)
    assert [r[0] for r in runs] == ["unfused", "fused"]
    assert int(runs[0][1]) == 0 and int(runs[1][1]) > 0
    assert all(float(r[2]) <= 1e-4 for r in runs)
    assert "x the speed of unfused" in out
