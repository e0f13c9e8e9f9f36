"""Fusion switches: MindSpore flags, CANN switch files, their precedence, and graph-fusion's own options."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from graphfuse import GraphfuseError, parse_module
from graphfuse.dialect.matching import producer
from graphfuse.pipelines.fusion.base import UB_FUSION, FusionPass, Pattern
from graphfuse.pipelines.fusion.graph_fusion import GraphFusion, fusion_passes
from graphfuse.pipelines.fusion.switches import FusionSwitches, parse_graph_kernel_flags, parse_switch_file
from graphfuse.pipelines.registry import lookup_pass, register_pass, unregister_pass
from graphfuse.pipelines.runner import run_pipeline


def _double_negation(op, rw):
    inner = producer(op.operands[0], "graph.neg")
    if inner is None:
        return False
    rw.replace_op(op, [inner.operands[0]])
    if not list(inner.results[0].uses):
        rw.erase_op(inner)
    return True


def _double_not(op, rw):
    inner = producer(op.operands[0], "graph.logical_not")
    if inner is None:
        return False
    rw.replace_op(op, [inner.operands[0]])
    if not list(inner.results[0].uses):
        rw.erase_op(inner)
    return True


@dataclass(frozen=True)
class NegFusion(FusionPass):
    name: ClassVar[str] = "test_neg_fusion"
    summary: ClassVar[str] = "test pass: neg(neg x) -> x"
    origin: ClassVar[str] = "mindspore"
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("DoubleNeg", "graph.neg", _double_negation),)


@dataclass(frozen=True)
class NotFusion(FusionPass):
    name: ClassVar[str] = "TestNotFusionPass"
    summary: ClassVar[str] = "test pass: not(not x) -> x, protected, UB group"
    origin: ClassVar[str] = "cann"
    group: ClassVar[str] = UB_FUSION
    protected: ClassVar[bool] = True
    patterns: ClassVar[tuple[Pattern, ...]] = (Pattern("DoubleNot", "graph.logical_not", _double_not),)


@dataclass(frozen=True)
class OffByDefault(FusionPass):
    name: ClassVar[str] = "TestOffByDefaultPass"
    summary: ClassVar[str] = "test pass that is off unless enabled"
    origin: ClassVar[str] = "cann"
    default_backends: ClassVar[frozenset[str]] = frozenset()
    patterns: ClassVar[tuple[Pattern, ...]] = ()


TEST_PASSES = (NegFusion, NotFusion, OffByDefault)


@pytest.fixture(autouse=True)
def test_passes() -> Iterator[None]:
    for cls in TEST_PASSES:
        register_pass(cls)
    yield
    for cls in TEST_PASSES:
        unregister_pass(cls.name)


MODULE = """
func.func @f(%a: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0 = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "graph.logical_not"(%b) : (tensor<4xi1>) -> tensor<4xi1>
  %3 = "graph.logical_not"(%2) : (tensor<4xi1>) -> tensor<4xi1>
  return %1, %3 : tensor<4xf32>, tensor<4xi1>
}
"""


def _fired(pipeline: str = "builtin.module(graph-fusion)", switches: FusionSwitches | None = None) -> dict[str, int]:
    module = parse_module(MODULE)
    result = run_pipeline(module, pipeline, switches=switches).fusion_result()
    merged = {**result["graph_fusion"], **result["ub_fusion"]}
    return {name: int(counts["effect_times"]) for name, counts in merged.items()}


def _switch_file(tmp_path: Path, text: str) -> FusionSwitches:
    path = tmp_path / "fusion_switch.cfg"
    path.write_text(text)
    return FusionSwitches(switch_file=parse_switch_file(path))


# -- flags ------------------------------------------------------------------------


def test_flags_parse_lists_bools_and_ints() -> None:
    flags = parse_graph_kernel_flags("--opt_level=2 --disable_pass=test_neg_fusion,TestNotFusionPass --dump_as_text")
    assert flags.opt_level == 2
    assert flags.disable_pass == ("test_neg_fusion", "TestNotFusionPass")
    assert flags.dump_as_text is True
    assert flags.warnings == []


def test_flags_accept_the_seeds_en_dash() -> None:
    flags = parse_graph_kernel_flags("–enable_expand_ops=Square –enable_cluster_ops=MatMul,Add")
    assert flags.lists["enable_expand_ops"] == ("Square",)
    assert flags.lists["enable_cluster_ops"] == ("MatMul", "Add")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("--bogus=1", "unknown flag '--bogus' (valid flags: composite_op_limit_size,"),
        ("--opt_level=7", "flag '--opt_level' expects an integer in [0, 3], got '7'"),
        ("--dump_as_text=maybe", "flag '--dump_as_text' expects true or false, got 'maybe'"),
        ("opt_level=1", "'opt_level=1' is not of the form --key=value"),
        ("--disable_pass=no_such_pass", "flag '--disable_pass' names unknown pass 'no_such_pass'"),
        ("--enable_pass=", "flag '--enable_pass' needs a comma-separated list"),
    ],
)
def test_bad_flags_warn_and_strict_flags_fail(text: str, message: str) -> None:
    flags = parse_graph_kernel_flags(text)
    assert [w.severity for w in flags.warnings] == ["warning"]
    assert message in flags.warnings[0].message
    with pytest.raises(GraphfuseError, match=re.escape(message)):
        parse_graph_kernel_flags(text, strict=True)


def test_later_flags_override_earlier_ones_key_by_key() -> None:
    env = parse_graph_kernel_flags("--opt_level=1 --disable_pass=test_neg_fusion")
    cli = parse_graph_kernel_flags("--opt_level=3")
    merged = env.merged_with(cli)
    assert merged.opt_level == 3
    assert merged.disable_pass == ("test_neg_fusion",)


# -- switch files ----------------------------------------------------------------------


def test_all_off_turns_passes_off_but_protected_ones_stay_on_with_a_warning(tmp_path: Path) -> None:
    switches = _switch_file(tmp_path, '{"Switch":{"GraphFusion":{"ALL":"off"},"UBFusion":{"ALL":"off"}}}')
    fired = _fired(switches=switches)
    assert "test_neg_fusion" not in fired
    assert fired["TestNotFusionPass"] == 1
    assert [w.message for w in switches.warnings] == [
        "pass 'TestNotFusionPass' is needed for correctness and stays on under \"ALL\": \"off\""
    ]


def test_exact_name_beats_all(tmp_path: Path) -> None:
    switches = _switch_file(tmp_path, '{"Switch":{"GraphFusion":{"ALL":"off","test_neg_fusion":"on"}}}')
    assert _fired(switches=switches)["test_neg_fusion"] == 1
    switches = _switch_file(tmp_path, '{"Switch":{"GraphFusion":{"ALL":"on","test_neg_fusion":"off"}}}')
    assert "test_neg_fusion" not in _fired(switches=switches)


def test_exact_name_can_turn_a_protected_pass_off(tmp_path: Path) -> None:
    switches = _switch_file(tmp_path, '{"Switch":{"UBFusion":{"TestNotFusionPass":"off"}}}')
    assert "TestNotFusionPass" not in _fired(switches=switches)


def test_legacy_line_format(tmp_path: Path) -> None:
    switches = _switch_file(tmp_path, "# comment\ntest_neg_fusion:off\nTestNotFusionPass:on\n")
    fired = _fired(switches=switches)
    assert "test_neg_fusion" not in fired and fired["TestNotFusionPass"] == 1


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        ('{"Switch": {"GraphFusion": {"ALL": "off",}}}', (1, 42), "malformed JSON: Expecting property name"),
        ('{"Switch": {\n  "GraphFusions": {}}}', (2, 3), "unknown section 'GraphFusions'"),
        ('{"Switch": {"GraphFusion": {\n  "ALL": "yes"}}}', (2, 3), 'switch \'ALL\' must be "on" or "off", got "yes"'),
        ('{"Switches": {}}', (1, 1), 'expected {"Switch": {"GraphFusion"'),
        ("test_neg_fusion on\n", (1, 1), "expected 'PassName:on' or 'PassName:off'"),
    ],
)
def test_bad_switch_files_give_located_errors(
    tmp_path: Path, text: str, location: tuple[int, int], message: str
) -> None:
    path = tmp_path / "fusion_switch.cfg"
    path.write_text(text)
    with pytest.raises(GraphfuseError) as error:
        parse_switch_file(path)
    diag = error.value.diagnostics[0]
    assert (diag.location.line, diag.location.col) == location
    assert message in diag.message


def test_unknown_pass_in_switch_file_warns(tmp_path: Path) -> None:
    path = tmp_path / "fusion_switch.cfg"
    path.write_text('{"Switch": {"GraphFusion": {"NoSuchFusionPass": "off"}}}')
    assert [w.message for w in parse_switch_file(path).warnings] == [
        "unknown fusion pass 'NoSuchFusionPass' in section GraphFusion is ignored"
    ]


@pytest.mark.parametrize("separator", ["\n", " "], ids=["one-per-line", "one-line"])
def test_a_200k_entry_switch_file_parses(tmp_path: Path, separator: str) -> None:
    """Keys are located in one pass over the text (searching from the start for each key took minutes)."""
    count = 200_000
    entries = f",{separator}".join(f'"NoSuchPass{k}": "{"on" if k % 2 else "off"}"' for k in range(count))
    path = tmp_path / "fusion_switch.cfg"
    path.write_text('{"Switch": {"GraphFusion": {' + separator + entries + "}}}\n")
    warnings = parse_switch_file(path).warnings
    assert len(warnings) == count
    last = warnings[-1].location
    text = path.read_text()
    assert (last.line, last.col) == ((count + 1, 1) if separator == "\n" else (1, text.rindex('"NoSuchPass') + 1))


def test_duplicate_keys_warn_and_the_last_wins(tmp_path: Path) -> None:
    switches = _switch_file(tmp_path, '{"Switch": {"GraphFusion": {\n"test_neg_fusion": "on",\n'
                                      '"test_neg_fusion": "off"}}}')
    assert [(w.location.line, w.message) for w in switches.switch_file.warnings] == [
        (3, "duplicate key 'test_neg_fusion' (lines 2 and 3): the last one is used")
    ]
    assert "test_neg_fusion" not in _fired(switches=switches)


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "fusion_switch.cfg"
    path.write_bytes(b'\xef\xbb\xbf{"Switch": {"GraphFusion": {"ALL": "yes"}}}')
    with pytest.raises(GraphfuseError, match=r'cfg:1:29: error: switch \'ALL\' must be "on" or "off"'):
        parse_switch_file(path)


# -- precedence -------------------------------------------------------------------------


def test_switch_file_overrides_flags_and_pipeline_options_override_both(tmp_path: Path) -> None:
    flags = parse_graph_kernel_flags("--disable_pass=test_neg_fusion")
    assert "test_neg_fusion" not in _fired(switches=FusionSwitches(flags))
    path = tmp_path / "fusion_switch.cfg"
    path.write_text('{"Switch": {"GraphFusion": {"test_neg_fusion": "on"}}}')
    both = FusionSwitches(flags, parse_switch_file(path))
    assert _fired(switches=both)["test_neg_fusion"] == 1
    assert "test_neg_fusion" not in _fired("builtin.module(graph-fusion{disable-pass=test_neg_fusion})", both)


def test_off_by_default_pass_runs_only_when_enabled() -> None:
    assert not GraphFusion().enabled(OffByDefault, FusionSwitches())
    assert GraphFusion(enable_pass=("TestOffByDefaultPass",)).enabled(OffByDefault, FusionSwitches())
    assert GraphFusion().enabled(OffByDefault, FusionSwitches(parse_graph_kernel_flags(
        "--enable_pass=TestOffByDefaultPass")))


def test_opt_level_zero_runs_no_fusion() -> None:
    assert _fired("builtin.module(graph-fusion{opt-level=0})") == {}


def test_a_pass_named_in_the_pipeline_runs_unless_switched_off() -> None:
    assert _fired("builtin.module(test-neg-fusion)")["test_neg_fusion"] == 1
    flags = parse_graph_kernel_flags("--disable_pass=test_neg_fusion")
    assert "test_neg_fusion" not in _fired("builtin.module(test_neg_fusion)", FusionSwitches(flags))


@pytest.mark.parametrize("bad", ["graph-fusion{opt-level=5}", "graph-fusion{disable-pass=nope}",
                                 "graph-fusion{backend=gpu}"])
def test_bad_graph_fusion_options(bad: str) -> None:
    from graphfuse.pipelines.runner import PipelineError

    with pytest.raises(PipelineError):
        run_pipeline(parse_module(MODULE), f"builtin.module({bad})")


def test_fusion_result_has_cann_shape() -> None:
    module = parse_module(MODULE)
    result = run_pipeline(module, "builtin.module(graph-fusion)").fusion_result()
    assert json.loads(json.dumps(result)) == {
        "graph_fusion": {"test_neg_fusion": {"match_times": "1", "effect_times": "1"}},
        "ub_fusion": {"TestNotFusionPass": {"match_times": "1", "effect_times": "1"}},
    }


def test_passes_outside_the_built_in_order_run_last_in_registration_order() -> None:
    names = [cls.name for cls in fusion_passes()]
    assert names[-len(TEST_PASSES):] == [cls.name for cls in TEST_PASSES]


def test_the_switch_file_comes_from_fusion_switch_file_when_none_is_given(tmp_path) -> None:
    """CANN's IR build route names the file with FUSION_SWITCH_FILE; a file given explicitly wins."""
    import json

    from graphfuse.pipelines.fusion.switches import FusionSwitches

    off, on = tmp_path / "off.cfg", tmp_path / "on.cfg"
    off.write_text(json.dumps({"Switch": {"GraphFusion": {"ALL": "off"}}}))
    on.write_text(json.dumps({"Switch": {"GraphFusion": {"ALL": "on"}}}))
    from_environment = FusionSwitches.from_sources(environ={"FUSION_SWITCH_FILE": str(off)})
    assert from_environment.switch_file is not None and from_environment.switch_file.all["GraphFusion"] is False
    explicit = FusionSwitches.from_sources(fusion_switch_file=on, environ={"FUSION_SWITCH_FILE": str(off)})
    assert explicit.switch_file is not None and explicit.switch_file.all["GraphFusion"] is True
    assert FusionSwitches.from_sources(environ={}).switch_file is None


