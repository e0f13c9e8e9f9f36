"""A downstream project's lit suite configured by graphfuse.lit: its tests run graphfuse's tools, upstream
mlir-opt with %graph_irdl, and FileCheck, found without any path of this repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIT_CFG = '''
import os

import lit.formats

from graphfuse.lit import configure

config.name = "downstream"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
configure(config, lit_config)
'''

TEST = '''// RUN: graphfuse-opt %s --graph-cse | FileCheck %s
// RUN: mlir-opt --irdl-file=%graph_irdl %s | FileCheck %s --check-prefix=UPSTREAM
// RUN: not graphfuse-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=ERROR
// CHECK-LABEL: func.func @twice
// CHECK:         "graph.exp"
// CHECK-NOT:     "graph.exp"
// UPSTREAM-COUNT-2: "graph.exp"
// ERROR: graphfuse-opt: error: unknown command line argument '--no-such-pass'
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
'''


def test_a_downstream_suite_configured_by_graphfuse_lit(tmp_path: Path) -> None:
    suite = tmp_path / "downstream"
    suite.mkdir()
    (suite / "lit.cfg.py").write_text(LIT_CFG)
    (suite / "cse.mlir").write_text(TEST)
    lit = Path(sys.executable).parent / "lit"
    run = subprocess.run([str(lit), "-v", str(suite)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS: downstream :: cse.mlir" in run.stdout


def test_a_failing_downstream_test_fails(tmp_path: Path) -> None:
    """The same suite with a check that cannot hold: lit reports the failure (the setup does not hide it)."""
    suite = tmp_path / "downstream"
    suite.mkdir()
    (suite / "lit.cfg.py").write_text(LIT_CFG)
    (suite / "wrong.mlir").write_text(TEST.replace('// CHECK-NOT:     "graph.exp"', '// CHECK:         "graph.log"'))
    lit = Path(sys.executable).parent / "lit"
    run = subprocess.run([str(lit), "-v", str(suite)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode != 0 and "FAIL: downstream :: wrong.mlir" in run.stdout
