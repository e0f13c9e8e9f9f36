"""graphfuse.compile: fuse, lower and run whole graphs; same results as the reference interpreter."""

from __future__ import annotations

import re

import numpy as np
import pytest

import graphfuse
from graphfuse import GraphfuseError
from graphfuse.tools.models import MODELS, model_inputs


def _elementwise_module():
    b = graphfuse.GraphBuilder("f")
    x, y = b.arg((8, 16)), b.arg((16,))
    s = b.add(x, y)
    b.ret(b.mul(b.gelu(s, approximate="tanh"), b.sigmoid(s)), b.greater(s, b.const(np.float32(0.0))))
    return b.module


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_every_opt_level_matches_the_interpreter(opt_level: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=16).astype(np.float32)
    executable = graphfuse.compile(_elementwise_module(), opt_level=opt_level)
    got = executable(x, y)
    want = executable.reference(x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(got[1], want[1])


def test_fused_has_fewer_loop_nests_than_unfused() -> None:
    unfused = graphfuse.compile(_elementwise_module(), opt_level=0)
    fused = graphfuse.compile(_elementwise_module(), opt_level=2)
    assert fused.kernels >= 1 and unfused.kernels == 0
    assert fused.linalg.count("linalg.generic") <= unfused.linalg.count("linalg.generic")


def test_cached_per_module_and_options() -> None:
    module = _elementwise_module()
    assert graphfuse.compile(module, opt_level=2) is graphfuse.compile(module, opt_level=2)
    assert graphfuse.compile(module, opt_level=2) is not graphfuse.compile(module, opt_level=0)


def test_flags_and_pipeline_text() -> None:
    module = _elementwise_module()
    flagged = graphfuse.compile(module, graph_kernel_flags="--opt_level=0")
    assert flagged.kernels == 0
    custom = graphfuse.compile(module, pipeline="builtin.module(graph-canonicalize)")
    assert custom.pipeline == "builtin.module(graph-canonicalize)"
    with pytest.raises(GraphfuseError, match="either pipeline= or opt_level="):
        graphfuse.compile(module, pipeline="builtin.module(graph-dce)", opt_level=1)


def test_source_as_text_and_path(tmp_path) -> None:
    text = str(_elementwise_module())
    path = tmp_path / "model.mlir"
    path.write_text(text)
    x, y = np.ones((8, 16), np.float32), np.ones(16, np.float32)
    a = graphfuse.compile(text)(x, y)
    b = graphfuse.compile(path)(x, y)
    np.testing.assert_array_equal(a[0], b[0])


def test_call_time_errors() -> None:
    executable = graphfuse.compile(_elementwise_module())
    with pytest.raises(GraphfuseError, match=r"argument 0: expected dtype float32"):
        executable(np.ones((8, 16), np.float64), np.ones(16, np.float32))
    with pytest.raises(GraphfuseError, match=r"argument 1: expected shape \(16,\)"):
        executable(np.ones((8, 16), np.float32), np.ones(15, np.float32))
    with pytest.raises(GraphfuseError, match=r"expected 2 argument"):
        executable(np.ones((8, 16), np.float32))


def test_missing_entry_and_bad_pipeline() -> None:
    module = _elementwise_module()
    with pytest.raises(GraphfuseError, match="no function named 'g'"):
        graphfuse.compile(module, entry="g")
    with pytest.raises(GraphfuseError, match="no-such-pass"):
        graphfuse.compile(module, pipeline="builtin.module(no-such-pass)")


def test_intermediates_reuse_one_workspace() -> None:
    """Intermediate buffers are allocated once per compiled function, not per call."""
    executable = graphfuse.compile(_elementwise_module(), opt_level=0)
    workspace = executable.function.workspace
    assert workspace, "the unfused graph has intermediates"
    before = [w.ctypes.data for w in workspace]
    x, y = np.ones((8, 16), np.float32), np.ones(16, np.float32)
    executable(x, y)
    executable(x, y)
    assert [w.ctypes.data for w in executable.function.workspace] == before


def test_intermediates_share_the_workspace_when_their_lifetimes_do_not_overlap() -> None:
    """An unfused chain of 12 ops has 11 intermediates; two are live at a time, so two buffers' bytes suffice."""
    b = graphfuse.GraphBuilder("chain")
    x, w = b.arg((64, 64)), b.arg((64, 64))
    value = x
    for k in range(12):
        value = b.add(value, w) if k % 2 else b.tanh(value)
    b.ret(value)
    executable = graphfuse.compile(b.module, opt_level=0)
    (arena,) = executable.function.workspace
    assert arena.nbytes <= 2 * 64 * 64 * 4
    assert arena.ctypes.data % 64 == 0
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2)]
    np.testing.assert_allclose(executable(*inputs)[0], executable.reference(*inputs)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("opt_level", [0, 2])
def test_bundled_models(name: str, opt_level: int) -> None:
    module = MODELS[name]().module
    inputs = model_inputs(name)
    executable = graphfuse.compile(module, opt_level=opt_level)
    got = executable(*inputs)
    want = executable.reference(*inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(w).max())))