#: Seed 001's switch file for ATC, verbatim.
SEED_001_SWITCH_FILE = (
    '{ "Switch":{ "GraphFusion":{ "ConvToFullyConnectionFusionPass":"on", "SoftmaxFusionPass":"on", '
    '"ConvConcatFusionPass":"on", "MatMulBiasAddFusionPass":"on", "PoolingFusionPass":"on", '
    '"ZConcatv2dFusionPass":"on", "ZConcatExt2FusionPass":"on", "TfMergeSubFusionPass":"on" }, '
    '"UBFusion":{ "FusionVirtualOpSetSwitch":"on" } } }'
)


def test_the_seeds_switch_file_runs_verbatim(tmp_path: Path) -> None:
    """Every name it gives is a pass, an alias (SoftmaxFusionPass) or a documented unsupported pass: the last
    three warn with their reason and docs/unsupported-passes.md, and no name is unknown."""
    path = tmp_path / "fusion_switch.cfg"
    path.write_text(SEED_001_SWITCH_FILE)
    parsed = parse_switch_file(str(path))
    messages = [d.message for d in parsed.warnings]
    assert not any("unknown fusion pass" in m for m in messages), messages
    for name in ("PoolingFusionPass", "ZConcatExt2FusionPass", "TfMergeSubFusionPass"):
        assert any(f"pass '{name}' is not implemented" in m and "docs/unsupported-passes.md" in m for m in messages)
    assert len(messages) == 3, messages
    switches = FusionSwitches(switch_file=parsed)
    # SoftmaxFusionPass (the seed's name) turns on SoftmaxSmallOpFusionPass, off by default
    for name in ("ConvToFullyConnectionFusionPass", "SoftmaxSmallOpFusionPass", "ConvConcatFusionPass",
                 "MatMulBiasAddFusionPass", "ZConcatv2dFusionPass", "FusionVirtualOpSetSwitch"):
        assert switches.is_enabled(lookup_pass(name)), name


@pytest.mark.parametrize("backend", ["cpu", "npu"])
@pytest.mark.parametrize("model", ["transformer_block", "resnet_block"])
def test_all_off_compiles_every_bundled_model(model: str, backend: str, tmp_path: Path) -> None:
    """No built-in pass is needed for correctness: with every GraphFusion and UBFusion rule off, the fused
    pipeline still compiles and computes the reference's numbers, and no pass claims to stay on."""
    import numpy as np

    import graphfuse
    from graphfuse.lowering.npu.compiler import compile_npu
    from graphfuse.tools.models import MODELS, model_inputs

    path = tmp_path / "off.cfg"
    path.write_text('{ "Switch":{ "GraphFusion":{ "ALL":"off" }, "UBFusion":{ "ALL":"off" } } }')
    assert not any(cls.protected for cls in fusion_passes() if not cls.name.startswith("Test"))
    module = MODELS[model]().module
    inputs = model_inputs(model)
    build = graphfuse.compile if backend == "cpu" else compile_npu
    exe = build(module, opt_level=2, fusion_switch_file=path)
    for want, got in zip(exe.reference(*inputs), exe(*inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
