"""Row kernels in register-sized chunks (lowering/row_chunks.py): numerics at every vector width, and the rules.

The row schedules cut vectorized rows into chunks of ``chunk-vectors`` registers of ``vector-bits``; the
rest of a row is done in single registers and one narrower vector.  Row lengths below are chosen so that
each of those parts is present or absent at some width (37, 100, 129, 1000, 2049), and every result is
compared with the reference interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

import graphfuse
from graphfuse.lowering.compiler import LOWERING_PIPELINE, default_pipeline
from graphfuse.lowering.host import vector_bits_from_flags
from graphfuse.lowering.parallel import DEFAULT_MIN_ELEMENTS
from graphfuse.lowering.row_chunks import chunk_row_loops
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import run_pipeline


def _row_model(cols: int) -> tuple[graphfuse.GraphBuilder, list[np.ndarray]]:
    """Softmax, add + layer_norm, rms_norm, log_softmax, an integer row max, a row sum and rows scaled by a
    [rows, 1] operand (a broadcast read: the same in every chunk), in one graph."""
    rng = np.random.default_rng(cols)
    rows = 5
    b = graphfuse.GraphBuilder("rows")
    x, r, g, beta = b.arg((rows, cols)), b.arg((rows, cols)), b.arg((cols,)), b.arg((cols,))
    i = b.arg((2, rows, cols), "i32")
    scale = b.arg((rows, 1))
    s = b.add(x, r)
    broadcast = b.add(b.add(scale, g), beta)  # no full row among its operands
    b.ret(
        b.softmax(x, axis=-1),
        b.layer_norm(s, g, beta, begin_norm_axis=-1),
        b.rms_norm(s, g),
        b.log_softmax(r, axis=-1),
        b.sub(i, b.reduce_max(i, axes=[-1], keep_dims=True)),
        b.div(x, b.reduce_sum(b.abs(x), axes=[-1], keep_dims=True)),
        broadcast,
        b.div(x, b.reduce_sum(b.exp(broadcast), axes=[-1], keep_dims=True)),
    )
    inputs = [rng.normal(size=(rows, cols)).astype(np.float32) for _ in range(2)]
    inputs += [rng.normal(size=cols).astype(np.float32) for _ in range(2)]
    inputs.append(rng.integers(-1000, 1000, (2, rows, cols)).astype(np.int32))
    inputs.append(rng.normal(size=(rows, 1)).astype(np.float32))
    return b, inputs


def _lowering(row_options: str) -> str:
    """The lowering pipeline with ``row_options`` given to select-row-schedules."""
    assert LOWERING_PIPELINE.count("select-row-schedules,") == 1, LOWERING_PIPELINE
    return LOWERING_PIPELINE.replace("select-row-schedules,", f"select-row-schedules{{{row_options}}},")


def _lowered(cols: int, row_options: str) -> tuple[ir.Module, graphfuse.GraphBuilder, list[np.ndarray]]:
    """The row model of ``cols`` through the default pipeline and the lowering, select-row-schedules given
    ``row_options``."""
    builder, inputs = _row_model(cols)
    module = ir.Module.parse(str(builder.module), context=builder.module.context)
    run_pipeline(module, default_pipeline(2))
    run_pipeline(module, _lowering(row_options))
    return module, builder, inputs


def _assert_matches_the_reference(module: ir.Module, builder: graphfuse.GraphBuilder, inputs: list[np.ndarray]) -> None:
    got = compile_linalg(module, "rows")(*inputs)
    want = graphfuse.compile(builder.module).reference(*inputs)
    for k, (a, w) in enumerate(zip(got, want, strict=True)):
        if w.dtype.kind == "f":
            np.testing.assert_allclose(a, w, rtol=2e-5, atol=2e-6 * float(np.abs(w).max()), err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(a, w, err_msg=f"result {k}")


@pytest.mark.parametrize("bits", [128, 256, 512])
@pytest.mark.parametrize("cols", [37, 100, 129, 1000, 2049])
def test_chunked_rows_match_the_reference(bits: int, cols: int) -> None:
    module, builder, inputs = _lowered(cols, f"vector-bits={bits}")
    text = str(module)
    chunk = 4 * bits // 32
    if cols > chunk:
        assert f"vector<{chunk}xf32>" in text and f"vector<{cols}xf32>" not in text
    _assert_matches_the_reference(module, builder, inputs)


def test_whole_rows_when_chunking_is_off() -> None:
    builder, _ = _row_model(1000)
    module = ir.Module.parse(str(builder.module), context=builder.module.context)
    run_pipeline(module, default_pipeline(2))
    run_pipeline(module, _lowering("chunk-vectors=0"))
    assert "vector<1000xf32>" in str(module)


_ROW_BODY = """
func.func @f(%t: tensor<1x128xf32>, %u: tensor<128x1xf32>) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = ub.poison : f32
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %z) -> f32 {
    %v = vector.transfer_read %t[%c0, %c0], %p {in_bounds = [true, true]} : tensor<1x128xf32>, vector<1x128xf32>
    %e = vector.extract %v[0] : vector<128xf32> from vector<1x128xf32>
    %s = vector.reduction <add>, %e, %a : vector<128xf32> into f32
    scf.yield %s : f32
  }
  %q = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %z) -> f32 {
    %v = vector.transfer_read %u[%c0, %c0], %p {in_bounds = [true, true]} : tensor<128x1xf32>, vector<128x1xf32>
    %w = vector.transpose %v, [1, 0] : vector<128x1xf32> to vector<1x128xf32>
    %e = vector.extract %w[0] : vector<128xf32> from vector<1x128xf32>
    %s = vector.reduction <add>, %e, %a : vector<128xf32> into f32
    scf.yield %s : f32
  }
  return %r, %q : f32, f32
}
"""


def test_row_bodies_with_other_vector_ops_are_left_whole() -> None:
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(_ROW_BODY)
        messages: list[str] = []
        assert chunk_row_loops(module.operation, 512, 4, messages.append) == 1
        assert module.operation.verify()
        text = str(module)
    assert messages == ["row loop left whole: vector.transpose works on row vectors"]
    # the first loop: 128 = 2 chunks of 64 (the first initializes the accumulator, a one-trip loop adds the second)
    assert text.count("tensor<1x128xf32>, vector<1x64xf32>") == 2 and "vector.reduction <add>, %" in text
    assert "vector<1x128xf32>" in text and "vector.transpose" in text  # the second loop, as it was


@pytest.mark.parametrize(("flags", "machine", "bits"), [
    ({"sse2", "avx", "avx2", "avx512f"}, "x86_64", 512),
    ({"sse2", "avx", "avx2", "fma"}, "x86_64", 256),
    ({"sse2"}, "x86_64", 128),
    ({"fp", "asimd"}, "aarch64", 128),
    ({"avx512f"}, "aarch64", 128),
])
def test_vector_width_comes_from_the_cpu_flags(flags: set[str], machine: str, bits: int) -> None:
    assert vector_bits_from_flags(flags, machine) == bits


def _elementwise_model(shape: tuple[int, ...]) -> tuple[graphfuse.GraphBuilder, list[np.ndarray]]:
    """gelu(x * 2 + 1) (a long computation per element: two-vector chunks) and relu(x) * y (a short one)."""
    rng = np.random.default_rng(len(shape))
    b = graphfuse.GraphBuilder("elementwise")
    x, y = b.arg(shape), b.arg(shape)
    b.ret(b.gelu(b.add(b.mul(x, b.const(np.float32(2.0))), b.const(np.float32(1.0))), approximate="tanh"),
          b.mul(b.relu(x), y))
    return b, [rng.normal(size=shape).astype(np.float32) for _ in range(2)]


@pytest.mark.parametrize("bits", [128, 256, 512])
@pytest.mark.parametrize("shape", [(300, 1000), (7, 4096), (3, 4096), (100003,), (131072,)])
def test_elementwise_rows_match_the_reference(bits: int, shape: tuple[int, ...]) -> None:
    builder, inputs = _elementwise_model(shape)
    module = ir.Module.parse(str(builder.module), context=builder.module.context)
    run_pipeline(module, default_pipeline(2))
    run_pipeline(module, _lowering(f"vector-bits={bits}"))
    text = str(module)
    lanes = bits // 32
    # tiled by rows, in parallel from DEFAULT_MIN_ELEMENTS (and vectorized in two host vectors: the gelu is long)
    assert ("scf.forall" in text) == (int(np.prod(shape)) >= DEFAULT_MIN_ELEMENTS) and "scf.for " in text
    assert f"vector<{2 * lanes}xf32>" in text or f"vector<1x{2 * lanes}xf32>" in text
    compiled = compile_linalg(module, "elementwise")
    got = compiled(*inputs)
    assert not compiled.workspace  # a 1-D kernel's rows write into the result itself, no intermediate
    want = graphfuse.compile(builder.module).reference(*inputs)
    for k, (a, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(a, w, rtol=2e-6, atol=2e-6 * float(np.abs(w).max()), err_msg=f"result {k}")


def test_a_row_computation_with_reuse_is_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each value of a row is visited once per chunk width, however often it is reused.

    A 40-step "Fibonacci" DAG (each value the sum of the two before it) is one elementwise row kernel;
    walked as a tree, its values would be visited about 2^40 times.  The walk is counted, and stopped
    (failing the test) long before that.
    """
    from graphfuse.lowering import row_chunks

    calls = 0
    hoist = row_chunks._Chunker._hoist

    def counted(self, value, width):
        nonlocal calls
        calls += 1
        assert calls < 100_000, "the row computation is walked as a tree"
        return hoist(self, value, width)

    monkeypatch.setattr(row_chunks._Chunker, "_hoist", counted)
    b = graphfuse.GraphBuilder("fibonacci")
    x = b.arg((16, 1024))
    previous, current = x, b.tanh(x)
    for _ in range(40):
        previous, current = current, b.add(current, previous)
    b.ret(current)
    module = ir.Module.parse(str(b.module), context=b.module.context)
    run_pipeline(module, default_pipeline(2))
    run_pipeline(module, LOWERING_PIPELINE)
    assert 0 < calls < 1000
    inputs = [np.random.default_rng(0).normal(size=(16, 1024)).astype(np.float32)]
    (got,) = compile_linalg(module, "fibonacci")(*inputs)
    (want,) = graphfuse.compile(b.module).reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def test_a_long_chain_over_chunked_rows_compiles() -> None:
    """A row computation thousands of ops deep (a long elementwise chain over rows that are chunked) is walked
    without recursion: it was an internal error, Python's recursion limit, beyond about a thousand row ops."""
    b = graphfuse.GraphBuilder("deep")
    x, w = b.arg((4, 256)), b.arg((256,))
    value = x
    for _ in range(200):
        value = b.sub(b.tanh(value), b.mul(value, w))
    b.ret(value)
    rng = np.random.default_rng(3)
    inputs = [rng.normal(size=(4, 256)).astype(np.float32), (0.5 * rng.random(256)).astype(np.float32)]
    compiled = graphfuse.compile(b.module)
    (got,) = compiled(*inputs)
    (want,) = compiled.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("max_row", [256, 4096])
