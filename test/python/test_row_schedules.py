"""Row schedules written by hand (graph.row_schedule, lowering/schedules/rows.mlir): each one apply-row-schedules
runs computes what the kernel computes, compared with numpy; and tile-kernel-rows is select-row-schedules then
apply-row-schedules."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from graphfuse.dialect.context import load_graph_dialect, new_context
from graphfuse.lowering.runtime import compile_linalg
from graphfuse.pipelines.runner import PipelineFailure, run_pipeline

#: x / sum(x) along rows: a row reduction and an elementwise root reading it.
_NORMALIZE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%x: tensor<ROWSxCOLSxf32>) -> tensor<ROWSxCOLSxf32> attributes {graph.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<ROWSxf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<ROWSxf32>) -> tensor<ROWSxf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<ROWSxCOLSxf32>) outs(%f : tensor<ROWSxf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<ROWSxf32>
  %o = tensor.empty() : tensor<ROWSxCOLSxf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<ROWSxCOLSxf32>, tensor<ROWSxf32>) outs(%o : tensor<ROWSxCOLSxf32>)
      attrs = {graph.row_schedule = SCHEDULE} {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<ROWSxCOLSxf32>
  return %r : tensor<ROWSxCOLSxf32>
}
"""

#: exp(x) - x over a 1-D tensor.
_FLAT = """
#flat = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<LENGTHxf32>) -> tensor<LENGTHxf32> attributes {graph.kernel} {
  %e = tensor.empty() : tensor<LENGTHxf32>
  %ex = linalg.generic {indexing_maps = [#flat, #flat], iterator_types = ["parallel"]}
      ins(%x : tensor<LENGTHxf32>) outs(%e : tensor<LENGTHxf32>) {
  ^bb0(%a: f32, %out: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<LENGTHxf32>
  %r = linalg.generic {indexing_maps = [#flat, #flat, #flat], iterator_types = ["parallel"]}
      ins(%ex, %x : tensor<LENGTHxf32>, tensor<LENGTHxf32>) outs(%e : tensor<LENGTHxf32>)
      attrs = {graph.row_schedule = SCHEDULE} {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<LENGTHxf32>
  return %r : tensor<LENGTHxf32>
}
"""


