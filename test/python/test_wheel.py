"""The built wheel is complete: installed into a fresh virtual environment, away from the source tree, it runs.

An editable install imports from the source tree, so a package or a data file
left out of the wheel goes unseen by every other test. This one builds the
wheel, installs it (with its declared dependencies, nothing else) into a new
virtual environment, and from a directory outside the checkout lists the
passes, compiles a graph through the Python API and runs graphfuse-run
--check. About half a minute, most of it installing the MLIR wheels.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

MODEL = """\
func.func @block(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %s = "graph.add"(%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %g = "graph.gelu"(%s) {approximate = "tanh"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = "graph.softmax"(%g) {axis = -1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
"""

API_CHECK = """\
import sys
import numpy as np
import graphfuse
assert graphfuse.__file__.startswith(sys.prefix), graphfuse.__file__
executable = graphfuse.compile(open("model.mlir").read(), opt_level=2)
rng = np.random.default_rng(0)
x, b = rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=16).astype(np.float32)
got, = executable(x, b)
want, = executable.reference(x, b)
np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
print("kernels", executable.kernels)
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{' '.join(argv)}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the new environment's bin folder, a work folder outside the checkout, a clean environment)."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    # Built from a copy: setuptools writes build/ and *.egg-info next to the sources.
    source = root / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "Output", "__pycache__", ".pytest_cache", ".ruff_cache"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(root / "dist"), str(source)],
         root, env)
    wheels = list((root / "dist").glob("graphfuse-*.whl"))
    assert len(wheels) == 1, wheels
    venv.create(root / "env", with_pip=True)
    bin_dir = root / "env" / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheels[0])], root, env)
    work = root / "work"
    work.mkdir()
    (work / "model.mlir").write_text(MODEL)
    return bin_dir, work, env


def test_wheel_lists_passes(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    listing = _run([str(bin_dir / "graphfuse-opt"), "--list-passes"], work, env).stdout
    for name in ("graph-fusion", "graph-kernel-fusion", "graph-kernel-cluster", "add_layer_norm_fusion",
                 "npu-buffer-assign"):
        assert f"  {name}\n" in listing, name


def test_wheel_compiles_through_the_api(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    assert "kernels" in _run([str(bin_dir / "python"), "-c", API_CHECK], work, env).stdout


def test_wheel_runs_graphfuse_run_check(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    out = _run([str(bin_dir / "graphfuse-run"), "model.mlir", "--check"], work, env).stdout
    assert "ok" in out and "MISMATCH" not in out, out
    npu = _run([str(bin_dir / "graphfuse-run"), "model.mlir", "--target=npu", "--check"], work, env).stdout
    assert "MISMATCH" not in npu, npu
