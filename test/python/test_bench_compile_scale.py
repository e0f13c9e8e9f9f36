"""bench.compile_scale's machinery on tiny graphs (untimed): the generators give valid graphs that compile and run."""

from __future__ import annotations

import numpy as np
import pytest

import graphfuse
from bench import compile_scale
from graphfuse.dialect.context import make_context
from graphfuse.dialect.parsing import parse_module


@pytest.mark.parametrize("family", sorted(compile_scale.FAMILIES))
def test_generated_graphs_compile_and_run(family: str) -> None:
    text, ops = compile_scale.FAMILIES[family](60, seed=1)
    module = parse_module(text, family, make_context())
    body = module.body.operations[0].regions[0].blocks[0]
    assert len(body.operations) - 1 == ops >= 50  # every op but the return is counted
    executable = graphfuse.compile(text)
    assert executable.kernels > 0
    assert {"parse", "graph", "lowering", "bufferize", "llvm"} <= set(executable.timings)
    rng = np.random.default_rng(0)
    results = executable(*(rng.standard_normal(shape, dtype=np.float32) for shape, _ in executable.inputs))
    assert [r.shape for r in results] == [shape for shape, _ in executable.outputs]


def test_generators_are_deterministic_and_sized() -> None:
    assert compile_scale.random_dag(300, 3) == compile_scale.random_dag(300, 3)
    assert compile_scale.chain(300, 3)[1] == 300
    _, ops = compile_scale.random_dag(2000, 0)
    assert 2000 <= ops < 2400


def test_table_reports_errors_targets_and_memory() -> None:
    baseline = compile_scale.Case("baseline", 0, peak_rss=200 << 20, cpu_s=0.5)
    done = compile_scale.Case("chain", 5000, ops=5000, kernels=300, compile_s=8.0, peak_rss=400 << 20, cpu_s=9.0,
                              stages={"graph": 1.0, "llvm": 4.0}, warm_s=0.02, warm="loaded")
    failed = compile_scale.Case("random", 50000, peak_rss=900 << 20, error="timeout")
    memory = compile_scale.MemoryCase(1000, 12000, peak_rss=30000, seconds=1.0)
    text = compile_scale.table([done, failed], baseline, memory)
    assert "| chain | 5000 | 300 | 8.00 | 1.60 | 8.5 | 1.00 | - | - | 4.00 | 400 | 41.0 | 0.020 (loaded) |" in text
    assert "| random | ~50000 | | timeout |" in text
    assert "chain of 5000 ops < 5 s: 8.0 s, missed" in text and "random of 50000 ops < 60 s: timeout" in text
    assert "2.50x inputs + output" in text
