"""graphfuse.register_irdl_dialects: dialects of one's own, defined in IRDL, in every graphfuse context."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlir import ir

import graphfuse
from graphfuse import GraphfuseError

INPUTS = Path(__file__).parents[1] / "Tools" / "Inputs"
TOY = """irdl.dialect @toy_units {
  irdl.operation @meters {
    %0 = irdl.any
    irdl.operands(in: %0)
    irdl.results(out: %0)
  }
}
"""


def test_registered_dialects_load_into_every_new_context() -> None:
    assert graphfuse.register_irdl_dialects(TOY) == ["toy_units"]
    assert graphfuse.register_irdl_dialects(TOY) == ["toy_units"]  # the same definition again: nothing new
    module = graphfuse.parse_module('func.func @f(%x: f32) -> f32 {\n  %0 = "toy_units.meters"(%x) : (f32) -> f32\n'
                                    "  return %0 : f32\n}\n", "toy.mlir")
    assert "toy_units.meters" in str(module)
    context = ir.Context()  # a context of the caller's: loaded on request
    graphfuse.register_irdl_dialects(TOY, context)
    assert context.is_registered_operation("toy_units.meters")


def test_a_file_and_its_errors(tmp_path: Path) -> None:
    assert graphfuse.register_irdl_dialects(INPUTS / "cmath.irdl.mlir") == ["cmath"]
    other = TOY.replace("@meters", "@feet")
    with pytest.raises(GraphfuseError, match="dialect 'toy_units' of '<irdl>' is already registered"):
        graphfuse.register_irdl_dialects(other)
    with pytest.raises(GraphfuseError, match="dialect 'func' of '<irdl>' already exists: IRDL cannot redefine it"):
        graphfuse.register_irdl_dialects("irdl.dialect @func {}")
    with pytest.raises(GraphfuseError, match="could not open IRDL file"):
        graphfuse.register_irdl_dialects(tmp_path / "missing.irdl.mlir")
    (tmp_path / "empty.mlir").write_text("module {}\n")
    with pytest.raises(GraphfuseError, match="defines no dialect"):
        graphfuse.register_irdl_dialects(tmp_path / "empty.mlir")