def test_enable_debug_mode_names_the_kernel_producing_nan() -> None:
    """--enable_debug_mode: a NaN in a result is an error naming the kernel that first produced it."""
    b = graphfuse.GraphBuilder("f")
    x = b.arg((4, 8))
    y = b.sqrt(b.sub(b.mul(x, x), b.const(np.float32(1.0))))  # NaN where |x| < 1
    b.ret(b.add(b.exp(y), y))
    module = b.module
    ok = np.full((4, 8), 2.0, np.float32)
    bad = ok.copy()
    bad[1, 2] = 0.5
    plain = graphfuse.compile(module)
    assert not plain.debug and np.isnan(plain(bad)[0]).sum() == 1  # without debug mode the NaN is returned
    debug = graphfuse.compile(module, graph_kernel_flags="--enable_debug_mode")
    assert debug.debug and debug.kernels >= 1
    debug(ok)
    with pytest.raises(
        GraphfuseError,
        match=r"enable_debug_mode: @f result 0: 1 NaN, 0 Inf; first produced by "
        r"kernel @f_kernel_0 output \d+ from finite inputs",
    ) as raised:
        debug(bad)
    # a located note per source op the kernel runs
    notes = raised.value.diagnostics[0].notes
    wanted = {f"kernel @f_kernel_0 runs this graph.{name}" for name in ("sqrt", "exp")}
    assert {n.message for n in notes} >= wanted


#: A kernel (mul + exp), an op no kernel takes at -O1 (matmul), and a lone op after it: three launches.
DEBUG_CHAIN = """func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %c = arith.constant dense<2.0> : tensor<4x8xf32>
  %0 = "graph.mul"(%a, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.exp"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "graph.matmul"(%1, %b) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %3 = "graph.log"(%2) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %3, %a : tensor<4x3xf32>, tensor<4x8xf32>
}"""


def test_enable_debug_mode_runs_launch_by_launch(caplog: pytest.LogCaptureFixture) -> None:
    """Each kernel, and each op no kernel took, is its own compiled launch, run in order and logged before it runs."""
    debug = graphfuse.compile(DEBUG_CHAIN, opt_level=1, graph_kernel_flags="--enable_debug_mode")
    names = [launch.name for launch in debug.launcher.launches]
    assert names == ["kernel @f_kernel_0", "'graph.matmul' at <string>:5:8", "'graph.log' at <string>:6:8"]
    rng = np.random.default_rng(0)
    a, b = rng.random((4, 8), np.float32), rng.random((8, 3), np.float32)
    with caplog.at_level("DEBUG", logger="graphfuse"):
        got = debug(a, b)
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("enable_debug_mode: launch")]
    assert logged == [
        "enable_debug_mode: launch 1 of 3: kernel @f_kernel_0, inputs tensor<4x8xf32>",
        "enable_debug_mode: launch 2 of 3: 'graph.matmul' at <string>:5:8, inputs tensor<4x8xf32>, tensor<8x3xf32>",
        "enable_debug_mode: launch 3 of 3: 'graph.log' at <string>:6:8, inputs tensor<4x3xf32>",
    ]
    want = graphfuse.compile(DEBUG_CHAIN, opt_level=1)(a, b)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_array_equal(got[1], a)  # an argument returned as it is: no launch
    out = debug.empty_outputs()
    assert debug(a, b, out=out) is not None and np.allclose(out[0], want[0], rtol=1e-6)
    with pytest.raises(GraphfuseError, match=r"@f: argument 1: expected shape \(8, 3\)"):
        debug(a, a)


