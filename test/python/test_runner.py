"""The pipeline runner: graphfuse and upstream passes in one pipeline, options, errors, reproducers."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import pytest
from mlir import ir

from graphfuse import GraphBuilder, make_context, parse_module, run_function
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option
from graphfuse.pipelines.runner import (
    Instrumentation,
    Pipeline,
    PipelineError,
    PipelineFailure,
    build_steps,
    run_pipeline,
)

TEXT = """
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "graph.mul"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "graph.exp"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""


def _ops(module: ir.Module) -> list[str]:
    block = module.body.operations[0].regions[0].blocks[0]
    return [op.operation.name for op in block.operations]


def test_graphfuse_and_upstream_passes_run_in_order() -> None:
    module = parse_module(TEXT)
    pipeline = run_pipeline(module, "builtin.module(graph-cse,canonicalize,graph-dce)")
    assert _ops(module) == ["graph.add", "graph.mul", "func.return"]
    assert [r.step.argument for r in pipeline.records] == ["graph-cse", "canonicalize", "graph-dce"]
    assert pipeline.records[0].statistics == {"num-cse'd": 1}
    assert pipeline.records[2].statistics == {"num-erased": 1}


def test_cleanup_keeps_numerics() -> None:
    module = parse_module(TEXT)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)]
    (before,) = run_function(module, inputs)
    run_pipeline(module, "builtin.module(graph-cse,graph-dce)")
    (after,) = run_function(module, inputs)
    np.testing.assert_array_equal(before, after)


def test_bare_pass_list_is_anchored_on_the_module() -> None:
    steps = build_steps("graph-cse,cse", make_context())
    assert [s.text for s in steps] == ["graph-cse", "cse"]


def test_graph_pass_nested_in_func_is_hoisted_between_upstream_runs() -> None:
    steps = build_steps("builtin.module(func.func(cse,graph-cse,canonicalize))", make_context())
    assert [s.text for s in steps] == ["func.func(cse)", "graph-cse", "func.func(canonicalize)"]
    assert [s.is_graph_pass for s in steps] == [False, True, False]


def test_underscore_names_are_accepted() -> None:
    steps = build_steps("builtin.module(graph_cse)", make_context())
    assert steps[0].argument == "graph-cse"


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("builtin.module(no-such-pass)", "'no-such-pass' does not refer to a registered pass"),
        ("builtin.module(graph-cses)", "did you mean 'graph-cse'"),
        ("builtin.module(graph-cse", "expected ')'"),
        ("func.func(cse)", "must be anchored on 'builtin.module'"),
        ("builtin.module(graph-cse{bogus=1})", "pass 'graph-cse' has no option 'bogus'"),
        ("builtin.module(canonicalize{max-iterations=abc})", "invalid pass pipeline"),
        ("builtin.module(scf.for(graph-cse))", "can be nested only directly under func.func"),
    ],
)
def test_bad_pipelines_are_rejected_before_running(pipeline: str, message: str) -> None:
    with pytest.raises(PipelineError, match=re.escape(message)):
        Pipeline(pipeline, make_context())


@dataclass(frozen=True)
class _OptionsPass(GraphPass):
    """A pass used only here, to exercise option parsing (not registered)."""

    name: ClassVar[str] = "test-options"
    summary: ClassVar[str] = "options test"
    level: int = option(2, "a level")
    enabled: bool = option(False, "a flag")
    names: tuple[str, ...] = option((), "a list")
    mode: Literal["fast", "exact"] = option("exact", "a choice")
    ratio: float = option(0.5, "a number")

    def run(self, module: ir.Module, context: PassContext) -> None:
        pass


