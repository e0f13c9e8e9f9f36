"""Streaming stores (lowering/streaming.py): which stores become non-temporal, at which alignment, and results.

The rewrite runs on the bufferized entry.  A store into a result buffer is streamed when its loop nest's
buffers exceed the threshold, its address alignment is proven to be at least 16 bytes, and the nest does
not read that buffer back; the alignment comes from the row stride and the chunk offsets.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.lowering.streaming import prefetch_next_rows, stream_large_stores

_NEST = """
!row = memref<1xCOLSxf32, strided<[COLS, 1], offset: ?>>
func.func @f(%x: memref<8xCOLSxf32>, %out: memref<8xCOLSxf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %start = arith.constant START : index
  %end = arith.constant END : index
  %step = arith.constant STEP : index
  %p = ub.poison : f32
  scf.for %r = %c0 to %c8 step %c1 {
    %row = memref.subview %out[%r, 0] [1, COLS] [1, 1] : memref<8xCOLSxf32> to !row
    %in = memref.subview %x[%r, 0] [1, COLS] [1, 1] : memref<8xCOLSxf32> to !row
    scf.for %j = %start to %end step %step {
      %v = vector.transfer_read %SOURCE[%c0, %j], %p {in_bounds = [true, true]} : !row, vector<1x16xf32>
      vector.transfer_write %v, %row[%c0, %j] {in_bounds = [true, true]} : vector<1x16xf32>, !row
    }
  }
  return
}
"""


def _rewritten(rewrite, cols: int = 1024, start: int = 0, step: int = 16, source: str = "in") -> str:
    """``rewrite(func, (input, result))``'s count and the verified module, for the row nest above."""
    text = (_NEST.replace("COLS", str(cols)).replace("START", str(start)).replace("END", str(cols - cols % 16))
            .replace("STEP", str(step)).replace("SOURCE", source))
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        func = module.body.operations[0]
        count = rewrite(func, list(func.regions[0].blocks[0].arguments))
        assert module.operation.verify()
        return f"{count} {module}"


def _stream(cols: int, start: int = 0, step: int = 16, source: str = "in", min_bytes: int = 0) -> str:
    return _rewritten(lambda func, args: stream_large_stores(func, [args[1]], min_bytes), cols, start, step, source)


@pytest.mark.parametrize(("cols", "start", "alignment"), [
    (1024, 0, 64),  # rows of 4096 bytes, chunks of 16 floats: every store on a 64-byte boundary
    (1000, 0, 32),  # rows of 4000 bytes start on 32-byte boundaries only
    (1000, 8, 32),
    (1028, 0, 16),
    (1024, 4, 16),  # chunks 16 bytes into the row: stored as four 16-byte non-temporal stores
])
def test_aligned_stores_into_results_are_streamed(cols: int, start: int, alignment: int) -> None:
    text = _stream(cols, start)
    assert text.startswith("1 ")
    assert "vector.store %" in text and "nontemporal = true" in text
    assert f"alignment = {alignment} : i64" in text and "vector.transfer_write" not in text


@pytest.mark.parametrize(("cols", "start", "step", "source", "min_bytes", "why"), [
    (1001, 0, 16, "in", 0, "rows of 4004 bytes: only 4-byte alignment is proven"),
    (1024, 1, 16, "in", 0, "chunks start 4 bytes into the row"),
    (1024, 2, 16, "in", 0, "chunks start 8 bytes into the row"),
    (1024, 0, 16, "row", 0, "the nest reads the result buffer back: it stays cached"),
    (1024, 0, 16, "in", 1 << 30, "the nest's buffers are below the threshold"),
])
def test_other_stores_stay_normal(cols: int, start: int, step: int, source: str, min_bytes: int, why: str) -> None:
    text = _stream(cols, start, step, source, min_bytes)
    assert text.startswith("0 ") and "vector.transfer_write" in text, why


def _prefetched(min_bytes: int) -> str:
    return _rewritten(lambda func, args: prefetch_next_rows(func, [args[0]], min_bytes))


def test_large_row_loops_prefetch_the_next_row() -> None:
    """One prefetch per 64-byte line of the input row, in the next row (the last row clamped)."""
    text = _prefetched(0)
    assert text.startswith("1 ")
    assert text.count("memref.prefetch %arg0[") == 1  # 16 floats per chunk: one line
    assert "arith.minsi" in text and "arith.constant 7 : index" in text
    assert "memref.prefetch %arg1" not in text  # the result buffer is not prefetched


def test_small_row_loops_do_not_prefetch() -> None:
    text = _prefetched(1 << 30)
    assert text.startswith("0 ") and "memref.prefetch" not in text


def _layer_norm(rows: int, cols: int) -> tuple[graphfuse.GraphBuilder, list[np.ndarray]]:
    rng = np.random.default_rng(1)
    b = graphfuse.GraphBuilder("add_layer_norm")
    x, r, g, beta = b.arg((rows, cols)), b.arg((rows, cols)), b.arg((cols,)), b.arg((cols,))
    b.ret(b.layer_norm(b.add(x, r), g, beta, begin_norm_axis=-1))
    return b, [rng.normal(size=s).astype(np.float32) for s in [(rows, cols)] * 2 + [(cols,)] * 2]


