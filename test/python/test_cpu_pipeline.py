"""The CPU code generator replayed from text: graphfuse-opt runs the pipeline --print-cpu-pipeline prints on a
graph's linalg IR, and the result is the code graphfuse.compile made, computing the same bits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from mlir import ir

import graphfuse
from graphfuse.dialect.context import new_context
from graphfuse.lowering.codegen.cpu.lower import lowered_entry
from graphfuse.lowering.codegen.cpu.pipeline import parallel_loops
from graphfuse.lowering.host import default_threads
from graphfuse.lowering.runtime import jit_lowered

OPT = str(Path(sys.executable).parent / "graphfuse-opt")


def _graph() -> graphfuse.GraphBuilder:
    """A small graph touching the passes' decisions: a matmul (blocked), a boolean result (bytes), an
    intermediate (the arena)."""
    b = graphfuse.GraphBuilder("block")
    x, w, bias = b.arg((16, 32)), b.arg((24, 32)), b.arg((24,))
    h = b.gelu(b.bias_add(b.matmul(x, w, transpose_b=True), bias))
    b.ret(b.softmax(h, axis=-1), b.greater(h, b.neg(h)))
    return b


def test_graphfuse_opt_replays_the_compiled_code(tmp_path: Path) -> None:
    builder = _graph()
    executable = graphfuse.compile(builder.module)
    linalg_file = tmp_path / "linalg.mlir"
    linalg_file.write_text(executable.linalg)
    pipeline = subprocess.run([OPT, f"--print-cpu-pipeline={executable.entry}"], capture_output=True, text=True,
                              check=True, timeout=300).stdout.strip()
    lowered_text = subprocess.run([OPT, str(linalg_file), f"--pass-pipeline={pipeline}"], capture_output=True,
                                  text=True, timeout=600)
    assert lowered_text.returncode == 0, lowered_text.stderr

    context = new_context()
    with context:
        module = ir.Module.parse(lowered_text.stdout)
    lowered = lowered_entry(context, module, executable.entry, parallel_loops(default_threads())[1])
    # The same module the JIT compiled, once the pipeline's decisions are read off the entry.
    assert str(lowered.module) == executable.function.llvm_dialect_ir
    assert [(s.shape, s.dtype) for s in lowered.workspace] == [(w.shape, w.dtype)
                                                               for w in executable.function.workspace]
    replayed = jit_lowered(lowered, opt_level=2)

    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(np.float32) for shape in ((16, 32), (24, 32), (24,))]
    expected = executable(*inputs)
    got = replayed(*inputs)
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        assert mine.tobytes() == theirs.tobytes()


def test_each_pass_runs_by_name() -> None:
    """Every pass of the printed pipeline is a registered graphfuse pass or an upstream one graphfuse-opt knows."""
    listed = subprocess.run([OPT, "--list-passes"], capture_output=True, text=True, check=True, timeout=300).stdout
    for name in ("to-destination-passing-style", "hoist-allocations", "pack-arguments", "outline-chunks",
                 "hoist-stack-buffers", "store-booleans-as-bytes"):
        assert f"  {name}\n" in listed, name