def test_enable_debug_mode_reports_a_failed_launch() -> None:
    """A launch that raises is reported with its position, its kernel, its inputs, and notes locating its ops."""
    debug = graphfuse.compile(DEBUG_CHAIN, opt_level=1, graph_kernel_flags="--enable_debug_mode")

    def failing(*arrays: np.ndarray) -> list[np.ndarray]:
        raise GraphfuseError("cannot allocate 40 GB")

    debug.launcher._compiled[0] = failing  # what a launch whose runtime refuses it looks like
    with pytest.raises(GraphfuseError) as raised:
        debug(np.ones((4, 8), np.float32), np.ones((8, 3), np.float32))
    error = raised.value.diagnostics[0]
    assert error.message == ("enable_debug_mode: @f: launch 1 of 3 failed: kernel @f_kernel_0, inputs "
                             "tensor<4x8xf32>: error: cannot allocate 40 GB")
    assert [(str(n.location), n.message) for n in error.notes] == [
        ("<string>:3:8", "kernel @f_kernel_0 runs this graph.mul"),
        ("<string>:4:8", "kernel @f_kernel_0 runs this graph.exp"),
    ]


def test_enable_debug_mode_dynamic_shapes() -> None:
    """Dynamic dimensions are sized per launch; Inf carried through a kernel is not blamed on it."""
    text = """func.func @g(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = "graph.relu"(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.tanh"(%0) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1, %0 : tensor<?x8xf32>, tensor<?x8xf32>
}"""
    debug = graphfuse.compile(text, graph_kernel_flags="--enable_debug_mode")
    for rows in (5, 9):
        x = np.linspace(-1, 1, rows * 8, dtype=np.float32).reshape(rows, 8)
        got = debug(x)
        np.testing.assert_allclose(got[0], np.tanh(np.maximum(x, 0)), rtol=1e-6)
    x[2, 3] = np.inf  # tanh turns it finite: result 0 stays finite, result 1 (relu) is Inf
    with pytest.raises(GraphfuseError, match=r"^error: enable_debug_mode: @g result 1: 0 NaN, 1 Inf; first produced by "
                                             r"kernel @g_kernel_0 output \d \(its inputs already were not finite\)$"):
        debug(x)


def test_enable_debug_mode_blames_an_input_returned_as_it_is() -> None:
    text = """func.func @h(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "graph.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %x : tensor<4xf32>, tensor<4xf32>
}"""
    debug = graphfuse.compile(text, graph_kernel_flags="--enable_debug_mode")
    x = np.array([1, np.nan, 2, 3], np.float32)
    with pytest.raises(GraphfuseError, match=r"^error: enable_debug_mode: @h result 1: 1 NaN, 0 Inf; "
                                             r"no launch produced them: they come from input 0$"):
        debug(x, np.ones(4, np.float32))


def test_enable_debug_mode_launches_a_call_whole() -> None:
    """A call of one of the module's own functions is one launch, its callee compiled beside it."""
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "graph.log"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    debug = graphfuse.compile(text, graph_kernel_flags="--enable_debug_mode")
    assert [launch.name for launch in debug.launcher.launches] == [
        "call of @helper at <string>:2:8", "'graph.log' at <string>:3:8"]
    x = np.array([-1, -2, -3, -4], np.float32)
    np.testing.assert_allclose(debug(x)[0], np.log(-x), rtol=1e-6)


