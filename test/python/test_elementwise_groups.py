"""Elementwise groups (lowering/elementwise_groups.py): random kernels of elementwise ops with fan-out, broadcasts
and row reductions, compiled whole and compared with the reference interpreter; static and dynamic rows."""

from __future__ import annotations

import random

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.dialect.context import load_graph_dialect, new_context
from graphfuse.lowering.compiler import default_pipeline
from graphfuse.lowering.elementwise_groups import merge_elementwise_groups
from graphfuse.lowering.kernels import is_kernel
from graphfuse.pipelines.runner import run_pipeline

COLS = 24
UNARY = ("tanh", "sigmoid", "neg", "abs", "sin")
BINARY = ("add", "mul", "sub", "maximum", "minimum")


def _random_kernel(seed: int, rows: int | None, size: int = 40) -> graphfuse.GraphBuilder:
    """A DAG of ``size`` ops over [rows, COLS] (None: rows known at run time): unary and binary ops whose
    operands are recent values or, now and then, old ones (fan-out, diamonds), row vectors and columns read
    through broadcasts, row sums and maxima broadcast back.  Values stay bounded (no exp)."""
    rng = random.Random(seed)
    b = graphfuse.GraphBuilder(f"kernel_{seed}")
    full = [b.arg((rows, COLS)), b.arg((rows, COLS))]
    row, col = b.arg((COLS,)), b.arg((rows, 1))
    values = list(full)
    for _ in range(size):
        roll = rng.random()
        x = values[-1] if rng.random() < 0.6 else rng.choice(values)
        if roll < 0.08:
            reduce = b.reduce_sum if rng.random() < 0.5 else b.reduce_max
            values.append(b.add(x, b.tanh(reduce(x, axes=[-1], keep_dims=True))))
        elif roll < 0.4:
            values.append(getattr(b, rng.choice(UNARY))(x))
        else:
            other = rng.choice([*values[-6:], rng.choice(values), row, col])
            values.append(getattr(b, rng.choice(BINARY))(x, other))
    b.ret(values[-1], values[len(values) // 2], values[-3])
    return b


def _inputs(rows: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, (rows, COLS)).astype(np.float32) for _ in range(2)] + [
        rng.uniform(-2, 2, COLS).astype(np.float32), rng.uniform(-2, 2, (rows, 1)).astype(np.float32)]


def _assert_matches(executable: graphfuse.Executable, inputs: list[np.ndarray]) -> None:
    got, want = executable(*inputs), executable.reference(*inputs)
    for k, (a, w) in enumerate(zip(got, want, strict=True)):
        scale = float(np.abs(w).max()) if w.size else 1.0
        np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-6 * max(scale, 1.0), err_msg=f"result {k}")


def _merged(module: ir.Module) -> int:
    """The generics merge_elementwise_groups merges in ``module``'s kernels after graph-to-linalg."""
    text = str(module)
    with new_context() as context:
        load_graph_dialect(context)
        copy = ir.Module.parse(text, context)
        run_pipeline(copy, default_pipeline(2))
        run_pipeline(copy, "builtin.module(graph-to-linalg)")
        return sum(merge_elementwise_groups(op.operation) for op in copy.body.operations if is_kernel(op.operation))


@pytest.mark.parametrize("seed", range(6))
def test_random_kernels_match_the_reference(seed: int) -> None:
    builder = _random_kernel(seed, 7)
    assert _merged(builder.module) > 0  # the groups were formed: this compares their code
    _assert_matches(graphfuse.compile(builder.module), _inputs(7, seed))


@pytest.mark.parametrize("seed", range(3))
def test_random_kernels_with_dynamic_rows_match_the_reference(seed: int) -> None:
    builder = _random_kernel(100 + seed, None)
    assert _merged(builder.module) > 0
    executable = graphfuse.compile(builder.module)
    for rows in (0, 1, 17):
        _assert_matches(executable, _inputs(rows, seed))


def test_a_ladder_of_diamonds_is_one_loop_nest() -> None:
    """Each step reads the previous value twice (and stays in [-1, 1]).  Upstream's fusion left every step a
    loop nest, which the row fusion then cloned 2^depth times before CSE; as a group it is one generic."""
    b = graphfuse.GraphBuilder("ladder")
    x = b.arg((8, COLS))
    for _ in range(24):
        x = b.mul(b.sin(x), b.tanh(x))
    b.ret(x)
    with new_context() as context:
        load_graph_dialect(context)
        module = ir.Module.parse(str(b.module), context)
        run_pipeline(module, default_pipeline(2))
        run_pipeline(module, "builtin.module(graph-to-linalg,fuse-kernel-loops)")
        text = str(module)
    assert text.count("linalg.generic") == 1, text
    _assert_matches(graphfuse.compile(b.module), [np.linspace(-1, 1, 8 * COLS, dtype=np.float32).reshape(8, COLS)])
