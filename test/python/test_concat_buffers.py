"""Long concatenations reach bufferization as copies into one buffer (lowering/codegen/cpu/copy_long_concats.py)."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.dialect.matching import nested_ops
from graphfuse.lowering.codegen.cpu.copy_long_concats import copy_long_concats
from graphfuse.lowering.compiler import lower_to_linalg
from graphfuse.lowering.shape_ops import CONCAT_GROUP


def _concat_text(count: int) -> str:
    """``func.func @f`` concatenating ``count`` 4x8 arguments along axis 1 (the generated module of the issue)."""
    args = ", ".join(f"%a{k}: tensor<4x8xf32>" for k in range(count))
    names = ", ".join(f"%a{k}" for k in range(count))
    types = ", ".join(["tensor<4x8xf32>"] * count)
    result = f"tensor<4x{8 * count}xf32>"
    return (f"func.func @f({args}) -> {result} {{\n"
            f'  %0 = "graph.concat"({names}) {{axis = 1 : i64}} : ({types}) -> {result}\n'
            f"  return %0 : {result}\n}}\n")


def _op_counts(module: ir.Module) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in nested_ops(module):
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def _lowered(count: int) -> ir.Module:
    module = graphfuse.parse_module(_concat_text(count))
    lower_to_linalg(module, "<string>")
    return module


def test_long_concat_becomes_copies_into_one_buffer() -> None:
    """200 operands (in groups of CONCAT_GROUP after graph-to-linalg): one buffer, one copy per operand."""
    module = _lowered(200)
    assert _op_counts(module)["tensor.insert_slice"] > 200  # the groups' inserts too
    assert copy_long_concats(module) == 1
    module.operation.verify()
    counts = _op_counts(module)
    assert "tensor.insert_slice" not in counts and "tensor.empty" not in counts
    assert counts["bufferization.materialize_in_destination"] == 200 and counts["memref.subview"] == 200
    assert counts["memref.alloc"] == 1 and counts["bufferization.to_tensor"] == 1


def test_short_concat_keeps_its_insert_chain() -> None:
    """Up to CONCAT_GROUP operands the chain stays: empty-tensor elimination can compute an operand in place."""
    module = _lowered(CONCAT_GROUP)
    assert copy_long_concats(module) == 0
    assert _op_counts(module)["tensor.insert_slice"] == CONCAT_GROUP


@pytest.mark.parametrize("threads", [1, 2])
def test_long_concat_of_arguments_matches_numpy(threads: int) -> None:
    count = 300
    executable = graphfuse.compile(_concat_text(count), num_threads=threads)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(count)]
    (got,) = executable(*arrays)
    np.testing.assert_array_equal(got, np.concatenate(arrays, axis=1))
    assert not executable.function.workspace  # built in the output buffer, not copied there from one of its own


def test_long_concats_of_computed_and_concatenated_operands_match_numpy() -> None:
    """Operands computed by ops and used again after the concat, a concat inside a longer one (copied with it,
    at its offset), and the result read by two ops as well as returned."""
    b = graphfuse.GraphBuilder("f")
    xs = [b.arg((2, 3)) for _ in range(40)]
    exps = [b.exp(x) for x in xs]
    inner = b.concat(*xs[:20], axis=1)
    outer = b.concat(b.arg((2, 5)), inner, *exps, axis=1)
    weight = b.arg((5 + 60 + 120, 4))
    b.ret(outer, b.matmul(outer, weight), b.neg(exps[7]), b.reduce_sum(outer, axes=[1], keep_dims=False))
    executable = graphfuse.compile(b.module)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in executable.inputs]
    xs_in, head, w = inputs[:40], inputs[40], inputs[41]
    want = np.concatenate([head, *xs_in[:20], *[np.exp(x) for x in xs_in]], axis=1)
    got = executable(*inputs)
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_allclose(got[1], want @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[2], -np.exp(xs_in[7]), rtol=1e-6)
    np.testing.assert_allclose(got[3], want.sum(axis=1), rtol=1e-5)


@pytest.mark.slow
def test_concat_compile_time_grows_linearly() -> None:
    """4 times the operands, about 4 times the lowering to the LLVM dialect (the runtime's "bufferize" stage):
    before, one-shot bufferization's analysis of the insert chains took 0.66 s at 250 operands and 11.3 s at
    1,000 (17x); after, 0.34 s and 1.45 s."""
    seconds = {}
    for count in (250, 1000):
        executable = graphfuse.compile(_concat_text(count))
        seconds[count] = executable.timings["bufferize"]
        arrays = [np.full((4, 8), k, np.float32) for k in range(count)]
        np.testing.assert_array_equal(executable(*arrays)[0], np.concatenate(arrays, axis=1))
    assert seconds[1000] < 8 * seconds[250], seconds


def _computed_blocks_text(count: int, kinds: tuple[str, ...]) -> str:
    """``count`` 4x8 blocks, each a unary op (``kinds`` in turn) of an argument of its own, concatenated."""
    args = ", ".join(f"%a{k}: tensor<4x8xf32>" for k in range(count))
    body = "".join(f'  %b{k} = "graph.{kinds[k % len(kinds)]}"(%a{k}) : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
                   for k in range(count))
    names = ", ".join(f"%b{k}" for k in range(count))
    types = ", ".join(["tensor<4x8xf32>"] * count)
    result = f"tensor<4x{8 * count}xf32>"
    return (f"func.func @blocks({args}) -> {result} {{\n{body}"
            f'  %0 = "graph.concat"({names}) {{axis = 1 : i64}} : ({types}) -> {result}\n'
            f"  return %0 : {result}\n}}\n")


def test_the_blocks_of_a_long_concat_share_one_function() -> None:
    """300 blocks, each computed by a unary op of its own argument and written at its own column of the result:
    the loop nests differ only in the columns of their views, which outline-chunks passes as arguments, so
    LLVM compiles a handful of functions, not one per block; the results are the reference's."""
    count, kinds = 300, ("exp", "tanh", "neg", "abs")
    compiled = graphfuse.compile(_computed_blocks_text(count, kinds))
    functions = compiled.function.llvm_dialect_ir.count("llvm.func internal")
    assert 0 < functions <= 2 * len(kinds), functions
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((4, 8), dtype=np.float32) for _ in range(count)]
    (got,) = compiled(*inputs)
    (want,) = compiled.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.parametrize("count", [CONCAT_GROUP + 1, 300])
def test_computed_blocks_are_written_in_their_columns(count: int) -> None:
    """Each block is computed in its columns of the result (compute-in-copy-targets): no buffer of its own and
    no copy, so the entry has no workspace; special values (NaN, infinities, -0) come out as the reference's."""
    compiled = graphfuse.compile(_computed_blocks_text(count, ("exp", "neg", "abs", "sigmoid")))
    assert not compiled.function.workspace
    assert "memcpy" not in compiled.function.llvm_dialect_ir
    rng = np.random.default_rng(6)
    inputs = [rng.standard_normal((4, 8), dtype=np.float32) for _ in range(count)]
    inputs[0][0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    inputs[1][1, :4] = [np.nan, np.inf, -np.inf, -0.0]
    (got,) = compiled(*inputs)
    (want,) = compiled.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-30)
    assert np.array_equal(np.signbit(got), np.signbit(want))