def test_enable_debug_mode_on_the_npu_warns(caplog: pytest.LogCaptureFixture) -> None:
    from graphfuse.lowering.npu.compiler import compile_npu

    with caplog.at_level("WARNING", logger="graphfuse"):
        compile_npu(DEBUG_CHAIN, graph_kernel_flags="--enable_debug_mode")
    assert any("enable_debug_mode applies to the CPU backend" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------
# Empty tensors (a zero-size dimension): graph-fold-empty-tensors takes them out of the graph before it is compiled.


def _empty_arguments_and_results():
    """An empty argument returned as it is and through elementwise ops and a softmax, next to a non-empty result."""
    b = graphfuse.GraphBuilder("f")
    x, y = b.arg((0, 8)), b.arg((8,))
    b.ret(x, b.softmax(b.add(x, y), axis=-1), b.exp(y), b.layer_norm(x, y, y))
    return b.module


def _concat_with_empty_operands():
    b = graphfuse.GraphBuilder("f")
    x, e, y = b.arg((4, 3)), b.arg((0, 3)), b.arg((2, 3))
    b.ret(b.concat(x, e, axis=0), b.concat(e, x, y, y, axis=0), b.concat(y, x, e, e, axis=0))
    return b.module


def _reductions_over_empty_axes():
    """A sum over nothing is 0, a mean NaN (PyTorch's values); integers too, and a result computed on further."""
    b = graphfuse.GraphBuilder("f")
    x, i = b.arg((3, 0, 4)), b.arg((0, 5), "i32")
    total = b.reduce_sum(x, axes=[1])
    b.ret(total, b.reduce_mean(x, axes=[1], keep_dims=True), b.reduce_sum(i, axes=[0]),
          b.reduce_sum(x, axes=[0, 1, 2]), b.add(total, b.const(np.float32(1))))
    return b.module


def _matmuls_with_an_empty_contraction():
    """K = 0: zeros, batched too; a fused bias after it adds to the zeros."""
    b = graphfuse.GraphBuilder("f")
    a, w, q, k, bias = b.arg((4, 0)), b.arg((0, 6)), b.arg((2, 3, 0)), b.arg((2, 5, 0)), b.arg((6,))
    b.ret(b.matmul(a, w), b.matmul(q, k, transpose_b=True), b.matmul_bias_add(a, w, bias), b.relu(b.matmul(a, w)))
    return b.module


def _empty_slice_concatenated_back():
    """Phi-3's partial rotary embedding with the whole head rotated: the pass-through part is an empty slice."""
    b = graphfuse.GraphBuilder("f")
    x = b.arg((2, 4, 8))
    rotated = b.slice(x, start=[0, 0, 0], limit=[2, 4, 8])
    passed = b.slice(x, start=[0, 0, 8], limit=[2, 4, 8])
    b.ret(b.concat(b.neg(rotated), b.exp(passed), axis=-1))
    return b.module


def _split_with_empty_pieces():
    b = graphfuse.GraphBuilder("f")
    x = b.arg((4, 8))
    first, empty, last = b.split(x, axis=1, sizes=[3, 0, 5])
    _, whole = b.split(x, axis=0, sizes=[0, 4])
    b.ret(b.exp(first), empty, b.neg(last), b.add(whole, b.const(np.float32(1))))
    return b.module


def _derived_op_over_an_empty_and_a_full_operand():
    """square_sum_all is defined by its expansion: expanded, the sum over nothing folds and the other stays."""
    b = graphfuse.GraphBuilder("f")
    x, y = b.arg((0, 8)), b.arg((4, 8))
    b.ret(*b.square_sum_all(x, y))
    return b.module


EMPTY_TENSOR_GRAPHS = {
    "empty-arguments-and-results": _empty_arguments_and_results,
    "concat-with-empty-operands": _concat_with_empty_operands,
    "reductions-over-empty-axes": _reductions_over_empty_axes,
    "matmuls-with-an-empty-contraction": _matmuls_with_an_empty_contraction,
    "empty-slice-concatenated-back": _empty_slice_concatenated_back,
    "split-with-empty-pieces": _split_with_empty_pieces,
    "derived-op-over-an-empty-and-a-full-operand": _derived_op_over_an_empty_and_a_full_operand,
}
#: A tensor type with a zero-size dimension.
_EMPTY_TYPE = re.compile(r"tensor<(?:[0-9?]+x)*0x")


@pytest.mark.parametrize("opt_level", [0, 2])
@pytest.mark.parametrize("name", sorted(EMPTY_TENSOR_GRAPHS))
def test_graphs_of_empty_tensors_match_the_interpreter(name: str, opt_level: int) -> None:
    executable = graphfuse.compile(EMPTY_TENSOR_GRAPHS[name](), opt_level=opt_level)
    # no graph op of the fused graph computes on an empty tensor: they are arguments, constants and results
    assert not [line for line in executable.fused_graph.splitlines() if '"graph.' in line and _EMPTY_TYPE.search(line)]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in executable.inputs]
    got, want = executable(*inputs), executable.reference(*inputs)
    for g, w in zip(got, want, strict=True):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6)  # NaN where the interpreter has NaN


