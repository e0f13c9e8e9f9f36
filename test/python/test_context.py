"""graphfuse.context: MindSpore's set_context spellings (seed 002) as defaults of graphfuse.compile."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphBuilder, GraphfuseError, context


@pytest.fixture(autouse=True)
def _fresh_context() -> Iterator[None]:
    context.reset_context()
    yield
    context.reset_context()


def _seed_net() -> object:
    """Seed 002's example net: Mul then Add, which graph-kernel fusion puts in one kernel."""
    b = GraphBuilder("net")
    x, y = b.arg((4, 8)), b.arg((4, 8))
    b.ret(b.add(b.mul(x, y), y))
    return b.module


def test_enable_graph_kernel_sets_the_default_opt_level() -> None:
    context.set_context(enable_graph_kernel=False)
    assert graphfuse.compile(_seed_net()).kernels == 0
    assert graphfuse.compile(_seed_net(), opt_level=2).kernels == 1  # a compile's own level wins
    context.set_context(enable_graph_kernel=True)
    exe = graphfuse.compile(_seed_net())
    assert exe.kernels == 1
    x, y = np.ones((4, 8), np.float32), np.full((4, 8), 2.0, np.float32)
    np.testing.assert_array_equal(exe(x, y)[0], x * y + y)


def _add_rms_norm_net() -> object:
    """x + r, then rms_norm: add_rms_norm_fusion's pattern, and an exp for graph-kernel fusion to cluster."""
    b = GraphBuilder("norm")
    x, r, gamma = b.arg((4, 64)), b.arg((4, 64)), b.arg((64,))
    b.ret(b.exp(b.mul(b.rms_norm(b.add(x, r), gamma), b.const(np.float32(2.0)))))
    return b.module


@pytest.mark.parametrize(("key", "value"), [("enable_graph_kernel", False), ("jit_level", "O0")])
def test_graph_kernel_off_keeps_pattern_fusion(key: str, value: object) -> None:
    """Seed 000: pattern fusion is "enabled by default", graph-kernel fusion by jit_level=O1 (or
    enable_graph_kernel): turned off, the pattern passes still fuse."""
    context.set_context(**{key: value})
    exe = graphfuse.compile(_add_rms_norm_net())
    assert "graph-kernel-fusion" not in exe.pipeline and '"graph.add_rms_norm"' in exe.fused_graph
    assert exe.fusion_result["graph_fusion"]["add_rms_norm_fusion"]["effect_times"] == "1"
    assert not any(k.startswith("graph-kernel-fusion.") for k in exe.fusions)


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_jit_level_turns_graph_kernel_fusion_on(level: str) -> None:
    context.set_context(jit_level="O0")
    assert graphfuse.compile(_seed_net()).kernels == 0
    context.set_context(jit_level=level)
    assert graphfuse.compile(_seed_net()).kernels == 1
    context.set_context(enable_graph_kernel=False)  # the explicit switch wins over the level
    assert graphfuse.compile(_seed_net()).kernels == 0


def test_jit_level_rejects_other_levels() -> None:
    with pytest.raises(GraphfuseError, match=r"jit_level must be one of O0, O1, O2, got 'O3'"):
        context.set_context(jit_level="O3")


def test_graph_kernel_flags_in_the_context() -> None:
    context.set_context(graph_kernel_flags="--opt_level=0")
    assert graphfuse.compile(_seed_net()).kernels == 0
    # the compile's own flags come after the context's
    assert graphfuse.compile(_seed_net(), graph_kernel_flags="--opt_level=2").kernels == 1


def test_save_graphs_writes_the_ir_after_each_pass(tmp_path: Path) -> None:
    context.set_context(save_graphs=True, save_graphs_path=str(tmp_path))
    graphfuse.compile(_seed_net())
    dumps = sorted((tmp_path / "graphfuse_ir" / "net").glob("*.mlir"))
    assert dumps and any("graph-kernel-fusion" in p.name for p in dumps), dumps
    assert "graph.kernel" in dumps[-1].read_text()


@pytest.mark.parametrize(("settings", "message"), [
    ({"enable_graph_kerel": True}, "unknown key 'enable_graph_kerel'"),
    ({"enable_graph_kernel": "yes"}, "must be True or False"),
    ({"save_graphs": 7}, "save_graphs must be True, False or 0-3"),
    ({"save_graphs_path": 3}, "save_graphs_path must be a string"),
])
def test_bad_settings_are_errors(settings: dict[str, object], message: str) -> None:
    with pytest.raises(GraphfuseError, match=message):
        context.set_context(**settings)
