"""The emulated NPU target: numerics equal the reference interpreter, GM bytes counted at run time are exact,
fusion reduces them, buffer assignment respects capacities and reports what does not fit."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from bench.npu_traffic import ROWS as TRAFFIC_ROWS
from bench.npu_traffic import VARIANTS, measure
from bench.workloads import WORKLOADS
from graphfuse.dialect.builder import GraphBuilder
from graphfuse.dialect.context import make_context
from graphfuse.dialect.diagnostics import GraphfuseError
from graphfuse.dialect.interpreter import functions
from graphfuse.dialect.matching import nested_ops
from graphfuse.dialect.npu_target import load_target
from graphfuse.lowering.kernels import is_kernel
from graphfuse.lowering.npu.compiler import NpuExecutable, compile_npu
from graphfuse.lowering.npu.cube_tiling import choose_tiles, traffic_lower_bound
from graphfuse.lowering.npu.dialect import is_gm
from graphfuse.tools.models import MODELS, model_inputs

ADD_NORM = """
func.func @add_norm(%x: tensor<16x64xf32>, %r: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %g = arith.constant dense<1.5> : tensor<64xf32>
  %b = arith.constant dense<0.25> : tensor<64xf32>
  %s = "graph.add"(%x, %r) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = "graph.layer_norm"(%s, %g, %b) {begin_norm_axis = 1 : i64, epsilon = 1.0e-5 : f32}
      : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %z = "graph.relu"(%y) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %z : tensor<16x64xf32>
}
"""


def _swiglu(rows: int, cols: int, view: bool) -> str:
    attr = ", npu.no_task = true" if view else ""
    half, full = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}x{2 * cols}xf32>"
    return f"""
func.func @swiglu(%x: {full}) -> {half} {{
  %g, %u = "graph.split"(%x) {{axis = -1 : i64, sizes = array<i64: {cols}, {cols}>{attr}}}
      : ({full}) -> ({half}, {half})
  %s = "graph.silu"(%g) : ({half}) -> {half}
  %y = "graph.mul"(%s, %u) : ({half}, {half}) -> {half}
  return %y : {half}
}}
"""


def _random_inputs(exe: NpuExecutable, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape, dtype in exe.inputs]


def _assert_matches_reference(exe: NpuExecutable, inputs: list[np.ndarray]) -> None:
    got, want = exe(*inputs), exe.reference(*inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6 * scale)


def _static_gm_bytes(npu_ir: str) -> dict[str, tuple[int, int]]:
    """An independent count: each npu.dma's bytes, times the tile count when it sits in the tile loop."""
    context = make_context()
    with context:
        module = ir.Module.parse(npu_ir)
    counts = {}
    for name, func_op in functions(module).items():
        if not is_kernel(func_op):
            continue
        tiles = ir.IntegerAttr(func_op.attributes["npu.tiles"]).value
        read = write = 0
        for op in nested_ops(func_op):
            if op.name != "npu.dma":
                continue
            source, dest = op.operands
            t = ir.MemRefType(source.type)
            size = math.prod(t.shape) * (2 if str(t.element_type) in ("f16", "bf16") else 4)
            repeat = tiles if op.parent.name == "scf.for" else 1
            read += size * repeat if is_gm(source.type) else 0
            write += size * repeat if is_gm(dest.type) else 0
        counts[name] = (read, write)
    return counts


# ------------------------------------------------------------------------- numerics and fusion variants

#: Workloads on which fusion must cut GM traffic (the others are one op or one fused op already); on those in
#: UB_FUSES, UB fusion (matmul epilogues, elementwise chains) must cut it further than pattern fusion.
FUSES = ("gelu", "add_layer_norm", "add_rms_norm", "matmul_bias_gelu", "swiglu", "attention", "transformer_block")
UB_FUSES = ("matmul_bias_gelu", "transformer_block", "mlp", "bert_layer", "llama_layer")


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_fusion_variants(name: str) -> None:
    """Every column of the GM-bytes table (bench/npu_traffic.py): numerics equal the reference interpreter,
    and each fusion phase moves no more GM bytes than the one before it."""
    row = TRAFFIC_ROWS[name]
    got = {key: measure(row, variant) for key, variant in VARIANTS.items()}
    gm = {key: m.gm_bytes for key, m in got.items()}
    assert gm["ub"] <= gm["pattern"] <= gm["unfused"], gm
    assert gm["graph_kernel"] <= gm["pattern"], gm
    assert gm["all"] <= gm["ub"], gm
    if name in FUSES:
        assert gm["all"] < gm["unfused"], gm
    if name in UB_FUSES:
        assert gm["ub"] < gm["pattern"], gm
    if name == "transformer_block":
        assert gm["all"] * 2 <= gm["unfused"], gm


@pytest.mark.parametrize("name", sorted(n for n in MODELS if n not in WORKLOADS))
def test_model_ub_fusion(name: str) -> None:
    """The bundled models (the transformer block is a workload above) with UB fusion on, alone and in the NPU
    default: numerics equal the reference interpreter, UB fusion moves no more GM bytes than pattern fusion."""
    row = TRAFFIC_ROWS[name]
    gm = {key: measure(row, VARIANTS[key]).gm_bytes for key in ("pattern", "ub", "all")}
    assert gm["all"] <= gm["ub"] <= gm["pattern"], gm
    if name in UB_FUSES:
        assert gm["ub"] < gm["pattern"], gm


# ------------------------------------------------------------------------- GM traffic


def test_counted_bytes_hand_count() -> None:
    """Unfused, each op is a kernel: inputs read once, every intermediate written and read back once."""
    exe = compile_npu(ADD_NORM, opt_level=0)
    exe(*_random_inputs(exe))
    report = exe.report()
    tensor = 16 * 64 * 4
    assert [(r.kind, r.gm_read, r.gm_write) for r in report.rows] == [
        ("add", 2 * tensor, tensor), ("layer_norm", tensor, tensor), ("relu", tensor, tensor)]
    assert report.gm_read == 4 * tensor and report.gm_write == 3 * tensor


@pytest.mark.parametrize("name", ["add_layer_norm", "matmul_bias_gelu", "attention", "swiglu"])
def test_counted_bytes_equal_static_count(name: str) -> None:
    workload = WORKLOADS[name]
    params = workload.sizes["small"]
    for opt_level in (0, 2):
        exe = compile_npu(workload.build(**params), opt_level=opt_level)
        exe(*workload.inputs(np.random.default_rng(0), **params))
        assert exe.function.gm_bytes_by_kernel() == _static_gm_bytes(exe.npu_ir), (name, opt_level)


def test_tiled_kernel_moves_each_element_once() -> None:
    """A kernel tiled into many double-buffered tiles still reads its input once and writes its output once."""
    text = """
func.func @wide(%x: tensor<512x256xf32>, %g: tensor<256xf32>) -> tensor<512x256xf32> {
  %0 = "graph.rms_norm"(%x, %g) {epsilon = 1.0e-6 : f32} : (tensor<512x256xf32>, tensor<256xf32>) -> tensor<512x256xf32>
  return %0 : tensor<512x256xf32>
}"""
    exe = compile_npu(text, opt_level=0)
    _assert_matches_reference(exe, _random_inputs(exe))
    (row,) = exe.report().rows
    assert row.tiles > 1
    assert row.ub_bytes <= load_target("910b").ub.bytes
    assert (row.gm_read, row.gm_write) == (512 * 256 * 4 + 256 * 4, 512 * 256 * 4)
    assert exe.function.gm_bytes_by_kernel() == _static_gm_bytes(exe.npu_ir)