#: A graph whose exp result (line 2) is an intermediate buffer of dynamic size in the code generator's IR.
DYNAMIC_INTERMEDIATE = """func.func @f(%a: tensor<?x8xf32>, %b: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %0 = "graph.exp"(%a) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = "graph.matmul"(%0, %b) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %2 = "graph.reduce_sum"(%1) {axes = array<i64: 0>, keep_dims = true} : (tensor<?x8xf32>) -> tensor<1x8xf32>
  %3 = "graph.sub"(%1, %2) : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  return %3 : tensor<?x8xf32>
}
"""


def test_intermediates_of_dynamic_size_are_allocated_when_the_graph_runs() -> None:
    """One compile serves every row count, 0 and 1 included; the buffers are freed after their last use (the
    resident memory stays put over calls whose intermediates are 12 MB)."""
    import resource

    executable = graphfuse.compile(DYNAMIC_INTERMEDIATE)
    rng = np.random.default_rng(0)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    for rows in (0, 1, 5, 300, 2):
        a = rng.standard_normal((rows, 8)).astype(np.float32)
        (got,) = executable(a, b)
        (want,) = executable.reference(a, b)
        assert got.shape == (rows, 8)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    a = np.ones((200_000, 8), np.float32)
    executable(a, b)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(40):
        executable(a, b)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB: 40 leaked calls were 480 MB


DYNAMIC_CAST = """
func.func @narrow(%a: tensor<?x8xf32>) -> (tensor<?x8xf16>, tensor<3x?x8xf32>) {
  %0 = "graph.cast"(%a) : (tensor<?x8xf32>) -> tensor<?x8xf16>
  %1 = "graph.broadcast_to"(%a) : (tensor<?x8xf32>) -> tensor<3x?x8xf32>
  return %0, %1 : tensor<?x8xf16>, tensor<3x?x8xf32>
}
"""


@pytest.mark.parametrize("rows", [0, 1, 13])
def test_declared_dynamic_results_take_their_operands_sizes(rows: int) -> None:
    """A cast's and a broadcast_to's results have their operand's sizes where the declared type leaves them
    dynamic (a bf16 model at a new length had failed: the inputs' shapes did not tell the size of the cast)."""
    executable = graphfuse.compile(DYNAMIC_CAST)
    assert executable.result_shapes([(rows, 8)]) == [(rows, 8), (3, rows, 8)]
    a = np.random.default_rng(rows).standard_normal((rows, 8)).astype(np.float32)
    got = executable(a)
    want = executable.reference(a)
    assert got[0].shape == (rows, 8) and got[0].dtype == np.float16
    assert got[1].shape == (3, rows, 8)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("source", ["file", "string", "bytecode", "library"])
