"""graphfuse-bisect and the rewrite budget it drives: a planted wrong fusion pass is found, named and switched off."""

from __future__ import annotations

import json
import runpy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import graphfuse
from graphfuse import parse_module
from graphfuse.dialect.interpreter import run_function
from graphfuse.dialect.matching import sig
from graphfuse.pipelines.fusion.base import FusionPass, Pattern, RewriteBudget, limit_rewrites, try_consume_rewrite
from graphfuse.pipelines.registry import lookup_pass, register_pass, unregister_pass
from graphfuse.pipelines.runner import run_pipeline
from graphfuse.tools import graphfuse_bisect
from graphfuse.tools.graphfuse_bisect import EXIT_CULPRIT, Bisector, random_inputs

INPUTS = Path(__file__).resolve().parent.parent / "Tools" / "Inputs"
MODEL = INPUTS / "bisect-silu.mlir"
PLUGIN = INPUTS / "bisect-plugin.py"
PLANTED = "test_silu_fusion"
#: The mul of the odd-width (4x7) activation, the only instance the planted pass gets wrong.
WRONG_INSTANCE = f"{MODEL}:11:9"
SILU_ONLY = f"builtin.module(graph-fusion{{enable-pass={PLANTED}}})"


@pytest.fixture
def planted_pass() -> Iterator[None]:
    """Register the wrong pass for one test only: other tests iterate the registry."""
    runpy.run_path(str(PLUGIN), run_name="graphfuse_pass_plugin")
    try:
        yield
    finally:
        unregister_pass(PLANTED)


def _bisector(**options) -> Bisector:
    text = MODEL.read_text()
    inputs = random_inputs(parse_module(text, str(MODEL)), None, seed=0)
    return Bisector(text, str(MODEL), inputs, **options)


# -- the rewrite budget ------------------------------------------------------------------


def _silu_count(module) -> int:
    return str(module).count('"graph.silu"')


def test_budget_limits_and_records_rewrites(planted_pass: None) -> None:
    module = parse_module(MODEL.read_text(), str(MODEL))
    with limit_rewrites(RewriteBudget(2, [PLANTED])) as budget:
        runner = run_pipeline(module, SILU_ONLY)
    assert _silu_count(module) == 2 and str(module).count('"graph.sigmoid"') == 2
    assert [r.index for r in budget.records] == [1, 2]
    assert all(r.pass_name == PLANTED and r.pattern == "MulSigmoidToSilu" for r in budget.records)
    assert {r.location.line for r in budget.records} <= {5, 8, 11, 14}  # the four muls
    effected = runner.fusion_result()["graph_fusion"][PLANTED]["effect_times"]
    assert effected == "2"  # the counts agree with the budget: refused rewrites are not matches


def test_no_budget_and_other_scopes_leave_passes_unlimited(planted_pass: None) -> None:
    unlimited = parse_module(MODEL.read_text())
    run_pipeline(unlimited, SILU_ONLY)
    assert _silu_count(unlimited) == 4
    scoped_elsewhere = parse_module(MODEL.read_text())
    with limit_rewrites(RewriteBudget(0, ["add_layer_norm_fusion"])) as budget:
        run_pipeline(scoped_elsewhere, SILU_ONLY)
    assert _silu_count(scoped_elsewhere) == 4 and budget.records == []
    zero = parse_module(MODEL.read_text())
    with limit_rewrites(RewriteBudget(0)):
        run_pipeline(zero, SILU_ONLY)
    assert _silu_count(zero) == 0


def test_try_consume_rewrite_for_passes_that_rewrite_by_themselves() -> None:
    assert try_consume_rewrite("SomeUBFusionPass", "group")  # no budget: always yes, nothing recorded
    with limit_rewrites(RewriteBudget(1, ["SomeUBFusionPass"])) as budget:
        assert try_consume_rewrite("SomeUBFusionPass", "group")
        assert not try_consume_rewrite("SomeUBFusionPass", "group")
        assert try_consume_rewrite("another_pass", "p")  # outside the budget's scope
    assert [r.describe() for r in budget.records] == ["SomeUBFusionPass: pattern group at an op without location ()"]
    with pytest.raises(ValueError):
        RewriteBudget(-1)


def test_graph_kernel_steps_spend_the_budget() -> None:
    text = """
    func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = "graph.gelu"(%x) {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %1 = "graph.gelu"(%0) {approximate = "none"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
      return %1 : tensor<4x8xf32>
    }
    """
    module = parse_module(text)
    with limit_rewrites(RewriteBudget(1, ["graph-kernel-expand"])) as budget:
        run_pipeline(module, "builtin.module(graph-kernel-expand)")
    assert str(module).count('"graph.gelu"') == 1
    assert [(r.pass_name, r.pattern) for r in budget.records] == [("graph-kernel-expand", "gelu")]


# -- bisection -----------------------------------------------------------------------