def test_options_are_typed_from_the_dataclass_fields() -> None:
    p = _OptionsPass.from_options([("level", "3"), ("enabled", None), ("names", "a,b,c"), ("mode", "fast"),
                                   ("ratio", "0.25")])
    assert (p.level, p.enabled, p.names, p.mode, p.ratio) == (3, True, ("a", "b", "c"), "fast", 0.25)
    assert p.to_text() == "test-options{level=3 enabled=true names=a,b,c mode=fast ratio=0.25}"
    assert _OptionsPass().to_text() == "test-options"
    assert "level=2" in _OptionsPass().to_text(all_options=True)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("level", "x", "expects an integer, got 'x'"),
        ("enabled", "maybe", "expects true or false"),
        ("mode", "slow", "expects one of fast, exact"),
        ("ratio", "half", "expects a number"),
        ("colour", "red", "has no option 'colour'"),
    ],
)
def test_bad_option_values_name_the_option(key: str, value: str, message: str) -> None:
    with pytest.raises(OptionError, match=re.escape(message)):
        _OptionsPass.from_options([(key, value)])


@dataclass(frozen=True)
class _BreakingPass(GraphPass):
    """Replaces a graph.add's result type with a wrong one: graph-verify must catch it after the pass."""

    name: ClassVar[str] = "test-break"
    summary: ClassVar[str] = "break the IR"

    def run(self, module: ir.Module, context: PassContext) -> None:
        block = module.body.operations[0].regions[0].blocks[0]
        add = next(op for op in block.operations if op.operation.name == "graph.add")
        with ir.InsertionPoint(add), add.location:
            bad = ir.Operation.create(
                "graph.add", results=[ir.Type.parse("tensor<4x4xf32>")], operands=list(add.operands)
            )
        del bad  # unused on purpose: the verifier runs over every op


def test_verification_after_a_pass_reports_the_pass() -> None:
    module = parse_module(TEXT)
    pipeline = Pipeline("builtin.module(graph-cse)", module.context)
    pipeline.steps[0].graph_pass = _BreakingPass()
    pipeline.steps[0].argument = "test-break"
    with pytest.raises(PipelineFailure) as failure:
        pipeline.run(module)
    first = failure.value.diagnostics[0]
    assert "result #0 has type tensor<4x4xf32>, but its operands and attributes give tensor<4x8xf32>" in first.message
    assert [n.message for n in first.notes] == ["after pass 'test-break'"]


@pytest.mark.parametrize("then", ["graph-cse", "graph-fusion{opt-level=2},graph-cse"])
def test_verified_at_the_end_still_names_the_pass_that_broke_the_ir(then: str) -> None:
    """``verify_each_step=False`` (graphfuse.compile) verifies once, at the end; the invalid IR found there is
    located by running again from a copy, verifying each step: the failure names the breaking pass, not the
    last one, and the reproducer holds the module as given.  (Invalid IR that a later pass removes, the broken op
    dropped by graph-dce, is not reported: only after-each verification sees it.)"""
    from graphfuse.pipelines import registry

    registry.register_pass(type("TestBreakLater", (_BreakingPass,), {"name": "test-break-later"}))
    try:
        with pytest.raises(PipelineFailure) as failure:
            run_pipeline(parse_module(TEXT), f"builtin.module(graph-cse,test-break-later,{then})",
                         verify_each_step=False)
    finally:
        registry.unregister_pass("test-break-later")
    first = failure.value.diagnostics[0]
    assert "but its operands and attributes give tensor<4x8xf32>" in first.message
    assert [n.message for n in first.notes] == ["after pass 'test-break-later'"]
    assert failure.value.reproducer.module.count('"graph.add"') == 2


def test_verified_at_the_end_runs_the_passes_once_and_gives_the_same_module() -> None:
    checked, unchecked = parse_module(TEXT), parse_module(TEXT)
    pipeline = "builtin.module(graph-cse,graph-dce,canonicalize)"
    run_pipeline(checked, pipeline)
    runner = run_pipeline(unchecked, pipeline, verify_each_step=False)
    assert str(unchecked) == str(checked)
    assert [record.runs for record in runner.records] == [1, 1, 1]