_SCRIPT = """
import numpy as np, sys
sys.path.insert(0, {test_dir!r})
from test_streaming import _layer_norm
builder, inputs = _layer_norm(300, 1000)
import graphfuse
exe = graphfuse.compile(builder.module, num_threads=2)
assert exe.function.streamed_stores > 0, exe.function.streamed_stores
want = exe.reference(*inputs)[0]
misaligned = np.empty(300 * 1000 + 1, np.float32)[1:].reshape(300, 1000)  # 4 bytes past an aligned start
for out in (None, exe.empty_outputs(), [misaligned]):
    got = exe(*inputs, out=out)[0]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
assert np.array_equal(misaligned, got)
print("ok")
"""


def test_streamed_results_match_with_any_out_buffer(tmp_path) -> None:
    """Threshold 0 streams every eligible store; results, also into a misaligned out= array, are right."""
    import os
    from pathlib import Path

    env = dict(os.environ, GRAPHFUSE_STREAM_MIN_BYTES="0")
    script = _SCRIPT.format(test_dir=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_a_bad_threshold_is_a_clean_error(monkeypatch) -> None:
    monkeypatch.setenv("GRAPHFUSE_STREAM_MIN_BYTES", "lots")
    builder, _ = _layer_norm(4, 32)
    with pytest.raises(graphfuse.GraphfuseError, match="GRAPHFUSE_STREAM_MIN_BYTES must be a number of bytes"):
        graphfuse.compile(builder.module)


def _entry_block_and_scoped_allocas(llvm_text: str) -> tuple[int, int, int]:
    """(row-sized f32 allocas in a function's entry block, in a stack save/restore scope, elsewhere)."""
    entry = scoped = other = 0
    in_entry, depth = False, 0
    for line in llvm_text.splitlines():
        text = line.strip()
        if text.startswith("llvm.func"):
            in_entry, depth = True, 0
        elif text.startswith("^bb"):
            in_entry = False
        if "llvm.intr.stacksave" in text:
            depth += 1
        elif "llvm.intr.stackrestore" in text:
            depth -= 1
        if "llvm.alloca" in text and "x f32" in text:
            if depth > 0:
                scoped += 1
            elif in_entry:
                entry += 1
            else:
                other += 1
    return entry, scoped, other


@pytest.mark.parametrize("threads", [1, 2])
def test_softmax_stashes_its_exp_in_a_stack_row_and_streams_its_result(threads: int, monkeypatch) -> None:
    """Softmax's exp, kept from the sum's loop for the write's, goes to a row-sized stack buffer.

    Not into the result row: its stores are then streamed.  The buffer must not grow the stack per row:
    on one thread it sits in the entry block of the loop nest's function, on two inside the parallel loop
    body's stack save/restore (one per row of each thread).
    """
    rows, cols = 512, 1000
    b = graphfuse.GraphBuilder("softmax")
    b.ret(b.softmax(b.arg((rows, cols)), axis=-1))
    x = np.random.default_rng(0).normal(size=(rows, cols)).astype(np.float32) * 4
    monkeypatch.setenv("GRAPHFUSE_STREAM_MIN_BYTES", "0")
    exe = graphfuse.compile(b.module, num_threads=threads)
    assert exe.function.streamed_stores > 0 and not exe.function.workspace
    entry, scoped, other = _entry_block_and_scoped_allocas(exe.function.llvm_dialect_ir)
    assert (entry, scoped, other) == ((1, 0, 0) if threads == 1 else (0, 1, 0))
    np.testing.assert_allclose(exe(x)[0], exe.reference(x)[0], rtol=2e-5, atol=1e-7)


_TWO_PASSES = """
!row = memref<1x1024xf32, strided<[1024, 1], offset: ?>>
func.func @f(%x: memref<8x1024xf32>, %out: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %p = ub.poison : f32
  scf.for %r = %c0 to %c8 step %c1 {
    %row = memref.subview %out[%r, 0] [1, 1024] [1, 1] : memref<8x1024xf32> to !row
    %in = memref.subview %x[%r, 0] [1, 1024] [1, 1] : memref<8x1024xf32> to !row
    scf.for %j = %c0 to %c1024 step %c16 {
      %v = vector.transfer_read %in[%c0, %j], %p {in_bounds = [true, true]} : !row, vector<1x16xf32>
      %a = arith.mulf %v, %v : vector<1x16xf32>
      %b = arith.mulf %a, %v : vector<1x16xf32>
      %c = arith.mulf %b, %v : vector<1x16xf32>
      %d = arith.mulf %c, %v : vector<1x16xf32>
      vector.transfer_write %d, %row[%c0, %j] {in_bounds = [true, true]} : vector<1x16xf32>, !row
    }
    scf.for %k = %c0 to %c1024 step %c16 {
      %w = vector.transfer_read %row[%c0, %k], %p {in_bounds = [true, true]} : !row, vector<1x16xf32>
      vector.transfer_write %w, %row[%c0, %k] {in_bounds = [true, true]} : vector<1x16xf32>, !row
    }
  }
  return
}
"""


def test_prefetches_go_into_the_pass_with_the_most_work() -> None:
    """Of two chunk loops over the row, the one doing more per element gets the prefetches (even when first)."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(_TWO_PASSES)
        func = module.body.operations[0]
        assert prefetch_next_rows(func, [func.regions[0].blocks[0].arguments[0]], 0) == 1
        assert module.operation.verify()
        text = str(module)
    first = text.index("arith.mulf")  # in the first loop
    second = text.index("scf.for", first)
    assert text.index("scf.for") < text.index("memref.prefetch") < second
