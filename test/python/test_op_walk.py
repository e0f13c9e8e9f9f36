"""ops_named (dialect/matching.py) and the native walk behind it (dialect/native/op_walk.c): the same ops, in the
same order, as the Python walk, on a lowered module; names and dialect prefixes."""

from __future__ import annotations

import shutil

import pytest
from mlir import ir

import graphfuse
from graphfuse.dialect import op_walk
from graphfuse.dialect.context import load_graph_dialect, new_context
from graphfuse.dialect.matching import nested_ops, ops_named
from graphfuse.lowering.compiler import LOWERING_PIPELINE, default_pipeline
from graphfuse.pipelines.runner import run_pipeline


def _lowered_module(context: ir.Context) -> ir.Module:
    b = graphfuse.GraphBuilder("walked")
    x, w = b.arg((16, 32)), b.arg((32, 8))
    b.ret(b.softmax(b.matmul(b.tanh(x), w), axis=-1), b.reduce_sum(x, axes=[-1], keep_dims=True))
    module = ir.Module.parse(str(b.module), context)
    run_pipeline(module, default_pipeline(2))
    run_pipeline(module, LOWERING_PIPELINE)
    return module


@pytest.mark.skipif(shutil.which("cc") is None, reason="the native walk is built where a C compiler is")
def test_the_native_walk_is_built_and_loads() -> None:
    assert op_walk._library() is not None


@pytest.mark.parametrize("patterns", [("linalg.",), ("arith.constant", "scf.for"), ("func.func",), ("vector.",),
                                      ("no.such_op",), ("scf.", "tensor.extract_slice", "math.")])
def test_the_same_ops_as_the_python_walk(patterns: tuple[str, ...]) -> None:
    with new_context() as context:
        load_graph_dialect(context)
        module = _lowered_module(context)
        prefixes = tuple(p for p in patterns if p.endswith("."))
        want = [op for op in nested_ops(module) if op.name in patterns or op.name.startswith(prefixes)]
        got = ops_named(module, *patterns)
        assert [op.name for op in got] == [op.name for op in want]
        assert got == want  # the same operations, not copies
        assert patterns == ("no.such_op",) or got


def test_the_root_is_not_among_the_ops() -> None:
    with new_context() as context:
        load_graph_dialect(context)
        module = _lowered_module(context)
        function = ops_named(module, "func.func")[0]
        assert all(op != function for op in ops_named(function, "func."))
        assert ops_named(module, "builtin.module") == []


def test_without_the_helper_the_python_walk_finds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    with new_context() as context:
        load_graph_dialect(context)
        module = _lowered_module(context)
        native = [op.name for op in ops_named(module, "linalg.", "scf.for")]
        monkeypatch.setattr(op_walk, "_library", lambda: None)
        assert op_walk.native_ops_named(module.operation, ("linalg.",)) is None
        assert [op.name for op in ops_named(module, "linalg.", "scf.for")] == native