def test_bisect_finds_the_planted_pass_and_its_wrong_instance(planted_pass: None, tmp_path: Path) -> None:
    bisector = _bisector(mode="interpreter")
    result = bisector.bisect()
    assert result.deviates
    (culprit,) = result.culprits
    assert culprit.unit.name == PLANTED
    assert len(culprit.rewrites) == 4  # four x * sigmoid(x), three of them fused correctly
    assert culprit.instance is not None
    assert str(culprit.instance.location) == WRONG_INSTANCE and culprit.instance.pattern == "MulSigmoidToSilu"
    assert not culprit.instance_deviation.ok and culprit.instance_deviation.output == 0
    assert ("graph.silu", 1, [f"{MODEL}:10:9", WRONG_INSTANCE]) in culprit.fused_ops
    assert result.fix_switch == {"Switch": {"GraphFusion": {PLANTED: "off"}}}
    assert result.fix_flags == f"--disable_pass={PLANTED}"
    assert result.fix_switch_verified.ok and result.fix_flags_verified.ok
    # The written switch file turns the pass off in an ordinary compile: the result then matches.
    cfg = tmp_path / "fusion_switch.cfg"
    cfg.write_text(json.dumps(result.fix_switch))
    text = MODEL.read_text()
    reference = run_function(parse_module(text), bisector.inputs)
    fused = graphfuse.compile(text)(*bisector.inputs)
    fixed = graphfuse.compile(text, fusion_switch_file=cfg)(*bisector.inputs)
    assert not np.allclose(fused[0], reference[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fixed[0], reference[0], rtol=1e-4, atol=1e-5)


def test_linear_scan_agrees_with_bisection(planted_pass: None) -> None:
    result = _bisector(mode="interpreter", linear=True).bisect()
    assert [c.unit.name for c in result.culprits] == [PLANTED]
    assert str(result.culprits[0].instance.location) == WRONG_INSTANCE


def test_clean_model_has_no_deviation() -> None:
    result = _bisector(mode="interpreter").bisect()
    assert not result.deviates and result.culprits == []
    assert any(u.name == "graph-kernel-cluster" for u in result.units)


def test_every_culprit_goes_into_the_fix() -> None:
    """Two rewrites beyond a zero tolerance (expanded gelu, x / 3 as x * (1/3)): both units end up off."""
    text = """
    func.func @f(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
      %c = arith.constant dense<3.0> : tensor<f32>
      %0 = "graph.div"(%x, %c) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
      %1 = "graph.gelu"(%0) {approximate = "tanh"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
      %2 = "graph.div"(%1, %c) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
      return %2 : tensor<4x16xf32>
    }
    """
    inputs = random_inputs(parse_module(text), None, seed=0)
    result = Bisector(text, "two.mlir", inputs, mode="interpreter", rtol=0.0, atol=0.0).bisect()
    assert [c.unit.name for c in result.culprits] == ["graph-kernel-expand", "graph-kernel-simplify"]
    assert result.culprits[0].expand_ops == ("gelu",)
    assert result.culprits[1].instance.pattern == "div_to_mul"
    assert result.fix_switch is None  # a switch file cannot turn graph-kernel steps off
    assert result.fix_flags == "--disable_pass=graph-kernel-expand,graph-kernel-simplify"
    assert result.fix_flags_verified.ok


def _crash_on_odd_width(op, rw):
    if sig(op.results[0]).shape[-1] % 2:
        raise RuntimeError("planted crash")
    return False


@dataclass(frozen=True)
class CrashingFusion(FusionPass):
    name: ClassVar[str] = "test_crashing_fusion"
    summary: ClassVar[str] = "test-only: fails on the odd-width sigmoid"
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("Crash", "graph.sigmoid", _crash_on_odd_width),)


def test_a_failing_pass_is_bisected_like_a_deviation() -> None:
    register_pass(CrashingFusion)
    try:
        result = _bisector(mode="interpreter").bisect()
    finally:
        unregister_pass(CrashingFusion.name)
    assert "planted crash" in result.full.describe()
    assert [c.unit.name for c in result.culprits] == [CrashingFusion.name]
    assert result.fix_flags_verified.ok and result.fix_switch_verified.ok


def test_cli_compiled_mode_writes_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "fix.cfg"
    try:
        with pytest.raises(SystemExit) as exit_info:
            graphfuse_bisect.main([str(MODEL), f"--load-pass-plugin={PLUGIN}", f"--fix-switch-file={cfg}", "--quiet"])
    finally:
        if lookup_pass(PLANTED) is not None:
            unregister_pass(PLANTED)
    out = capsys.readouterr().out
    assert exit_info.value.code == EXIT_CULPRIT
    assert f"culprit: {PLANTED}: pattern MulSigmoidToSilu at {WRONG_INSTANCE} (rewrite" in out
    assert "unfused compiled vs the reference interpreter" in out
    assert f'--graph-kernel-flags="--disable_pass={PLANTED}"' in out
    assert out.count("verified: with the") == 2
    assert json.loads(cfg.read_text()) == {"Switch": {"GraphFusion": {PLANTED: "off"}}}


def test_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in (
        ([str(tmp_path / "missing.mlir")], "could not open input file"),
        ([str(MODEL), "--mode=fast"], "invalid choice: 'fast'"),
        ([str(MODEL), "--opt-level=0"], "invalid choice: 0"),
        ([str(MODEL), f"--load-pass-plugin={tmp_path / 'nope.py'}"], "could not load pass plugin"),
        ([str(MODEL), "--fusion-switch-file", str(tmp_path / "none.cfg")], "could not open fusion switch file"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            graphfuse_bisect.main(argv)
        err = capsys.readouterr().err
        assert exit_info.value.code == 1, argv
        assert message in err and "Traceback" not in err, err
