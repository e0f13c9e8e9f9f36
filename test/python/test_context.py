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