def test_view_split_costs_no_kernel_and_no_copy() -> None:
    """A no-task split is no kernel; its consumers read only their slice of its input."""
    rows, cols = 16, 48
    half = rows * cols * 4
    task = compile_npu(_swiglu(rows, cols, view=False), opt_level=0)
    view = compile_npu(_swiglu(rows, cols, view=True), opt_level=0)
    inputs = _random_inputs(task)
    _assert_matches_reference(task, inputs)
    _assert_matches_reference(view, inputs)
    kinds = [r.kind for r in view.report().rows]
    assert kinds == ["silu", "mul"]
    # silu reads its half, mul reads the other half and silu's result; both write one half.
    assert view.report().gm_read == 3 * half and view.report().gm_write == 2 * half
    assert task.report().gm_bytes - view.report().gm_bytes == 4 * half  # the split's read + write, gone


RESHAPED_PIECES = """
func.func @pieces(%x: tensor<8x16xf32>, %y: tensor<8x32xf32>)
    -> (tensor<64xf32>, tensor<8x8xf32>, tensor<128xf32>, tensor<4x32xf32>) {
  %a, %b = "graph.split"(%x) {axis = 0 : i64, sizes = array<i64: 4, 4>}
      : (tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %r0 = "graph.reshape"(%a) : (tensor<4x16xf32>) -> tensor<64xf32>
  %r1 = "graph.reshape"(%b) : (tensor<4x16xf32>) -> tensor<8x8xf32>
  %c, %d = "graph.split"(%y) {axis = 1 : i64, sizes = array<i64: 16, 16>, npu.no_task = true}
      : (tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %r2 = "graph.reshape"(%c) : (tensor<8x16xf32>) -> tensor<128xf32>
  %r3 = "graph.reshape"(%d) : (tensor<8x16xf32>) -> tensor<4x32xf32>
  return %r0, %r1, %r2, %r3 : tensor<64xf32>, tensor<8x8xf32>, tensor<128xf32>, tensor<4x32xf32>
}
"""


def test_consumer_of_a_no_task_piece_reads_only_the_piece() -> None:
    """A reshape of a no-task split's piece reads the piece's bytes (a contiguous row range, or a strided
    column range) and writes its result: the same bytes as a reshape of an unmarked split's result."""
    marked = compile_npu(RESHAPED_PIECES, pipeline="builtin.module(graph-canonicalize,FusionVirtualOpSetSwitch)")
    assert marked.fused_graph.count("_no_task = true") == 1  # the axis-0 split, marked by the pass
    unmarked = compile_npu(RESHAPED_PIECES.replace(", npu.no_task = true", ""), opt_level=0)
    inputs = _random_inputs(marked)
    _assert_matches_reference(marked, inputs)
    _assert_matches_reference(unmarked, inputs)
    row_piece, column_piece = 4 * 16 * 4, 8 * 16 * 4
    expected = [("reshape", row_piece, row_piece)] * 2 + [("reshape", column_piece, column_piece)] * 2
    assert [(r.kind, r.gm_read, r.gm_write) for r in marked.report().rows] == expected
    assert [(r.kind, r.gm_read, r.gm_write) for r in unmarked.report().rows if r.kind == "reshape"] == expected
    # On chip: the staged piece (not its parent) and the result; the strided column pieces are copied once more
    # on chip to be reshaped.
    assert [r.ub_bytes for r in marked.report().rows] == [2 * row_piece] * 2 + [3 * column_piece] * 2
    assert marked.function.gm_bytes_by_kernel() == _static_gm_bytes(marked.npu_ir)


# ------------------------------------------------------------------------- capacity and targets


WIDE_SOFTMAX = """func.func @wide(%x: tensor<4x75000xf32>) -> tensor<4x75000xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<4x75000xf32>) -> tensor<4x75000xf32>
  return %0 : tensor<4x75000xf32>
}"""


def test_over_capacity_is_a_located_error() -> None:
    """On a target with a 64-byte UB not even a block of one element of a softmax's row fits (with the row's
    max and sum, each 32-byte aligned): a located error stating the smallest tiles."""
    tiny = Path(__file__).parents[1] / "NPU" / "npu-buffer-assign" / "Inputs" / "tiny-ub.json"
    with pytest.raises(GraphfuseError, match=r"<string>:2:8: error: kernel 'wide_\w+' needs \d+ bytes of UB "
                       r"for its smallest tile \(1x75000xf32 in x2, 1x75000xf32 out x2.*\) but the target 'tiny-ub' "
                       r"has 64; in blocks of a reduced dim, no tiling of the blocks fits: the smallest tiles need UB "
                       r"160 bytes"):
        compile_npu(WIDE_SOFTMAX, opt_level=0, target=tiny)


@pytest.mark.parametrize(("text", "where"), [
    ("""func.func @tokens(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = "graph.relu"(%x) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}""", r"<string>:1:1: error: dim 0 of argument #0 of @tokens \(tensor<\?x64xf32>\) is dynamic"),
    ("""func.func @inner(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = "graph.relu"(%x) : (tensor<4x64xf32>) -> tensor<?x64xf32>
  %1 = "graph.reshape"(%0) : (tensor<?x64xf32>) -> tensor<4x64xf32>
  return %1 : tensor<4x64xf32>
}""", r"<string>:2:8: error: dim 0 of result #0 of 'graph.relu' \(tensor<\?x64xf32>\) is dynamic"),
])
def test_a_dynamic_dim_is_a_located_error(text: str, where: str) -> None:
    """The NPU assigns UB and L1 from static shapes: a dim known only at run time, in the signature or inside,
    is refused where it is, with the way out (the CPU compile) named, not as a pass's failure."""
    with pytest.raises(GraphfuseError, match=where + r": the emulated NPU assigns its UB and L1 buffers when "
                       r"compiling, from static shapes; compile for the CPU \(graphfuse.compile\)"):
        compile_npu(text)


def test_a_softmax_row_longer_than_ub_runs_in_blocks() -> None:
    """A row of 75000 f32 in and out is over UB, and the softmax's reductions need all of it: the row is cut
    into blocks, one pass for its max, one for its sum, a last one for the result; x is read three times,
    the result written once."""
    exe = compile_npu(WIDE_SOFTMAX, opt_level=0)
    x = np.random.default_rng(0).standard_normal((4, 75000)).astype(np.float32)
    (got,) = exe(x)
    np.testing.assert_allclose(got, exe.reference(x)[0], rtol=1e-5, atol=1e-9)
    (row,) = exe.report().rows
    assert row.gm_read == 3 * x.nbytes and row.gm_write == x.nbytes
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


def test_a_row_wider_than_ub_is_tiled_along_its_columns() -> None:
    """An elementwise kernel on rows of 75000 (300 KB, over UB): tiled along the columns instead."""
    text = """func.func @wide(%x: tensor<4x75000xf32>) -> tensor<4x75000xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x75000xf32>) -> tensor<4x75000xf32>
  return %0 : tensor<4x75000xf32>
}"""
    exe = compile_npu(text, opt_level=0)
    x = np.random.default_rng(0).standard_normal((4, 75000)).astype(np.float32)
    np.testing.assert_allclose(exe(x)[0], np.exp(x), rtol=1e-5)
    (row,) = exe.report().rows
    assert row.tiles > 1 and row.gm_read == x.nbytes and row.gm_write == x.nbytes


def test_single_buffering_allows_bigger_tiles() -> None:
    text = """func.func @rows(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %0 = "graph.exp"(%x) : (tensor<1024x256xf32>) -> tensor<1024x256xf32>
  return %0 : tensor<1024x256xf32>
}"""
    tiles = []
    for double in (True, False):
        exe = compile_npu(text, opt_level=0, double_buffer=double)
        _assert_matches_reference(exe, _random_inputs(exe))
        tiles.append(exe.kernels[0].tiles)
    assert tiles == [32, 16]