def test_code_generator_errors_name_the_op_in_the_users_file(source: str, tmp_path, monkeypatch) -> None:
    """An error of the code generator, which compiles linalg text printed and parsed again, names the line of
    the user's file (line 2's exp, whose buffer fails here), not one of that text ("-:25:10")."""
    from graphfuse.dialect.diagnostics import Diagnostic, source_loc
    from graphfuse.lowering.codegen.cpu import hoist_allocations

    def fail_at_the_first_buffer(block) -> None:
        alloc = next(op.operation for op in block.operations if op.operation.name == "memref.alloc")
        raise GraphfuseError([Diagnostic("error", "this buffer fails", source_loc(alloc.location))])

    monkeypatch.setattr(hoist_allocations, "_free_dynamic_buffers", fail_at_the_first_buffer)
    text = DYNAMIC_INTERMEDIATE.replace("@f", "@fails")  # not the graph the test above compiled: no cache hit
    path = tmp_path / "model.mlir"
    path.write_text(text)
    name = "<string>" if source == "string" else str(path)
    with pytest.raises(GraphfuseError) as info:
        if source == "string":
            graphfuse.compile(text)
        elif source == "bytecode":  # graphfuse-opt --emit-bytecode's locations name the file
            path.with_suffix(".mlirbc").write_bytes(graphfuse.module_bytecode(graphfuse.load_module(path), name))
            graphfuse.compile(path.with_suffix(".mlirbc"))
        elif source == "library":
            graphfuse.compile_library(path, tmp_path / "model.o")
        else:
            graphfuse.compile(path)
    message = str(info.value)
    assert message == f"{name}:2:8: error: this buffer fails"
    assert "-:" not in message


@pytest.mark.parametrize("linear", [False, True])
def test_matmuls_with_rows_counted_at_run_time_are_packed_and_blocked(linear: bool, monkeypatch) -> None:
    """x @ W + b (or x @ W^T + b, a linear layer), then gelu, with x's rows dynamic: B packed once into panels (64
    columns in two of 32, 8 columns in a narrower one), the rows in whole register tiles, the rest padded to a
    product of 8, 4, 2 or 1 rows: one compile serves every row count, none and one row included, at the
    reference's values.  Both have a path
    for few rows (a token's step in generation) which reads W as it is, in tiles of 1 or 4 rows: up to
    ROW_DOT_ROWS rows for x @ W^T, 4 for x @ W."""
    from graphfuse.lowering.contraction import dynamic_rows, strategy
    from graphfuse.lowering.contraction.sizes import ROW_DOT_ROWS

    calls, splits = [], []

    def counted(op, panel, tile_rows):
        calls.append(tile_rows)
        return dynamic_rows.dynamic_row_parts(op, panel, tile_rows)

    def split(module, dot_columns, tile_columns):
        parts = dynamic_rows.split_few_dynamic_rows(module, dot_columns, tile_columns)
        splits.append(parts)
        return parts

    monkeypatch.setattr(strategy, "dynamic_row_parts", counted)
    monkeypatch.setattr(strategy, "split_few_dynamic_rows", split)
    w_type = "tensor<72x40xf32>" if linear else "tensor<40x72xf32>"
    text = f"""func.func @f(%x: tensor<?x40xf32>, %w: {w_type}, %b: tensor<72xf32>) -> tensor<?x72xf32> {{
      %0 = "graph.matmul"(%x, %w) {{transpose_b = {str(linear).lower()}}} : (tensor<?x40xf32>, {w_type})
        -> tensor<?x72xf32>
      %1 = "graph.add"(%0, %b) : (tensor<?x72xf32>, tensor<72xf32>) -> tensor<?x72xf32>
      %2 = "graph.gelu"(%1) : (tensor<?x72xf32>) -> tensor<?x72xf32>
      return %2 : tensor<?x72xf32>
    }}"""
    executable = graphfuse.compile(text)
    assert len(calls) == 1
    assert len(splits) == 1 and splits[0]  # the path for few rows: x @ W^T up to 32, x @ W up to 4
    rng = np.random.default_rng(4)
    w = rng.standard_normal((72, 40) if linear else (40, 72)).astype(np.float32)
    b = rng.standard_normal(72).astype(np.float32)
    # rows left past the whole tiles of each size of product over them (rest_tiles: 8, 4, 2, 1), and none
    for rows in (0, 1, 3, 4, 5, calls[0] - 1, calls[0], calls[0] + 1, ROW_DOT_ROWS, ROW_DOT_ROWS + 1, 66, 67, 70, 200):
        x = rng.standard_normal((rows, 40)).astype(np.float32)
        (got,) = executable(x, w, b)
        (want,) = executable.reference(x, w, b)
        assert got.shape == (rows, 72)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("linear", [False, True])
