"""The committed generated files match their generators, and every op's example verifies and runs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect import examples, irdl_gen
from graphfuse.dialect.catalog import all_ops
from graphfuse.dialect.context import GRAPH_IRDL_PATH, make_context
from graphfuse.dialect.interpreter import functions, run_function
from graphfuse.dialect.types import FLOAT_DTYPES, INT_DTYPES, TensorSig, numpy_dtype, sig_from_type
from graphfuse.dialect.verifier import verify_operation

REPO = Path(__file__).resolve().parents[2]
ALL_OPS_TEST = REPO / "test" / "Dialect" / "all-ops.mlir"
OP_NAMES = sorted(spec.name for spec in all_ops())


def test_irdl_file_is_up_to_date() -> None:
    assert GRAPH_IRDL_PATH == REPO / "dialect" / "graph.irdl.mlir"
    committed = GRAPH_IRDL_PATH.read_text()
    assert committed == irdl_gen.generate(), (
        "dialect/graph.irdl.mlir is stale: the op catalog changed. Run `make irdl` "
        "(python -m graphfuse.dialect.irdl_gen > dialect/graph.irdl.mlir) and commit the result."
    )


def test_all_ops_lit_test_is_up_to_date() -> None:
    committed = ALL_OPS_TEST.read_text()
    assert committed == examples.lit_test_text(), (
        "test/Dialect/all-ops.mlir is stale: the op catalog changed. Regenerate it with "
        "`python -m graphfuse.dialect.examples > test/Dialect/all-ops.mlir` and commit the result."
    )


def test_irdl_file_declares_every_op_once() -> None:
    declared = re.findall(r"irdl\.operation @(\w+) \{", irdl_gen.generate())
    assert declared == OP_NAMES


def test_all_ops_lit_test_checks_every_op() -> None:
    text = examples.lit_test_text()
    labels = re.findall(r"^// CHECK-LABEL: func\.func @(\w+)\($", text, flags=re.MULTILINE)
    assert labels == OP_NAMES
    for name in OP_NAMES:
        assert f'// CHECK:         "graph.{name}"' in text


def test_generated_irdl_loads_into_a_context() -> None:
    context = make_context()
    for name in OP_NAMES:
        assert context.is_registered_operation(f"graph.{name}"), name


# --------------------------------------------------------------------------
# Every op's example.


@pytest.fixture(scope="module")
def example_module() -> ir.Module:
    module = examples.examples_module(make_context())
    assert verify_operation(module.operation) == []
    assert module.operation.verify()
    return module


def test_every_op_has_an_example(example_module: ir.Module) -> None:
    assert sorted(functions(example_module)) == OP_NAMES
    for spec in all_ops():
        operands, _ = spec.example
        assert operands, f"graph.{spec.name} has no example operands"
        if spec.result_param is not None:
            assert spec.example_result is not None, f"graph.{spec.name} needs example_result"


def test_examples_reparse_in_a_fresh_context(example_module: ir.Module) -> None:
    text = str(example_module)
    with make_context():
        reparsed = ir.Module.parse(text)
    assert verify_operation(reparsed.operation) == []
    assert str(reparsed) == text


def _random_input(rng: np.random.Generator, sig: TensorSig) -> np.ndarray:
    assert sig.is_static, sig
    if sig.dtype in FLOAT_DTYPES:
        return rng.standard_normal(sig.shape).astype(numpy_dtype(sig.dtype))
    if sig.dtype in INT_DTYPES:
        return rng.integers(-5, 6, size=sig.shape).astype(numpy_dtype(sig.dtype))
    assert sig.dtype == "i1", sig
    return rng.random(sig.shape) < 0.5


@pytest.mark.parametrize("name", OP_NAMES)
def test_example_verifies_and_runs(example_module: ir.Module, name: str) -> None:
    func = functions(example_module)[name]
    block = func.regions[0].blocks[0]
    (graph_op,) = [op.operation for op in block.operations if op.operation.name.startswith("graph.")]
    assert graph_op.name == f"graph.{name}"
    assert verify_operation(func) == []
    rng = np.random.default_rng(sum(map(ord, name)))  # fixed per op
    arg_sigs = [sig_from_type(arg.type) for arg in block.arguments]
    spec = next(s for s in all_ops() if s.name == name)
    assert arg_sigs == list(spec.example[0])
    inputs = [_random_input(rng, sig) for sig in arg_sigs]
    outputs = run_function(example_module, inputs, entry=name)
    result_sigs = [sig_from_type(r.type) for r in graph_op.results]
    assert len(outputs) == len(result_sigs)
    for out, sig in zip(outputs, result_sigs, strict=True):
        assert isinstance(out, np.ndarray)
        assert out.shape == sig.shape, (name, out.shape, sig)
        assert out.dtype == numpy_dtype(sig.dtype), (name, out.dtype, sig)