def _schedule(**entries: object) -> str:
    def value(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "array<i64: " + ", ".join(map(str, v)) + ">"
        return f"{v} : i64"
    return "{" + ", ".join(f"{name} = {value(v)}" for name, v in entries.items()) + "}"


def _run(text: str, x: np.ndarray, threads: int) -> tuple[str, np.ndarray]:
    """apply-row-schedules on ``text``, then the CPU pipeline; the tiled IR and the result for ``x``."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(apply-row-schedules)")
        tiled = str(module)
        assert "graph.row_schedule" not in tiled
        (got,) = compile_linalg(module, "f", threads=threads)(x)
    return tiled, got


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("rows", "cols", "entries", "loop"), [
    (8, 100, dict(rows=[1, 0], tasks=False, vectorize=True, vector_bits=512, chunk_vectors=4), "scf.for"),
    (8, 100, dict(rows=[1, 0], tasks=True, vectorize=True, vector_bits=256, chunk_vectors=2), "scf.forall"),
    (8, 37, dict(rows=[2, 0], tasks=True, vectorize=False, vector_bits=512, chunk_vectors=4), "scf.forall"),
    (6, 5000, dict(rows=[1, 0], tasks=False, vectorize=True, vector_bits=512, chunk_vectors=4, max_vector=4096),
     "scf.for"),
])
def test_rows_compute_the_kernel(rows: int, cols: int, entries: dict, loop: str, threads: int) -> None:
    text = _NORMALIZE.replace("ROWS", str(rows)).replace("COLS", str(cols)).replace("SCHEDULE", _schedule(**entries))
    x = np.random.default_rng(0).uniform(0.5, 2.0, (rows, cols)).astype(np.float32)
    tiled, got = _run(text, x, threads)
    assert f"{loop} " in tiled
    np.testing.assert_allclose(got, x / x.sum(axis=1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize(("length", "row", "tasks"), [(10000, 4096, False), (8192, 1024, True), (70000, 4096, True)])
def test_flat_rows_compute_the_kernel(length: int, row: int, tasks: bool) -> None:
    schedule = _schedule(row=row, tasks=tasks, vector_bits=512, chunk_vectors=4)
    text = _FLAT.replace("LENGTH", str(length)).replace("SCHEDULE", schedule)
    x = np.random.default_rng(1).standard_normal(length).astype(np.float32)
    tiled, got = _run(text, x, 2)
    assert ("scf.forall" in tiled) == tasks
    np.testing.assert_allclose(got, np.exp(x) - x, rtol=1e-5, atol=1e-6)


def test_rows_that_leave_a_partial_tile_fail_clearly() -> None:
    """Tiles of 3 rows over 8 leave a partial tile whose shape is not static: vectorizing it fails, and the
    failure names the kernel and the step."""
    text = _NORMALIZE.replace("ROWS", "8").replace("COLS", "64").replace(
        "SCHEDULE", _schedule(rows=[3, 0], tasks=False, vectorize=True, vector_bits=512, chunk_vectors=4))
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        with pytest.raises(PipelineFailure, match=r"apply-row-schedules: tiling @f by rows failed"):
            run_pipeline(module, "builtin.module(apply-row-schedules)")


def test_tile_kernel_rows_is_select_then_apply() -> None:
    """The pass in one and the two passes give the same IR."""
    text = """func.func private @k(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {graph.kernel} {
      %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<64x128xf32>) -> tensor<64x128xf32>
      return %0 : tensor<64x128xf32>
    }"""
    outputs = []
    for passes in ("tile-kernel-rows{vector-bits=256}", "select-row-schedules{vector-bits=256},apply-row-schedules"):
        with new_context() as context, ir.Location.unknown():
            load_graph_dialect(context)
            module = ir.Module.parse(text)
            run_pipeline(module, f"builtin.module(graph-to-linalg,fuse-kernel-loops,{passes})")
            outputs.append(str(module))
    assert "vector<32xf32>" in outputs[0] and "scf.for" in outputs[0]
    assert outputs[0] == outputs[1]


def test_a_root_fused_into_another_group_is_tiled_once() -> None:
    """Roots of two rows sizes, the second group's root (c) read by one of the first's (b): b's rows hold a copy of
    c, which carries c's schedule but is not a root; only c itself is tiled by c's sizes."""
    x3 = "tensor<8x64x4xf32>"
    scheduled = {"[2, 0, 0]": _schedule(rows=[2, 0, 0], tasks=False, vectorize=False, vector_bits=512, chunk_vectors=4),
                 "[1, 1, 0]": _schedule(rows=[1, 1, 0], tasks=False, vectorize=False, vector_bits=512, chunk_vectors=4)}

    def generic(result: str, operand: str, body: str, rows: str) -> str:
        return f"""%{result} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel",
        "parallel"]}} ins(%{operand} : {x3}) outs(%e : {x3}) attrs = {{graph.row_schedule = {scheduled[rows]}}} {{
      ^bb0(%v: f32, %out: f32):
        %k = arith.constant {body[1]} : f32
        %y = arith.{body[0]} %v, %k : f32
        linalg.yield %y : f32
      }} -> {x3}"""

    text = f"""#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
    func.func @f(%x: {x3}) -> ({x3}, {x3}, {x3}) attributes {{graph.kernel}} {{
      %e = tensor.empty() : {x3}
      {generic("a", "x", ("mulf", "2.0"), "[2, 0, 0]")}
      {generic("c", "x", ("addf", "1.0"), "[1, 1, 0]")}
      {generic("b", "c", ("mulf", "3.0"), "[2, 0, 0]")}
      return %a, %c, %b : {x3}, {x3}, {x3}
    }}"""
    x = np.random.default_rng(2).standard_normal((8, 64, 4)).astype(np.float32)
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(apply-row-schedules)")
        tiled = str(module)
        # a's and b's loops over pairs of rows, c's two nested loops; none inside another's body
        assert tiled.count("scf.for") == 4, tiled
        results = compile_linalg(module, "f", threads=1)(x)
    for got, want in zip(results, (x * 2, x + 1, (x + 1) * 3), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


#: Row kernels whose row count is known only when called (tokens): softmax, add + layer_norm, rms_norm; the
#: rows' length and each input's shape for ``rows`` rows.
_DYNAMIC_ROWS = {
    "softmax": ("""func.func @main(%x: tensor<?x?x40xf32>) -> tensor<?x?x40xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<?x?x40xf32>) -> tensor<?x?x40xf32>
  return %0 : tensor<?x?x40xf32>
}""", 40, lambda rows: [(rows, 3, 40)]),
    "add_layer_norm": ("""func.func @main(%x: tensor<?x300xf32>, %r: tensor<?x300xf32>, %g: tensor<300xf32>,
    %b: tensor<300xf32>) -> tensor<?x300xf32> {
  %0 = "graph.add"(%x, %r) : (tensor<?x300xf32>, tensor<?x300xf32>) -> tensor<?x300xf32>
  %1 = "graph.layer_norm"(%0, %g, %b) {epsilon = 1.0e-5 : f32}
    : (tensor<?x300xf32>, tensor<300xf32>, tensor<300xf32>) -> tensor<?x300xf32>
  return %1 : tensor<?x300xf32>
}""", 300, lambda rows: [(rows, 300), (rows, 300), (300,), (300,)]),
    "rms_norm": ("""func.func @main(%x: tensor<?x64xf32>, %g: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = "graph.rms_norm"(%x, %g) {epsilon = 1.0e-6 : f32} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}""", 64, lambda rows: [(rows, 64), (64,)]),
}


@pytest.mark.parametrize("kernel", sorted(_DYNAMIC_ROWS))
def test_dynamic_row_counts_are_tiled_rows_of_static_length(kernel: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel whose rows are counted at run time is tiled by rows all the same (each row is static): one compile
    serves 0, 1 and many rows, rows holding NaN, infinities and -0 included, as the reference computes them."""
    import graphfuse
    from graphfuse.pipelines import log

    text, row, shapes = _DYNAMIC_ROWS[kernel]
    log.configure("debug")
    try:
        executable = graphfuse.compile(text)
    finally:
        log.configure()
    assert f": 1 result loop(s) by rows of {row}, vectorized" in capsys.readouterr().err
    rng = np.random.default_rng(3)
    for rows in (0, 1, 5, 301):
        inputs = [rng.standard_normal(shape).astype(np.float32) for shape in shapes(rows)]
        if rows >= 5:
            first = inputs[0].reshape(rows, -1)
            first[1, 7] = np.nan
            first[2, :] = -np.inf
            first[3, 5] = np.inf
            first[4, :] = -0.0
        (got,) = executable(*inputs)
        (want,) = executable.reference(*inputs)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True)