def test_few_rows_with_columns_short_of_a_register_tile(linear: bool) -> None:
    """The path for few rows over 70 columns: whole tiles of columns, then the 2 or 6 left as a product of their
    own (its slice of C inserted back), at one row, a tile of rows and one more."""
    w_type = "tensor<70x24xf32>" if linear else "tensor<24x70xf32>"
    text = f"""func.func @f(%x: tensor<?x24xf32>, %w: {w_type}) -> tensor<?x70xf32> {{
      %0 = "graph.matmul"(%x, %w) {{transpose_b = {str(linear).lower()}}} : (tensor<?x24xf32>, {w_type})
        -> tensor<?x70xf32>
      return %0 : tensor<?x70xf32>
    }}"""
    executable = graphfuse.compile(text)
    rng = np.random.default_rng(6)
    w = rng.standard_normal((70, 24) if linear else (24, 70)).astype(np.float32)
    for rows in (1, 2, 4, 5, 31):
        x = rng.standard_normal((rows, 24)).astype(np.float32)
        np.testing.assert_allclose(executable(x, w)[0], executable.reference(x, w)[0], rtol=1e-4, atol=1e-4)


def test_booleans_of_a_dynamic_shape_cross_the_boundary() -> None:
    """A boolean input and output whose dims are known only at run time (a padding mask): passed as bytes and
    converted at the boundary, sized by the call; empty, 1 x 1 and larger, against the reference."""
    text = """func.func @f(%m: tensor<?x?xi1>, %x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi1>) {
      %z = arith.constant dense<0.0> : tensor<f32>
      %0 = "graph.select"(%m, %x, %z) : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
      %1 = "graph.logical_not"(%m) : (tensor<?x?xi1>) -> tensor<?x?xi1>
      return %0, %1 : tensor<?x?xf32>, tensor<?x?xi1>
    }"""
    executable = graphfuse.compile(text)
    rng = np.random.default_rng(9)
    for shape in ((0, 3), (1, 1), (5, 7), (33, 130)):
        m, x = rng.random(shape) < 0.5, rng.standard_normal(shape).astype(np.float32)
        got, want = executable(m, x), executable.reference(m, x)
        assert got[1].dtype == np.bool_
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_a_graphs_own_transpose_of_w_over_rows_counted_at_run_time() -> None:
    """x @ transpose(W) as Falcon writes its linear layers (W [N, K] read at run time): the few-row path reads W
    through the product's maps, the packed path packs it as stored; 0, 1, a tile, 32 and 33 rows (either side of
    the few-row bound), 300."""
    text = """func.func @f(%x: tensor<?x24xf32>, %w: tensor<70x24xf32>) -> tensor<?x70xf32> {
      %t = "graph.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<70x24xf32>) -> tensor<24x70xf32>
      %0 = "graph.matmul"(%x, %t) : (tensor<?x24xf32>, tensor<24x70xf32>) -> tensor<?x70xf32>
      return %0 : tensor<?x70xf32>
    }"""
    executable = graphfuse.compile(text)
    rng = np.random.default_rng(8)
    w = rng.standard_normal((70, 24)).astype(np.float32)
    for rows in (0, 1, 4, 32, 33, 300):
        x = rng.standard_normal((rows, 24)).astype(np.float32)
        (got,) = executable(x, w)
        assert got.shape == (rows, 70)
        np.testing.assert_allclose(got, executable.reference(x, w)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [1, 2, 3, 4])