def test_run_pipeline_writes_a_reproducer(tmp_path: Path) -> None:
    module = parse_module(TEXT)

    class Exploding(_OptionsPass):
        def run(self, module: ir.Module, context: PassContext) -> None:
            context.fail("refusing to run", module.body.operations[0].location)

    from graphfuse.pipelines import registry

    registry.register_pass(type("TestExplode", (Exploding,), {"name": "test-explode"}))
    try:
        with pytest.raises(PipelineFailure) as failure:
            run_pipeline(module, "builtin.module(graph-cse,test-explode)", repro_dir=str(tmp_path))
    finally:
        registry.unregister_pass("test-explode")
    notes = [n.message for n in failure.value.diagnostics[0].notes]
    assert notes[0] == "in pass 'test-explode'"
    command = notes[1]
    assert command.startswith("reproduce with: graphfuse-opt --pass-pipeline='builtin.module(graph-cse,test-explode")
    repro = Path(command.rsplit(" ", 1)[1])
    assert repro.parent == tmp_path
    assert repro.read_text().count('"graph.add"') == 2  # the IR before the pipeline, not after graph-cse


@pytest.fixture
def empty_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh temp dir for tempfile (and $TMPDIR for child processes): what a failing run leaves shows up there."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


#: one-shot-bufferize cannot bufferize graph ops: a failing upstream step, no registration needed
FAILING = "builtin.module(graph-cse,one-shot-bufferize)"


def test_a_failing_pipeline_writes_nothing_and_carries_its_reproducer(empty_tmpdir: Path) -> None:
    module = parse_module(TEXT)
    with pytest.raises(PipelineFailure) as info:
        run_pipeline(module, FAILING)
    assert list(empty_tmpdir.iterdir()) == []
    failure = info.value
    assert [n.message for n in failure.diagnostics[0].notes][-1] == "in pass 'one-shot-bufferize'"
    reproducer = failure.reproducer
    assert reproducer is not None and reproducer.pipeline == FAILING and reproducer.step == "one-shot-bufferize"
    assert reproducer.module.count('"graph.add"') == 2  # the IR before the pipeline, not after graph-cse
    # Written on request only; the file says how to rerun it, and rerunning it fails the same way.
    path = reproducer.write(empty_tmpdir / "repro", stem="model")
    assert path.parent == empty_tmpdir / "repro" and path.name.startswith("model-one-shot-bufferize-")
    assert path.read_text().splitlines()[1] == f"// {reproducer.command(str(path))}"
    assert reproducer.command(str(path)) == f"graphfuse-opt --pass-pipeline='{FAILING}' {path}"
    assert reproducer.write(empty_tmpdir / "repro", stem="model") == path  # the same failure, the same file
    with pytest.raises(PipelineFailure, match="not bufferized"):
        run_pipeline(parse_module(path.read_text()), reproducer.pipeline)


def test_a_failing_compile_writes_nothing_and_carries_its_reproducer(empty_tmpdir: Path) -> None:
    import graphfuse

    with pytest.raises(PipelineFailure) as info:
        graphfuse.compile(TEXT, pipeline=FAILING)
    assert list(empty_tmpdir.iterdir()) == []
    assert info.value.reproducer is not None and info.value.reproducer.pipeline == FAILING


def test_print_ir_after_change_skips_passes_that_change_nothing() -> None:
    import io

    stream = io.StringIO()
    module = parse_module(TEXT)
    run_pipeline(
        module,
        "builtin.module(graph-dce,graph-dce)",
        Instrumentation(print_after_change=True, stream=stream),
    )
    assert stream.getvalue().count("IR Dump After GraphDCE (graph-dce)") == 1


def test_builder_output_runs_through_a_pipeline() -> None:
    b = GraphBuilder("g")
    x = b.arg((2, 3))
    y = b.add(b.neg(b.neg(x)), b.const(np.zeros(3)))
    b.ret(y)
    run_pipeline(b.module, "builtin.module(graph-cse,graph-dce)")
    assert b.module.operation.verify()


def test_nested_upstream_pipeline_runs_pass_by_pass() -> None:
    steps = build_steps("builtin.module(func.func(cse,canonicalize))", make_context())
    assert [(s.text, s.argument) for s in steps] == [
        ("func.func(cse)", "cse"),
        ("func.func(canonicalize)", "canonicalize"),
    ]