def test_target_from_path_and_errors(tmp_path: Path) -> None:
    data = json.loads((Path(load_target("910b").path)).read_text())
    data["name"] = "tiny-ub"
    data["buffers"]["ub"]["bytes"] = 8192
    good = tmp_path / "tiny.json"
    good.write_text(json.dumps(data, indent=2))
    exe = compile_npu(ADD_NORM, opt_level=0, target=str(good))
    _assert_matches_reference(exe, _random_inputs(exe))
    report = exe.report()
    assert report.target.name == "tiny-ub"
    assert all(r.ub_bytes <= 8192 for r in report.rows) and any(r.tiles > 1 for r in report.rows)
    del data["cube_flops_per_s"]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(data))
    with pytest.raises(GraphfuseError, match="missing the key 'cube_flops_per_s'"):
        load_target(str(missing))
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "name": 1,,\n}')
    with pytest.raises(GraphfuseError, match=r"broken.json:2:13: error: invalid JSON"):
        load_target(str(broken))
    with pytest.raises(GraphfuseError, match="unknown NPU target 'nope'"):
        load_target("nope")


def test_report_needs_a_call() -> None:
    exe = compile_npu(ADD_NORM, opt_level=2)
    with pytest.raises(GraphfuseError, match="call the executable first"):
        exe.report()


# --------------------------------------------------------------------------- cube tiling


def _cube_tile(exe: NpuExecutable, kernel: str) -> tuple[int, int, int]:
    """The (tm, tn, tk) npu-buffer-assign chose for ``kernel``."""
    module = ir.Module.parse(exe.npu_ir, make_context())
    attr = functions(module)[kernel].attributes["npu.cube_tile"]
    return tuple(ir.DenseI64ArrayAttr(attr))