def test_static_products_of_few_rows_read_w_as_stored(rows: int) -> None:
    """x [rows, K] @ W [K, N] with W an argument and at most 4 rows (a token's step through GPT-2's Conv1D): one
    tile of rows over register tiles of columns reading W's rows, no copy of W into panels per call; 70 columns
    leave a narrower product."""
    text = f"""func.func @f(%x: tensor<{rows}x24xf32>, %w: tensor<24x70xf32>, %b: tensor<70xf32>)
        -> tensor<{rows}x70xf32> {{
      %0 = "graph.matmul_bias_add"(%x, %w, %b) : (tensor<{rows}x24xf32>, tensor<24x70xf32>, tensor<70xf32>)
        -> tensor<{rows}x70xf32>
      return %0 : tensor<{rows}x70xf32>
    }}"""
    executable = graphfuse.compile(text)
    rng = np.random.default_rng(7)
    x, w, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((rows, 24), (24, 70), (70,)))
    np.testing.assert_allclose(executable(x, w, b)[0], executable.reference(x, w, b)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("linear", [False, True])
def test_products_over_a_batch_and_tokens_counted_at_run_time_are_blocked(linear: bool) -> None:
    """x [batch, tokens, K] @ W (+ b), both leading sizes dynamic: reshape propagation makes the product a generic
    contraction over (batch, tokens, n, k); its rows are collapsed into one for the products over dynamic rows
    (a loop nest over the generic took 30 ms where the product takes 0.4 at 2 x 512 x 256 x 256)."""
    w_type = "tensor<72x40xf32>" if linear else "tensor<40x72xf32>"
    text = f"""func.func @f(%x: tensor<?x?x40xf32>, %w: {w_type}, %b: tensor<72xf32>) -> tensor<?x?x72xf32> {{
      %0 = "graph.matmul_bias_add"(%x, %w, %b) {{transpose_b = {str(linear).lower()}}}
        : (tensor<?x?x40xf32>, {w_type}, tensor<72xf32>) -> tensor<?x?x72xf32>
      return %0 : tensor<?x?x72xf32>
    }}"""
    executable = graphfuse.compile(text)  # select.mlir checks the rewrite (@rows_of_a_batch_and_tokens)
    rng = np.random.default_rng(5)
    w = rng.standard_normal((72, 40) if linear else (40, 72)).astype(np.float32)
    b = rng.standard_normal(72).astype(np.float32)
    for batch, tokens in ((1, 1), (2, 3), (3, 17), (2, 100), (0, 4)):
        x = rng.standard_normal((batch, tokens, 40)).astype(np.float32)
        (got,) = executable(x, w, b)
        (want,) = executable.reference(x, w, b)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_intermediates_of_dynamic_size_are_kept_for_the_next_call() -> None:
    """The JIT code allocates from the buffer pool (lowering/buffer_pool.py): a freed intermediate of 256 KiB or
    more is kept, and the next call of the same size takes it again instead of fresh pages."""
    from graphfuse.lowering.buffer_pool import buffer_pool_library, pool_state, release_pool

    if buffer_pool_library() is None:
        pytest.skip("the buffer pool was not built (no C compiler at install)")
    executable = graphfuse.compile(DYNAMIC_INTERMEDIATE.replace("@f", "@pooled"))
    b = np.ones((8, 8), np.float32)
    a = np.ones((20_000, 8), np.float32)  # 640 KB intermediates
    release_pool()
    executable(a, b)
    blocks, kept = pool_state()
    assert blocks >= 1 and kept >= a.nbytes, (blocks, kept)
    executable(a, b)
    assert pool_state() == (blocks, kept)  # the second call took the kept blocks and gave them back
    release_pool()
    assert pool_state() == (0, 0)
