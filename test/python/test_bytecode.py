"""MLIR bytecode through the Python API: parse_module, load_module and compile read it (by content), and
module_bytecode writes it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphfuseError, load_module, module_bytecode, parse_module

ADD_RELU = """func.func @add_relu(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "graph.add"(%x, %r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "graph.relu"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
"""


def test_bytecode_round_trip() -> None:
    module = parse_module(ADD_RELU, "add_relu.mlir")
    data = module_bytecode(module)
    assert data[:4] == b"ML\xefR"
    assert str(parse_module(data, "add_relu.mlirbc")) == str(module)


def test_bytecode_files_are_read_by_content(tmp_path: Path) -> None:
    """A bytecode file named .mlir loads, and compiles and runs like its text."""
    path = tmp_path / "model.mlir"
    path.write_bytes(module_bytecode(parse_module(ADD_RELU, "add_relu.mlir")))
    assert '"graph.relu"' in str(load_module(path))
    x, r = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
    (got,) = graphfuse.compile(path)(x, r)
    np.testing.assert_allclose(got, np.maximum(x + r, 0), rtol=1e-6)


def test_bytecode_keeps_the_locations_it_was_written_with(tmp_path: Path) -> None:
    """With a file name, the locations in the parser's buffer name that file, so that errors on the module
    read back point into the source."""
    data = module_bytecode(parse_module(ADD_RELU, "add_relu.mlir"), "models/add_relu.mlir")
    text = parse_module(data).operation.get_asm(enable_debug_info=True)
    assert 'loc("models/add_relu.mlir":3:8)' in text and '"-":' not in text


def test_bad_bytecode_is_a_located_error(tmp_path: Path) -> None:
    data = module_bytecode(parse_module(ADD_RELU))
    path = tmp_path / "cut.mlirbc"
    path.write_bytes(data[:24])
    with pytest.raises(GraphfuseError, match=r"cut\.mlirbc:1:1: error: invalid MLIR bytecode"):
        load_module(path)
    path.write_bytes(b"\xff\xfe not text")
    with pytest.raises(GraphfuseError, match="neither UTF-8 text nor MLIR bytecode"):
        load_module(path)
