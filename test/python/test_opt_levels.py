"""An opt level and a switch mean the same in graphfuse-opt, graphfuse-run and graphfuse.compile.

docs/fusion-switches.md states the rules checked here: every entry point
takes the pipeline of a level from one table, the flags' ``--opt_level`` is
the level of every fusion driver whose pipeline text sets none (so
``--opt_level=0`` fuses nothing anywhere), and the sources override each other
in one order: environment < --graph-kernel-flags < switch file < pipeline
options.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphfuse
from graphfuse.lowering.graph_pipelines import graph_pipeline
from graphfuse.pipelines.opt_levels import OPT_LEVELS, opt_level_error

BIN = Path(sys.executable).parent

MODEL = """\
func.func @f(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>, %g: tensor<16xf32>) -> tensor<4x16xf32> {
  %s = "graph.add"(%x, %r) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = "graph.rms_norm"(%s, %g) {epsilon = 1.0e-06 : f32} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %e = "graph.exp"(%n) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = "graph.mul"(%e, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}
"""


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.mlir"
    path.write_text(MODEL)
    return path


def _tool(name: str, *argv: str, env: dict[str, str] | None = None) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "MS_DEV_GRAPH_KERNEL_FLAGS"} | (env or {})
    result = subprocess.run([str(BIN / name), *argv], capture_output=True, text=True, env=environ, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _fuses(text: str) -> bool:
    return "graph.add_rms_norm" in text


@pytest.mark.parametrize("level", OPT_LEVELS)
def test_one_pipeline_per_level_in_every_entry_point(model: Path, level: int) -> None:
    pipeline = graph_pipeline(level)
    by_argument = graphfuse.compile(MODEL, opt_level=level)
    by_flags = graphfuse.compile(MODEL, graph_kernel_flags=f"--opt_level={level}")
    assert by_argument.pipeline == by_flags.pipeline == pipeline
    assert by_argument.fused_graph == by_flags.fused_graph
    assert _tool("graphfuse-opt", str(model), f"--pass-pipeline={pipeline}").strip() == by_argument.fused_graph.strip()
    for argv in (["--opt-level", str(level)], [f"--graph-kernel-flags=--opt_level={level}"]):
        assert f"pipeline {pipeline}\n" in _tool("graphfuse-run", str(model), *argv)
    run_env = _tool("graphfuse-run", str(model), env={"MS_DEV_GRAPH_KERNEL_FLAGS": f"--opt_level={level}"})
    assert f"pipeline {pipeline}\n" in run_env


def test_flags_level_zero_turns_off_every_driver_without_a_written_level(model: Path) -> None:
    assert _fuses(_tool("graphfuse-opt", str(model), "--graph-fusion"))
    assert not _fuses(_tool("graphfuse-opt", str(model), "--graph-kernel-flags=--opt_level=0", "--graph-fusion"))
    assert not _fuses(_tool("graphfuse-opt", str(model), "--graph-fusion",
                            env={"MS_DEV_GRAPH_KERNEL_FLAGS": "--opt_level=0"}))
    assert not _fuses(graphfuse.compile(MODEL, graph_kernel_flags="--opt_level=0").fused_graph)
    assert graphfuse.compile(MODEL, graph_kernel_flags="--opt_level=0").kernels == 0


def test_precedence_environment_flags_pipeline(model: Path) -> None:
    # --graph-kernel-flags wins over the environment ...
    assert _fuses(_tool("graphfuse-opt", str(model), "--graph-kernel-flags=--opt_level=2", "--graph-fusion",
                        env={"MS_DEV_GRAPH_KERNEL_FLAGS": "--opt_level=0"}))
    # ... and a level written in the pipeline wins over both.
    assert _fuses(_tool("graphfuse-opt", str(model), "--graph-kernel-flags=--opt_level=0",
                        "--pass-pipeline=builtin.module(graph-fusion{opt-level=2})"))
    assert _fuses(graphfuse.compile(MODEL, opt_level=2, graph_kernel_flags="--opt_level=0").fused_graph)


def test_pipeline_enable_pass_wins_over_the_flags_in_both_drivers(model: Path) -> None:
    flags = "--graph-kernel-flags=--disable_pass=add_rms_norm_fusion,graph-kernel-cluster"
    assert not _fuses(_tool("graphfuse-opt", str(model), flags, "--graph-fusion"))
    assert _fuses(_tool("graphfuse-opt", str(model), flags,
                        "--pass-pipeline=builtin.module(graph-fusion{enable-pass=add_rms_norm_fusion})"))
    clustered = "--pass-pipeline=builtin.module(graph-kernel-fusion{opt-level=1 enable-pass=graph-kernel-cluster})"
    assert "graph.kernel" not in _tool("graphfuse-opt", str(model), flags,
                                       "--pass-pipeline=builtin.module(graph-kernel-fusion{opt-level=1})")
    assert "graph.kernel" in _tool("graphfuse-opt", str(model), flags, clustered)


@pytest.mark.parametrize("value", [-1, 4, 2.0, True, "2"])
def test_out_of_range_levels_are_refused_everywhere(value: object) -> None:
    assert opt_level_error(value) is not None
    with pytest.raises(graphfuse.GraphfuseError, match="opt level must be an integer in"):
        graphfuse.compile(MODEL, opt_level=value)