def test_rows_longer_than_max_row_are_chunked(max_row: int) -> None:
    """Rows past max-row are vectorized when every row body is cut into chunks (no whole-row vector left)."""
    module, builder, inputs = _lowered(1000, f"vector-bits=256 max-row={max_row}")
    text = str(module)
    assert "vector<32xf32>" in text and "vector<1000xf32>" not in text
    _assert_matches_the_reference(module, builder, inputs)


def test_long_rows_stay_scalar_when_a_row_body_is_left_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row body the chunks cannot cut keeps its whole-row vectors: past max-row, the copy of the kernel so
    vectorized is dropped and the rows are tiled without vectors."""
    from graphfuse.lowering import row_fusion

    monkeypatch.setattr(row_fusion, "chunk_row_loops", lambda *args, **kwargs: 0)
    module, builder, inputs = _lowered(300, "max-row=256")
    text = str(module)
    assert "vector<" not in text and text.count("func.func") == str(builder.module).count("func.func")
    _assert_matches_the_reference(module, builder, inputs)


def test_rows_too_long_for_a_stack_stash() -> None:
    """softmax over rows of 70,001 floats (a vocabulary's logits): the exp is computed again in the write loop
    rather than stashed (280 KB would not fit a stack buffer), and the kernel compiles and is right."""
    from graphfuse.lowering.codegen.cpu.stack_loop_buffers import STACK_BUFFER_MAX_BYTES
    from graphfuse.lowering.row_chunks import STASH_MAX_BYTES

    assert STASH_MAX_BYTES <= STACK_BUFFER_MAX_BYTES
    cols = STASH_MAX_BYTES // 4 + 4465
    b = graphfuse.GraphBuilder("logits")
    b.ret(b.softmax(b.arg((2, cols)), axis=-1))
    x = np.random.default_rng(3).normal(scale=4.0, size=(2, cols)).astype(np.float32)
    (got,) = graphfuse.compile(b.module)(x)
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-12)
