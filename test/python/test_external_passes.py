"""graphfuse passes in an upstream PassManager (graphfuse.passes.external_pass)."""

from __future__ import annotations

import re

import pytest
from mlir import ir
from mlir.passmanager import PassManager

from graphfuse import make_context, passes, run_pipeline
from graphfuse.dialect.context import load_graph_dialect

ADD_RELU = """
func.func @f(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x, %r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.relu"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
"""


def test_a_pass_manager_mixing_upstream_and_graphfuse_passes() -> None:
    """Upstream canonicalize, then graphfuse's fusion and lowering (by pipeline text and by pass object), then
    upstream cse, in one PassManager on a context of the caller's own: the same module as graphfuse's own
    runner makes."""
    context = ir.Context()
    with context, ir.Location.unknown():
        load_graph_dialect(context)
        module = ir.Module.parse(ADD_RELU)
        pm = PassManager.parse("builtin.module(canonicalize)")
        pm.add(passes.external_pass("graph-fusion{opt-level=2},graph-kernel-fusion"))
        pm.add(passes.external_pass(passes.GraphToLinalg(strict=True)))
        pm.add("cse")
        pm.run(module.operation)
        got = str(module)
    with make_context():
        want = ir.Module.parse(ADD_RELU)
        run_pipeline(want, "canonicalize,graph-fusion{opt-level=2},graph-kernel-fusion,graph-to-linalg{strict},cse")
    assert got == str(want)
    assert "linalg.generic" in got and re.search(r'"graph\.\w+"\(', got) is None  # no graph op left


def test_a_failing_graphfuse_pass_fails_the_pass_manager_with_its_diagnostic() -> None:
    """A graphfuse pass that fails reports through MLIR's diagnostics at its location; the run raises as an
    upstream pass's failure does, and the module keeps its ops."""
    context = ir.Context()
    with context, ir.Location.unknown():
        load_graph_dialect(context)
        module = ir.Module.parse(ADD_RELU)
        pm = PassManager.parse("builtin.module(canonicalize)")
        pm.add(passes.external_pass("store-booleans-as-bytes"))  # graph ops are not lowered yet: refused
        with pytest.raises(ir.MLIRError, match="lower graph ops to linalg first"):
            pm.run(module.operation)
        assert '"graph.add"' in str(module)


def test_a_graphfuse_pass_needs_a_module() -> None:
    context = ir.Context()
    with context, ir.Location.unknown():
        load_graph_dialect(context)
        module = ir.Module.parse(ADD_RELU)
        pm = PassManager("func.func")
        pm.add(passes.external_pass("graph-fusion"))
        with pytest.raises(ir.MLIRError, match=re.escape("runs on a builtin.module, not on 'func.func'")):
            pm.run(next(iter(module.body.operations)))


def test_pass_classes_by_name() -> None:
    assert passes.GraphFusion.name == "graph-fusion"
    with pytest.raises(AttributeError, match="no pass class 'NoSuchPass'"):
        passes.NoSuchPass  # noqa: B018