@pytest.mark.parametrize(("m", "k", "n", "form"), [
    (16, 256, 1024, "plain"), (128, 2048, 512, "plain"), (160, 1024, 768, "transpose_b"),
    (13, 300, 700, "bias_gelu"), (144, 1024, 640, "residual"),
])
def test_matmul_weight_larger_than_l1_is_tiled(m: int, k: int, n: int, form: str) -> None:
    """A weight larger than L1 used to be an error.  When the activation fits L1 whole the weight is tiled
    by columns (each operand read once); when it does not either (128 x 2048 is 1 MiB), M x N x K cube
    tiles: A read once per column of tiles, B once per row.  Results match the reference."""
    rng = np.random.default_rng(m + n)
    b = GraphBuilder("f")
    x = b.arg((m, k))
    weight = rng.standard_normal((n, k) if form == "transpose_b" else (k, n)).astype(np.float32)
    y = b.matmul(x, b.const(weight), transpose_b=form == "transpose_b")
    inputs = [rng.standard_normal((m, k)).astype(np.float32)]
    if form == "bias_gelu":
        y = b.gelu(b.bias_add(y, b.const(rng.standard_normal(n).astype(np.float32)), axis=1))
    elif form == "residual":
        y = b.add(y, b.arg((m, n)))
        inputs.append(rng.standard_normal((m, n)).astype(np.float32))
    b.ret(y)
    exe = compile_npu(b.module)
    (got,) = exe(*inputs)
    (want,) = exe.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    report = exe.report()
    (row,) = [r for r in report.rows if "matmul" in r.kind]
    if m * k * 4 > load_target("910b").buffer("l1").bytes:
        tm, tn, tk = _cube_tile(exe, row.name)
        assert m % tm == 0 and n % tn == 0 and k % tk == 0
    else:
        assert "npu.cube_tile" not in exe.npu_ir
        tm, tn = m, n  # A whole, each column tile of B read once
    operands = 4 * (m * k * (n // tn) + k * n * (m // tm))
    if form in ("plain", "transpose_b"):
        assert row.gm_read == operands and row.gm_write == 4 * m * n
    else:
        assert operands < row.gm_read <= operands + 4 * (m * n + n * (m // tm))
    target = load_target("910b")
    assert row.l0c_bytes <= target.buffer("l0c").bytes and row.l1_bytes <= target.buffer("l1").bytes
    assert row.gm_bound == traffic_lower_bound(m, n, k, 4, target.buffer("l1").bytes)
    assert row.bound_ratio is not None and row.bound_ratio >= 1.0 and row.limit in ("GM", "vector", "cube")
    if form in ("plain", "transpose_b"):  # (an epilogue's UB tiles can force smaller tiles)
        assert row.bound_ratio <= 1.5
    assert f"{row.bound_ratio:7.2f}" in report.table()


@pytest.mark.parametrize(("dim", "hidden", "seq", "heads"),
                         [(256, 1024, 16, 4), pytest.param(1024, 2752, 128, 8, marks=pytest.mark.slow)])
def test_issue_llama_block_runs_on_the_npu(dim: int, hidden: int, seq: int, heads: int) -> None:
    """A Llama-style block with hidden size 256 and MLP width 1024 (a 256 x 2048 gate/up weight), and one of
    hidden 1024 over 128 tokens: the matmuls are tiled, the reshape and split copies staged in chunks, the
    [1, 128, 1024] activations tiled over their rows, at the default level and at 0."""
    torch = pytest.importorskip("torch")
    from bench.models import _example
    from graphfuse.frontends.torch import import_module

    torch.manual_seed(0)
    layer = _example("llama_decoder_layer").LlamaDecoderLayer(dim, heads, hidden=hidden).eval()
    x = torch.randn(1, seq, dim)
    module = import_module(layer, (x,)).module
    for level in (None, 0):
        exe = compile_npu(module, opt_level=level)
        (got,) = exe(x.numpy())
        (want,) = exe.reference(x.numpy())
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
        assert exe.report().rows


@pytest.mark.parametrize(("text", "tiles"), [
    # leading 1s: the 256 rows of a [1, 256, 512] activation are the tiled loop
    ("""func.func @f(%x: tensor<1x256x512xf32>, %y: tensor<1x256x512xf32>) -> tensor<1x256x512xf32> {
  %0 = "graph.add"(%x, %y) : (tensor<1x256x512xf32>, tensor<1x256x512xf32>) -> tensor<1x256x512xf32>
  return %0 : tensor<1x256x512xf32>
}""", 16),
    # a transpose follows the loop in another dim of its input; one head (64 KiB in and out) fits only
    # without the second slot
    ("""func.func @f(%x: tensor<1x256x8x64xf32>) -> tensor<1x8x256x64xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x256x8x64xf32>) -> tensor<1x8x256x64xf32>
  return %0 : tensor<1x8x256x64xf32>
}""", 8),
    # attention probabilities of 8 heads: one head (256 KiB in, 256 KiB out) is over UB, so the query rows of all
    # heads are tiled; the row statistics (locals written before the ops reading them) follow the same loop
    ("""func.func @f(%x: tensor<1x8x256x256xf32>) -> tensor<1x8x256x256xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<1x8x256x256xf32>) -> tensor<1x8x256x256xf32>
  return %0 : tensor<1x8x256x256xf32>
}""", 64),
    # a column sum: the loop is the columns, each tile reads every row of its columns
    ("""func.func @f(%x: tensor<1000x100xf32>) -> tensor<100xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0>, keep_dims = false} : (tensor<1000x100xf32>) -> tensor<100xf32>
  return %0 : tensor<100xf32>
}""", 5),
])
def test_vector_kernels_are_tiled_along_any_axis(text: str, tiles: int) -> None:
    exe = compile_npu(text)
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_allclose(got, exe.reference(*inputs)[0], rtol=1e-5, atol=1e-5)
    (row,) = exe.report().rows
    assert row.tiles == tiles
    assert row.gm_read == sum(a.nbytes for a in inputs) and row.gm_write == got.nbytes  # each element moved once
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


#: A Llama layer at hidden 4096 (MLP 11008, sequence 128): its projections' [M, K] x [K, N].
LLAMA_4096_PROJECTIONS = {"qkv": (128, 4096, 12288), "o": (128, 4096, 4096), "gate_up": (128, 4096, 22016),
                          "down": (128, 11008, 4096)}


@pytest.mark.parametrize("name", sorted(LLAMA_4096_PROJECTIONS))
def test_cube_tiles_of_a_4096_llama_layer_stay_within_1_5x_the_bound(name: str) -> None:
    """The tiling model on the projections of a 4096-hidden Llama layer: tiles fit every level, and the GM
    bytes (operands as tiled, the result once) stay within 1.5x the lower bound.  With M = 128 the bound is
    the compulsory traffic and L0C bounds the accumulator to 128 x 256: A is read N / 256 times."""
    m, k, n = LLAMA_4096_PROJECTIONS[name]
    target = load_target("910b")
    tiles = choose_tiles(m, n, k, 4, 4, target, True, [])
    assert not isinstance(tiles, str)
    assert (tiles.tm, tiles.tn) == (128, 256) and tiles.tk % 16 == 0
    assert tiles.tm * tiles.tn * 4 <= target.buffer("l0c").bytes and tiles.peaks["l1"] <= target.buffer("l1").bytes
    moved = tiles.gm_bytes + 4 * m * n
    assert moved <= 1.5 * traffic_lower_bound(m, n, k, 4, target.buffer("l1").bytes)


def test_cube_tiling_reports_what_would_fit() -> None:
    """With a 1 KiB L1 no fractal-aligned tile of a matmul fits (16 x 16 f32 is 1 KiB per operand): the
    reason says what the smallest tiles need (two slots of each in L1)."""
    import dataclasses

    target = load_target("910b")
    tiny = dataclasses.replace(target, buffers={**target.buffers, "l1": dataclasses.replace(target.buffer("l1"),
                                                                                            bytes=1024)})
    problem = choose_tiles(128, 512, 2048, 4, 4, tiny, True, [])
    assert isinstance(problem, str) and problem.startswith("no tiling of [128, 2048] x [2048, 512] fits")
    assert "the smallest tiles need L1 4096, L0A 1024, L0B 1024 bytes" in problem and "L1 1024" in problem


@pytest.mark.slow
def test_llama_4096_layer_matmuls_within_1_5x_the_traffic_bound() -> None:
    """Issue gate: a Llama layer at hidden 4096 (MLP 11008, 32 heads, 128 tokens, weights as arguments) runs
    on the emulator, matches the reference, and each matmul kernel moves at most 1.5x its GM lower bound."""
    pytest.importorskip("torch")
    from bench.npu_traffic import _llama_layer

    module, inputs = _llama_layer(4096, 11008, 32, 128)
    exe = compile_npu(module)
    (got,) = exe(*inputs)
    (want,) = exe.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    matmuls = [row for row in exe.report().rows if row.gm_bound]
    assert len(matmuls) == 4
    for row in matmuls:
        assert row.bound_ratio <= 1.5, (row.name, row.bound_ratio)


def test_a_kernel_reading_through_a_reshape_is_row_tiled() -> None:
    """Graph-kernel fusion (CPU list) puts a reshape, a transpose and a product in one kernel (a rotary
    embedding's shape): its input is read through the reshape, and the tiles follow the rows through it."""
    from graphfuse.lowering.compiler import default_pipeline

    text = """func.func @rope(%x: tensor<1x128x4096xf32>, %c: tensor<128x128xf32>) -> tensor<1x32x128x128xf32> {
  %0 = "graph.reshape"(%x) : (tensor<1x128x4096xf32>) -> tensor<1x128x32x128xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x32x128xf32>) -> tensor<1x32x128x128xf32>
  %2 = "graph.mul"(%1, %c) : (tensor<1x32x128x128xf32>, tensor<128x128xf32>) -> tensor<1x32x128x128xf32>
  return %2 : tensor<1x32x128x128xf32>
}"""
    exe = compile_npu(text, pipeline=default_pipeline(2))
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_array_equal(got, exe.reference(*inputs)[0])
    (row,) = exe.report().rows
    assert row.tiles > 1 and row.gm_read == sum(a.nbytes for a in inputs) and row.gm_write == got.nbytes


def _attention(tokens: int, heads: int = 8, head_dim: int = 64) -> str:
    t = f"tensor<1x{heads}x{tokens}x{head_dim}xf32>"
    mask = f"tensor<1x1x{tokens}x{tokens}xf32>"
    return f"""func.func @attention(%q: {t}, %k: {t}, %v: {t}, %mask: {mask}) -> {t} {{
  %0 = "graph.flash_attention"(%q, %k, %v, %mask) {{scale = 1.250000e-01 : f32}} : ({t}, {t}, {t}, {mask}) -> {t}
  return %0 : {t}
}}"""


def test_attention_over_capacity_along_every_single_loop_is_tiled_by_a_nest() -> None:
    """8 heads x 256 tokens: the mask is over UB along the heads, the keys and values over L1 along the query
    rows.  Heads x rows tiles fit; the mask (which does not follow the heads) is read once per tile of heads,
    everything else once."""
    exe = compile_npu(_attention(256))
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_allclose(got, exe.reference(*inputs)[0], rtol=1e-5, atol=1e-5)
    module = ir.Module.parse(exe.npu_ir, make_context())
    (kernel,) = [f for f in functions(module).values() if is_kernel(f)]
    head_tile, row_tile = ir.DenseI64ArrayAttr(kernel.attributes["npu.loop_tiles"])
    assert row_tile % 16 == 0  # the rows are the M of the scores' matmul: fractal-aligned
    (row,) = exe.report().rows
    q, k, v, mask = (a.nbytes for a in inputs)
    assert row.gm_read == q + k + v + mask * (8 // head_tile) and row.gm_write == got.nbytes
    target = load_target("910b")
    assert row.ub_bytes <= target.buffer("ub").bytes and row.l1_bytes <= target.buffer("l1").bytes


def test_attention_over_l1_at_any_query_tile_runs_in_key_blocks() -> None:
    """At 1024 tokens one head's keys and values (256 KiB each) are over L1 at any tile of the query rows: the
    keys are cut into blocks, one pass over them per reduction over the keys (the softmax's max, its sum,
    the product with V), the scores' block recomputed in each.  GM bytes are exactly that schedule's: K in
    all three passes and V in the last, once per query tile; the mask (rows of queries, so read whole once
    per pass over the query tiles) in all three, once per tile of heads, which it does not follow."""
    exe = compile_npu(_attention(1024))
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_allclose(got, exe.reference(*inputs)[0], rtol=1e-5, atol=1e-5)
    module = ir.Module.parse(exe.npu_ir, make_context())
    (kernel,) = [fn for fn in functions(module).values() if is_kernel(fn)]
    _, heads, queries, keys = ir.DenseI64ArrayAttr(kernel.attributes["npu.block_tiles"])
    assert queries % 16 == 0 and keys % 16 == 0 and 1024 % keys == 0 and keys < 1024
    q, k, v, mask = (a.nbytes for a in inputs)
    query_tiles = 1024 // queries
    (row,) = exe.report().rows
    assert row.gm_read == q + 3 * query_tiles * k + query_tiles * v + 3 * (8 // heads) * mask
    assert row.gm_write == got.nbytes
    target = load_target("910b")
    assert all(getattr(row, f"{space}_bytes") <= target.buffer(space).bytes for space in ("ub", "l1", "l0c"))


def test_copy_kernel_chunks_past_its_outer_dim() -> None:
    """A concat of two [1, 8, 1024, 32] halves: one head of a half (128 KiB, two slots) is over UB, so the
    chunks take one head at a time and part of its rows; each element still moves once each way."""
    t = "tensor<1x8x1024x32xf32>"
    exe = compile_npu(f"""func.func @halves(%a: {t}, %b: {t}) -> tensor<1x8x1024x64xf32> {{
  %0 = "graph.concat"(%a, %b) {{axis = 3 : i64}} : ({t}, {t}) -> tensor<1x8x1024x64xf32>
  return %0 : tensor<1x8x1024x64xf32>
}}""")
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_array_equal(got, np.concatenate(inputs, axis=3))
    (row,) = exe.report().rows
    assert row.tiles > 2 * 8 and row.gm_read == got.nbytes and row.gm_write == got.nbytes
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


def _biased_conv2d(n: int, c: int, h: int, f: int, k: int, stride: int, pad: int, groups: int = 1) -> tuple[str, int]:
    """A graph of one conv2d with a bias (x [n, c, h, h], f filters of k x k over c / groups channels), and its
    output size."""
    oh = (h + 2 * pad - k) // stride + 1
    x_t, w_t = f"tensor<{n}x{c}x{h}x{h}xf32>", f"tensor<{f}x{c // groups}x{k}x{k}xf32>"
    o_t = f"tensor<{n}x{f}x{oh}x{oh}xf32>"
    text = f"""func.func @conv(%x: {x_t}, %w: {w_t}, %b: tensor<{f}xf32>) -> {o_t} {{
  %0 = "graph.conv2d"(%x, %w, %b) {{strides = array<i64: {stride}, {stride}>, pads = array<i64: {pad}, {pad}, {pad},
      {pad}>, dilations = array<i64: 1, 1>, groups = {groups} : i64}} : ({x_t}, {w_t}, tensor<{f}xf32>) -> {o_t}
  return %0 : {o_t}
}}"""
    return text, oh


def _conv_tile(exe: NpuExecutable) -> tuple[int, int, int, int]:
    """The (batch, filters, output rows, channels) tile npu-buffer-assign chose for the one kernel."""
    module = ir.Module.parse(exe.npu_ir, make_context())
    (kernel,) = [fn for fn in functions(module).values() if is_kernel(fn)]
    return tuple(ir.DenseI64ArrayAttr(kernel.attributes["npu.conv_tile"]))


def _input_rows_read(h: int, oh: int, k: int, stride: int, pad: int, toh: int) -> int:
    """Rows of x (inside the image) the windows of all row tiles of ``toh`` output rows read, halos included."""
    window = (toh - 1) * stride + k
    return sum(min(start + window, h) - max(start, 0) for start in range(-pad, oh * stride - pad, toh * stride))


#: Convolutions over capacity (N, C, H, F, kernel, stride, padding): ResNet stages, a stem, a batch of 2, a
#: strided 1x1 projection, a 512-channel 3x3 (9 MiB of weights), odd sizes without padding.
CONVOLUTIONS = [(1, 64, 56, 64, 3, 1, 1), (1, 512, 7, 512, 3, 1, 1), (1, 3, 224, 64, 7, 2, 3), (2, 64, 56, 64, 3, 1, 1),
                (1, 256, 56, 128, 1, 2, 0), (1, 96, 35, 80, 3, 1, 0)]


@pytest.mark.parametrize(("n", "c", "h", "f", "k", "stride", "pad"), CONVOLUTIONS)
def test_convolution_over_capacity_is_tiled(n: int, c: int, h: int, f: int, k: int, stride: int, pad: int) -> None:
    """Numerics equal the reference; every tile fits; GM bytes are exactly the tiling's: each output-row
    window of x (the rows inside the image) once per filter tile, the weights once per batch x row tile, the
    bias once per tile, the result once."""
    text, oh = _biased_conv2d(n, c, h, f, k, stride, pad)
    exe = compile_npu(text, opt_level=0)
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    (want,) = exe.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    tn, tf, toh, tc = _conv_tile(exe)
    assert f % tf == 0 and (tf >= 16 or tf == f) and n % tn == 0 and oh % toh == 0 and c % tc == 0
    (row,) = exe.report().rows
    x_bytes = (f // tf) * n * c * _input_rows_read(h, oh, k, stride, pad, toh) * h * 4
    tiles = (n // tn) * (f // tf) * (oh // toh)
    assert row.gm_read == x_bytes + (n // tn) * (oh // toh) * inputs[1].nbytes + tiles * tf * 4
    assert row.gm_write == got.nbytes
    target = load_target("910b")
    assert all(getattr(row, f"{space}_bytes") <= target.buffer(space).bytes for space in ("ub", "l1", "l0c"))


@pytest.mark.parametrize(("n", "c", "h", "k", "stride", "pad"),
                         [(1, 256, 56, 3, 1, 1), (1, 32, 112, 3, 2, 1), (2, 96, 56, 7, 1, 3), (1, 144, 28, 5, 1, 2)])
def test_depthwise_convolution_over_capacity_is_tiled(n: int, c: int, h: int, k: int, stride: int, pad: int) -> None:
    """A depthwise convolution (with a bias) over UB runs on the vector unit in tiles of channels and output
    rows: each window of x (the rows inside the image) is read once for its own channels, the weights and
    the bias once per batch x row tile, the result written once."""
    text, oh = _biased_conv2d(n, c, h, c, k, stride, pad, groups=c)
    exe = compile_npu(text, opt_level=0)
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_allclose(got, exe.reference(*inputs)[0], rtol=1e-5, atol=1e-5)
    tn, tf, toh, _ = _conv_tile(exe)
    (row,) = exe.report().rows
    x_rows = _input_rows_read(h, oh, k, stride, pad, toh)
    tiles = (n // tn) * (c // tf) * (oh // toh)
    row_tiles = (n // tn) * (oh // toh)
    assert row.gm_read == n * c * x_rows * h * 4 + row_tiles * inputs[1].nbytes + tiles * tf * 4
    assert row.gm_write == got.nbytes and row.l1_bytes == 0
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


@pytest.mark.parametrize("kind", ["max_pool2d", "avg_pool2d"])
def test_pooling_over_capacity_is_tiled(kind: str) -> None:
    """ResNet's stem pooling (64 channels at 112x112, 3x3 windows at stride 2, 3.2 MB in) runs in windows of
    channels and output rows; x is read once (the rows inside the image), the result written once."""
    extra = "count_include_pad = false, " if kind == "avg_pool2d" else ""
    exe = compile_npu(f"""func.func @pool(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {{
  %0 = "graph.{kind}"(%x) {{{extra}kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>,
      strides = array<i64: 2, 2>}} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}}""", opt_level=0)
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    np.testing.assert_allclose(got, exe.reference(*inputs)[0], rtol=1e-6, atol=1e-6)
    (row,) = exe.report().rows
    counts = 0 if kind == "max_pool2d" else row.tiles * 56 * 56 * 4  # avg: the window counts, per tile
    assert row.gm_read == inputs[0].nbytes + counts and row.gm_write == got.nbytes
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


@pytest.mark.parametrize(("a", "b"), [((4096,), (4096, 11008)), ((11008, 4096), (4096,)), ((100000,), (100000,))])
def test_rank_one_matmuls_over_capacity_are_tiled(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """A vector times a 180 MB matrix (linalg.vecmat / matvec) is tiled along its outputs; a dot of two
    400 KB vectors runs in blocks of its reduction.  Every operand is read once."""
    if len(a) == len(b) == 1:
        out = "tensor<f32>"
    else:
        out = f"tensor<{b[-1] if len(a) == 1 else a[0]}xf32>"
    ta, tb = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (a, b))
    exe = compile_npu(f"""func.func @mm(%a: {ta}, %b: {tb}) -> {out} {{
  %0 = "graph.matmul"(%a, %b) : ({ta}, {tb}) -> {out}
  return %0 : {out}
}}""", opt_level=0)
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    (want,) = exe.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    (row,) = exe.report().rows
    assert row.gm_read == sum(x.nbytes for x in inputs) and row.gm_write == got.nbytes
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


@pytest.mark.parametrize(("n", "c", "h", "f", "groups", "k", "stride", "pad"),
                         [(1, 128, 56, 128, 32, 3, 1, 1), (1, 256, 56, 256, 32, 3, 2, 1), (2, 64, 28, 128, 2, 3, 1, 1),
                          (1, 96, 35, 96, 3, 5, 1, 2)])
def test_grouped_convolution_over_capacity_is_tiled(n: int, c: int, h: int, f: int, groups: int, k: int, stride: int,
                                                    pad: int) -> None:
    """A grouped convolution (with a bias) over capacity: each filter tile, inside one group, is a plain
    convolution of that group's channels.  GM bytes are exactly the tiling's: each window of a group's
    channels once per filter tile of the group, the weights once per batch x row tile, the bias per tile."""
    text, oh = _biased_conv2d(n, c, h, f, k, stride, pad, groups)
    exe = compile_npu(text, opt_level=0)
    inputs = _random_inputs(exe)
    (got,) = exe(*inputs)
    (want,) = exe.reference(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    tn, tf, toh, tc = _conv_tile(exe)
    assert (f // groups) % tf == 0 and (c // groups) % tc == 0  # a filter tile stays in its group
    (row,) = exe.report().rows
    tiles = (n // tn) * (f // tf) * (oh // toh)
    x_bytes = (f // groups // tf) * n * c * _input_rows_read(h, oh, k, stride, pad, toh) * h * 4
    assert row.gm_read == x_bytes + (n // tn) * (oh // toh) * inputs[1].nbytes + tiles * tf * 4
    assert row.gm_write == got.nbytes
    target = load_target("910b")
    assert all(getattr(row, f"{space}_bytes") <= target.buffer(space).bytes for space in ("ub", "l1", "l0c"))


def test_grouped_convolution_with_constant_weights_is_tiled() -> None:
    """A model's grouped convolution: its weights and bias are constants, which lowering folds into globals
    already grouped ([G, F/G, C/G, KH, KW], [G, F/G]); the tiles read them as [F, ...] all the same."""
    rng = np.random.default_rng(3)
    b = GraphBuilder("f")
    x = b.arg((1, 256, 28, 28))
    weights = b.const(rng.standard_normal((256, 8, 3, 3)).astype(np.float32))
    bias = b.const(rng.standard_normal(256).astype(np.float32))
    b.ret(b.conv2d(x, weights, bias, strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1], groups=32))
    exe = compile_npu(b.module, opt_level=0)
    xs = rng.standard_normal((1, 256, 28, 28)).astype(np.float32)
    (got,) = exe(xs)
    (want,) = exe.reference(xs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert "npu.conv_tile" in exe.npu_ir and "conv_2d_ngchw_gfchw" not in exe.npu_ir
    (row,) = exe.report().rows
    assert row.gm_write == got.nbytes and row.ub_bytes <= load_target("910b").buffer("ub").bytes


def _cumsum(shape: tuple[int, ...], axis: int, dtype: str = "f32", flags: str = "") -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    op = f'%0 = "graph.cumsum"(%x) {{axis = {axis} : i64{flags}}} : ({t}) -> {t}'
    return f"func.func @scan(%x: {t}) -> {t} {{\n  {op}\n  return %0 : {t}\n}}"


@pytest.mark.parametrize(("shape", "axis", "dtype", "flags"), [
    ((64, 75000), 1, "f32", ""), ((75000, 64), 0, "f32", ""), ((100000, 64), 1, "f32", ""), ((97, 5003), 1, "f32", ""),
    ((1, 300000), 1, "f32", ""), ((3, 50, 7000), 1, "f32", ""), ((64, 20000), 1, "f32", ", reverse = true"),
    ((64, 20000), 1, "f32", ", exclusive = true"), ((64, 20000), 1, "f16", ""),
    ((20000, 48), 0, "bf16", ", reverse = true, exclusive = true"), ((64, 20000), 1, "i32", "")])
def test_a_scan_over_ub_streams_its_loop(shape: tuple[int, ...], axis: int, dtype: str, flags: str) -> None:
    """A cumsum lowers to a loop over its axis: over UB, the loop streams x and the result through UB in
    chunks of iterations (tiles of a dim every access spans whole when a chunk of all of it is too big; one
    iteration at a time when it walks the axis backwards); every byte moves once and the sums are the
    reference's, in the same order (f16 and bf16 summed in f32, rounded per element)."""
    exe = compile_npu(_cumsum(shape, axis, dtype, flags), opt_level=0)
    rng = np.random.default_rng(0)
    x = (rng.integers(-3, 4, shape) if dtype == "i32" else rng.standard_normal(shape)).astype(exe.inputs[0][1])
    (got,) = exe(x)
    np.testing.assert_array_equal(got, exe.reference(x)[0])  # the same additions in the same order
    (row,) = exe.report().rows
    assert "npu.stream_tiles" in exe.npu_ir and row.tiles > 1
    assert row.gm_read == x.nbytes and row.gm_write == x.nbytes
    assert row.ub_bytes <= load_target("910b").buffer("ub").bytes


def test_a_scatter_into_a_cache_over_ub_is_split_at_its_loop() -> None:
    """scatter_update copies the cache, then its loop writes each update where its position says (a place
    only known at run time). Split at the loop: the copy is tiled, and the loop moves only the updates whose
    position is in range, one slice each, GM -> UB -> GM.  (The emulated NPU does not check indices: those out
    of range, on which the reference interpreter raises, are skipped; docs/npu.md.)"""
    text = """func.func @cache(%c: tensor<2x4096x1024xf32>, %p: tensor<16xi64>, %u: tensor<2x16x1024xf32>)
    -> tensor<2x4096x1024xf32> {
  %0 = "graph.scatter_update"(%c, %p, %u) {axis = 1 : i64}
      : (tensor<2x4096x1024xf32>, tensor<16xi64>, tensor<2x16x1024xf32>) -> tensor<2x4096x1024xf32>
  return %0 : tensor<2x4096x1024xf32>
}"""
    exe = compile_npu(text, opt_level=0)
    rng = np.random.default_rng(0)
    cache = rng.standard_normal((2, 4096, 1024)).astype(np.float32)
    positions = np.array([5, 4095, -1, 7, 5, 9000, 100, -5000, 3, 2, 1, 0, 64, 65, 66, 67], dtype=np.int64)
    updates = rng.standard_normal((2, 16, 1024)).astype(np.float32)
    (got,) = exe(cache, positions, updates)
    want = cache.copy()
    for k, position in enumerate(positions):
        if -4096 <= position < 4096:
            want[:, position] = updates[:, k]
    np.testing.assert_array_equal(got, want)
    copy, scatter = exe.report().rows
    assert copy.name.endswith("_part0") and scatter.name.endswith("_part1")
    assert copy.gm_read == copy.gm_write == cache.nbytes
    applied = sum(1 for p in positions if -4096 <= p < 4096)  # 14: 9000 and -5000 are out of range
    slice_bytes = 2 * 1024 * 4
    assert scatter.gm_read == positions.nbytes + applied * slice_bytes and scatter.gm_write == applied * slice_bytes


def test_a_fused_scan_is_split_into_kernels_launched_in_turn() -> None:
    """exp, cumsum and add fused in one kernel (the default pipeline): no schedule fits the loop and the ops
    over whole rows around it together, so the kernel is split at the loop, the scan's result passed through
    a GM workspace."""
    text = """func.func @f(%x: tensor<97x5003xf32>) -> tensor<97x5003xf32> {
  %e = "graph.exp"(%x) : (tensor<97x5003xf32>) -> tensor<97x5003xf32>
  %c = "graph.cumsum"(%e) {axis = 1 : i64} : (tensor<97x5003xf32>) -> tensor<97x5003xf32>
  %y = "graph.add"(%c, %x) : (tensor<97x5003xf32>, tensor<97x5003xf32>) -> tensor<97x5003xf32>
  return %y : tensor<97x5003xf32>
}"""
    exe = compile_npu(text)
    x = (np.random.default_rng(0).standard_normal((97, 5003)) * 0.1).astype(np.float32)
    (got,) = exe(x)
    (want,) = exe.reference(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
    rows = exe.report().rows
    assert [r.name.rsplit("_", 1)[1] for r in rows] == ["part0", "part1", "part2"]
    assert [(r.gm_read, r.gm_write) for r in rows] == [(x.nbytes, x.nbytes), (x.nbytes, x.nbytes),
                                                       (2 * x.nbytes, x.nbytes)]


SMALL_UB = Path(__file__).resolve().parents[1] / "NPU" / "npu-buffer-assign" / "Inputs" / "small-ub.json"

SORTING = {  # sorts and top-ks whose kernel is over a 16 KiB UB: (operand, op and attributes, k or None for a sort)
    "sort_rows_descending": ("16x300xf32", '"graph.sort"(%x) {descending = true}', None),
    "sort_columns_stable": ("300x16xf32", '"graph.sort"(%x) {axis = 0 : i64, stable = true}', None),
    "sort_3d": ("4x3x100xf32", '"graph.sort"(%x)', None),
    "sort_f16": ("16x300xf16", '"graph.sort"(%x) {descending = true}', None),
    "topk_heap_select": ("16x512xf32", '"graph.topk"(%x) {k = 5 : i64}', 5),
    "topk_nth_element_smallest": ("16x300xf32", '"graph.topk"(%x) {k = 40 : i64, largest = false}', 40),
    "topk_unsorted": ("16x300xf32", '"graph.topk"(%x) {k = 40 : i64, sorted = false}', 40),
    "topk_i32": ("16x512xi32", '"graph.topk"(%x) {k = 8 : i64}', 8),
}


@pytest.mark.parametrize("name", sorted(SORTING))
def test_sorting_over_ub_streams_its_rows(name: str) -> None:
    """A sort or top-k loops over rows, each row's algorithm reading it at positions it computes and writing
    the results at an inner loop's index. Over UB, the loop streams chunks of whole rows (of whole columns
    along axis 0) through UB in more than one window; the values and positions are the reference's exactly,
    on rows full of ties, NaN and infinities (PyTorch's order, its algorithms' choices among equal values).
    Every byte moves once; the results' windows are also read (written at computed places, never whole)."""
    shape, op, k = SORTING[name]
    *sizes, element = shape.split("x")
    dims = [int(d) for d in sizes]
    out = dims if k is None else [*dims[:-1], k]  # (the top-ks search the last axis)
    results = [f"tensor<{'x'.join(map(str, out))}x{t}>" for t in (element, "i64")]
    operand = f"tensor<{shape}>"
    text = (f"func.func @f(%x: {operand}) -> ({', '.join(results)}) {{\n  %0:2 = {op} : ({operand}) -> "
            f"({', '.join(results)})\n  return %0#0, %0#1 : {', '.join(results)}\n}}")
    exe = compile_npu(text, opt_level=0, target=SMALL_UB)
    rng = np.random.default_rng(0)
    x = rng.integers(-20, 20, dims).astype(exe.inputs[0][1])
    if element != "i32":
        x[rng.random(dims) < 0.05] = np.nan
        x[rng.random(dims) < 0.02] = np.inf
        x[rng.random(dims) < 0.02] = -np.inf
    got, want = exe(x), exe.reference(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)  # NaN at the same places
    (row,) = exe.report().rows
    assert "npu.stream_tiles" in exe.npu_ir and row.tiles > 1
    assert row.ub_bytes <= load_target(SMALL_UB).buffer("ub").bytes
    outputs = sum(g.nbytes for g in got)
    assert (row.gm_read, row.gm_write) == (x.nbytes + outputs, outputs)


def test_a_grouped_matmul_over_ub_streams_its_groups() -> None:
    """A grouped matmul whose operands are over a 16 KiB UB: zeroing the result is split off, then the loop
    over groups carries each group's start from chunk to chunk of groups, the weights and ends staged per
    chunk, each row block of x and of the result moved when it is used (the blocks sharing one staging
    buffer). Rows in no group (an empty group, rows after the last end) stay zero; each row of x in a group
    is read once and each result row in a group written once."""
    text = """func.func @experts(%x: tensor<256x16xf32>, %w: tensor<4x16x32xf32>, %ends: tensor<4xi64>)
    -> tensor<256x32xf32> {
  %0 = "graph.grouped_matmul"(%x, %w, %ends) : (tensor<256x16xf32>, tensor<4x16x32xf32>, tensor<4xi64>)
      -> tensor<256x32xf32>
  return %0 : tensor<256x32xf32>
}"""
    exe = compile_npu(text, opt_level=0, target=SMALL_UB)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    w = rng.standard_normal((4, 16, 32)).astype(np.float32)
    ends = np.array([37, 100, 100, 250], dtype=np.int64)
    (got,) = exe(x, w, ends)
    (want,) = exe.reference(x, w, ends)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not got[250:].any()
    zero, groups = exe.report().rows
    assert zero.name.endswith("_part0") and groups.name.endswith("_part1")
    assert "npu.stream_tiles" in exe.npu_ir and groups.tiles > 1
    assert groups.ub_bytes <= load_target(SMALL_UB).buffer("ub").bytes
    assert (groups.gm_read, groups.gm_write) == (250 * 16 * 4 + w.nbytes + ends.nbytes, 250 * 32 * 4)


INDEXED_OPS = {  # ops whose lowering reads linalg.index, at sizes that tile them along the indexed dims
    "dropout": ("tensor<1024x512xf32>", '%0:2 = "graph.dropout"(%a) : (tensor<1024x512xf32>) -> '
                "(tensor<1024x512xf32>, tensor<1024x512xf32>)",
                "%0#0, %0#1 : tensor<1024x512xf32>, tensor<1024x512xf32>"),
    "argmax_in_blocks": ("tensor<16x100000xf32>", '%0 = "graph.argmax"(%a) {axis = 1 : i64} : (tensor<16x100000xf32>) '
                         "-> tensor<16xi64>", "%0 : tensor<16xi64>"),
    "argmax_with_value": ("tensor<50000x64xf32>", '%0:2 = "graph.argmax_with_value"(%a) : (tensor<50000x64xf32>) -> '
                          "(tensor<64xi32>, tensor<64xf32>)", "%0#0, %0#1 : tensor<64xi32>, tensor<64xf32>"),
    "iota": ("tensor<2x300000xf32>", '%0 = "graph.iota"(%a) {axis = 1 : i64} : (tensor<2x300000xf32>) -> '
             "tensor<300000xi64>", "%0 : tensor<300000xi64>"),
    "one_hot": ("tensor<4xi64>", '%on = arith.constant dense<2.0> : tensor<f32>\n  %off = arith.constant dense<-1.0> : '
                'tensor<f32>\n  %0 = "graph.one_hot"(%a, %on, %off) {depth = 100000 : i64} : (tensor<4xi64>, '
                "tensor<f32>, tensor<f32>) -> tensor<4x100000xf32>", "%0 : tensor<4x100000xf32>"),
}


@pytest.mark.parametrize("name", sorted(INDEXED_OPS))
def test_tiled_ops_read_the_indices_of_their_whole_loop(name: str) -> None:
    """An op moved onto a tile reads its loop indices (a dropout's counter-based mask, an argmax's position,
    an iota): each index along a tiled loop gets the tile's offset, so the results do not depend on the
    tiles."""
    arg, body, ret = INDEXED_OPS[name]
    results = ret.split(" : ", 1)[1]
    text = f"func.func @f(%a: {arg}) -> ({results}) {{\n  {body}\n  return {ret}\n}}"
    exe = compile_npu(text, opt_level=0)
    rng = np.random.default_rng(0)
    inputs = [rng.integers(0, 100000, shape).astype(dtype) if np.dtype(dtype).kind == "i"
              else rng.standard_normal(shape).astype(dtype) for shape, dtype in exe.inputs]
    for got, want in zip(exe(*inputs), exe.reference(*inputs), strict=True):
        np.testing.assert_array_equal(got, want)
    assert any(row.tiles > 1 for row in exe.report().rows)


ALL_OPS = Path(__file__).resolve().parents[1] / "Dialect" / "all-ops.mlir"


def _all_op_functions() -> dict[str, str]:
    """Each function of the dialect's op list (one op each), as a module of its own."""
    text = ALL_OPS.read_text().split("module {", 1)[1]
    found = re.findall(r"(  func\.func @(\w+)\(.*?\n  \})", text, re.S)
    return {name: f"module {{\n{body}\n}}\n" for body, name in found}


@pytest.mark.parametrize("name", sorted(_all_op_functions()))
def test_every_op_runs_on_a_512_byte_ub(name: str, tmp_path: Path) -> None:
    """Every op of the dialect on a target whose UB holds 512 bytes, where nearly every kernel is over
    capacity: each is tiled, streamed or split, and computes the reference's results (booleans held as
    bytes)."""
    target = json.loads((Path(__file__).resolve().parents[1] / "NPU" / "npu-buffer-assign" / "Inputs" /
                         "small-ub.json").read_text())
    target["name"], target["buffers"]["ub"]["bytes"] = "ub-512", 512
    path = tmp_path / "ub-512.json"
    path.write_text(json.dumps(target))
    exe = compile_npu(_all_op_functions()[name], target=path, opt_level=0)
    rng = np.random.default_rng(0)
    inputs = [(rng.integers(0, 3, shape) if np.dtype(dtype).kind in "iu" else rng.standard_normal(shape)).astype(dtype)
              for shape, dtype in exe.inputs]
    for got, want in zip(exe(*inputs), exe.reference(*inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)


SIMPLIFIED = {  # kernels no plan fits as lowered, at sizes over the 910b's UB / L0C
    "equal_count": ("equal_count", {"4x8x": "2048x1024x"}),
    "square_sum_all": ("square_sum_all", {"4x8x": "2048x1024x"}),
    "layer_norm_grad": ("layer_norm_grad", {"4x8x": "2048x1024x", "4x1x": "2048x1x", "<8xf32>": "<1024xf32>"}),
    "matmul_split": ("matmul_split", {"tensor<8x24xf32>": "tensor<1024x3072xf32>", "4x8x": "64x1024x",
                                      "array<i64: 8, 8, 8>": "array<i64: 1024, 1024, 1024>"}),
}


@pytest.mark.parametrize("name", sorted(SIMPLIFIED))
def test_kernels_fitting_only_once_simplified_run(name: str) -> None:
    """A count into a rank-0 buffer seen as [1], two sums started from one zero-filled buffer, a layer norm's
    gradient (column sums and row sums in one kernel), a fused QKV projection whose accumulator is over
    L0C: each runs once its buffers are simplified (and, for the sums, the kernel split in two)."""
    op, sizes = SIMPLIFIED[name]
    text = _all_op_functions()[op]
    for small, big in sizes.items():
        text = text.replace(small, big)
    exe = compile_npu(text, opt_level=0)
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(0.05, 0.95, shape).astype(dtype) for shape, dtype in exe.inputs]
    for got, want in zip(exe(*inputs), exe.reference(*inputs), strict=True):
        # f32 sums of 2M elements: the emulator adds them in order, the reference pairwise
        np.testing.assert_allclose(got, want, rtol=3e-3, atol=1e-4)
    target = load_target("910b")
    for row in exe.report().rows:
        assert all(getattr(row, f"{space}_bytes") <= target.buffer(space).bytes for space in ("ub", "l1", "l0c"))


@pytest.mark.parametrize("level", [None, 0])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_bundled_models_run_on_a_16_kib_ub(name: str, level: int | None) -> None:
    """Every bundled model on a target whose UB holds 16 KiB: kernels that fit the 910b whole are tiled, a
    batched projection's M loop by one batch of 16 rows (a cube fractal's worth)."""
    target = Path(__file__).resolve().parents[1] / "NPU" / "npu-buffer-assign" / "Inputs" / "small-ub.json"
    exe = compile_npu(MODELS[name]().module, opt_level=level, target=target)
    inputs = model_inputs(name)
    for got, want in zip(exe(*inputs), exe.reference(*inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))
    assert all(row.ub_bytes <= 16384 for row in exe.report().rows)


@pytest.mark.parametrize("kind", ["llama", "qwen2", "mistral", "gpt2", "bert", "t5"])
def test_frontend_transformers_models_with_padding_masks_run_on_the_npu(kind: str) -> None:
    """The transformers models of the front-end tests, fed token ids and a padded 2-D attention mask (the
    4-D mask is built from booleans, which the NPU holds as bytes): equal to the reference at the default
    level and at O0."""
    hf = pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")
    import torch
    from test_frontend_torch import Fn, _hf_network

    import graphfuse.frontends.torch as gft

    torch.manual_seed(0)
    network = _hf_network(hf, kind)
    cache = {} if kind in ("bert", "t5") else {"use_cache": False}

    def forward(m: object, ids: object, mask: object) -> object:
        return m.network(input_ids=ids, attention_mask=mask, **cache).last_hidden_state

    ids = torch.randint(0, 128, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.int64)
    mask[1, 7:] = 0
    imported = gft.import_module(Fn(forward, network=network).eval(), (ids, mask))
    for level in (None, 0):
        exe = compile_npu(imported.module, opt_level=level)
        inputs = imported.numpy_inputs(ids, mask)
        for got, want in zip(exe(*inputs), exe.reference(*inputs), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def test_a_training_step_at_width_256_runs_on_the_npu() -> None:
    """The training example's encoder layer at width 256 (16 x 128 tokens): forward, loss and backward in one
    graph. Its layer-norm backward (column sums of dy * x_hat over every token, row sums over each token's
    features) is blocked along the tokens on the vector unit; the gradients equal PyTorch's autograd."""
    torch = pytest.importorskip("torch")
    import warnings

    import graphfuse.frontends.torch as gft
    from bench.models import _example

    classifier = _example("train_encoder_layer").Classifier
    torch.manual_seed(0)
    model = classifier(256, 4, 10)
    x, labels = torch.randn(16, 128, 256), torch.randint(0, 10, (16,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.export's deprecation notices
        step = gft.import_training_step(model, (x, labels))
    loss = model(x, labels)[0]
    loss.backward()
    grads = dict(model.named_parameters())
    got = compile_npu(step.module)(*step.numpy_inputs(x, labels))
    np.testing.assert_allclose(got[0], loss.item(), rtol=1e-5)
    for name, value in zip(step.gradient_names, got[1:], strict=False):
        want = grads[name].grad.numpy()
        np.testing.assert_allclose(value, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()), err_msg=name)


@pytest.mark.parametrize("level", [None, 0])
@pytest.mark.parametrize("name", ["llama_decoder_layer", "bert_encoder_layer", "resnet_basic_block"])
def test_examples_run_on_a_16_kib_ub(name: str, level: int | None) -> None:
    """The examples on a target whose UB holds 16 KiB: BERT's heads transposed and merged back into rows
    (reshapes no tile follows as written) run once the kernel writes its result in the transpose's shape."""
    pytest.importorskip("torch")
    from bench.models import _example
    from graphfuse.frontends.torch import import_module

    model, args = _example(name).build()
    args = args if isinstance(args, tuple) else (args,)
    module = import_module(model, args).module
    target = Path(__file__).resolve().parents[1] / "NPU" / "npu-buffer-assign" / "Inputs" / "small-ub.json"
    exe = compile_npu(module, opt_level=level, target=target)
    inputs = [a.numpy() for a in args]
    for got, want in zip(exe(*inputs), exe.reference(*inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))
    assert all(row.ub_bytes <= 16384 for row in exe.report().rows)
