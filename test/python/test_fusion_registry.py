"""Every fusion pass fires on its example, and each front end can switch it off without touching the others.

For each pass P (parametrized over the registry) and each front end (the
pipeline option, the MindSpore flags string, the CANN switch file), graph-fusion
runs on a module holding P's example and the example of another pass Q: with P
disabled, P reports no effect while Q still fires.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from graphfuse import parse_module, run_function_ranks
from graphfuse.dialect.types import NUMPY_DTYPES, sig_from_type
from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.graph_fusion import fusion_passes
from graphfuse.pipelines.fusion.switches import FusionSwitches, parse_graph_kernel_flags, parse_switch_file
from graphfuse.pipelines.runner import run_pipeline

PASSES = [cls for cls in fusion_passes() if cls.example]
NAMES = [cls.name for cls in PASSES]


def test_every_fusion_pass_has_an_example() -> None:
    assert [cls.name for cls in fusion_passes()] == NAMES


def _with_partner(cls) -> tuple[str, str]:
    """P's example plus the example of the next pass Q (symbols renamed apart); returns (text, Q's name)."""
    partner = PASSES[(PASSES.index(cls) + 1) % len(PASSES)]
    renamed = re.sub(r"@(\w+)", r"@\1_partner", partner.example)
    return cls.example + "\n" + renamed, partner.name


_COUNTS = re.compile(r"Pass\[(\w+)\]: pattern=\S+, matched_times=\d+, effected_times=(\d+)")


def _run_counted(module, pipeline: str, switches: FusionSwitches | None = None) -> dict[str, int]:
    """effected_times per pass from the INFO log lines, which every fusion pass writes (fusion_result.json
    leaves some out: FusionVirtualOpSetSwitch, as seed 004 says)."""
    stream = io.StringIO()
    log.configure("info")
    try:
        with contextlib.redirect_stderr(stream):
            run_pipeline(module, pipeline, switches=switches)
    finally:
        log.configure()
    effects: dict[str, int] = {}
    for name, times in _COUNTS.findall(stream.getvalue()):
        effects[name] = effects.get(name, 0) + int(times)
    return effects


def _effects(text: str, pipeline: str, switches: FusionSwitches | None = None) -> dict[str, int]:
    return _run_counted(parse_module(text), pipeline, switches)


@pytest.mark.parametrize("cls", PASSES, ids=NAMES)
def test_example_fuses_and_keeps_numerics(cls) -> None:
    module = parse_module(cls.example)
    func = module.body.operations[0]
    # A graph with collectives runs on every rank of its group at once (each rank its own inputs).
    sizes = {ir.IntegerAttr(op.attributes["group_size"]).value for op in func.regions[0].blocks[0].operations
             if "group_size" in op.attributes}
    ranks = max(sizes, default=1)
    rng = np.random.default_rng(0)
    inputs = [[rng.uniform(0.5, 1.5, sig.shape).astype(NUMPY_DTYPES[sig.dtype])
               for sig in (sig_from_type(arg.type) for arg in func.regions[0].blocks[0].arguments)]
              for _ in range(ranks)]
    before = run_function_ranks(module, inputs)
    assert _run_counted(module, f"builtin.module({cls.name})").get(cls.name, 0) >= 1
    after = run_function_ranks(module, inputs)
    for b, a in zip([r for rank in before for r in rank], [r for rank in after for r in rank], strict=True):
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("front_end", ["pipeline", "flags", "switch-file"])
@pytest.mark.parametrize("cls", PASSES, ids=NAMES)
def test_disabling_a_pass_leaves_it_unfused_while_others_fire(cls, front_end: str, tmp_path: Path) -> None:
    text, partner = _with_partner(cls)
    enable = f"enable-pass={partner}"  # the partner may be off by default (SoftmaxSmallOpFusionPass)
    switches = None
    if front_end == "pipeline":
        pipeline = f"builtin.module(graph-fusion{{{enable} disable-pass={cls.name}}})"
    elif front_end == "flags":
        pipeline = f"builtin.module(graph-fusion{{{enable}}})"
        switches = FusionSwitches(parse_graph_kernel_flags(f"--disable_pass={cls.name}", strict=True))
    else:
        pipeline = f"builtin.module(graph-fusion{{{enable}}})"
        path = tmp_path / "fusion_switch.cfg"
        path.write_text(json.dumps({"Switch": {cls.group: {cls.name: "off"}}}))
        switches = FusionSwitches(switch_file=parse_switch_file(path))
    effects = _effects(text, pipeline, switches)
    assert effects.get(cls.name, 0) == 0
    assert effects.get(partner, 0) >= 1


def test_a_seed_name_is_an_alias_of_the_pass() -> None:
    from graphfuse.pipelines.registry import aliases_of, lookup_pass, pass_key, register_pass

    assert lookup_pass("SoftmaxFusionPass") is lookup_pass("SoftmaxSmallOpFusionPass")
    assert pass_key("SoftmaxFusionPass") == "SoftmaxSmallOpFusionPass"
    assert aliases_of("SoftmaxSmallOpFusionPass") == ["SoftmaxFusionPass"]
    taken = type("Taken", (), {"name": "SoftmaxFusionPass", "summary": "a plugin taking the alias"})
    with pytest.raises(ValueError, match="a pass named 'SoftmaxFusionPass' is already registered"):
        register_pass(taken)
